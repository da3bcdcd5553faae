//! Each slice pair's progress, kept in files so that runners on many machines share it.
//!
//! `done/<first slice of the pair>.stage` holds the stage the pair has reached (the same
//! stages as the local build, [`Stage`]). A job is *runnable* when the pair has reached the
//! job's stage (its inputs are done):
//!
//! | job                     | runnable when                                              |
//! |-------------------------|------------------------------------------------------------|
//! | `cap`                   | every pair it depends on is in `solved/`                    |
//! | `winmove`, `lookup`     | the pair reached that stage (the one before is complete)   |
//! | `noio`/`que` round r    | the pair reached round r                                    |
//! | `fill`                  | the pair reached `fill` (the last round changed nothing)   |
//! | `build`                 | both slices are in `solved/`                               |
//! | `ver`                   | both slices are in `db/` and every pair below is verified  |
//!
//! After every job its runner calls [`advance`]: under the pair's lock file it checks whether
//! the stage is now complete (its done records tile the slices) and, if so, decides the next
//! stage exactly as the local build does, queues that stage's jobs at the top of the queue
//! the job came from, and only then records the stage. Two runners finishing the last two
//! ranges at once both get here, one after the other; the second finds the decision made.
//! `addq plan` queues the fixed stages (`cap` to the first `noio` passes, `build`, `ver`);
//! the rounds after them, the `que` rounds and `fill` are queued here.

use super::done;
use super::file::Queue;
use super::line::{QueueLine, QueuedJob, mini_slices};
use crate::error::{Error, Result};
use crate::lock::{LockFile, Machine};
use crate::slice::{Slice, SlicePair};
use crate::solve::stage::{
    Stage, database_stage, mark_verified, next_solving_stage, noio_slice, publish_pair,
    round_changes, verified_marker,
};
use crate::solve::{Job, Phase, PhaseStats, Site, posqueue};
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

/// Positions per job when a runner queues a stage (as `addq`'s default).
pub const STAGE_JOB_POSITIONS: u64 = 10_000_000;
/// Position-queue entries per `que` job.
const QUE_JOB_ENTRIES: u64 = 1 << 20;
/// Passes go on while they resolve at least 1/16 of what they look at (as the local build).
const QUE_RATIO: u64 = 16;

fn stage_path(site: &Site, pair: &SlicePair) -> PathBuf {
    site.root().join("done").join(format!("{}.stage", pair.0))
}

/// The stage a pair has reached. With no record yet it is read off the site: `cap` for a
/// pair not in `solved/`; for one solved by other means (the local build) its database stage.
pub fn read_stage(site: &Site, pair: &SlicePair) -> Result<Stage> {
    let path = stage_path(site, pair);
    match std::fs::read_to_string(&path) {
        Ok(text) => Stage::parse_record(&text).ok_or_else(|| {
            Error::Failed(format!("{}: corrupt stage record {text:?}", path.display()))
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let slices = pair.slices();
            Ok(if slices.iter().all(|s| site.is_solved(s)) {
                database_stage(site, true, &slices)
            } else {
                Stage::Cap
            })
        }
        Err(e) => Err(Error::io(path.display(), e)),
    }
}

fn write_stage(site: &Site, pair: &SlicePair, stage: Stage) -> Result<()> {
    let path = stage_path(site, pair);
    let text = stage.record_text();
    crate::files::replace(&path, text.as_bytes(), crate::files::Durability::Full)
        .map_err(|e| Error::io(path.display(), e))
}

/// The stage a job belongs to.
fn stage_of(job: &Job) -> Stage {
    match job.phase {
        Phase::Cap => Stage::Cap,
        Phase::WinMove => Stage::WinMove,
        Phase::Lookup => Stage::Lookup,
        Phase::NoIo => Stage::NoIo(job.round),
        Phase::Que => Stage::Que(job.round),
        Phase::Fill => Stage::Fill,
        Phase::Build => Stage::Build,
        Phase::Ver => Stage::Built,
        // Runnable by its own rule (Readiness::runnable), whatever the stage.
        Phase::Pair => Stage::Cap,
    }
}

/// Answers "is this job runnable" for one scan of a queue, remembering what it read (a scan
/// may look at many lines of the same pairs).
pub struct Readiness<'a> {
    site: &'a Site,
    stages: HashMap<SlicePair, Stage>,
    files: HashMap<PathBuf, bool>,
}

impl<'a> Readiness<'a> {
    pub fn new(site: &'a Site) -> Self {
        Readiness {
            site,
            stages: HashMap::new(),
            files: HashMap::new(),
        }
    }

