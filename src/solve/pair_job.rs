//! `pair S`: the whole life of a small slice pair in one job: `cap` to `fill` on whole
//! slices, publication to `solved/`, `build` into `db/`, `ver`, and the verified markers.
//!
//! Below about 2 M positions a pair's computing takes less time than the queue traffic of
//! its thirty-odd phase jobs (locks, records, stage decisions: some 30 round trips each on
//! a network filesystem), and 2..5 pieces are mostly such pairs; up to 16 M positions
//! (`addq plan --pair-below`'s default) the traffic is still a tenth of the work. The stages and decisions
//! are the shared ones of [`super::stage`], so the files are the same bytes as any other
//! way of building the pair.
//!
//! The pages are written without `fsync` (like the local build's small pairs): a job that
//! is stopped or killed before publication starts the pair again from nothing. After
//! publication, `build` and `ver` resume as their own jobs do.
//!
//! When the site's `work/` is on another filesystem than the local temporary directory (a
//! network filesystem), the pair's pages, position queues and checkpoints go to a local
//! scratch directory instead (`Scratch`): over sshfs every page read and write is a round
//! trip, and a pair job spent three times its computing time on them. Only the published
//! slices and the compressed files cross the network.

use super::running::{Outcome, PhaseStats, RunJob, RunOptions};
use super::stage::{
    Effect, Facts, Stage, discard_mtc_work, discard_work, finish_interrupted_publish,
    mark_verified, mtc_done, publish_mtc, publish_pair, que_input, round_changes, solved_stage,
};
use super::{Job, Result, Site};
use crate::slice::{Slice, SlicePair};
use crate::solve_err;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// A local directory standing in for the site while a pair job works: its own `work/`, and
/// the site's `solved/` and `db/` through symbolic links. Removed when dropped (the links
/// are removed, not followed).
struct Scratch {
    dir: PathBuf,
    site: Site,
}

