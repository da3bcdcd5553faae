//! The stages a slice pair goes through (paper Figure 4): `cap`, `winmove`, `lookup`, `noio`
//! passes alternating between the slice and its mirror while they resolve many positions,
//! `que` rounds until the position queue is empty, `fill`, publication to `solved/`, `build`
//! into the compressed database, and `ver` once the pairs below are verified.
//!
//! [`machine`] decides, for the local build, the `pair` job and the queue runners alike;
//! [`files`] does what the decisions mean on disk; this module names the stages and keeps
//! the one stage record of a pair, `done/<first slice>.stage`.

pub mod files;
pub mod machine;

pub use files::{
    below_verified, database_stage, database_work, discard_mtc_work, discard_work,
    finish_interrupted_publish, is_verified, mark_mtc_verified, mark_verified, mtc_done,
    mtc_pending, publish_mtc, publish_pair, que_input, release_solved, remove_checkpoints,
    round_changes, solved_stage, verified_marker, verified_markers,
};
pub use machine::{Effect, Facts, Transition, noio_slice};

use super::{Result, Site};
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
    /// Published to `solved/`; moves to conversion, round r (when the site builds them).
    Mtc(u32),
    /// Published to `solved/`; compressing into `db/`.
    Build,
    /// Built, waiting for the pairs below to be verified before `ver`.
    Built,
    Ver,
    /// Verified; checking the compressed moves to conversion (when the pair has them).
    MtcVer,
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
            Stage::Mtc(r) => format!("mtc {r}"),
            Stage::Build => "build".into(),
            Stage::Built => "built".into(),
            Stage::Ver => "ver".into(),
            Stage::MtcVer => "mtcver".into(),
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
            (["mtc", _], Some(r)) => Stage::Mtc(r),
            (["build"], _) => Stage::Build,
            (["built"], _) => Stage::Built,
            (["ver"], _) => Stage::Ver,
            (["mtcver"], _) => Stage::MtcVer,
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
            Stage::Mtc(r) => (7, r),
            Stage::Build => (8, 0),
            Stage::Built => (9, 0),
            Stage::Ver => (10, 0),
            Stage::MtcVer => (11, 0),
            Stage::Done => (12, 0),
        }
    }
}

/// The pair's stage record: `done/<first slice>.stage`, one line such as `noio 3`.
pub fn record_path(site: &Site, slices: &[Slice]) -> std::path::PathBuf {
    site.root()
        .join("done")
        .join(format!("{}.stage", slices[0]))
}

/// Where the local build kept its stage records before they moved to [`record_path`]
/// (read when there is no record there, so a build interrupted before can resume).
fn old_local_record_path(site: &Site, slices: &[Slice]) -> std::path::PathBuf {
    site.root()
        .join("work/ckpt")
        .join(format!("pair-{}-.stage", slices[0]))
}

/// The pair's stage record, if it has one.
pub fn read_record(site: &Site, slices: &[Slice]) -> Result<Option<Stage>> {
    for path in [
        record_path(site, slices),
        old_local_record_path(site, slices),
    ] {
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                return Stage::parse_record(&text).map(Some).ok_or_else(|| {
                    solve_err!("{}: corrupt stage record {text:?}", path.display())
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(solve_err!("{}: {e}", path.display())),
        }
    }
    Ok(None)
}

/// Records that the pair reached `stage`.
pub fn write_record(
    site: &Site,
    slices: &[Slice],
    stage: Stage,
    durability: crate::files::Durability,
) -> Result<()> {
    let path = record_path(site, slices);
    let text = stage.record_text() + "\n";
    crate::files::replace(&path, text.as_bytes(), durability)
        .map_err(|e| solve_err!("{}: stage record not written: {e}", path.display()))
}

/// The stage the pair has reached, from its record (`None`: no record, or one the driver
/// does not trust) and the site's files. A published pair is at its database stage, unless
/// its record already names a later one (the queue runners' `built`, `ver`, `done`); an
/// unpublished pair is where its record says, at `fill` at the latest, or at `cap`.
/// A record of a distance round counts while the rounds' work files are there: the local
/// build leaves it after publishing the distances, and distances removed from `solved/`
/// later are computed again from round 1.
pub fn reached(
    site: &Site,
    slices: &[Slice],
    database: bool,
    record: Option<Stage>,
) -> Result<Stage> {
    let solved = slices.iter().all(|s| site.is_solved(s));
    let solving = Stage::Cap.rank()..=Stage::Fill.rank();
    let mtc_pending = || solved && files::mtc_pending(site, slices);
    Ok(match record {
        Some(Stage::Mtc(r)) if mtc_pending() && files::mtc_started(site, slices) => Stage::Mtc(r),
        Some(r) if solved && r.rank() >= Stage::Build.rank() && !mtc_pending() => r,
        _ if solved => solved_stage(site, database, slices),
        None => Stage::Cap,
        Some(r) if solving.contains(&r.rank()) => r,
        Some(r) => {
            return Err(solve_err!(
                "{}: the record says {:?} but the pair is not in solved/ (remove the record \
                 to solve the pair again)",
                record_path(site, slices).display(),
                r.record_text()
            ));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
            Stage::Mtc(1),
            Stage::Mtc(2),
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
        for bad in [
            "", "noio", "noio 0", "que x", "cap 1 2", "fil", "mtc", "mtc 0",
        ] {
            assert_eq!(Stage::parse_record(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_record_and_the_files_say_where_a_pair_is() {
        let root = crate::files::test_dir("reached");
        let site = Site::new(&root);
        site.create_dirs().unwrap();
        let slices: Vec<Slice> = ["2211.01", "2211.10"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        assert_eq!(read_record(&site, &slices).unwrap(), None);
        assert_eq!(reached(&site, &slices, true, None).unwrap(), Stage::Cap);
        // A local build interrupted before the records moved resumes from its old record.
        let old = root.join("work/ckpt/pair-2211.01-.stage");
        std::fs::write(&old, "noio 3").unwrap();
        assert_eq!(read_record(&site, &slices).unwrap(), Some(Stage::NoIo(3)));
        let volatile = crate::files::Durability::Volatile;
        write_record(&site, &slices, Stage::Que(4), volatile).unwrap();
        assert!(record_path(&site, &slices).ends_with("done/2211.01.stage"));
        let record = read_record(&site, &slices).unwrap();
        assert_eq!(record, Some(Stage::Que(4)));
        assert_eq!(
            reached(&site, &slices, true, record).unwrap(),
            Stage::Que(4)
        );
        // A database stage for a pair not in solved/ is an error that names the record.
        let e = reached(&site, &slices, true, Some(Stage::Built)).unwrap_err();
        assert!(e.to_string().contains("done/2211.01.stage"), "{e}");
        // Published (a crash between the publication and the record): the database decides,
        // unless the record already names a later stage.
        for s in &slices {
            std::fs::write(site.solved_file(s), "").unwrap();
        }
        let fill = Some(Stage::Fill);
        assert_eq!(reached(&site, &slices, true, fill).unwrap(), Stage::Build);
        assert_eq!(reached(&site, &slices, false, fill).unwrap(), Stage::Done);
        let ver = Some(Stage::Ver);
        assert_eq!(reached(&site, &slices, true, ver).unwrap(), Stage::Ver);
        std::fs::write(record_path(&site, &slices), "noio").unwrap();
        let e = read_record(&site, &slices).unwrap_err().to_string();
        assert!(e.contains("corrupt stage record"), "{e}");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
