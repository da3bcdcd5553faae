//! The local build: every slice pair of 2..N pieces, in dependency order, with K worker
//! threads on this machine (`scripts/build-local`). Each pair goes through paper Figure 4:
//! `cap`, `winmove`, `lookup`, `noio` passes alternating between the slice and its mirror
//! while they resolve many positions, then `que` rounds until the position queue is empty,
//! `fill`, publication to `solved/`, optionally the consistency check, then `build` into the
//! compressed database and, once the pairs below are verified, `ver`.
//!
//! Every step is a [`Job`] on a page-aligned range, run through [`run_job`] exactly as a
//! remote runner would; jobs are idempotent (a finished job's checkpoint returns its
//! statistics), so an interrupted build resumes by running the same command again.

use super::disk::DiskNeeds;
use super::run::run_job;
use super::running::{Outcome, PhaseStats, RunOptions};
use super::solved::SolvedStore;
use super::stage::files::{enter as enter_files, is_built, stage_done};
use super::stage::machine::{self, Effect, Facts};
use super::stage::{
    Stage, database_stage, database_work, discard_mtc_work, discard_work,
    finish_interrupted_publish, mark_mtc_verified, mark_verified, mtc_done, mtc_pending,
    publish_mtc, publish_pair, que_input, reached, read_record, round_changes, write_record,
};
use super::store::PAGE_POSITIONS;
use super::verify::verify_range;
use super::{Job, Phase, Result, Site, SolveError};
use crate::progress::Progress;
use crate::slice::Slice;
use crate::slice::{SlicePair, plan};
use crate::solve_err;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

mod progress;
use progress::{Part, format_duration, progress};

/// Options of a local build.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    pub pieces: u32,
    pub runners: usize,
    pub run: RunOptions,
    /// Positions per job when splitting a slice (rounded to pages).
    pub job_positions: u64,
    /// Check every finished slice against its successors.
    pub verify: bool,
    /// Switch from `noio` passes to the position queue once a pass resolves fewer than
    /// 1/`que_ratio` of the positions it looked at.
    pub que_ratio: u64,
    /// Seconds between progress lines.
    pub progress_every: Duration,
    /// Slice pairs with fewer positions run without `fsync` at checkpoints (they are synced
    /// once when published) and are redone from scratch when a build resumes.
    pub small_pair: u64,
    /// Build only the pairs of these slices and what they depend on (empty: everything).
    pub only: Vec<Slice>,
    /// Split every phase of a slice into exactly this many ranges (instead of by
    /// `job_positions`).
    pub splits: Option<u64>,
    /// Run the ready jobs of a pair in a pseudo-random order drawn from this seed.
    pub shuffle: Option<u64>,
    /// Compress every finished pair into `db/` (`build`) and check it there (`ver`).
    pub database: bool,
    /// Compute moves to conversion beside the values (`solve::mtc`); the site remembers it
    /// (`work/mtc`), so later builds of it do too.
    pub mtc: bool,
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions {
            pieces: 5,
            runners: 2,
            run: RunOptions::default(),
            job_positions: 4 << 20,
            verify: false,
            que_ratio: machine::QUE_RATIO,
            progress_every: Duration::from_secs(2),
            small_pair: 1 << 21,
            only: Vec::new(),
            splits: None,
            shuffle: None,
            database: true,
            mtc: false,
        }
    }
}

/// What a build did.
#[derive(Clone, Debug, Default)]
pub struct BuildSummary {
    pub slices: usize,
    pub already_solved: usize,
    pub positions: u64,
    pub elapsed: Duration,
    /// Job time and statistics per phase (verify counted under its own name).
    pub phase_time: BTreeMap<String, Duration>,
    pub phase_stats: BTreeMap<String, PhaseStats>,
    pub noio_passes: u64,
    pub que_rounds: u64,
    pub verified: u64,
}

struct PairState {
    slices: Vec<Slice>,
    deps: Vec<usize>,
    stage: Stage,
    /// Jobs of the stage not finished (queued or in a worker).
    running: usize,
    /// Jobs in a worker now (progress).
    working: usize,
    /// Statistics of the stage's jobs per target slice.
    stage_stats: Vec<PhaseStats>,
    published: bool,
}

enum Task {
    /// A phase job, and whether it runs durably.
    Phase(Job, bool),
    Verify(Slice, u64, u64),
}

