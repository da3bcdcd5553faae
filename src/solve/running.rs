//! What every job shares, whatever its phase: how it runs ([`RunOptions`]), what it
//! reports ([`Outcome`], [`PhaseStats`]), and when it checkpoints or stops (`Clock`, the
//! stop checks of the jobs that keep no checkpoint). The phases, the database's jobs, the
//! distances and the pair jobs all import it; it imports none of them.

use super::solved::{LowerSlices, SolvedStore, SolvedWorkFiles};
use super::{Job, Result, Site, Value};
use crate::solve_err;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Runs any job: [`super::run::run_job`], handed to the pair job, which runs the phases of
/// its pair one after the other, so that the pair job need not import the dispatch above it.
pub type RunJob = fn(&Site, &Job, &RunOptions) -> Result<Outcome>;

/// What a job did: positions looked at, and how many it resolved to each value (for `fill`:
/// the final values of its range).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
pub struct PhaseStats {
    pub looked: u64,
    pub win: u64,
    pub loss: u64,
    pub draw: u64,
}

impl PhaseStats {
    pub fn add(&mut self, o: &PhaseStats) {
        self.looked += o.looked;
        self.win += o.win;
        self.loss += o.loss;
        self.draw += o.draw;
    }

    pub(crate) fn count(&mut self, v: Value) {
        match v {
            Value::Win => self.win += 1,
            Value::Loss => self.loss += 1,
            Value::Draw => self.draw += 1,
            Value::Unknown => {}
        }
    }
}

/// How a job runs: cache sizes, checkpoint interval, and when to stop early.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Page buffers for each work file the job opens.
    pub buffers: usize,
    /// Finished slices, shared by the jobs of a process; `None`: the job loads its own.
    pub solved: Option<std::sync::Arc<SolvedStore>>,
    pub checkpoint_every: Duration,
    /// Checkpoint and stop at this time.
    pub deadline: Option<Instant>,
    /// Checkpoint and stop when set (by SIGTERM).
    pub stop: Option<&'static AtomicBool>,
    /// `fsync` queue entries, pages and records at each checkpoint, so that the work survives
    /// a machine crash. Without it a crash may leave the files inconsistent: the local build
    /// uses that only for small slice pairs, which it redoes from scratch after a restart.
    pub durable: bool,
    /// The compressed database `ver` reads, shared by the jobs of a process; `None`: the
    /// job opens its own.
    pub database: Option<std::sync::Arc<crate::db::Database>>,
    /// `cap` and `lookup` read the finished lower slices from the compressed database (the
    /// `database` above, or the job's own: the verified compressed files) instead of
    /// `solved/` work files.
    pub lower_from_database: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            buffers: 2048,
            solved: None,
            checkpoint_every: Duration::from_secs(60),
            deadline: None,
            stop: None,
            durable: true,
            database: None,
            lower_from_database: false,
        }
    }
}

/// How a job ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Done(PhaseStats),
    /// Checkpointed before the end; run the same job again to resume from `next`.
    Stopped {
        next: u64,
        stats: PhaseStats,
    },
}

impl RunOptions {
    /// The finished slices the job reads: the process's shared store, or its own.
    pub(crate) fn solved_store(&self, site: &Site) -> std::sync::Arc<SolvedStore> {
        self.solved_store_as(site, super::pool::Load::Read)
    }

    /// [`RunOptions::solved_store`], where a store of the job's own loads its slices as
    /// `how` says (a shared store keeps its own way: it serves other jobs too).
    pub(crate) fn solved_store_as(
        &self,
        site: &Site,
        how: super::pool::Load,
    ) -> std::sync::Arc<SolvedStore> {
        (self.solved.clone())
            .unwrap_or_else(|| SolvedStore::with_load(site, SolvedStore::BUDGET, how))
    }

    /// Bytes of decoded database slices `jobs` jobs may hold: as much as their page buffers.
    pub fn decode_budget(&self, jobs: usize) -> usize {
        self.buffers * super::store::PAGE_BYTES * 2 * jobs.max(1)
    }

    /// The compressed database the job reads: the process's shared one, or its own.
    pub(crate) fn database(&self, site: &Site) -> Result<Arc<crate::db::Database>> {
        Ok(match &self.database {
            Some(db) => db.clone(),
            None => Arc::new(
                crate::db::Database::open(&site.db_dir(), 64 << 20)?
                    .decoding(self.decode_budget(1)),
            ),
        })
    }

    /// Where a job reads the finished slices its conversions lead to: the compressed
    /// database with [`RunOptions::lower_from_database`] or on a site that releases its
    /// `solved/` files ([`Site::releases_solved`]), else `solved/`.
    pub(crate) fn lower_slices(&self, site: &Site) -> Result<LowerSlices> {
        Ok(match self.lower_from_database || site.releases_solved() {
            true => {
                // The first pairs of a build have nothing below them, and no db/ yet.
                let db = site.db_dir();
                super::database::publish::ensure_version_line(&db, crate::db::probe::VERSION_LINE)?;
                LowerSlices::Database(crate::db::probe::DbLookup::new(self.database(site)?))
            }
            false => LowerSlices::WorkFiles(SolvedWorkFiles::new(self.solved_store(site))),
        })
    }
}

impl Outcome {
    /// How a job with `stats` whose scan stopped at `end` ended (`None`: it reached the end
    /// of its work, which `complete` records).
    pub(crate) fn after_scan(
        end: Option<u64>,
        stats: PhaseStats,
        complete: impl FnOnce() -> Result<()>,
    ) -> Result<Outcome> {
        match end {
            None => complete().map(|_| Outcome::Done(stats)),
            Some(next) => Ok(Outcome::Stopped { next, stats }),
        }
    }
}

/// When to checkpoint and whether to stop.
pub(crate) struct Clock<'a> {
    opts: &'a RunOptions,
    last: Instant,
}

pub(crate) enum Tick {
    Go,
    Checkpoint,
    Stop,
}

impl Clock<'_> {
    pub(crate) fn new(opts: &RunOptions) -> Clock<'_> {
        Clock {
            opts,
            last: Instant::now(),
        }
    }

    pub(crate) fn tick(&mut self, wants_flush: bool) -> Tick {
        let now = Instant::now();
        if stop_requested_at(self.opts, now) {
            Tick::Stop
        } else if wants_flush || now.duration_since(self.last) >= self.opts.checkpoint_every {
            self.last = now;
            Tick::Checkpoint
        } else {
            Tick::Go
        }
    }
}

pub(crate) fn check_resume(job: &Job, next: u64, lo: u64, hi: u64) -> Result<()> {
    if next < lo || next > hi {
        return Err(solve_err!(
            "job {job}: checkpoint index {next} lies outside [{lo}, {hi}]"
        ));
    }
    Ok(())
}

/// How often (in positions) a long job looks at the stop flag and the deadline.
pub(crate) const STOP_CHECK: u64 = 1 << 16;

/// Whether the job is asked to stop (SIGTERM) or its deadline has passed.
pub(crate) fn stop_requested(opts: &RunOptions) -> bool {
    stop_requested_at(opts, Instant::now())
}

fn stop_requested_at(opts: &RunOptions, now: Instant) -> bool {
    opts.stop.is_some_and(|s| s.load(Ordering::Relaxed)) || opts.deadline.is_some_and(|d| now >= d)
}

/// A `build` or `ver` job stopped before its end: it keeps no partial state, so it resumes
/// from its first position.
pub(crate) fn from_the_start(job: &Job) -> Outcome {
    Outcome::Stopped {
        next: job.first,
        stats: PhaseStats::default(),
    }
}