    fn exists(&mut self, path: PathBuf) -> bool {
        *self.files.entry(path).or_insert_with_key(|p| p.exists())
    }

    fn stage(&mut self, pair: SlicePair) -> Result<Stage> {
        if let Some(s) = self.stages.get(&pair) {
            return Ok(*s);
        }
        let s = read_stage(self.site, &pair)?;
        self.stages.insert(pair, s);
        Ok(s)
    }

    fn all_solved(&mut self, pair: &SlicePair) -> bool {
        pair.slices()
            .iter()
            .all(|s| self.exists(self.site.solved_file(s)))
    }

    fn dependencies_verified(&mut self, pair: &SlicePair) -> bool {
        pair.dependencies().iter().all(|d| {
            d.slices()
                .iter()
                .all(|s| self.exists(verified_marker(self.site, s)))
        })
    }

    /// Whether `job`'s inputs are done (the table in the module documentation).
    pub fn runnable(&mut self, job: &Job) -> Result<bool> {
        let pair = SlicePair::of(job.slice);
        Ok(match job.phase {
            Phase::Cap => pair.dependencies().iter().all(|d| self.all_solved(d)),
            Phase::Build => self.all_solved(&pair),
            Phase::Ver => {
                let db = self.site.db_dir();
                pair.slices()
                    .iter()
                    .all(|s| self.exists(crate::db::probe::slice_path(&db, s)))
                    && self.dependencies_verified(&pair)
            }
            // It ends with `ver`, which reads the verified databases below.
            Phase::Pair => self.dependencies_verified(&pair),
            _ => self.stage(pair)?.rank() >= stage_of(job).rank(),
        })
    }
}

impl Readiness<'_> {
    /// What a job that is not runnable waits for, as `--until-empty` tells the operator.
    pub fn why_not(&mut self, job: &Job) -> Result<String> {
        let pair = SlicePair::of(job.slice);
        let unverified = |r: &mut Self| {
            pair.dependencies().into_iter().find(|d| {
                !d.slices()
                    .iter()
                    .all(|s| r.exists(verified_marker(r.site, s)))
            })
        };
        Ok(match job.phase {
            Phase::Cap => match pair
                .dependencies()
                .into_iter()
                .find(|d| !self.all_solved(d))
            {
                Some(d) => format!("waits for pair {d} to be solved, which is in no queue"),
                None => "runnable".into(),
            },
            Phase::Build => format!("waits for pair {pair} to be in solved/"),
            Phase::Ver | Phase::Pair => match unverified(self) {
                Some(d) => format!("waits for pair {d} to be verified"),
                None => format!("waits for pair {pair}'s files in db/"),
            },
            _ => format!(
                "waits for pair {pair} to reach stage {:?}; it is at {:?}",
                stage_of(job).record_text(),
                self.stage(pair)?.record_text()
            ),
        })
    }
}

/// Whether every job of the pair's `stage` is done.
fn stage_complete(site: &Site, slices: &[Slice], stage: Stage) -> Result<bool> {
    let all = |phase: Phase, round: u32| -> Result<bool> {
        for s in slices {
            if !done::is_complete(site, s, phase, round)? {
                return Ok(false);
            }
        }
        Ok(true)
    };
    match stage {
        Stage::Cap => all(Phase::Cap, 0),
        Stage::WinMove => all(Phase::WinMove, 0),
        Stage::Lookup => all(Phase::Lookup, 0),
        Stage::NoIo(r) => done::is_complete(site, &noio_slice(slices, r), Phase::NoIo, r),
        Stage::Que(r) => all(Phase::Que, r),
        Stage::Fill => all(Phase::Fill, 0),
        // The last build job of a slice assembles its file.
        Stage::Build => Ok(slices
            .iter()
            .all(|s| crate::db::probe::slice_path(&site.db_dir(), s).exists())),
        Stage::Built => all(Phase::Ver, 0),
        _ => Ok(false),
    }
}

/// Looked-at positions of a round's jobs (for the noio/que decision).
fn round_looked(site: &Site, slices: &[Slice], stage: Stage) -> Result<u64> {
    let (phase, r) = match stage {
        Stage::NoIo(r) => (Phase::NoIo, r),
        Stage::Que(r) => (Phase::Que, r),
        _ => return Ok(0),
    };
    let mut looked = 0;
    for s in slices {
        looked += done::progress(site, s, phase, r)?.1.looked;
    }
    Ok(looked)
}

