//! The stages a slice pair goes through (paper Figure 4) and the decisions between them,
//! shared by the local build (state in memory) and the queue runners (state in files under
//! `done/`): `cap`, `winmove`, `lookup`, `noio` passes alternating between the slice and its
//! mirror while they resolve many positions, `que` rounds until the position queue is empty,
//! `fill`, publication to `solved/`, `build` into the compressed database, and `ver` once
//! the pairs below are verified.

use super::{Result, Site, posqueue, store};
use crate::slice::Slice;
use crate::solve_err;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    Waiting,
    Cap,
    WinMove,
    Lookup,
    NoIo(u32),
    Que(u32),
    Fill,
    /// The local build's optional check of the solved files.
    Verify,
    /// Published to `solved/`; compressing into `db/`.
    Build,
    /// Built, waiting for the pairs below to be verified before `ver`.
    Built,
    Ver,
    Done,
}

impl Stage {
    /// The text of a stage record (`noio 3`, `fill`, ...).
    pub fn record_text(self) -> String {
        match self {
            Stage::Waiting => "waiting".into(),
            Stage::Cap => "cap".into(),
            Stage::WinMove => "winmove".into(),
            Stage::Lookup => "lookup".into(),
            Stage::NoIo(r) => format!("noio {r}"),
            Stage::Que(r) => format!("que {r}"),
            Stage::Fill => "fill".into(),
            Stage::Verify => "verify".into(),
            Stage::Build => "build".into(),
            Stage::Built => "built".into(),
            Stage::Ver => "ver".into(),
            Stage::Done => "done".into(),
        }
    }

    /// Parses [`Stage::record_text`]; `None` for anything else.
    pub fn parse_record(text: &str) -> Option<Stage> {
        let words: Vec<&str> = text.split_whitespace().collect();
        let round = words
            .get(1)
            .and_then(|r| r.parse::<u32>().ok())
            .filter(|&r| r > 0);
        Some(match (words.as_slice(), round) {
            (["waiting"], _) => Stage::Waiting,
            (["cap"], _) => Stage::Cap,
            (["winmove"], _) => Stage::WinMove,
            (["lookup"], _) => Stage::Lookup,
            (["noio", _], Some(r)) => Stage::NoIo(r),
            (["que", _], Some(r)) => Stage::Que(r),
            (["fill"], _) => Stage::Fill,
            (["verify"], _) => Stage::Verify,
            (["build"], _) => Stage::Build,
            (["built"], _) => Stage::Built,
            (["ver"], _) => Stage::Ver,
            (["done"], _) => Stage::Done,
            _ => return None,
        })
    }

    /// Position in the pipeline, for "has the pair reached this stage" (rounds in order).
    pub fn rank(self) -> (u32, u32) {
        match self {
            Stage::Waiting => (0, 0),
            Stage::Cap => (1, 0),
            Stage::WinMove => (2, 0),
            Stage::Lookup => (3, 0),
            Stage::NoIo(r) | Stage::Que(r) => (4, r),
            Stage::Fill => (5, 0),
            Stage::Verify => (6, 0),
            Stage::Build => (7, 0),
            Stage::Built => (8, 0),
            Stage::Ver => (9, 0),
            Stage::Done => (10, 0),
        }
    }
}

/// The slice a `noio` pass runs on: passes alternate between the slice and its mirror.
pub fn noio_slice(slices: &[Slice], pass: u32) -> Slice {
    slices[(pass as usize - 1) % slices.len()]
}

/// What follows a finished `noio` pass or `que` round: `changed` is how many entries the
/// round queued (read from its queue files, never from job statistics: a job resumed after
/// its pages reached the disk counts fewer), `looked` how many positions its jobs examined.
/// Passes go on while they resolve at least 1/`que_ratio` of what they look at; then the
/// position queue takes over; an empty round ends the iteration.
pub fn after_round(stage: Stage, pair: bool, changed: u64, looked: u64, que_ratio: u64) -> Stage {
    match stage {
        Stage::NoIo(1) if pair => Stage::NoIo(2),
        Stage::NoIo(_) | Stage::Que(_) if changed == 0 => Stage::Fill,
        Stage::NoIo(p) if changed * que_ratio < looked => Stage::Que(p + 1),
        Stage::NoIo(p) => Stage::NoIo(p + 1),
        Stage::Que(r) => Stage::Que(r + 1),
        other => panic!("after_round called on {other:?}"),
    }
}