struct Shared {
    pairs: Vec<PairState>,
    ready: BTreeMap<(usize, u64), (usize, Task)>,
    seq: u64,
    busy: usize,
    error: Option<SolveError>,
    stopped: bool,
    summary: BuildSummary,
    done_positions: u64,
    total_positions: u64,
    /// Database work in positions passed over (`build`, `ver` and `mtcver` passes).
    db: Part,
    /// Moves to conversion in positions (pairs whose distances are published).
    mtc: Part,
    published: usize,
}

struct Builder<'a> {
    site: &'a Site,
    opts: &'a BuildOptions,
    solved: Arc<SolvedStore>,
}

impl Builder<'_> {
    fn split(&self, phase: Phase, slice: Slice, round: u32) -> Vec<Job> {
        // A winmove job walks all of the mirror whatever its range, so splitting it by size
        // would only repeat that walk.
        let by_size = match phase {
            Phase::WinMove => 1,
            _ => slice
                .count()
                .div_ceil(self.opts.job_positions.max(PAGE_POSITIONS)),
        };
        let n = self.opts.splits.unwrap_or(by_size);
        Job::split(phase, slice, round, n)
    }

    fn push(&self, sh: &mut Shared, p: usize, task: Task) {
        sh.seq += 1;
        let seq = match self.opts.shuffle {
            // A splitmix64 step: a different but reproducible order for every seed.
            Some(seed) => {
                let mut z = sh
                    .seq
                    .wrapping_add(seed)
                    .wrapping_mul(0x9E37_79B9_7F4A_7C15);
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z ^ (z >> 31)
            }
            None => sh.seq,
        };
        sh.ready.insert((p, seq), (p, task));
        sh.pairs[p].running += 1;
    }

    /// Records a durable pair's solving stage: resuming there (rather than replaying the
    /// decisions) matters, as the queue files of early rounds are gone.
    fn record_stage(&self, slices: &[Slice], stage: Stage, durable: bool) -> Result<()> {
        let solving = (Stage::Cap.rank()..=Stage::Fill.rank()).contains(&stage.rank());
        if !durable || !(solving || matches!(stage, Stage::Mtc(_))) {
            return Ok(());
        }
        write_record(self.site, slices, stage, crate::files::Durability::Data)?;
        crate::fault::point("local.stage");
        Ok(())
    }

    /// Queues the jobs of `stage` for pair `p` (or moves on when a stage has none).
    fn enter(&self, sh: &mut Shared, p: usize, stage: Stage) -> Result<()> {
        let slices = sh.pairs[p].slices.clone();
        let durable = !self.is_small(&slices);
        if stage == Stage::Cap && !durable {
            // A small pair's files were not synced: they cannot be trusted after a crash.
            discard_work(self.site, &slices)?;
        }
        if stage == Stage::Mtc(1) && !durable {
            discard_mtc_work(self.site, &slices)?;
        }
        self.record_stage(&slices, stage, durable)?;
        enter_files(self.site, &slices, stage)?;
        sh.pairs[p].stage = stage;
        sh.pairs[p].stage_stats = vec![PhaseStats::default(); slices.len()];
        match stage {
            Stage::NoIo(_) => sh.summary.noio_passes += 1,
            Stage::Que(_) => sh.summary.que_rounds += 1,
            Stage::Verify => {
                for s in &slices {
                    for j in self.split(Phase::Fill, *s, 0) {
                        self.push(sh, p, Task::Verify(*s, j.first, j.last));
                    }
                }
                return Ok(());
            }
            _ => {}
        }
        let site = self.site;
        let work = machine::work(
            stage,
            &slices,
            |s, r| que_input(site, s, r),
            |s| stage_done(site, stage, s),
        )?;
        let mut jobs = Vec::new();
        for w in work.iter().filter(|w| !w.is_empty()) {
            jobs.extend(match w.reads_queue() {
                true => Job::split(w.phase, w.slice, w.round, w.que_jobs()),
                false => self.split(w.phase, w.slice, w.round),
            });
        }
        if jobs.is_empty() {
            return self.advance(sh, p);
        }
        for j in jobs {
            self.push(sh, p, Task::Phase(j, durable));
        }
        Ok(())
    }

    /// What the build knows of pair `p` for the state machine.
    fn facts(&self, sh: &Shared, p: usize) -> Result<Facts> {
        let st = &sh.pairs[p];
        Ok(Facts {
            slices: st.slices.len(),
            changed: match st.stage {
                Stage::NoIo(r) | Stage::Que(r) | Stage::Mtc(r) => {
                    round_changes(self.site, &st.slices, r)?
                }
                _ => 0,
            },
            looked: st.stage_stats.iter().map(|s| s.looked).sum(),
            que_ratio: self.opts.que_ratio,
            verify: self.opts.verify,
            database: self.opts.database,
            below_verified: st.deps.iter().all(|&d| sh.pairs[d].stage == Stage::Done),
            built: matches!(st.stage, Stage::Fill | Stage::Verify)
                && st.slices.iter().all(|s| is_built(self.site, s)),
            mtc: crate::solve::mtc::wanted(self.site),
            mtc_done: mtc_done(self.site, &st.slices),
        })
    }

    /// All jobs of the pair's stage are done (or it is waiting to start): decide the next
    /// stage.
    fn advance(&self, sh: &mut Shared, p: usize) -> Result<()> {
        let st = &sh.pairs[p];
        let next = match st.stage {
            Stage::Waiting => {
                // A published pair's record matters only while its distances are computed
                // (the files say the rest); a small pair's is never kept.
                let published = st.published && !mtc_pending(self.site, &st.slices);
                let record = match published || self.is_small(&st.slices) {
                    true => None,
                    false => read_record(self.site, &st.slices)?,
                };
                reached(self.site, &st.slices, self.opts.database, record)?
            }
            stage => {
                let t = machine::after(stage, &self.facts(sh, p)?);
                match t.effect {
                    Some(Effect::Publish) => self.publish(sh, p)?,
                    Some(Effect::MarkVerified) => mark_verified(self.site, &sh.pairs[p].slices)?,
                    Some(Effect::MarkMtcVerified) => {
                        mark_mtc_verified(self.site, &sh.pairs[p].slices)?
                    }
                    Some(Effect::PublishMtc) => {
                        let slices = &sh.pairs[p].slices;
                        publish_mtc(self.site, slices, self.is_small(slices))?;
                        sh.mtc.done += slices.iter().map(|s| s.count()).sum::<u64>();
                    }
                    None => {}
                }
                t.next
            }
        };
        match next {
            Stage::Done => {
                sh.pairs[p].stage = Stage::Done;
                self.start_ready_ver(sh)?;
                self.start_ready_pairs(sh)
            }
            Stage::Built => {
                sh.pairs[p].stage = Stage::Built;
                self.start_ready_ver(sh)
            }
            _ => self.enter(sh, p, next),
        }
    }

    /// `ver` reads the compressed slices below (and theirs, through capture searches): it
    /// starts once every pair it depends on is verified.
    fn start_ready_ver(&self, sh: &mut Shared) -> Result<()> {
        for p in 0..sh.pairs.len() {
            if sh.pairs[p].stage == Stage::Built
                && machine::after(Stage::Built, &self.facts(sh, p)?).next == Stage::Ver
            {
                self.enter(sh, p, Stage::Ver)?;
            }
        }
        Ok(())
    }

    fn is_small(&self, slices: &[Slice]) -> bool {
        slices.iter().map(|s| s.count()).sum::<u64>() < self.opts.small_pair
    }

    /// Moves both slices to `solved/` and starts the pairs that waited for them.
    fn publish(&self, sh: &mut Shared, p: usize) -> Result<()> {
        publish_pair(
            self.site,
            &sh.pairs[p].slices,
            self.is_small(&sh.pairs[p].slices),
        )?;
        sh.pairs[p].published = true;
        sh.published += 1;
        sh.done_positions += sh.pairs[p].slices.iter().map(|s| s.count()).sum::<u64>();
        self.start_ready_pairs(sh)
    }

    fn start_ready_pairs(&self, sh: &mut Shared) -> Result<()> {
        // Reading lower slices from the database needs them verified, not just solved. Asked
        // once a call: the marker's stat for each of a thousand pairs was 10 % of a 2..5 build.
        let from_db = self.opts.run.lower_from_database || self.site.releases_solved();
        for p in 0..sh.pairs.len() {
            let ready = |d: usize| match from_db {
                true => sh.pairs[d].stage == Stage::Done,
                false => sh.pairs[d].published,
            };
            if sh.pairs[p].stage == Stage::Waiting && sh.pairs[p].deps.iter().all(|&d| ready(d)) {
                self.advance(sh, p)?;
            }
        }
        Ok(())
    }

    fn finish(&self, sh: &mut Shared, p: usize, name: String, took: Duration, stats: PhaseStats) {
        *sh.summary.phase_time.entry(name.clone()).or_default() += took;
        sh.summary.phase_stats.entry(name).or_default().add(&stats);
        sh.pairs[p].running -= 1;
    }

    /// Worker thread: take the most urgent job (earliest pair in plan order), run it.
    fn worker(&self, shared: &Mutex<Shared>, cv: &Condvar) {
        let mut sh = shared.lock().expect("lock");
        loop {
            // A stop request ends the build between jobs too (single-page jobs never reach a
            // page boundary where they would notice it).
            if self
                .opts
                .run
                .stop
                .is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed))
            {
                sh.stopped = true;
            }
            if sh.error.is_some() || sh.stopped {
                break;
            }
            let Some(key) = sh.ready.keys().next().copied() else {
                if sh.busy == 0 {
                    break;
                }
                sh = cv.wait(sh).expect("lock");
                continue;
            };
            let (p, task) = sh.ready.remove(&key).expect("key");
            sh.busy += 1;
            sh.pairs[p].working += 1;
            if let Task::Phase(j, _) = &task
                && matches!(j.phase, Phase::Build | Phase::Ver | Phase::MtcVer)
            {
                sh.db.start();
            }
            if let Task::Phase(j, _) = &task
                && j.phase == Phase::Mtc
            {
                sh.mtc.start();
            }
            drop(sh);
            let t0 = Instant::now();
            let result = match &task {
                Task::Phase(job, durable) => {
                    let run = RunOptions {
                        durable: *durable,
                        ..self.opts.run.clone()
                    };
                    run_job(self.site, job, &run)
                }
                Task::Verify(s, a, b) => verify_range(s, *a, *b, &self.solved).map(|n| {
                    Outcome::Done(PhaseStats {
                        looked: n,
                        ..Default::default()
                    })
                }),
            };
            let took = t0.elapsed();
            sh = shared.lock().expect("lock");
            sh.busy -= 1;
            sh.pairs[p].working -= 1;
            match (result, &task) {
                (Err(e), _) => {
                    let what = match &task {
                        Task::Phase(j, _) => format!("job {j}"),
                        Task::Verify(s, a, b) => format!("verify {s} {a} {b}"),
                    };
                    sh.error = Some(solve_err!("{what} failed: {e}"));
                }
                (Ok(Outcome::Stopped { .. }), _) => sh.stopped = true,
                (Ok(Outcome::Done(stats)), Task::Phase(job, _)) => {
                    if matches!(job.phase, Phase::Build | Phase::Ver | Phase::MtcVer) {
                        sh.db.done += job.last - job.first;
                    }
                    self.finish(&mut sh, p, job.phase.to_string(), took, stats);
                    let k = sh.pairs[p]
                        .slices
                        .iter()
                        .position(|s| *s == job.slice)
                        .expect("job of the pair");
                    sh.pairs[p].stage_stats[k].add(&stats);
                }
                (Ok(Outcome::Done(stats)), Task::Verify(..)) => {
                    sh.summary.verified += stats.looked;
                    self.finish(&mut sh, p, "verify".into(), took, stats);
                }
            }
            if sh.error.is_none()
                && !sh.stopped
                && sh.pairs[p].running == 0
                && let Err(e) = self.advance(&mut sh, p)
            {
                sh.error = Some(e);
            }
            cv.notify_all();
        }
        cv.notify_all();
    }
}