/// What a runner reports from [`advance`], for its log.
pub type Log<'a> = &'a mut dyn FnMut(String);

/// Called by a runner after `job` (taken from `queue`) is done: moves the job's pair on as
/// far as its finished stages allow (module documentation).
pub fn advance(site: &Site, queue: &Queue, here: &Machine, job: &Job, log: Log) -> Result<()> {
    let pair = SlicePair::of(job.slice);
    let slices = pair.slices();
    let lock_path = site.root().join("done").join(format!("{}.lock", pair.0));
    let mut events = Vec::new();
    let lock = LockFile::acquire(&lock_path, here, Duration::from_secs(300), &mut events)
        .map_err(|e| format!("locking pair {pair}: {e}"))?;
    for crate::lock::LockEvent::BrokeStale { path, owner } in events {
        log(format!(
            "broke the stale lock {} of pid {} on {}",
            path.display(),
            owner.pid,
            owner.host
        ));
    }
    let err = |e: crate::solve::SolveError| e.to_string();
    loop {
        let stage = read_stage(site, &pair)?;
        if !stage_complete(site, &slices, stage)? {
            break;
        }
        let next = match stage {
            Stage::Cap | Stage::WinMove | Stage::Lookup | Stage::NoIo(_) | Stage::Que(_) => {
                next_solving_stage(stage, &slices, QUE_RATIO, |r| {
                    let changed = round_changes(site, &slices, r)?;
                    let looked = round_looked(site, &slices, stage)?;
                    Ok((changed, looked))
                })
                .map_err(err)?
            }
            Stage::Fill => {
                publish_pair(site, &slices, false).map_err(err)?;
                log(format!("published {pair} to solved/"));
                Stage::Build
            }
            Stage::Build => Stage::Built,
            Stage::Built => {
                mark_verified(site, &slices).map_err(err)?;
                log(format!("verified {pair} in db/"));
                Stage::Done
            }
            _ => break,
        };
        let jobs = stage_jobs(site, &slices, next, here)?;
        if !jobs.is_empty() {
            queue_missing(site, queue, here, log, &jobs)?;
        }
        write_stage(site, &pair, next)?;
        log(format!(
            "pair {pair}: {} complete, now {}{}",
            stage.record_text(),
            next.record_text(),
            match jobs.len() {
                0 => String::new(),
                n => format!(" ({n} jobs queued at the top of {})", queue.name),
            }
        ));
    }
    lock.release()
        .map_err(|e| Error::io(format_args!("unlocking pair {pair}"), e))
}

/// Queues at the top the stage's jobs that are not queued, running or done already: a crash
/// between queueing them and recording the stage makes the next `advance` decide again, and
/// must not queue a job twice (two runners would run it side by side).
fn queue_missing(
    site: &Site,
    queue: &Queue,
    here: &Machine,
    log: Log,
    jobs: &[QueueLine],
) -> Result<()> {
    let running: Vec<Job> = crate::queue::running::read_all(site)?
        .iter()
        .filter_map(|(_, r)| r.job().ok().map(|(_, j)| j))
        .collect();
    queue.with_lines(here, log, |lines| {
        let queued: std::collections::HashSet<Job> = lines
            .iter()
            .filter_map(|e| match e.parse() {
                Ok(Some(QueueLine::Job(q))) => q.job().ok(),
                _ => None,
            })
            .collect();
        let mut new = Vec::new();
        for l in jobs {
            let QueueLine::Job(q) = l else { continue };
            let job = q.job()?;
            if queued.contains(&job)
                || running.contains(&job)
                || done::record_path(site, &job).exists()
            {
                continue;
            }
            new.push(super::file::Entry {
                line: 0,
                text: l.to_string(),
            });
        }
        let changed = !new.is_empty();
        let rest = std::mem::take(lines);
        lines.extend(new);
        lines.extend(rest);
        Ok(((), changed))
    })
}

