//! What wakes a runner: a change of a queue file or a stage record (inotify), the poll
//! interval, a stop request; and what keeps it waiting: a full disk (`Room`).

use crate::cli::STOP;
use crate::solve::Site;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Wakes idle runners when a queue or a stage record changes.
#[derive(Default)]
pub(super) struct Wake {
    generation: Mutex<u64>,
    cv: Condvar,
}

impl Wake {
    pub(super) fn bump(&self) {
        *self.generation.lock().expect("wake") += 1;
        self.cv.notify_all();
    }

    pub(super) fn current(&self) -> u64 {
        *self.generation.lock().expect("wake")
    }

    /// Waits until the generation moves past `seen`, `poll` passes, or a stop is requested.
    pub(super) fn wait(&self, seen: u64, poll: Duration) {
        let end = Instant::now() + poll;
        let mut g = self.generation.lock().expect("wake");
        while *g == seen && !STOP.load(Ordering::Relaxed) {
            let now = Instant::now();
            if now >= end {
                return;
            }
            let step = (end - now).min(Duration::from_millis(100));
            g = self.cv.wait_timeout(g, step).expect("wake").0;
        }
    }
}

/// Whether `ev` is a change that can make a job runnable: a queue file or a stage record
/// created, written, renamed or removed. Not an open or a read: on Linux `notify` reports
/// those too, and every idle runner reads the queues and records when it wakes, so waking on
/// them made the runners wake each other thousands of times a second.
fn wakes(ev: &notify::Event) -> bool {
    use notify::EventKind;
    use notify::event::{AccessKind, AccessMode, ModifyKind};
    let change = match ev.kind {
        EventKind::Create(_) | EventKind::Remove(_) | EventKind::Any | EventKind::Other => true,
        EventKind::Modify(ModifyKind::Metadata(_)) => false,
        EventKind::Modify(_) => true,
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
    };
    change
        && ev.paths.iter().any(|p| {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default();
            name.ends_with(".stage") || crate::queue::QUEUES.iter().any(|(_, q)| name == *q)
        })
}

/// Whether `ev` is a job's end: its running record removed (what a runner waiting for the
/// pool to empty, `--until-empty`, waits for).
fn ends_a_job(ev: &notify::Event) -> bool {
    matches!(ev.kind, notify::EventKind::Remove(_))
        && ev.paths.iter().any(|p| {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default();
            !name.starts_with('.') && !crate::queue::takes::is_take(&name)
        })
}

/// Watches the queue files and stage records for changes, waking idle runners; with
/// `job_ends`, also the removal of running records.
pub(super) fn watch(
    site: &Site,
    wake: Arc<Wake>,
    job_ends: bool,
) -> notify::Result<notify::RecommendedWatcher> {
    use notify::{RecursiveMode, Watcher};
    let running = crate::queue::running::running_dir(site);
    let dir = running.clone();
    let mut w = notify::recommended_watcher(move |ev: notify::Result<notify::Event>| {
        let Ok(ev) = ev else {
            return;
        };
        let in_running = ev
            .paths
            .iter()
            .any(|p| p.parent() == Some(running.as_path()));
        if (!in_running && wakes(&ev)) || (in_running && ends_a_job(&ev)) {
            wake.bump();
        }
    })?;
    for d in ["queues", "done"] {
        w.watch(&site.root().join(d), RecursiveMode::NonRecursive)?;
    }
    if job_ends {
        std::fs::create_dir_all(&dir).map_err(notify::Error::io)?;
        w.watch(&dir, RecursiveMode::NonRecursive)?;
    }
    Ok(w)
}

/// The longest wait for room on a full disk between two tries.
pub(super) const MAX_ROOM_WAIT: Duration = Duration::from_secs(600);

/// A full disk on this host: its runners take no job until the wait is over, the wait
/// doubling while jobs keep finding no room, so a full disk neither spins nor uses up the
/// jobs' attempts (another host, or an operator who frees space, ends it).
#[derive(Default)]
pub(super) struct Room {
    spell: Mutex<Option<Spell>>,
}

/// One spell of full disk.
#[derive(Clone, Debug)]
pub(super) struct Spell {
    pub wait: Duration,
    pub until: Instant,
    pub began: Instant,
    /// The operator was alerted (spooling fails while the disk is full).
    pub alerted: bool,
    pub lasted: Duration,
}

