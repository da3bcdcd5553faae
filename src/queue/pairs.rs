//! Each slice pair's progress, kept in files so that runners on many machines share it.
//!
//! `done/<first slice of the pair>.stage` holds the stage the pair has reached (the same
//! stages as the local build, [`Stage`]). A job is *runnable* when the pair has reached the
//! job's stage (its inputs are done):
//!
//! | job                     | runnable when                                              |
//! |-------------------------|------------------------------------------------------------|
//! | `cap`                   | every pair below is in `solved/` (verified, if it releases) |
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
use crate::solve::stage::machine::{self, Effect, Facts};
use crate::solve::stage::{
    Stage, below_verified, mark_mtc_verified, mark_verified, mtc_done, publish_mtc, publish_pair,
    que_input, reached, read_record, round_changes, verified_markers, write_record,
};
use crate::solve::{Job, Phase, PhaseStats, Site};
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

/// Positions per job when a runner queues a stage (as `addq`'s default).
pub const STAGE_JOB_POSITIONS: u64 = 10_000_000;

/// An `mtcver` job of a slice is at least this part of its mirror ([`stage_job_positions`]).
pub const MTCVER_MIRROR_SHARE: u64 = 4;

/// Positions per job of `phase` on `slice` when a runner queues a stage:
/// [`STAGE_JOB_POSITIONS`], but an `mtcver` job covers at least a quarter as many positions
/// as the mirror has. Each job reads the mirror's distances whole before it checks a
/// position, a byte a position in the king endings (118 MB for `4300.--`), and fresh memory
/// is dear on these VMs: `run mtcver 3400.--` over the slice in 12 jobs took 27.5 s, in 4
/// jobs 21.9 s.
pub fn stage_job_positions(phase: Phase, slice: &Slice) -> u64 {
    match phase {
        Phase::MtcVer => STAGE_JOB_POSITIONS.max(slice.mirror().count() / MTCVER_MIRROR_SHARE),
        _ => STAGE_JOB_POSITIONS,
    }
}

/// The stage a pair has reached: its record (`done/<first slice>.stage`) and the site's
/// files ([`reached`]): `cap` for a pair with neither; for one solved by other means (the
/// local build) its database stage.
pub fn read_stage(site: &Site, pair: &SlicePair) -> Result<Stage> {
    let slices = pair.slices();
    reached(site, &slices, true, read_record(site, &slices)?)
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
        Phase::Ver => Stage::Ver,
        Phase::Mtc => Stage::Mtc(job.round),
        Phase::MtcVer => Stage::MtcVer,
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
    /// By pair: whether every pair it depends on is solved (`false`) or verified (`true`).
    /// Many lines of a 2..7 queue share a pair, and finding its dependencies means
    /// generating its successor slices.
    dependencies: HashMap<(SlicePair, bool), bool>,
    /// The site releases `solved/` files: `cap` waits for the pairs below to be verified.
    releases: bool,
}

impl<'a> Readiness<'a> {
    pub fn new(site: &'a Site) -> Self {
        Readiness {
            site,
            stages: HashMap::new(),
            files: HashMap::new(),
            dependencies: HashMap::new(),
            releases: site.releases_solved(),
        }
    }

    /// Whether every pair `pair` depends on is solved, or with `verified` verified.
    fn dependencies_ready(&mut self, pair: &SlicePair, verified: bool) -> bool {
        if let Some(&ready) = self.dependencies.get(&(*pair, verified)) {
            return ready;
        }
        let ready = pair.dependencies().iter().all(|d| {
            if verified {
                d.slices().iter().all(|s| self.verified(s))
            } else {
                self.all_solved(d)
            }
        });
        self.dependencies.insert((*pair, verified), ready);
        ready
    }

    fn exists(&mut self, path: PathBuf) -> bool {
        *self.files.entry(path).or_insert_with_key(|p| p.exists())
    }

    /// Whether `ver` checked slice `s` (its marker, or where older sites kept it).
    fn verified(&mut self, s: &Slice) -> bool {
        verified_markers(self.site, s)
            .into_iter()
            .any(|m| self.exists(m))
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
        pair.slices().iter().all(|s| {
            let path = self.site.solved_file(s);
            let tombstone = crate::solve::site::released_file(&path);
            self.exists(path) || self.exists(tombstone)
        })
    }

