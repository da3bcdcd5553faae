//! Job checkpoints: the next index to do and the statistics so far, written atomically
//! (temporary file, `fsync`, rename) only after the job's dirty pages and queue entries are
//! on disk. A record with `complete = true` marks a finished job, so running it again is a
//! no-op. Through serde (`crate::state`); records of the older `key value` lines are read too.

use super::running::PhaseStats;
use super::{Job, Result, Site};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Checkpoint {
    /// The next index to process (a slice index, or an entry of the input queue for `que`).
    pub next: u64,
    #[serde(deserialize_with = "crate::state::flag")]
    pub complete: bool,
    #[serde(flatten)]
    pub stats: PhaseStats,
}

/// The job's last checkpoint, if any.
pub fn load(site: &Site, job: &Job) -> Result<Option<Checkpoint>> {
    crate::state::read(&site.checkpoint_file(job), "checkpoint", &[])
}

/// Records `c` durably.
pub fn save(site: &Site, job: &Job, c: &Checkpoint, durable: bool) -> Result<()> {
    let path = site.checkpoint_file(job);
    // No directory sync: if a crash loses the rename, the older record stands, and resuming
    // from an older checkpoint is always safe (values only move towards certainty, and
    // queue entries reach the disk before the pages).
    use crate::files::Durability;
    let durability = match durable {
        true => Durability::Data,
        false => Durability::Volatile,
    };
    crate::state::write(&path, c, durability)
}