/// The stage after a complete solving stage, `cap` to the `que` rounds. For a `noio` pass or
/// `que` round, `round` gives how many entries it queued and how many positions it looked
/// at (see [`after_round`]); it is only called for those.
pub fn next_solving_stage(
    stage: Stage,
    slices: &[Slice],
    que_ratio: u64,
    round: impl FnOnce(u32) -> Result<(u64, u64)>,
) -> Result<Stage> {
    Ok(match stage {
        Stage::Cap => Stage::WinMove,
        Stage::WinMove => Stage::Lookup,
        Stage::Lookup => Stage::NoIo(1),
        Stage::NoIo(r) | Stage::Que(r) => {
            let (changed, looked) = round(r)?;
            after_round(stage, slices.len() == 2, changed, looked, que_ratio)
        }
        other => panic!("next_solving_stage called on {other:?}"),
    })
}

/// Entries queued by round `r` on the pair's slices.
pub fn round_changes(site: &Site, slices: &[Slice], round: u32) -> Result<u64> {
    let mut n = 0;
    for s in slices {
        n += posqueue::round_entries(site, s, round)?;
    }
    Ok(n)
}

/// Moves both slices of a filled pair to `solved/` (syncing them first when their pages were
/// written without `fsync`), then drops their position queues and checkpoints.
pub fn publish_pair(site: &Site, slices: &[Slice], sync_first: bool) -> Result<()> {
    for s in slices {
        let (from, to) = (site.work_file(s), site.solved_file(s));
        if sync_first {
            std::fs::File::open(&from)
                .and_then(|f| f.sync_all())
                .map_err(|e| solve_err!("{}: {e}", from.display()))?;
        }
        move_file(&from, &to).map_err(|e| solve_err!("publishing {}: {e}", from.display()))?;
        store::sync_dir(&to)?;
        let _ = std::fs::remove_dir_all(site.queue_dir(s));
    }
    remove_checkpoints(site, slices)
}

/// Renames `from` to `to`; across filesystems (a pair job's local scratch work file going
/// to the site's `solved/`) copies to a hidden name beside `to`, syncs it and renames that,
/// so `to` still appears whole or not at all.
fn move_file(from: &std::path::Path, to: &std::path::Path) -> std::io::Result<()> {
    match std::fs::rename(from, to) {
        Err(e) if e.raw_os_error() == Some(libc::EXDEV) => {
            // Copies killed before their rename, an hour old: a copy takes seconds.
            crate::files::remove_stale_temporaries(to, std::time::Duration::from_secs(3600));
            let name = to.file_name().expect("a file").to_string_lossy();
            let tmp = to.with_file_name(format!(".{name}.{}", std::process::id()));
            std::fs::copy(from, &tmp)?;
            std::fs::File::open(&tmp)?.sync_all()?;
            std::fs::rename(&tmp, to)?;
            std::fs::remove_file(from)
        }
        other => other,
    }
}

/// Removes the job checkpoints (and local stage records) of the slices.
pub fn remove_checkpoints(site: &Site, slices: &[Slice]) -> Result<()> {
    let dir = site.root().join("work/ckpt");
    for e in std::fs::read_dir(&dir).map_err(|e| solve_err!("{}: {e}", dir.display()))? {
        let e = e?;
        let name = e.file_name().to_string_lossy().into_owned();
        if slices.iter().any(|s| name.contains(&format!("-{s}-"))) {
            std::fs::remove_file(e.path())?;
        }
    }
    Ok(())
}