impl Scratch {
    /// A scratch site when the site's `work/` and the temporary directory are on different
    /// filesystems; `None` when they share one (nothing to gain).
    fn new(site: &Site, first: &Slice) -> Result<Option<Scratch>> {
        let io = |what: &Path, e: std::io::Error| solve_err!("{}: {e}", what.display());
        let base = std::env::temp_dir();
        site.create_dirs().map_err(|e| io(site.root(), e))?;
        let work = site.root().join("work");
        let device = |p: &Path| std::fs::metadata(p).map(|m| m.dev()).map_err(|e| io(p, e));
        if device(&work)? == device(&base)? {
            return Ok(None);
        }
        let root = std::path::absolute(site.root()).map_err(|e| io(site.root(), e))?;
        std::fs::create_dir_all(root.join("db")).map_err(|e| io(&root.join("db"), e))?;
        remove_stale_scratch(&base);
        let dir = base.join(format!("nowdb-pair-{first}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let scratch = Scratch {
            site: Site::new(&dir),
            dir,
        };
        scratch
            .site
            .create_dirs()
            .map_err(|e| io(&scratch.dir, e))?;
        std::fs::remove_dir(scratch.site.solved_dir()).map_err(|e| io(&scratch.dir, e))?;
        for name in ["solved", "db"] {
            std::os::unix::fs::symlink(root.join(name), scratch.dir.join(name))
                .map_err(|e| io(&scratch.dir.join(name), e))?;
        }
        Ok(Some(scratch))
    }
}

/// Removes the scratch directories of pair jobs whose process is gone (killed before it
/// could clean up). `remove_dir_all` removes their links to the site, not the site.
fn remove_stale_scratch(base: &Path) {
    for (name, path) in crate::files::list(base).unwrap_or_default() {
        let pid = name
            .strip_prefix("nowdb-pair-")
            .and_then(|rest| rest.rsplit_once('-'))
            .and_then(|(_, pid)| pid.parse::<u32>().ok());
        if pid.is_some_and(|pid| pid != std::process::id() && crate::procfs::process_is_gone(pid)) {
            let _ = std::fs::remove_dir_all(&path);
        }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A pair job's steps are noted only once it has run this long: most pairs finish sooner,
/// and each note is a round trip over a network filesystem.
const NOTE_AFTER: std::time::Duration = std::time::Duration::from_secs(2);

/// What a pair job is doing, in the site for `dbstatus runners` (`Site::job_note_file`):
/// the step it is on (one phase job of one slice) and since when. Removed at the end.
struct StepNote {
    path: PathBuf,
    started: std::time::Instant,
    steps: u32,
    written: bool,
}

impl StepNote {
    fn new(site: &Site, job: &Job) -> StepNote {
        StepNote {
            path: site.job_note_file(job),
            started: std::time::Instant::now(),
            steps: 0,
            written: false,
        }
    }

    /// Notes that `job` starts (best effort: a note that cannot be written only leaves
    /// `dbstatus` without it).
    fn step(&mut self, job: &Job) {
        self.steps += 1;
        if self.started.elapsed() < NOTE_AFTER {
            return;
        }
        let round = match job.round {
            0 => String::new(),
            r => format!(" round {r}"),
        };
        let text = format!(
            "step {} {} {}{round} since {}\n",
            self.steps,
            job.phase,
            job.slice,
            crate::clock::now_secs()
        );
        let volatile = crate::files::Durability::Volatile;
        self.written |= crate::files::replace(&self.path, text.as_bytes(), volatile).is_ok();
    }
}

impl Drop for StepNote {
    fn drop(&mut self) {
        if self.written {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// The step a running pair job noted and since when: `("step 7 que 1113.00 round 3",
/// 1790000000)`; `None` before its first note.
pub fn read_step(site: &Site, job: &Job) -> Option<(String, u64)> {
    let text = std::fs::read_to_string(site.job_note_file(job)).ok()?;
    let (what, since) = text.trim_end().rsplit_once(" since ")?;
    Some((what.to_string(), since.parse().ok()?))
}

/// Runs `pair S` (see the module documentation).
pub fn run_pair(site: &Site, job: &Job, opts: &RunOptions, run_job: RunJob) -> Result<Outcome> {
    let slices = SlicePair::of(job.slice).slices();
    let scratch = Scratch::new(site, &slices[0])?;
    let work = scratch.as_ref().map_or(site, |s| &s.site);
    let mut note = StepNote::new(site, job);
    run_stages(site, work, &slices, opts, &mut note, run_job).map_err(|e| match &scratch {
        // Name the site's files, not their links in the scratch directory.
        Some(s) => e.map_message(|m| {
            m.replace(
                &s.dir.display().to_string(),
                &site.root().display().to_string(),
            )
        }),
        None => e,
    })
}

/// The stages of [`run_pair`], with the pair's work in `work` (the site or a scratch),
/// walked through the pair state machine ([`super::stage::machine`]).
fn run_stages(
    site: &Site,
    work: &Site,
    slices: &[Slice],
    opts: &RunOptions,
    note: &mut StepNote,
    run_job: RunJob,
) -> Result<Outcome> {
    let mut total = PhaseStats::default();
    settle_interrupted_publish(site, slices)?;
    let mut stage = match slices.iter().all(|s| site.is_solved(s)) {
        true => solved_stage(site, true, slices),
        false => {
            // Whatever an interrupted attempt left was never synced: start again (and what
            // an attempt without scratch left in the site is of no use now).
            discard_work(site, slices)?;
            discard_work(work, slices)?;
            Stage::Cap
        }
    };
    let solving = RunOptions {
        durable: false,
        ..opts.clone()
    };
    // The job was runnable: every pair below is verified.
    let mut facts = Facts {
        below_verified: true,
        ..Facts::new(slices.len())
    };
    facts.mtc = crate::solve::mtc::wanted(site);
    while stage != Stage::Done {
        if stage == Stage::Mtc(1) {
            // Like the solving stages, the rounds run without `fsync`: start them again.
            discard_mtc_work(site, slices)?;
            discard_mtc_work(work, slices)?;
        }
        super::stage::files::enter(work, slices, stage)?;
        let run_opts = match stage.rank() <= Stage::Fill.rank() || matches!(stage, Stage::Mtc(_)) {
            true => &solving,
            false => opts,
        };
        let mut looked = 0;
        let done = |s: &Slice| super::stage::files::stage_done(site, stage, s);
        for w in super::stage::machine::work(stage, slices, |s, r| que_input(work, s, r), done)? {
            if w.is_empty() {
                continue;
            }
            let before = total.looked;
            let job = Job::whole(w.phase, w.slice, w.round);
            if !run(work, job, run_opts, &mut total, note, run_job)? {
                return Ok(Outcome::Stopped {
                    next: 0,
                    stats: total,
                });
            }
            looked += total.looked - before;
        }
        facts.looked = looked;
        facts.changed = match stage {
            Stage::NoIo(r) | Stage::Que(r) | Stage::Mtc(r) => round_changes(work, slices, r)?,
            _ => 0,
        };
        // Read only where the machine uses it: each read is a round trip on a network site.
        facts.built = stage == Stage::Fill
            && slices
                .iter()
                .all(|s| super::stage::files::is_built(site, s));
        facts.mtc_done = matches!(stage, Stage::Fill | Stage::Ver) && mtc_done(site, slices);
        let t = super::stage::machine::after(stage, &facts);
        match t.effect {
            Some(Effect::Publish) => publish_pair(work, slices, true)?,
            Some(Effect::MarkVerified) => mark_verified(site, slices)?,
            Some(Effect::MarkMtcVerified) => super::stage::mark_mtc_verified(site, slices)?,
            Some(Effect::PublishMtc) => publish_mtc(work, slices, true)?,
            None => {}
        }
        stage = t.next;
    }
    Ok(Outcome::Done(total))
}

/// One slice published and not the other (nothing to do otherwise): a crash between the two
/// publications. With the
/// mirror's filled work file in the site, the publication is finished; without it (it was
/// in a scratch directory, gone now), the published one is taken back and the pair solved
/// again. Nothing reads a pair before both slices are published.
fn settle_interrupted_publish(site: &Site, slices: &[Slice]) -> Result<()> {
    let (solved, unsolved): (Vec<&Slice>, Vec<&Slice>) =
        slices.iter().partition(|s| site.is_solved(s));
    if solved.is_empty() {
        return Ok(());
    }
    if unsolved.iter().all(|s| site.work_file(s).exists()) {
        return finish_interrupted_publish(site, slices);
    }
    for s in solved {
        let path = site.solved_file(s);
        std::fs::remove_file(&path).map_err(|e| solve_err!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// Runs one job to its end; false when it was stopped (SIGTERM or deadline).
fn run(
    site: &Site,
    job: Job,
    opts: &RunOptions,
    total: &mut PhaseStats,
    note: &mut StepNote,
    run_job: RunJob,
) -> Result<bool> {
    note.step(&job);
    match run_job(site, &job, opts)? {
        Outcome::Done(stats) => {
            total.add(&stats);
            Ok(true)
        }
        Outcome::Stopped { .. } => Ok(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solve::Phase;

    #[test]
    fn a_long_pair_job_notes_its_step_and_removes_the_note_at_its_end() {
        let dir = crate::files::test_dir("step-note");
        let site = Site::new(&dir);
        let slice: Slice = "2100".parse().unwrap();
        let pair = Job::whole(Phase::Pair, slice, 0);
        let que = Job::whole(Phase::Que, slice, 3);
        let mut note = StepNote::new(&site, &pair);
        // A short job writes nothing (no round trip for the many small pairs).
        note.step(&Job::whole(Phase::Cap, slice, 0));
        assert!(!site.job_note_file(&pair).exists() && read_step(&site, &pair).is_none());
        note.started -= NOTE_AFTER;
        note.step(&que);
        let (what, since) = read_step(&site, &pair).unwrap();
        assert_eq!(what, format!("step 2 que {slice} round 3"));
        assert!(since.abs_diff(crate::clock::now_secs()) < 60);
        drop(note);
        assert!(!site.job_note_file(&pair).exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn stale_scratch_goes_without_touching_the_site_it_links_to() {
        let base = crate::files::test_dir("scratch-test");
        let site_solved = base.join("site/solved");
        std::fs::create_dir_all(&site_solved).unwrap();
        std::fs::write(site_solved.join("2211.01.nwk"), "values").unwrap();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let stale = base.join(format!("nowdb-pair-2211.01-{dead}"));
        std::fs::create_dir_all(stale.join("work")).unwrap();
        std::os::unix::fs::symlink(&site_solved, stale.join("solved")).unwrap();
        let ours = base.join(format!("nowdb-pair-2211.01-{}", std::process::id()));
        let unnamed = base.join("nowdb-pair-2211.01");
        for d in [&ours, &unnamed] {
            std::fs::create_dir_all(d).unwrap();
        }
        remove_stale_scratch(&base);
        assert!(!stale.exists(), "the dead job's scratch is removed");
        assert!(ours.exists() && unnamed.exists());
        assert_eq!(
            std::fs::read_to_string(site_solved.join("2211.01.nwk")).unwrap(),
            "values"
        );
        let _ = std::fs::remove_dir_all(&base);
    }
}
