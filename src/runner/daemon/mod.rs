//! The runner daemon (`jobrunner daemon`, 1994 paper section 5.1): each of the host's runners
//! takes the first runnable job of its queues, runs it in a child process at low priority,
//! records it in `done/`, and moves the job's slice pair on (`queue::pairs::advance`).
//!
//! - A take is one locked step of a queue for as many runnable lines as the daemon has
//!   runners without a job (`take.rs`); each job's running record is written inside the lock
//!   (`queue/running.rs`), named after the taking runner, the take and the job, so no other
//!   job ever writes it. The other runners find their jobs in the daemon's hand.
//! - The child is `jobrunner run JOB` at nice 19 in the idle I/O class (the paper's
//!   background computations), told to stop (SIGTERM) if this runner dies; its output goes
//!   to `<record>.out` in a directory of this machine ([`job_output_dir`]), then into the
//!   runner's log (and into `attempts/` when the job fails).
//! - Exit 0: a done record, the pair moved on, the running record removed. Exit 3 (stopped at
//!   a checkpoint, by our SIGTERM or anyone's): the job goes back to the top of its queue in
//!   the explicit-range form. Anything else is a failed attempt (`record::settle`): the job
//!   goes back to the top after a backoff, or is held after `max_attempts` and the operator
//!   is mailed once with every attempt's reason and the command that releases it.
//!   Exit 4 (too little disk space) and a full disk met by the runner's own files cost no
//!   attempt: the job goes back to the top and the host's runners wait for room.
//! - A `stop` line ends the runner that takes it. SIGTERM stops every runner at a checkpoint.
//! - Idle runners wait for a change of a queue file or a stage record (inotify through
//!   `notify`: a write, rename or removal, never a read, `wake.rs`) or the poll interval,
//!   whichever comes first: inotify does not see other machines' writes on NFS or sshfs.
//! - The daemon itself runs at nice 1 (`become_background_daemon`): its CPU time counts as
//!   nice time, so a daemon never makes `wswatch` see a user at its desktop, and it still
//!   goes ahead of its nice-19 jobs when it hands a runner the next one.
//! - Every loop also looks for stale running records of this host (a runner killed with its
//!   machine, or by SIGKILL): their jobs used an attempt and are requeued from their
//!   checkpoints (or held).
//! - A job that gets no CPU time for `stall_secs` is reported, and killed after twice that
//!   (`supervise.rs`).

mod ending;
mod settle;
mod take;
mod waiting;

pub use take::TakeTally;
pub use waiting::{Tend, TendTask, waiting_dir};

use super::child::{self, ChildEnd};
use super::log::Log;
use super::supervise::{self, Children};
use super::wake::{Room, Wake, watch};
use crate::cli::STOP;
use crate::error::Result;
use crate::fault;
use crate::files::{FileOp, failed};
use crate::queue::held::{self, Gate, Gates, RetryPolicy};
use crate::queue::pairs::{self, Readiness};
use crate::queue::running::{
    self as record, Ending, RunningRecord, Settled, now_secs, process_start,
};
use crate::queue::{Machine, Queue, QueueLine, QueuedJob, done, takes};
use crate::solve::{Job, Site};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How often a daemon looks for stale running records of its host. Its own never are while
/// it lives; another daemon of the host that died leaves them (at its start it finds those
/// of its predecessors). Not every job: each look lists `running/`.
const REAP_PERIOD: Duration = Duration::from_secs(2);

/// Where this machine's job processes write their output while they run: the temporary
/// directory of the local disk, one per user, not the site. On a network filesystem the
/// output file was some fifteen round trips to the file server a job (made, read back,
/// removed); only a failed attempt's output is kept, copied into the site's `attempts/`.
/// A host's own stale records are settled on the host, so their output is still found.
pub fn job_output_dir() -> PathBuf {
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    std::env::temp_dir().join(format!("nowdb-jobs-{uid}"))
}

/// Makes [`job_output_dir`], readable by its user only, if it is missing: when the daemon
/// starts, and again when a job finds it gone (a cleaner of old temporary files removed it).
pub fn make_job_output_dir() -> std::io::Result<()> {
    let dir = job_output_dir();
    std::os::unix::fs::DirBuilderExt::mode(std::fs::DirBuilder::new().recursive(true), 0o700)
        .create(&dir)
        .map_err(|e| failed(FileOp::Creating, &dir, e))
}