/// Solves every slice of 2..=`opts.pieces` pieces under `site`, printing progress to `log`.
pub fn build_local(site: &Site, opts: &BuildOptions, log: &mut Progress) -> Result<BuildSummary> {
    if !(2..=8).contains(&opts.pieces) {
        return Err(solve_err!(
            "--pieces {}: must be 2..8 (9 and 10 pieces need the queue tools)",
            opts.pieces
        ));
    }
    if opts.runners == 0 {
        return Err(solve_err!("--runners must be at least 1"));
    }
    if opts.run.lower_from_database && !opts.database {
        return Err(solve_err!(
            "reading lower slices from the database needs the database stages (drop --no-db)"
        ));
    }
    let start = Instant::now();
    let mut order: Vec<SlicePair> = plan(opts.pieces).pairs().copied().collect();
    if !opts.only.is_empty() {
        let wanted = crate::slice::with_dependencies(&opts.only, opts.pieces)
            .map_err(|e| solve_err!("{e}"))?;
        order.retain(|p| wanted.contains(p));
    }
    let pos_of: HashMap<SlicePair, usize> =
        order.iter().enumerate().map(|(i, p)| (*p, i)).collect();
    let mut pairs = Vec::new();
    let mut already = 0;
    let mut total = 0;
    let mut db = (0, 0);
    let mut mtc = (0, 0);
    let mut done = 0;
    let mut disk = DiskNeeds::default();
    // Before the disk is counted: the site's choice decides what its pairs still write. Kept
    // once the disk check passes.
    let marker = match opts.mtc {
        true => Some(crate::solve::mtc::set_wanted(site)?),
        false => None,
    };
    let distances = crate::solve::mtc::wanted(site);
    for pair in &order {
        let slices = pair.slices();
        finish_interrupted_publish(site, &slices)?;
        let solved = slices.iter().all(|s| site.is_solved(s));
        let count: u64 = slices.iter().map(|s| s.count()).sum();
        let db_stage = database_stage(site, opts.database, &slices);
        disk.add_pair(site, &slices, solved, db_stage != Stage::Build);
        total += count;
        if solved {
            already += slices.len();
            done += count;
        }
        if distances {
            mtc.0 += count * mtc_done(site, &slices) as u64;
            mtc.1 += count;
        }
        let (made, all) = database_work(site, opts.database, &slices);
        db = (db.0 + made, db.1 + all);
        pairs.push(PairState {
            deps: pair.dependencies().iter().map(|d| pos_of[d]).collect(),
            // A solved pair may still need its database stages.
            stage: Stage::Waiting,
            slices,
            running: 0,
            working: 0,
            stage_stats: Vec::new(),
            published: solved,
        });
    }
    let nslices: usize = pairs.iter().map(|p| p.slices.len()).sum();
    disk.add_queues(opts.runners);
    let free = disk.check(site, &format!("build 2..{} pieces", opts.pieces))?;
    if let Some(m) = marker {
        m.keep();
    }
    // Nothing is written before the check.
    site.create_dirs()
        .map_err(|e| solve_err!("site {}: {e}", site.root().display()))?;
    let mut sh = Shared {
        published: pairs.iter().filter(|p| p.published).count(),
        pairs,
        ready: BTreeMap::new(),
        seq: 0,
        busy: 0,
        error: None,
        stopped: false,
        summary: BuildSummary {
            slices: nslices,
            already_solved: already,
            ..Default::default()
        },
        done_positions: done,
        total_positions: total,
        db: Part::new(db.0, db.1),
        mtc: Part::new(mtc.0, mtc.1),
    };
    let solved = opts
        .run
        .solved
        .clone()
        .unwrap_or_else(|| SolvedStore::new(site, SolvedStore::BUDGET));
    let mut run = opts.run.clone();
    run.solved = Some(solved.clone());
    if opts.database && run.database.is_none() {
        crate::solve::database::build::ensure_version_file(site)?;
        let budget = run.decode_budget(opts.runners);
        run.database = Some(Arc::new(
            crate::db::Database::open(&site.db_dir(), 256 << 20)?.decoding(budget),
        ));
    }
    let opts = &BuildOptions {
        run,
        ..opts.clone()
    };
    let b = Builder { site, opts, solved };
    log.line(&format!(
        "build 2..{} pieces in {}: {} slices ({} already solved), {} positions, {} runners; \
         disk needed at most {}, {} free",
        opts.pieces,
        site.root().display(),
        nslices,
        already,
        total,
        opts.runners,
        disk.describe(),
        crate::space::bytes(free)
    ));
    b.start_ready_pairs(&mut sh)?;
    let npairs = sh.pairs.len();
    let shared = Mutex::new(sh);
    let cv = Condvar::new();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..opts.runners)
            .map(|_| scope.spawn(|| b.worker(&shared, &cv)))
            .collect();
        // Progress reporter: this thread.
        while !workers.iter().all(|w| w.is_finished()) {
            std::thread::sleep(Duration::from_millis(50));
            if log.due() {
                let sh = shared.lock().expect("lock");
                progress(log, &sh, npairs, start.elapsed(), done);
            }
        }
    });
    let mut sh = shared.into_inner().expect("lock");
    if let Some(e) = sh.error.take() {
        return Err(e);
    }
    sh.summary.elapsed = start.elapsed();
    sh.summary.positions = sh.total_positions;
    if sh.stopped {
        return Err(solve_err!(
            "build stopped at a checkpoint after {}; run the same command again to resume",
            format_duration(sh.summary.elapsed)
        ));
    }
    if sh.pairs.iter().any(|p| p.stage != Stage::Done) {
        return Err(solve_err!(
            "build ended with unfinished slices (scheduler bug)"
        ));
    }
    // Progress counted each part the way the pairs went: at the end every part is whole.
    debug_assert_eq!(
        (sh.db.done, sh.mtc.done),
        (sh.db.total, sh.mtc.total),
        "progress: (database, distances) done against in all"
    );
    progress(log, &sh, npairs, sh.summary.elapsed, done);
    Ok(sh.summary)
}