impl Room {
    /// Too little room: the runners wait from now. Returns the wait and whether the
    /// operator is still to be alerted in this spell.
    pub(super) fn full(&self, first: Duration) -> (Duration, bool) {
        let mut spell = self.spell.lock().expect("room");
        let now = Instant::now();
        let s = spell.get_or_insert(Spell {
            wait: Duration::ZERO,
            until: now,
            began: now,
            alerted: false,
            lasted: Duration::ZERO,
        });
        s.wait = match s.wait.is_zero() {
            true => first,
            false => (s.wait * 2).min(MAX_ROOM_WAIT),
        };
        s.until = now + s.wait;
        (s.wait, !s.alerted)
    }

    /// The operator has been alerted of this spell.
    pub(super) fn alerted(&self) {
        if let Some(s) = self.spell.lock().expect("room").as_mut() {
            s.alerted = true;
        }
    }

    /// A job finished: the spell, if any, is over; returned with how long it lasted.
    pub(super) fn had_room(&self) -> Option<Spell> {
        let mut s = self.spell.lock().expect("room").take()?;
        s.lasted = s.began.elapsed();
        Some(s)
    }

    /// How long runners must still wait before taking a job.
    pub(super) fn wait_left(&self) -> Option<Duration> {
        let spell = self.spell.lock().expect("room");
        spell
            .as_ref()
            .and_then(|s| s.until.checked_duration_since(Instant::now()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_changes_of_queues_and_stage_records_wake_the_runners() {
        use notify::event::{
            AccessKind, AccessMode, CreateKind, DataChange, EventKind, MetadataKind, ModifyKind,
            RemoveKind, RenameMode,
        };
        let ev = |kind: EventKind, name: &str| {
            notify::Event::new(kind).add_path(std::path::Path::new("/site/queues").join(name))
        };
        let changes = [
            EventKind::Create(CreateKind::File),
            EventKind::Modify(ModifyKind::Data(DataChange::Any)),
            EventKind::Modify(ModifyKind::Name(RenameMode::To)),
            EventKind::Remove(RemoveKind::File),
            EventKind::Access(AccessKind::Close(AccessMode::Write)),
        ];
        let reads = [
            EventKind::Access(AccessKind::Open(AccessMode::Any)),
            EventKind::Access(AccessKind::Read),
            EventKind::Access(AccessKind::Close(AccessMode::Read)),
            EventKind::Modify(ModifyKind::Metadata(MetadataKind::Any)),
        ];
        for kind in changes {
            assert!(wakes(&ev(kind, "prime")), "{kind:?}");
            assert!(wakes(&ev(kind, "2200.stage")), "{kind:?}");
            assert!(!wakes(&ev(kind, "prime.lock")), "{kind:?}");
            assert!(!wakes(&ev(kind, "2200.12.done")), "{kind:?}");
        }
        for kind in reads {
            assert!(!wakes(&ev(kind, "prime")), "{kind:?}");
            assert!(!wakes(&ev(kind, "2200.stage")), "{kind:?}");
        }
    }

    #[test]
    fn waits_for_room_double_up_to_the_cap_and_end_with_a_finished_job() {
        let room = Room::default();
        assert_eq!(room.wait_left(), None);
        assert_eq!(
            room.full(Duration::from_secs(10)),
            (Duration::from_secs(10), true)
        );
        assert!(room.wait_left().is_some_and(|d| d > Duration::from_secs(9)));
        assert_eq!(
            room.full(Duration::from_secs(10)),
            (Duration::from_secs(20), true)
        );
        room.alerted();
        assert_eq!(
            room.full(Duration::from_secs(10)),
            (Duration::from_secs(40), false)
        );
        for _ in 0..10 {
            room.full(Duration::from_secs(10));
        }
        assert_eq!(room.full(Duration::from_secs(10)).0, MAX_ROOM_WAIT);
        assert!(room.had_room().is_some_and(|s| s.alerted));
        assert!(room.had_room().is_none());
        room.full(Duration::from_secs(10));
        assert!(room.had_room().is_some_and(|s| !s.alerted));
        assert_eq!(room.wait_left(), None);
    }
}