/// How a daemon runs.
#[derive(Clone, Debug)]
pub struct DaemonOptions {
    /// This host's name (records, logs, stale-record checks).
    pub host: String,
    /// The queues to take from, in order of preference.
    pub queues: Vec<Queue>,
    pub runners: usize,
    /// Page buffers per work file for each job.
    pub buffers: usize,
    pub checkpoint_secs: u64,
    /// Longest wait between looks at the queues when idle.
    pub poll: Duration,
    /// Exit once the queues are empty and nothing runs anywhere.
    pub until_empty: bool,
    /// Trivial jobs of this length: the child only checks the job, then waits (measures the
    /// queue machinery, and a pool of many runners by simulation).
    pub dry_run: Option<Duration>,
    /// At most this many jobs a take (1: a locked step for each job, as before takes
    /// served the whole daemon).
    pub max_take: usize,
    /// The `jobrunner` binary the children run.
    pub exe: PathBuf,
    /// Also print log lines on stderr.
    pub echo: bool,
    /// Where alerts are sent (hosts.toml `[mail]`); without it they stay in the outbox.
    pub mail: Option<crate::mail::MailConfig>,
    /// Retries, holds and hung jobs (hosts.toml `[jobs]`).
    pub policy: RetryPolicy,
    /// At most this many daemons of the site wait with nothing runnable (`waiting/`); one
    /// more ends instead (a batch job's allocation is held only while it is useful).
    pub max_waiting: Option<usize>,
    /// Work done every so often beside the runners (a Slurm pilot recovers lost pilots).
    pub tend: Option<Tend>,
}

/// What a daemon did.
#[derive(Clone, Debug, Default)]
pub struct DaemonSummary {
    pub jobs: u64,
    /// Failed attempts (each retried or held).
    pub failed: u64,
    /// Jobs held after their last attempt.
    pub held: u64,
    pub requeued: u64,
    pub elapsed: Duration,
    pub stopped: bool,
    /// What taking jobs from the queues cost.
    pub takes: TakeTally,
    /// Why the runners could not go on (held jobs, jobs that can never run, errors): the
    /// command exits non-zero with it after its report.
    pub error: Option<String>,
}

/// One delivery of the outbox, logged.
fn send_outbox(site: &Path, cfg: &crate::mail::MailConfig, log: &Log, runner: usize) {
    let outcome = crate::mail::deliver(site, cfg, now_secs());
    if let Some(line) = crate::mail::delivery_line(&outcome, cfg) {
        log.line(runner, &line);
    }
}

struct Daemon<'a> {
    site: &'a Site,
    opts: &'a DaemonOptions,
    here: Machine,
    log: Log,
    wake: Arc<Wake>,
    /// A full disk: the runners wait for room.
    room: Room,
    /// The job processes running now (stop requests, hung jobs).
    children: Children,
    /// Background deliveries of the outbox, joined before the daemon exits.
    mailers: Mutex<Vec<std::thread::JoinHandle<()>>>,
    /// Jobs taken by this daemon: part of each running record's name.
    takes: AtomicU64,
    jobs: AtomicU64,
    failed: AtomicU64,
    held: AtomicU64,
    requeued: AtomicU64,
    /// With `--until-empty`: why the build cannot go on, said once for all runners.
    verdict: OnceLock<String>,
    /// Records whose settling failed (disk full, file server away), tried again every loop.
    unsettled: Mutex<Vec<(PathBuf, RunningRecord, Ending)>>,
    /// Held while a runner settles stale records (the others would find, report and try to
    /// settle the same ones), and when they were last looked for.
    reaping: Mutex<supervise::Every>,
    /// Runners with a job now (counted from the take): the daemon waits (`waiting/`) only
    /// when none has one, and a take asks for as many jobs as there are runners without.
    busy: std::sync::atomic::AtomicUsize,
    /// Jobs taken for this daemon's other runners in one locked step (`take.rs`), each in
    /// its running record, not started yet; and the lock that makes its runners take one
    /// at a time.
    hand: Mutex<std::collections::VecDeque<take::Taken>>,
    tally: Mutex<TakeTally>,
    /// Jobs stopped at a checkpoint because the daemon stops, requeued together at its end.
    stopped: Mutex<Vec<(PathBuf, RunningRecord)>>,
    taking: Mutex<()>,
    /// When this daemon began to wait with nothing runnable, while it does.
    waiting_since: Mutex<Option<u64>>,
    /// `max_waiting` decided that this daemon ends: every idle runner of it ends.
    leaving: std::sync::atomic::AtomicBool,
}

