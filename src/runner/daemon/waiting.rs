//! Two things a daemon does for a pool of batch jobs (Slurm pilots) rather than of
//! workstations: it ends when enough other daemons already wait with nothing runnable
//! (`max_waiting`, counted through `waiting/<host>` files), and it runs a periodic task
//! beside its runners (`Tend`: a pilot's recovery of pilots that died without a word).

use super::*;
use crate::runner::host_files;

/// A periodic task; it gets a function that writes a line to the daemon's log.
pub type TendTask = Arc<dyn Fn(&dyn Fn(&str)) + Send + Sync>;

/// A task a daemon runs every `every` in a thread of its own until its runners end.
#[derive(Clone)]
pub struct Tend {
    pub every: Duration,
    pub task: TendTask,
}

impl std::fmt::Debug for Tend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Tend every {:?}", self.every)
    }
}

/// `waiting/`: one file per daemon that waits with nothing runnable, holding since when.
pub fn waiting_dir(site: &Site) -> PathBuf {
    site.root().join("waiting")
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Waiting {
    since: u64,
}

impl Daemon<'_> {
    /// Runs a taken job (counted as busy since its take, until it ends); a waiting daemon
    /// stops waiting.
    pub(super) fn run_counted(&self, runner: usize, taken: take::TakenJob) -> Result<Option<End>> {
        self.leave_waiting();
        let r = self.run(runner, taken);
        self.busy.fetch_sub(1, Ordering::SeqCst);
        r
    }

    /// With `max_waiting`: registers this daemon as waiting when none of its runners has a
    /// job, and says whether it should end because as many daemons waited before it. The
    /// order is by the time each began to wait (then by host), so that every daemon agrees
    /// on which ones stay. Only daemons whose heartbeat is fresh count: a waiting daemon
    /// killed outright must not make the live ones end. The decision is the daemon's: once
    /// taken, each of its runners ends when it is idle.
    pub(super) fn too_many_waiting(&self, runner: usize) -> bool {
        let Some(max) = self.opts.max_waiting else {
            return false;
        };
        if self.busy.load(Ordering::SeqCst) > 0 || STOP.load(Ordering::Relaxed) {
            return false;
        }
        if self.leaving.load(Ordering::SeqCst) {
            return true;
        }
        let now = now_secs();
        let since = *self
            .waiting_since
            .lock()
            .expect("waiting")
            .get_or_insert(now);
        let dir = waiting_dir(self.site);
        let mine = dir.join(&self.opts.host);
        let volatile = crate::files::Durability::Volatile;
        if let Err(e) = crate::state::write(&mine, &Waiting { since }, volatile) {
            self.say(
                runner,
                &format!("could not record that this daemon waits: {e}"),
            );
            return false;
        }
        // A daemon is gone when its heartbeat is no longer alive (a poll's delay allowed).
        let poll = self.opts.poll.as_secs();
        let mut waiting: Vec<(u64, String)> = Vec::new();
        for (name, path) in crate::files::list(&dir).unwrap_or_default() {
            let alive = name == self.opts.host
                || host_files::read_heartbeat(self.site, &name)
                    .is_some_and(|(_, t)| host_files::heartbeat_alive(t, now.saturating_sub(poll)));
            let w: Option<Waiting> = crate::state::read(&path, "waiting", &[]).ok().flatten();
            if let Some(w) = w
                && alive
            {
                waiting.push((w.since, name));
            }
        }
        waiting.sort();
        let rank = waiting
            .iter()
            .position(|(_, h)| *h == self.opts.host)
            .unwrap_or(0);
        // A job taken meanwhile by another runner of this daemon: it does not wait.
        if rank < max || self.busy.load(Ordering::SeqCst) > 0 {
            return false;
        }
        self.leaving.store(true, Ordering::SeqCst);
        self.say(
            runner,
            &format!(
                "nothing runnable and {rank} daemon(s) already wait (at most {max}): this one ends"
            ),
        );
        self.leave_waiting();
        true
    }

    /// This daemon no longer waits (it took a job, or it ends).
    pub(super) fn leave_waiting(&self) {
        if self.opts.max_waiting.is_none() {
            return;
        }
        if self.waiting_since.lock().expect("waiting").take().is_some()
            || STOP.load(Ordering::Relaxed)
        {
            let _ = std::fs::remove_file(waiting_dir(self.site).join(&self.opts.host));
        }
    }

    /// Runs `t` every `t.every` until the runners end.
    pub(super) fn tend(&self, t: &Tend, runners_done: &std::sync::atomic::AtomicBool) {
        let log = |m: &str| self.say(0, m);
        let mut due = Instant::now();
        while !runners_done.load(Ordering::Relaxed) {
            if Instant::now() >= due {
                (t.task)(&log);
                due = Instant::now() + t.every;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}
