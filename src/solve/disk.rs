//! The disk a build needs at its peak, said and checked before it starts (`build-local`,
//! `addq plan`): a build of hours must not die of a full disk near its end.
//!
//! - Work files: 2 bits per position in 8 KiB pages plus a header page, for every slice not
//!   yet solved (solved files are the same files, renamed into `solved/`); what an existing
//!   work file already holds on disk is not counted again.
//! - Database: one byte per 32 positions for every slice not yet compressed. Measured: 2..5
//!   compresses to 111 positions per byte (146 M positions, 1.3 MB of `db/`), larger slices
//!   better, so this is a safe side bound.
//! - Moves to conversion (a site that builds them): a byte per position in the same pages,
//!   for every slice whose distances are not in `solved/` yet.
//! - Position queues: one byte per position of the largest pair, per runner. Measured: the
//!   queues of a 2..5 build with 2 runners peaked at 7.1 MB, its largest pair has 4.0 M
//!   positions.
//!
//! For 2..5 with 2 runners this says 76 MB; the site's files peaked at 65.2 MB (`du` every
//! 0.2 s through `jobrunner build-local --pieces 5 --runners 2`).

use super::Site;
use super::store::{MTC_BITS, file_len, file_len_bits};
use crate::slice::Slice;
use crate::space::{self, SpaceError};

/// What a build will still write, by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiskNeeds {
    pub work: u64,
    pub database: u64,
    pub queues: u64,
    /// Positions of the largest pair not yet solved (its position queues are the largest).
    largest_unsolved: u64,
}

/// Positions per byte assumed for a compressed slice (see the module documentation).
const DB_POSITIONS_PER_BYTE: u64 = 32;
/// Position-queue bytes per position of the largest pair, per runner.
const QUEUE_BYTES_PER_POSITION: u64 = 1;

impl DiskNeeds {
    pub fn total(&self) -> u64 {
        self.work + self.database + self.queues
    }

    /// Adds a pair: `solved` when its work files are done, `compressed` when its database
    /// files are; its moves-to-conversion files too when the site builds them and they are
    /// not done.
    pub fn add_pair(&mut self, site: &Site, slices: &[Slice], solved: bool, compressed: bool) {
        let count: u64 = slices.iter().map(|s| s.count()).sum();
        // Pending for an unsolved pair whenever the site builds distances.
        if super::stage::mtc_pending(site, slices) {
            for s in slices {
                // The distances and the watched moves, a byte a position each.
                let len = file_len_bits(s.count(), MTC_BITS);
                self.work += space::still_to_allocate(&site.mtc_work_file(s), len);
                self.work += space::still_to_allocate(&site.mtc_watch_file(s), len);
            }
            self.largest_unsolved = self.largest_unsolved.max(count);
        }
        if !solved {
            for s in slices {
                let len = file_len(s.count());
                self.work += space::still_to_allocate(&site.work_file(s), len);
            }
            self.largest_unsolved = self.largest_unsolved.max(count);
        }
        if !compressed {
            self.database += count.div_ceil(DB_POSITIONS_PER_BYTE);
        }
    }

    /// Scratch for the position queues of `runners` runners, each on a pair as large as the
    /// largest one added that is not solved yet.
    pub fn add_queues(&mut self, runners: usize) {
        self.queues = runners as u64 * self.largest_unsolved * QUEUE_BYTES_PER_POSITION;
    }

    /// The log line: the total and its parts.
    pub fn describe(&self) -> String {
        format!(
            "{} (work files {}, database {}, position queues {})",
            space::bytes(self.total()),
            space::bytes(self.work),
            space::bytes(self.database),
            space::bytes(self.queues)
        )
    }

    /// Fails unless the site's disk has room for all of it; the bytes free.
    pub fn check(&self, site: &Site, what: &str) -> Result<u64, SpaceError> {
        space::ensure(site.root(), self.total(), what)
    }
}
