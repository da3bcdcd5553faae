//! The layout of a site directory (the shared filesystem all machines see):
//!
//! ```text
//! work/<slice>.nwk                    work file of a slice being solved
//! work/queue/<slice>/r<R>-<first>.pq  positions a job of round R resolved (the position queue)
//! work/ckpt/<job>.ckpt                checkpoint of a job: next index, queue length, statistics
//! work/ckpt/<job>.now                 what a running `pair` job is doing (for `dbstatus`)
//! work/verified/<slice>.v<N>          `ver` checked the slice's compressed file (format version N)
//! work/<slice>.mtc                    moves to conversion of a solved slice being computed
//! work/mtc                            the site builds moves to conversion
//! work/release-solved                 the site removes a pair's solved/ files once verified
//! work/plans                          the `addq plan` lines the site was given (dbstatus counts them)
//! solved/<slice>.nwk                  finished slice: exact win/loss/draw values
//! solved/<slice>.mtc                  finished slice: plies to conversion (a byte a position)
//! solved/<slice>.nwk.released         the .nwk (or .mtc) file was removed by --release-solved
//! db/<slice>.ndb                      compressed slice (docs/FORMAT.md)
//! db/parts/<slice>/<first>-<last>.part runs of one `build` job, until the slice is assembled
//! ```
//!
//! A slice moves from `work/` to `solved/` by one rename once both it and its mirror are
//! filled, so readers of `solved/` never see a slice in progress.

use super::Job;
use crate::slice::Slice;
use std::path::{Path, PathBuf};

#[derive(Clone, Debug)]
pub struct Site {
    root: PathBuf,
}

impl Site {
    pub fn new(root: impl Into<PathBuf>) -> Site {
        Site { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Creates the directories of the layout.
    pub fn create_dirs(&self) -> std::io::Result<()> {
        for d in ["work/queue", "work/ckpt", "solved"] {
            std::fs::create_dir_all(self.root.join(d))?;
        }
        Ok(())
    }

    pub fn work_file(&self, s: &Slice) -> PathBuf {
        self.root.join("work").join(format!("{s}.nwk"))
    }

    pub fn solved_file(&self, s: &Slice) -> PathBuf {
        self.root.join("solved").join(format!("{s}.nwk"))
    }

    /// Work file of a slice's moves to conversion (a byte a position) being computed.
    pub fn mtc_work_file(&self, s: &Slice) -> PathBuf {
        self.root.join("work").join(format!("{s}.mtc"))
    }

    /// Work file of a slice's watched king moves while its moves to conversion are computed
    /// (a byte a position; `solve::mtc::phase`).
    pub fn mtc_watch_file(&self, s: &Slice) -> PathBuf {
        self.root.join("work").join(format!("{s}.mtw"))
    }

    /// A finished slice's moves to conversion.
    pub fn mtc_solved_file(&self, s: &Slice) -> PathBuf {
        self.root.join("solved").join(format!("{s}.mtc"))
    }

    /// The compressed database directory.
    pub fn db_dir(&self) -> PathBuf {
        self.root.join("db")
    }

    pub fn solved_dir(&self) -> PathBuf {
        self.root.join("solved")
    }

    pub fn queue_dir(&self, s: &Slice) -> PathBuf {
        self.root.join("work/queue").join(s.to_string())
    }

    /// The position queue a job of `round` on `s` starting at `first` writes.
    pub fn queue_file(&self, s: &Slice, round: u32, first: u64) -> PathBuf {
        self.queue_dir(s).join(format!("r{round}-{first}.pq"))
    }

    /// What a running `pair` job is doing now: its steps' checkpoints may be in a scratch
    /// directory on the runner's machine (`solve::pair_job`).
    pub fn job_note_file(&self, job: &Job) -> PathBuf {
        self.root
            .join("work/ckpt")
            .join(format!("{}.now", job.file_stem()))
    }

    pub fn checkpoint_file(&self, job: &Job) -> PathBuf {
        self.root
            .join("work/ckpt")
            .join(format!("{}.ckpt", job.file_stem()))
    }

    /// Whether the slice's values are computed: its `solved/` file, or the tombstone
    /// [`released_file`] left when `--release-solved` removed that file.
    pub fn is_solved(&self, s: &Slice) -> bool {
        finished(&self.solved_file(s))
    }

    /// Whether the slice's `solved/` file was removed by `--release-solved` (its values are
    /// read from `db/` since).
    pub fn values_released(&self, s: &Slice) -> bool {
        released_file(&self.solved_file(s)).exists()
    }

    /// The site setting of `addq plan --release-solved`: a pair's `solved/` files are
    /// removed once its database is verified, and every job reads lower slices from `db/`.
    pub fn release_marker(&self) -> PathBuf {
        self.root.join("work/release-solved")
    }

    pub fn releases_solved(&self) -> bool {
        self.release_marker().exists()
    }

    /// Every solved slice, in (pieces, name) order (none before `solved/` exists).
    pub fn solved_slices(&self) -> crate::error::Result<Vec<Slice>> {
        let mut slices = match slice_files(&self.solved_dir(), "nwk") {
            Ok(slices) => slices,
            Err(SliceFilesError::List(e)) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(SliceFilesError::List(e)) => return Err(e.into()),
            Err(e) => return Err(crate::error::Error::Failed(format!("site {e}"))),
        };
        slices.sort_by_key(|s| (s.pieces(), s.to_string()));
        Ok(slices)
    }
}

pub use crate::slice::key::{SliceFilesError, slice_files};

/// The tombstone of a finished slice's `solved/` file (values or distances) that
/// `--release-solved` removed: `solved/2221.66.nwk` leaves `solved/2221.66.nwk.released`, so
/// that the stages still see the slice solved.
pub fn released_file(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".released");
    PathBuf::from(name)
}

/// Whether a finished slice's `solved/` file is there, or was there and was released.
pub fn finished(path: &Path) -> bool {
    path.exists() || released_file(path).exists()
}