/// How one runner ended.
enum End {
    Finished,
    Stopped,
    /// `--until-empty` found that nothing more can run (the daemon's verdict says why).
    Stuck,
}

impl Daemon<'_> {
    fn say(&self, runner: usize, msg: &str) {
        self.log.line(runner, msg);
    }

    /// Spools an alert and sends the outbox in the background: a runner never waits for the
    /// mail server, and what it cannot send now goes with the next delivery.
    /// Returns whether the alert was spooled (a full disk cannot take it).
    fn alert(&self, runner: usize, subject: &str, body: &str) -> bool {
        if let Err(e) = crate::mail::alert(self.site.root(), &self.opts.host, subject, body) {
            self.say(runner, &format!("could not spool the alert: {e}"));
            return false;
        }
        let Some(cfg) = self.opts.mail.clone() else {
            return true;
        };
        let site = self.site.root().to_path_buf();
        let log = self.log.clone();
        let sender = std::thread::spawn(move || send_outbox(&site, &cfg, &log, runner));
        self.mailers.lock().expect("mailers").push(sender);
        true
    }

    /// Where a record's job process writes its output: [`job_output_dir`], named after the
    /// record (unique to this daemon's process).
    fn output_path(&self, record: &Path) -> PathBuf {
        let name = record.file_name().map(|n| n.to_string_lossy().into_owned());
        job_output_dir().join(format!("{}.out", name.unwrap_or_default()))
    }

    /// Whether wswatch has given the machine back to its user (`pause/<host>`).
    fn paused(&self) -> bool {
        super::host_files::pause_path(self.site, &self.opts.host).exists()
    }

    /// Runs one taken job to its end. Returns `Stopped` when a stop request made it
    /// checkpoint (it is then back in its queue).
    fn run(&self, runner: usize, taken: take::TakenJob) -> Result<Option<End>> {
        let take::TakenJob {
            queue,
            job: q,
            path,
            rec,
        } = taken;
        let (queue, path) = (&queue, path.as_path());
        let line = q.to_string();
        let job = q.job()?;
        self.say(
            runner,
            &format!("took \"{line}\" from {}: {job}", queue.name),
        );
        let out = self.output_path(path);
        let t0 = Instant::now();
        // The record as this daemon wrote it, if it is still there: a settler that requeued
        // the job meanwhile (wsmonitor took this host for crashed) removed it, and then the
        // job does not run. Looking costs one round trip to a file server, reading three.
        let mut rec = match (rec, crate::files::exists(path)) {
            (Some(rec), Ok(true)) => rec,
            _ => RunningRecord::parse(
                &std::fs::read_to_string(path).map_err(|e| failed(FileOp::Reading, path, e))?,
            )
            .ok_or_else(|| format!("{}: not a running record", path.display()))?,
        };
        let started = child::command(self.site, self.opts, &job, &out)
            .map_err(|e| e.to_string())
            .and_then(|mut c| {
                c.spawn()
                    .map_err(|e| format!("starting {}: {e}", self.opts.exe.display()))
            });
        let mut child = match started {
            Ok(c) => c,
            Err(e) => {
                let ending = Ending::Failed {
                    status: e,
                    output: None,
                };
                self.settle(runner, path, &rec, &ending)?;
                return Ok(None);
            }
        };
        rec.child = child.id();
        rec.child_start = process_start(child.id()).unwrap_or(0);
        self.children.add(rec.child, runner, &line);
        // Not synced: it matters while this machine runs (a stale check must wait for the
        // child), and a machine crash ends the child too.
        let written = rec.write(path, false);
        let status = child.wait();
        let did = self.children.remove(rec.child);
        written?;
        let status = status.map_err(|e| format!("waiting for the job process: {e}"))?;
        let secs = t0.elapsed().as_secs_f64();
        let output = std::fs::read_to_string(&out).unwrap_or_default();
        for l in output.lines() {
            self.say(runner, &format!("  | {l}"));
        }
        let ending = match child::classify(status, &output, did) {
            ChildEnd::Done(stats) => {
                return self.finish(runner, queue, &job, &rec, path, &stats, secs);
            }
            ChildEnd::Stopped => Ending::Stopped,
            ChildEnd::NoSpace(why) => {
                self.settle(runner, path, &rec, &Ending::Stopped)?;
                let _ = std::fs::remove_file(&out);
                let job = format!(
                    " for \"{}\" (back at the top of {}, no attempt used)",
                    rec.line, rec.queue
                );
                self.no_room(runner, &job, &why);
                return Ok(None);
            }
            ChildEnd::Failed(status) => Ending::Failed {
                status,
                output: Some(out.clone()),
            },
        };
        // The daemon stops: its stopped jobs are requeued together once its runners end
        // (`take::hand_back`), in one locked step rather than one each.
        if matches!(ending, Ending::Stopped) && STOP.load(Ordering::Relaxed) {
            let _ = std::fs::remove_file(&out);
            self.stopped
                .lock()
                .expect("stopped")
                .push((path.to_path_buf(), rec));
            return Ok(Some(End::Stopped));
        }
        // (A failed attempt's settling keeps the output: removed after it.)
        self.settle(runner, path, &rec, &ending)?;
        let _ = std::fs::remove_file(&out);
        if matches!(ending, Ending::Stopped) {
            return Ok(STOP.load(Ordering::Relaxed).then_some(End::Stopped));
        }
        Ok(None)
    }

    /// Too little disk space, for a job (back at the top of its queue with no attempt used:
    /// `job` says so) or for the runner's own files: this host's runners wait for room
    /// (longer while it lasts), and the operator is told once per spell (when the disk is
    /// too full to spool even that, as soon as it can be).
    fn no_room(&self, runner: usize, job: &str, why: &str) {
        let first = Duration::from_secs(self.opts.policy.retry_backoff_secs.max(1));
        let (wait, alert_due) = self.room.full(first);
        let msg = format!(
            "too little disk space{job}: {why}; this host's runners take no job for {}s",
            wait.as_secs()
        );
        self.say(runner, &msg);
        if alert_due && self.alert(runner, &format!("disk full on {}", self.opts.host), &format!("{msg}\n\nThe runners try again after a wait that doubles up to {}s while the disk stays full; free space (or move the site to a larger disk) and they go on by themselves.", super::wake::MAX_ROOM_WAIT.as_secs())) {
            self.room.alerted();
        }
    }

    /// A job finished: a spell of full disk is over (said, and alerted if the disk was too
    /// full for the alert while it lasted).
    fn has_room(&self, runner: usize) {
        let Some(spell) = self.room.had_room() else {
            return;
        };
        self.say(runner, "the disk has room again: the runners take jobs");
        if !spell.alerted {
            self.alert(
                runner,
                &format!("disk full on {}", self.opts.host),
                &format!("The disk was too full for this host's jobs (and for this alert) for {}s; its jobs were requeued without using attempts, and it has room again.", spell.lasted.as_secs()),
            );
        }
    }

    /// A job that exited 0: its done record, its pair moved on, its running record removed.
    #[allow(clippy::too_many_arguments)]
    fn finish(
        &self,
        runner: usize,
        queue: &Queue,
        job: &Job,
        rec: &RunningRecord,
        path: &Path,
        stats: &crate::solve::PhaseStats,
        secs: f64,
    ) -> Result<Option<End>> {
        let line = &rec.line;
        let _ = std::fs::remove_file(self.output_path(path));
        done::write(self.site, job, stats, &self.opts.host, secs)?;
        fault::point("done.recorded");
        if self.opts.dry_run.is_none() {
            let mut log = |m: String| self.say(runner, &m);
            if let Err(e) = pairs::advance(self.site, queue, &self.here, job, &mut log) {
                // Done, but its pair did not move on (a lock or a file server away): the
                // record stays and moving the pair on is tried again every loop.
                let why = format!("\"{line}\" is done but moving its pair on failed: {e}");
                self.keep_unsettled(runner, path, rec, &Ending::Stopped, &why);
                return Ok(None);
            }
        }
        fault::point("done.advanced");
        match crate::files::remove(path) {
            Ok(()) => {}
            // wsmonitor took this host for crashed and requeued the job meanwhile: it
            // will run again, with the same result (the operator was mailed).
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => self.say(
                runner,
                &format!(
                    "the running record of \"{line}\" was gone at the end: the job was requeued while it ran"
                ),
            ),
            Err(e) => return Err(failed(FileOp::Removing, path, e).into()),
        }
        self.jobs.fetch_add(1, Ordering::Relaxed);
        self.say(runner, &format!("done \"{line}\" in {secs:.2}s"));
        self.has_room(runner);
        self.wake.bump();
        Ok(None)
    }

    fn runner(&self, k: usize) -> Result<End> {
        loop {
            if STOP.load(Ordering::Relaxed) {
                return Ok(End::Stopped);
            }
            if self.verdict.get().is_some() {
                return Ok(End::Stuck);
            }
            let seen = self.wake.current();
            if let Some(left) = self.room.wait_left() {
                self.wake.wait(seen, left);
                continue;
            }
            let step = self
                .settle_again(k)
                .and_then(|_| self.reap_stale(k))
                .and_then(|_| self.take(k));
            match step {
                Ok(Some(take::Taken {
                    queue,
                    line: QueueLine::Stop,
                    ..
                })) => {
                    self.say(
                        k,
                        &format!("took \"stop\" from {}: this runner exits", queue.name),
                    );
                    return Ok(End::Finished);
                }
                Ok(Some(take::Taken {
                    queue,
                    line: QueueLine::Job(job),
                    path,
                    rec,
                })) => {
                    let taken = take::TakenJob {
                        queue,
                        job,
                        path,
                        rec,
                    };
                    match self.run_counted(k, taken) {
                        Ok(Some(end)) => return Ok(end),
                        Ok(None) => {}
                        Err(e) if e.is_no_space() => self.no_room(k, "", &e.to_string()),
                        // The record stays; the runner goes on (it is settled once its
                        // processes are gone, by the next daemon of this host at the latest).
                        Err(e) if !self.opts.until_empty => {
                            self.say(k, &format!("error running \"{job}\": {e}"));
                        }
                        Err(e) => return Err(e),
                    }
                }
                Ok(None) => {
                    if self.opts.until_empty
                        && !self.paused()
                        && let Some(end) = self.until_empty_end()?
                    {
                        return Ok(end);
                    }
                    if self.too_many_waiting(k) {
                        return Ok(End::Finished);
                    }
                    self.wake.wait(seen, self.opts.poll);
                }
                Err(e) if e.is_no_space() => self.no_room(k, "", &e.to_string()),
                // A bad queue line or an unreachable file server: report, wait, retry (the
                // operator can fix the queue with `addq --edit`).
                Err(e) if !self.opts.until_empty => {
                    self.say(k, &format!("error: {e}; retrying"));
                    self.wake
                        .wait(seen, self.opts.poll.max(Duration::from_secs(1)));
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// The daemon's own thread: stop requests passed on to the job processes, the host's
    /// heartbeat for wsmonitor, and hung jobs (`supervise.rs`).
    fn supervise(&self, runners_done: &std::sync::atomic::AtomicBool) {
        let stall = Duration::from_secs(self.opts.policy.stall_secs);
        let mut beat =
            supervise::Every::new(Duration::from_secs(super::host_files::HEARTBEAT_EVERY_SECS));
        let mut stalls = supervise::Every::new(supervise::sample_period(stall));
        while !runners_done.load(Ordering::Relaxed) {
            if beat.due()
                && let Err(e) = super::host_files::write_heartbeat(
                    self.site,
                    &self.opts.host,
                    &self.here.boot_id,
                    now_secs(),
                )
            {
                self.say(0, &format!("heartbeat: {e}"));
            }
            if STOP.load(Ordering::Relaxed) {
                self.children.stop_all();
            }
            if stalls.due() {
                for ev in self.children.check_stalls(stall) {
                    self.report_stall(ev);
                }
            }
            // A stop reaches the jobs within this; an idle daemon wakes ten times a second.
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn report_stall(&self, ev: supervise::Event) {
        match ev {
            supervise::Event::Hung {
                runner,
                line,
                pid,
                secs,
                state,
            } => {
                let msg = format!(
                    "\"{line}\" (pid {pid}, state {state}) has had no CPU time for {secs}s: hung? (a job on a dead network mount waits in state D); it is killed after {}s, which uses an attempt",
                    2 * self.opts.policy.stall_secs
                );
                self.say(runner, &msg);
                self.alert(runner, &format!("job hung: {line}"), &msg);
            }
            supervise::Event::Killed {
                runner,
                line,
                pid,
                secs,
            } => self.say(
                runner,
                &format!("\"{line}\" (pid {pid}) had no CPU time for {secs}s: sent SIGKILL; waiting for it to die"),
            ),
        }
    }
}

/// Runs the host's runners until they stop (SIGTERM, `stop` lines) or, with `until_empty`,
/// until nothing is left to do.
pub fn run_daemon(site: &Site, opts: &DaemonOptions) -> Result<DaemonSummary> {
    if opts.runners == 0 {
        return Err("--runners must be at least 1".into());
    }
    for d in [
        "queues",
        "done",
        "running",
        "logs",
        "work/ckpt",
        "work/queue",
        "solved",
    ] {
        let p = site.root().join(d);
        std::fs::create_dir_all(&p).map_err(|e| failed(FileOp::Creating, &p, e))?;
    }
    make_job_output_dir()?;
    // Before any thread starts: they inherit it.
    super::become_background_daemon();
    let real = Machine::current().map_err(|e| format!("identifying this machine: {e}"))?;
    let wake = Arc::new(Wake::default());
    let d = Daemon {
        site,
        opts,
        here: Machine {
            host: opts.host.clone(),
            boot_id: real.boot_id,
        },
        log: Log::open(site.root(), &opts.host, opts.echo)?,
        wake: wake.clone(),
        room: Room::default(),
        children: Children::default(),
        mailers: Mutex::default(),
        takes: AtomicU64::new(0),
        jobs: AtomicU64::new(0),
        failed: AtomicU64::new(0),
        held: AtomicU64::new(0),
        requeued: AtomicU64::new(0),
        verdict: OnceLock::new(),
        busy: std::sync::atomic::AtomicUsize::new(0),
        hand: Mutex::default(),
        tally: Mutex::default(),
        stopped: Mutex::default(),
        taking: Mutex::default(),
        waiting_since: Mutex::new(None),
        leaving: std::sync::atomic::AtomicBool::new(false),
        unsettled: Mutex::default(),
        reaping: Mutex::new(supervise::Every::new(REAP_PERIOD)),
    };
    let t0 = Instant::now();
    let names: Vec<&str> = opts.queues.iter().map(|q| q.name).collect();
    d.say(
        0,
        &format!(
            "jobrunner daemon: {} runner(s) on queues {}{}; up to {} attempts per job",
            opts.runners,
            names.join(", "),
            if opts.until_empty {
                ", until empty"
            } else {
                ""
            },
            opts.policy.max_attempts
        ),
    );
    let watcher = match watch(site, wake, opts.until_empty) {
        Ok(w) => Some(w),
        Err(e) => {
            d.say(
                0,
                &format!("no inotify ({e}): polling every {:?}", opts.poll),
            );
            None
        }
    };
    let runners_done = std::sync::atomic::AtomicBool::new(false);
    let results: Vec<Result<End>> = std::thread::scope(|scope| {
        scope.spawn(|| d.supervise(&runners_done));
        if let Some(t) = &opts.tend {
            let (d, done) = (&d, &runners_done);
            scope.spawn(move || d.tend(t, done));
        }
        let handles: Vec<_> = (0..opts.runners)
            .map(|k| {
                let d = &d;
                scope.spawn(move || d.runner(k))
            })
            .collect();
        let results = handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("a runner panicked".into())))
            .collect();
        runners_done.store(true, Ordering::Relaxed);
        results
    });
    drop(watcher);
    // Jobs stopped by the daemon's stop, and those taken for runners that stopped before
    // they started them.
    d.hand_back(0);
    d.leave_waiting();
    // Alerts still being sent go out before the daemon ends, and one last try for the rest.
    for m in d.mailers.lock().expect("mailers").drain(..) {
        let _ = m.join();
    }
    if let Some(cfg) = &opts.mail {
        send_outbox(site.root(), cfg, &d.log, 0);
    }
    let summary = DaemonSummary {
        jobs: d.jobs.load(Ordering::Relaxed),
        failed: d.failed.load(Ordering::Relaxed),
        held: d.held.load(Ordering::Relaxed),
        requeued: d.requeued.load(Ordering::Relaxed),
        elapsed: t0.elapsed(),
        stopped: results.iter().any(|r| matches!(r, Ok(End::Stopped))),
        takes: d.tally.lock().expect("tally").clone(),
        error: None,
    };
    d.say(
        0,
        &format!(
            "jobrunner daemon ends: {} job(s) done, {} failed attempt(s), {} held, {} requeued in {:.1}s",
            summary.jobs,
            summary.failed,
            summary.held,
            summary.requeued,
            summary.elapsed.as_secs_f64()
        ),
    );
    // Each distinct error once (several runners may meet the same unreachable file).
    let mut errors: Vec<String> = Vec::new();
    for e in results
        .into_iter()
        .filter_map(|r| r.err().map(String::from))
    {
        if !errors.contains(&e) {
            errors.push(e);
        }
    }
    if let Some(v) = d.verdict.get() {
        errors.insert(0, v.clone());
    }
    Ok(DaemonSummary {
        error: (!errors.is_empty()).then(|| errors.join("; ")),
        ..summary
    })
}