/// The jobs a runner queues when the pair enters `stage`: none for the stages `addq plan`
/// queues itself.
fn stage_jobs(
    site: &Site,
    slices: &[Slice],
    stage: Stage,
    here: &Machine,
) -> Result<Vec<QueueLine>> {
    let pair = slices.len() == 2;
    let mut lines = Vec::new();
    let mut whole = |phase: Phase, s: Slice, round: u32| {
        lines.extend(
            mini_slices(phase, false, s, round, STAGE_JOB_POSITIONS)
                .into_iter()
                .map(QueueLine::Job),
        )
    };
    match stage {
        Stage::NoIo(1) => {}
        Stage::NoIo(2) if pair => {}
        Stage::NoIo(r) => whole(Phase::NoIo, noio_slice(slices, r), r),
        Stage::Fill => slices.iter().for_each(|s| whole(Phase::Fill, *s, 1)),
        Stage::Que(r) => {
            for s in slices {
                posqueue::remove_rounds_before(site, s, r.saturating_sub(1))
                    .map_err(|e| e.to_string())?;
            }
            for s in slices {
                let input =
                    posqueue::round_entries(site, &s.mirror(), r - 1).map_err(|e| e.to_string())?;
                if input == 0 {
                    // Nothing to re-evaluate: the round is done on this slice.
                    let job = Job::whole(Phase::Que, *s, r);
                    done::write(site, &job, &PhaseStats::default(), &here.host, 0.0)?;
                    continue;
                }
                let n = input.div_ceil(QUE_JOB_ENTRIES);
                for (k, j) in Job::split(Phase::Que, *s, r, n).iter().enumerate() {
                    lines.push(QueueLine::Job(QueuedJob::explicit(j, k as u32)));
                }
            }
        }
        _ => {}
    }
    Ok(lines)
}

/// The lines `addq QUEUE plan 2..N` adds: for every pair, in the plan's dependency order,
/// its `cap`, `winmove`, `lookup` and first `noio` passes, then `build` and `ver`, split into
/// mini-slices of about `positions` (a pair of fewer than `pair_below` positions not yet
/// begun: one `pair` job instead); without what is done or under way (a pair in
/// `solved/`, or with a stage record or done records, has its solving jobs queued or
/// running already; likewise `build` and `ver` of a slice with a file in `db/`, a verified
/// marker or done records of that phase). So a plan added again after an interruption adds
/// only what is missing (the caller also drops lines still queued). With `only`, just those
/// slices' pairs and what they depend on.
pub fn plan_lines(
    site: &Site,
    min: u32,
    max: u32,
    positions: u64,
    pair_below: u64,
    only: &[Slice],
) -> Result<Vec<(SlicePair, QueueLine)>> {
    if !(2..=10).contains(&min) || !(min..=10).contains(&max) {
        return Err(Error::Failed(format!(
            "plan {min}..{max}: piece counts go from 2 to 10, smallest first"
        )));
    }
    let wanted = match only {
        [] => None,
        _ => Some(crate::slice::with_dependencies(only, max)?),
    };
    let db = site.db_dir();
    let mut out = Vec::new();
    for pair in crate::slice::plan(max).pairs() {
        let slices = pair.slices();
        if slices[0].pieces() < min || wanted.as_ref().is_some_and(|w| !w.contains(pair)) {
            continue;
        }
        let mut add = |phase: Phase, mirror: bool, round: u32, s: Slice| {
            // A winmove job walks the whole mirror whatever its range: one per slice.
            let size = match phase {
                Phase::WinMove => u64::MAX,
                _ => positions,
            };
            for j in mini_slices(phase, mirror, s, round, size) {
                out.push((*pair, QueueLine::Job(j)));
            }
        };
        let records: Vec<Vec<_>> = slices
            .iter()
            .map(|s| done::names(site, s))
            .collect::<Result<_>>()?;
        let started = stage_path(site, pair).exists() || records.iter().any(|r| !r.is_empty());
        let phase_started =
            |k: usize, phase: Phase| records[k].iter().any(|(_, n)| n.phase == phase);
        let untouched = !started && !slices.iter().all(|s| site.is_solved(s));
        if untouched && pair.count() < pair_below {
            add(Phase::Pair, false, 1, slices[0]);
            continue;
        }
        if untouched {
            for phase in [Phase::Cap, Phase::WinMove, Phase::Lookup] {
                for s in &slices {
                    add(phase, false, 1, *s);
                }
            }
            add(Phase::NoIo, false, 1, slices[0]);
            if slices.len() == 2 {
                add(Phase::NoIo, true, 2, slices[0]);
            }
        }
        for (k, s) in slices.iter().enumerate() {
            if !crate::db::probe::slice_path(&db, s).exists() && !phase_started(k, Phase::Build) {
                add(Phase::Build, false, 1, *s);
            }
        }
        for (k, s) in slices.iter().enumerate() {
            if !verified_marker(site, s).exists() && !phase_started(k, Phase::Ver) {
                add(Phase::Ver, false, 1, *s);
            }
        }
    }
    Ok(out)
}