/// A crash between the renames of a pair's publication leaves one slice in `solved/` and the
/// other filled in `work/`: both fills were complete, so the publication is finished.
pub fn finish_interrupted_publish(site: &Site, slices: &[Slice]) -> Result<()> {
    if !slices.iter().any(|s| site.is_solved(s)) {
        return Ok(());
    }
    for s in slices.iter().filter(|s| !site.is_solved(s)) {
        let from = site.work_file(s);
        std::fs::rename(&from, site.solved_file(s)).map_err(|e| {
            solve_err!(
                "{} is solved but its mirror's work file {} cannot be published: {e}",
                slices[0],
                from.display()
            )
        })?;
        store::sync_dir(&site.solved_file(s))?;
    }
    Ok(())
}

/// The marker `ver` leaves for a slice whose compressed file it checked. It names the
/// format version, so a database of an older version is built and checked again.
pub fn verified_marker(site: &Site, s: &Slice) -> std::path::PathBuf {
    let version = crate::db::format::VERSION;
    site.root()
        .join(format!("work/ckpt/db-{s}.v{version}.verified"))
}

/// Writes the verified markers of the slices.
pub fn mark_verified(site: &Site, slices: &[Slice]) -> Result<()> {
    for s in slices {
        let marker = verified_marker(site, s);
        std::fs::write(&marker, "").map_err(|e| solve_err!("{}: {e}", marker.display()))?;
    }
    Ok(())
}

/// Where a published pair goes next: compressing, checking, or nothing left to do.
/// A marker counts only while its file is there: a database file deleted or replaced by
/// one of another version is built and checked again.
pub fn database_stage(site: &Site, database: bool, slices: &[Slice]) -> Stage {
    if !database {
        return Stage::Done;
    }
    let db = site.db_dir();
    let current = |s: &Slice| crate::db::format::is_current(&crate::db::probe::slice_path(&db, s));
    if !slices.iter().all(current) {
        Stage::Build
    } else if slices.iter().all(|s| verified_marker(site, s).exists()) {
        Stage::Done
    } else {
        Stage::Built
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verified_marker_without_its_database_file_is_built_again() {
        let root = crate::files::test_dir("stage");
        let site = Site::new(&root);
        std::fs::create_dir_all(root.join("work/ckpt")).unwrap();
        let slices = ["1100.--".parse::<Slice>().unwrap()];
        mark_verified(&site, &slices).unwrap();
        assert_eq!(database_stage(&site, true, &slices), Stage::Build);
        assert_eq!(database_stage(&site, false, &slices), Stage::Done);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn records_round_trip_and_rank_in_order() {
        let all = [
            Stage::Waiting,
            Stage::Cap,
            Stage::WinMove,
            Stage::Lookup,
            Stage::NoIo(1),
            Stage::NoIo(2),
            Stage::Que(3),
            Stage::Fill,
            Stage::Verify,
            Stage::Build,
            Stage::Built,
            Stage::Ver,
            Stage::Done,
        ];
        for w in all.windows(2) {
            assert!(w[0].rank() < w[1].rank(), "{w:?}");
        }
        for s in all {
            assert_eq!(Stage::parse_record(&s.record_text()), Some(s));
        }
        for bad in ["", "noio", "noio 0", "que x", "cap 1 2", "fil"] {
            assert_eq!(Stage::parse_record(bad), None, "{bad}");
        }
    }

    #[test]
    fn rounds_follow_the_papers_rule() {
        assert_eq!(after_round(Stage::NoIo(1), true, 0, 9, 16), Stage::NoIo(2));
        assert_eq!(after_round(Stage::NoIo(1), false, 0, 9, 16), Stage::Fill);
        assert_eq!(after_round(Stage::NoIo(2), true, 1, 100, 16), Stage::Que(3));
        assert_eq!(
            after_round(Stage::NoIo(2), true, 10, 100, 16),
            Stage::NoIo(3)
        );
        assert_eq!(after_round(Stage::Que(3), true, 10, 100, 16), Stage::Que(4));
        assert_eq!(after_round(Stage::Que(4), true, 0, 100, 16), Stage::Fill);
    }
}