    /// Whether `job`'s inputs are done (the table in the module documentation).
    pub fn runnable(&mut self, job: &Job) -> Result<bool> {
        let pair = SlicePair::of(job.slice);
        Ok(match job.phase {
            // A site that releases solved/ files reads the lower slices from db/.
            Phase::Cap => self.dependencies_ready(&pair, self.releases),
            Phase::Build => self.all_solved(&pair),
            Phase::Ver => {
                let db = self.site.db_dir();
                pair.slices()
                    .iter()
                    .all(|s| self.exists(crate::db::probe::slice_path(&db, s)))
                    && self.dependencies_ready(&pair, true)
            }
            // It ends with `ver`, which reads the verified databases below.
            Phase::Pair => self.dependencies_ready(&pair, true),
            _ => self.stage(pair)?.rank() >= stage_of(job).rank(),
        })
    }
}

impl Readiness<'_> {
    /// What a job that is not runnable waits for, as `--until-empty` tells the operator.
    pub fn why_not(&mut self, job: &Job) -> Result<String> {
        let pair = SlicePair::of(job.slice);
        let unverified = |r: &mut Self| {
            pair.dependencies()
                .into_iter()
                .find(|d| !d.slices().iter().all(|s| r.verified(s)))
        };
        Ok(match job.phase {
            Phase::Cap if self.releases => match unverified(self) {
                Some(d) => format!("waits for pair {d} to be verified (--release-solved)"),
                None => "runnable".into(),
            },
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
        Stage::NoIo(r) => done::is_complete(site, &machine::noio_slice(slices, r), Phase::NoIo, r),
        Stage::Que(r) => all(Phase::Que, r),
        Stage::Fill => all(Phase::Fill, 0),
        // The last build job of a slice assembles its file (and the distances' when the
        // slice has them).
        Stage::Build => Ok(slices
            .iter()
            .all(|s| crate::solve::stage::files::is_built(site, s))),
        // No work: the state machine moves on once the pairs below are verified.
        Stage::Built => Ok(true),
        // A pair whose values were verified before its distances came (by another
        // driver, or by jobs whose done records are gone) has nothing to check again.
        Stage::Ver => Ok(all(Phase::Ver, 0)?
            || slices
                .iter()
                .all(|s| crate::solve::stage::files::values_verified(site, s))),
        Stage::MtcVer => all(Phase::MtcVer, 0),
        Stage::Mtc(r) => all(Phase::Mtc, r),
        _ => Ok(false),
    }
}

/// Looked-at positions of a round's jobs (for the noio/que decision).
fn round_looked(site: &Site, slices: &[Slice], stage: Stage) -> Result<u64> {
    let (phase, r) = match stage {
        Stage::NoIo(r) => (Phase::NoIo, r),
        Stage::Que(r) => (Phase::Que, r),
        Stage::Mtc(r) => (Phase::Mtc, r),
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

/// Takes the pair's lock file (`done/<first slice>.lock`), under which its stage moves on.
fn lock_pair(site: &Site, pair: &SlicePair, here: &Machine, log: Log) -> Result<LockFile> {
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
    Ok(lock)
}

/// Called by a runner after `job` (taken from `queue`) is done: moves the job's pair on as
/// far as its finished stages allow (module documentation).
pub fn advance(site: &Site, queue: &Queue, here: &Machine, job: &Job, log: Log) -> Result<()> {
    let pair = SlicePair::of(job.slice);
    let slices = pair.slices();
    let lock = lock_pair(site, &pair, here, log)?;
    let mut stage = read_stage(site, &pair)?;
    while stage_complete(site, &slices, stage)? {
        let facts = Facts {
            changed: match stage {
                Stage::NoIo(r) | Stage::Que(r) | Stage::Mtc(r) => round_changes(site, &slices, r)?,
                _ => 0,
            },
            looked: round_looked(site, &slices, stage)?,
            below_verified: stage == Stage::Built && below_verified(site, &pair),
            built: stage == Stage::Fill
                && slices
                    .iter()
                    .all(|s| crate::solve::stage::files::is_built(site, s)),
            mtc: crate::solve::mtc::wanted(site),
            mtc_done: matches!(stage, Stage::Fill | Stage::Ver) && mtc_done(site, &slices),
            ..Facts::new(slices.len())
        };
        let t = machine::after(stage, &facts);
        if t.next == stage {
            break;
        }
        match t.effect {
            Some(Effect::Publish) => {
                publish_pair(site, &slices, false)?;
                log(format!("published {pair} to solved/"));
            }
            Some(Effect::MarkVerified) => {
                mark_verified(site, &slices)?;
                log(format!("verified {pair} in db/"));
            }
            Some(Effect::MarkMtcVerified) => {
                mark_mtc_verified(site, &slices)?;
                log(format!("verified {pair}'s moves to conversion in db/"));
            }
            Some(Effect::PublishMtc) => {
                publish_mtc(site, &slices, false)?;
                // Compressed here, not by `build` jobs: the plan queued those with the
                // values, and they may have run before the distances were there.
                for s in &slices {
                    crate::solve::database::mtc::build_mtc(site, s)?;
                }
                log(format!(
                    "published {pair}'s moves to conversion to solved/ and db/"
                ));
            }
            None => {}
        }
        let next = t.next;
        let jobs = stage_jobs(site, &slices, next, here)?;
        if !jobs.is_empty() {
            queue_missing(site, queue, here, log, &jobs)?;
        }
        write_record(site, &slices, next, crate::files::Durability::Full)?;
        log(format!(
            "pair {pair}: {} complete, now {}{}",
            stage.record_text(),
            next.record_text(),
            match jobs.len() {
                0 => String::new(),
                n => format!(" ({n} jobs queued at the top of {})", queue.name),
            }
        ));
        stage = next;
    }
    if stage == Stage::Done && site.releases_solved() {
        let freed = crate::solve::stage::release_solved(site, &slices)?;
        if freed > 0 {
            log(format!(
                "released {pair}'s solved/ files: {:.1} MB freed",
                freed as f64 / 1e6
            ));
        }
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
    // Only lines naming one of the jobs' materials can be one of them (a slice is written
    // with its material's four digits however its ranks are): the rest are not parsed.
    let materials: Vec<String> = jobs
        .iter()
        .filter_map(|l| match l {
            QueueLine::Job(q) => q.job().ok().map(|j| j.slice.to_string()[..4].to_string()),
            QueueLine::Stop => None,
        })
        .collect();
    queue.with_lines(here, log, |lines| {
        let queued: std::collections::HashSet<Job> = lines
            .iter()
            .filter(|e| materials.iter().any(|m| e.text.contains(m.as_str())))
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
/// queues itself ([`machine::queued_by_plan`]). A `que` round with no input on a slice is
/// complete there at once: its done record is written instead.
fn stage_jobs(
    site: &Site,
    slices: &[Slice],
    stage: Stage,
    here: &Machine,
) -> Result<Vec<QueueLine>> {
    crate::solve::stage::files::enter(site, slices, stage)?;
    if machine::queued_by_plan(stage, slices.len()) {
        return Ok(Vec::new());
    }
    let work = machine::work(stage, slices, |s, r| que_input(site, s, r), |_| false)?;
    let mut lines = Vec::new();
    for w in work {
        if w.is_empty() {
            let job = Job::whole(w.phase, w.slice, w.round);
            done::write(site, &job, &PhaseStats::default(), &here.host, 0.0)?;
        } else if w.reads_queue() {
            let jobs = Job::split(w.phase, w.slice, w.round, w.que_jobs());
            for (k, j) in jobs.iter().enumerate() {
                lines.push(QueueLine::Job(QueuedJob::explicit(j, k as u32)));
            }
        } else {
            let round = w.round.max(1);
            let positions = stage_job_positions(w.phase, &w.slice);
            let jobs = mini_slices(w.phase, false, w.slice, round, positions);
            lines.extend(jobs.into_iter().map(QueueLine::Job));
        }
    }
    Ok(lines)
}

/// Before `addq plan` queues the solving jobs of pairs it found untouched (no done records,
/// not solved): clears what the local build left of such pairs when it was stopped or
/// killed, its work files, position queues, checkpoints and stage record (the queues never
/// record a stage without done records). Its jobs had other ranges than the queue's, so
/// nothing of it can be resumed, and solving over it from `cap` is wrong (a test met a
/// value stored as a draw that `ver` proved a loss): the pair starts from nothing.
pub fn restart_local_pairs(site: &Site, planned: &[(SlicePair, QueueLine)]) -> Result<()> {
    for (pair, line) in planned {
        if let QueueLine::Job(q) = line
            && q.phase == Phase::Cap
        {
            crate::solve::stage::discard_work(site, &pair.slices())?;
        }
    }
    Ok(())
}

/// Whether the solved pair's distances are to be computed and none of its rounds is under
/// way (no work file): done records of its rounds or of `mtcver` are then of distances
/// removed from `solved/` after they were built (a disk lost, a file found damaged).
fn removed_distances(site: &Site, slices: &[Slice]) -> bool {
    slices.iter().all(|s| site.is_solved(s))
        && crate::solve::stage::mtc_pending(site, slices)
        && !crate::solve::stage::files::mtc_started(site, slices)
}

/// Before `addq plan` queues the first round of pairs whose distances were removed from
/// `solved/` after they were built: drops their done records of `mtc` and `mtcver`, under
/// each pair's lock. Left there, the old rounds' records would judge the new rounds complete
/// before their jobs ran (and `mtcver` done before it checked anything). Returns the records
/// removed.
pub fn restart_removed_distances(
    site: &Site,
    pairs: impl IntoIterator<Item = SlicePair>,
    here: &Machine,
    log: Log,
) -> Result<usize> {
    let mut removed = 0;
    for pair in pairs {
        let slices = pair.slices();
        if !removed_distances(site, &slices) {
            continue;
        }
        let distance_records = || -> Result<Vec<PathBuf>> {
            let mut out = Vec::new();
            for s in &slices {
                let names = done::names(site, s)?.into_iter();
                out.extend(names.filter_map(|(path, n)| {
                    matches!(n.phase, Phase::Mtc | Phase::MtcVer).then_some(path)
                }));
            }
            Ok(out)
        };
        // Most such pairs have none (a site built without the queues has no `done/`).
        if distance_records()?.is_empty() {
            continue;
        }
        let _lock = lock_pair(site, &pair, here, log)?;
        let mut dropped = 0;
        for path in distance_records()? {
            let gone = crate::files::remove_if_there(&path)
                .map_err(|e| format!("removing {}: {e}", path.display()))?;
            dropped += gone as usize;
        }
        if dropped > 0 {
            log(format!(
                "pair {pair}: its distances are not in solved/ and no round of them is under \
                 way: dropped {dropped} done record(s) of their earlier rounds and check; \
                 they are computed again from round 1"
            ));
        }
        removed += dropped;
    }
    Ok(removed)
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
        _ => Some(
            crate::slice::with_dependencies(only, max).map_err(|e| Error::Failed(e.to_string()))?,
        ),
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
        // Done records, not the stage record: a pair the local build left half way has a
        // stage record and none (see [`restart_local_pairs`]).
        let started = records.iter().any(|r| !r.is_empty());
        let phase_started = |s: &Slice, phase: Phase| {
            let k = slices
                .iter()
                .position(|x| x == s)
                .expect("a slice of the pair");
            records[k].iter().any(|(_, n)| n.phase == phase)
        };
        let untouched = !started && !slices.iter().all(|s| site.is_solved(s));
        if untouched && pair.count() < pair_below {
            add(Phase::Pair, false, 1, slices[0]);
            continue;
        }
        let none = |_: &Slice, _: u32| Ok::<u64, Error>(0);
        let solving = [
            Stage::Cap,
            Stage::WinMove,
            Stage::Lookup,
            Stage::NoIo(1),
            Stage::NoIo(2),
        ];
        for stage in solving.into_iter().filter(|_| untouched) {
            if !machine::queued_by_plan(stage, slices.len()) {
                continue;
            }
            for w in machine::work(stage, &slices, none, |_| false)? {
                // The paper's notation: the second pass runs on the mirror of the first slice.
                let mirror = w.slice != slices[0];
                match w.phase {
                    Phase::NoIo => add(w.phase, mirror, w.round, slices[0]),
                    _ => add(w.phase, false, 1, w.slice),
                }
            }
        }
        let built = |s: &Slice| {
            crate::db::probe::slice_path(&db, s).exists() || phase_started(s, Phase::Build)
        };
        for w in machine::work(Stage::Build, &slices, none, built)? {
            add(w.phase, false, 1, w.slice);
        }
        // A pair solved before the site built moves to conversion: its first round (a pair
        // solved from now on enters it from `fill`, queued by the runners).
        let solved = slices.iter().all(|s| site.is_solved(s));
        if solved && crate::solve::stage::mtc_pending(site, &slices) {
            // Records of rounds whose work files are gone are of distances removed from
            // `solved/` since: computed again from round 1 ([`restart_removed_distances`]).
            let again = removed_distances(site, &slices);
            for w in machine::work(Stage::Mtc(1), &slices, none, |_| false)? {
                if again || !phase_started(&w.slice, Phase::Mtc) {
                    add(w.phase, false, 1, w.slice);
                }
            }
        }
        let verified = |s: &Slice| {
            crate::solve::stage::files::values_verified(site, s) || phase_started(s, Phase::Ver)
        };
        for w in machine::work(Stage::Ver, &slices, none, verified)? {
            add(w.phase, false, 1, w.slice);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mtcver_jobs_cover_a_quarter_of_the_mirror_at_least() {
        let kings: Slice = "3400.--".parse().unwrap();
        let positions = stage_job_positions(Phase::MtcVer, &kings);
        assert_eq!(positions, kings.mirror().count() / MTCVER_MIRROR_SHARE);
        assert!(positions > STAGE_JOB_POSITIONS);
        assert_eq!(
            mini_slices(Phase::MtcVer, false, kings, 1, positions).len(),
            4
        );
        // Other phases, and slices whose mirror is small, keep the usual size.
        assert_eq!(stage_job_positions(Phase::Ver, &kings), STAGE_JOB_POSITIONS);
        let small: Slice = "2201.-6".parse().unwrap();
        assert_eq!(
            stage_job_positions(Phase::MtcVer, &small),
            STAGE_JOB_POSITIONS
        );
    }
}
