//! The runner daemon (`jobrunner daemon`, 1994 paper section 5.1): each of the host's runners
//! takes the first runnable job of its queues, runs it in a child process at low priority,
//! records it in `done/`, and moves the job's slice pair on (`queue::pairs::advance`).
//!
//! - Taking a line writes the running record inside the queue's lock (`record.rs`).
//! - The child is `jobrunner run JOB` at nice 19 in the idle I/O class (the paper's
//!   background computations), told to stop (SIGTERM) if this runner dies; its output goes
//!   to the runner's log in `logs/`.
//! - Exit 0: a done record, the pair moved on, the running record removed. Exit 3 (stopped at
//!   a checkpoint, by our SIGTERM or anyone's): the job goes back to the top of its queue in
//!   the explicit-range form. Anything else: the record stays, marked failed, and an alert is
//!   queued for the operator.
//! - A `stop` line ends the runner that takes it. SIGTERM stops every runner at a checkpoint.
//! - Idle runners wait for a change of a queue file or a stage record (inotify through
//!   `notify`) or the poll interval, whichever comes first: inotify does not see other
//!   machines' writes on NFS or sshfs.
//! - Every loop also looks for stale running records of this host (a runner killed with its
//!   machine, or by SIGKILL) and requeues their jobs from their checkpoints.

use super::record::{self, RunningRecord, now_secs, process_start};
use crate::cli::STOP;
use crate::queue::pairs::{self, Readiness};
use crate::queue::{Machine, Queue, QueueLine, QueuedJob, done};
use crate::solve::{Job, PhaseStats, Site};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

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
    /// Trivial jobs: the child only checks the job (measures the queue machinery).
    pub dry_run: bool,
    /// The `jobrunner` binary the children run.
    pub exe: PathBuf,
    /// Also print log lines on stderr.
    pub echo: bool,
    /// Where alerts are sent (hosts.toml `[mail]`); without it they stay in the outbox.
    pub mail: Option<crate::mail::MailConfig>,
}

/// What a daemon did.
#[derive(Clone, Debug, Default)]
pub struct DaemonSummary {
    pub jobs: u64,
    pub failed: u64,
    pub requeued: u64,
    pub elapsed: Duration,
    pub stopped: bool,
}

/// Wakes idle runners when a queue or a stage record changes.
struct Wake {
    generation: Mutex<u64>,
    cv: Condvar,
}

impl Wake {
    fn bump(&self) {
        *self.generation.lock().expect("wake") += 1;
        self.cv.notify_all();
    }

    fn current(&self) -> u64 {
        *self.generation.lock().expect("wake")
    }

    /// Waits until the generation moves past `seen`, `poll` passes, or a stop is requested.
    fn wait(&self, seen: u64, poll: Duration) {
        let end = Instant::now() + poll;
        let mut g = self.generation.lock().expect("wake");
        while *g == seen && !STOP.load(Ordering::Relaxed) {
            let now = Instant::now();
            if now >= end {
                return;
            }
            let step = (end - now).min(Duration::from_millis(100));
            g = self.cv.wait_timeout(g, step).expect("wake").0;
        }
    }
}

/// The daemon's log: `logs/<host>.log`, one line per event, each with time, host, pid and
/// runner number.
#[derive(Clone)]
struct Log {
    file: Arc<Mutex<std::fs::File>>,
    host: String,
    echo: bool,
}

impl Log {
    fn line(&self, runner: usize, msg: &str) {
        let text = format!(
            "{} {} {}.{runner} {msg}\n",
            utc_timestamp(now_secs()),
            self.host,
            std::process::id()
        );
        // One write per line: with O_APPEND the lines of several daemons do not interleave.
        let _ = self.file.lock().expect("log").write_all(text.as_bytes());
        if self.echo {
            eprint!("{text}");
        }
    }
}

/// One delivery of the outbox, logged.
fn send_outbox(site: &Path, cfg: &crate::mail::MailConfig, log: &Log, runner: usize) {
    let outcome = crate::mail::deliver(site, cfg, now_secs());
    if let Some(line) = crate::mail::delivery_line(&outcome, cfg) {
        log.line(runner, &line);
    }
}

/// `YYYY-MM-DD HH:MM:SS` (UTC) for seconds since the epoch.
pub fn utc_timestamp(secs: u64) -> String {
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

struct Daemon<'a> {
    site: &'a Site,
    opts: &'a DaemonOptions,
    here: Machine,
    log: Log,
    wake: Arc<Wake>,
    /// The job processes running now, which a stop request passes SIGTERM on to.
    children: Mutex<std::collections::HashSet<u32>>,
    /// Background deliveries of the outbox, joined before the daemon exits.
    mailers: Mutex<Vec<std::thread::JoinHandle<()>>>,
    jobs: AtomicU64,
    failed: AtomicU64,
    requeued: AtomicU64,
}

/// How one runner ended.
enum End {
    Finished,
    Stopped,
}

/// A value from the one-line JSON `jobrunner run --json` prints.
fn json_u64(text: &str, key: &str) -> Option<u64> {
    let at = text.find(&format!("\"{key}\":"))? + key.len() + 3;
    let digits: String = text[at..]
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits.parse().ok()
}

impl Daemon<'_> {
    fn say(&self, runner: usize, msg: &str) {
        self.log.line(runner, msg);
    }

    /// Spools an alert and sends the outbox in the background: a runner never waits for the
    /// mail server, and what it cannot send now goes with the next delivery.
    fn alert(&self, runner: usize, subject: &str, body: &str) {
        if let Err(e) = crate::mail::alert(self.site.root(), &self.opts.host, subject, body) {
            self.say(runner, &format!("could not spool the alert: {e}"));
            return;
        }
        let Some(cfg) = self.opts.mail.clone() else {
            return;
        };
        let site = self.site.root().to_path_buf();
        let log = self.log.clone();
        let sender = std::thread::spawn(move || send_outbox(&site, &cfg, &log, runner));
        self.mailers.lock().expect("mailers").push(sender);
    }

    fn record_path(&self, runner: usize) -> PathBuf {
        record::running_dir(self.site).join(format!(
            "{}-{}-{runner}",
            self.opts.host,
            std::process::id()
        ))
    }

    fn runnable(&self, line: &QueueLine, ready: &mut Readiness) -> Result<bool, String> {
        match line {
            QueueLine::Stop => Ok(true),
            QueueLine::Job(q) if self.opts.dry_run => q.job().map(|_| true),
            QueueLine::Job(q) => ready.runnable(&q.job()?),
        }
    }

    /// Requeues the jobs of this host's stale running records.
    fn reap_stale(&self, runner: usize) -> Result<(), String> {
        for (path, rec) in record::read_host(self.site, &self.opts.host)? {
            if !rec.is_stale(&self.here) {
                continue;
            }
            let mut log = |m: String| self.say(runner, &m);
            if record::requeue(self.site, &self.here, &path, &rec, &mut log)? {
                self.requeued.fetch_add(1, Ordering::Relaxed);
                let why = if rec.boot_id != self.here.boot_id {
                    "the machine rebooted"
                } else {
                    "its runner and job processes are gone"
                };
                let msg = format!(
                    "stale running record {} ({why}): requeued {:?} at the top of {} to resume from its checkpoint",
                    path.display(),
                    rec.line,
                    rec.queue
                );
                self.say(runner, &msg);
                self.alert(runner, &format!("requeued {}", rec.line), &msg);
                self.wake.bump();
            }
        }
        Ok(())
    }

    /// Takes the first runnable line of the first queue that has one, writing the running
    /// record inside the lock.
    fn take(&self, runner: usize) -> Result<Option<(Queue, QueueLine)>, String> {
        if self.paused() {
            return Ok(None);
        }
        for queue in &self.opts.queues {
            let mut ready = Readiness::new(self.site);
            if !queue.peek(|l| self.runnable(l, &mut ready))? {
                continue;
            }
            let mut ready = Readiness::new(self.site);
            let path = self.record_path(runner);
            let mut log = |m: String| self.say(runner, &m);
            let taken = queue.take_with(
                &self.here,
                &mut log,
                |l| self.runnable(l, &mut ready),
                |l| match l {
                    QueueLine::Stop => Ok(()),
                    QueueLine::Job(_) => RunningRecord {
                        host: self.opts.host.clone(),
                        boot_id: self.here.boot_id.clone(),
                        pid: std::process::id(),
                        pid_start: process_start(std::process::id()).unwrap_or(0),
                        child: 0,
                        child_start: 0,
                        queue: queue.name.to_string(),
                        line: l.to_string(),
                        since: now_secs(),
                        failed: None,
                    }
                    .write(&path, true),
                },
            )?;
            if let Some(line) = taken {
                return Ok(Some((queue.clone(), line)));
            }
        }
        Ok(None)
    }

    /// Whether wswatch has given the machine back to its user (`pause/<host>`).
    fn paused(&self) -> bool {
        crate::watch::pause_path(self.site, &self.opts.host).exists()
    }

    /// With `--until-empty`: whether to end (the queues hold no job and nothing runs
    /// anywhere), or to fail (jobs are left but none can ever run).
    fn until_empty_end(&self) -> Result<Option<End>, String> {
        let Some(jobs) = self.idle_everywhere()? else {
            return Ok(None);
        };
        if jobs == 0 {
            return Ok(Some(End::Finished));
        }
        // Jobs left, none runnable, nothing running: that may be a moment between another
        // runner's take (its record appeared after we looked) and its finish. Stuck only if
        // it still looks the same, with as many jobs, after a pause.
        std::thread::sleep(self.opts.poll.max(Duration::from_millis(500)));
        if self.idle_everywhere()? != Some(jobs) {
            return Ok(None);
        }
        let failed: Vec<String> = record::read_all(self.site)?
            .into_iter()
            .filter_map(|(_, r)| r.failed.map(|f| format!("{} ({f})", r.line)))
            .collect();
        Err(format!(
            "{jobs} job(s) left in the queues, none runnable and nothing running{}",
            if failed.is_empty() {
                " (were the jobs they wait for ever queued?)".to_string()
            } else {
                format!("; failed: {}", failed.join(", "))
            }
        ))
    }

    /// `Some(job lines left)` when no job runs anywhere and none of this runner's queues
    /// holds a runnable line; `None` otherwise.
    fn idle_everywhere(&self) -> Result<Option<usize>, String> {
        let live = |recs: &[(PathBuf, RunningRecord)]| recs.iter().any(|r| r.1.failed.is_none());
        if live(&record::read_all(self.site)?) {
            return Ok(None);
        }
        // Read after the records: a runner removes its record only after queueing what its
        // job led to, so this sees every job that finished job leads to.
        let (mut any, mut jobs) = (false, 0);
        let mut ready = Readiness::new(self.site);
        for q in &self.opts.queues {
            any |= q.peek(|l| self.runnable(l, &mut ready))?;
            jobs += q.job_count()?;
        }
        if any || live(&record::read_all(self.site)?) {
            return Ok(None);
        }
        Ok(Some(jobs))
    }

    fn child_command(&self, job: &Job, out: &Path) -> Result<Command, String> {
        let file = |p: &Path| std::fs::File::create(p).map_err(|e| format!("{}: {e}", p.display()));
        let mut cmd = Command::new(&self.opts.exe);
        cmd.arg("--site")
            .arg(self.site.root())
            .arg("--buffers")
            .arg(self.opts.buffers.to_string())
            .arg("--checkpoint-secs")
            .arg(self.opts.checkpoint_secs.to_string())
            .arg("--json")
            .arg("run")
            .arg("--background");
        if self.opts.dry_run {
            cmd.arg("--dry-run");
        }
        let f = file(out)?;
        cmd.arg(job.to_string())
            .stdin(Stdio::null())
            .stdout(f.try_clone().map_err(|e| e.to_string())?)
            .stderr(f);
        Ok(cmd)
    }

    /// Runs one taken job to its end. Returns `Stopped` when a stop request made it
    /// checkpoint (it is then back in its queue).
    fn run(&self, runner: usize, queue: &Queue, q: QueuedJob) -> Result<Option<End>, String> {
        let line = q.to_string();
        let path = self.record_path(runner);
        let job = q.job()?;
        self.say(
            runner,
            &format!("took \"{line}\" from {}: {job}", queue.name),
        );
        let out = self.site.root().join("logs").join(format!(
            "{}-{}-{runner}.out",
            self.opts.host,
            std::process::id()
        ));
        let t0 = Instant::now();
        let mut child = self
            .child_command(&job, &out)?
            .spawn()
            .map_err(|e| format!("starting {}: {e}", self.opts.exe.display()))?;
        let mut rec = RunningRecord::parse(
            &std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?,
        )
        .ok_or_else(|| format!("{}: not a running record", path.display()))?;
        rec.child = child.id();
        rec.child_start = process_start(child.id()).unwrap_or(0);
        // Not synced: it matters while this machine runs (a stale check must wait for the
        // child), and a machine crash ends the child too.
        rec.write(&path, false)?;
        self.children.lock().expect("children").insert(rec.child);
        let status = child.wait();
        self.children.lock().expect("children").remove(&rec.child);
        let status = status.map_err(|e| format!("waiting for the job process: {e}"))?;
        let secs = t0.elapsed().as_secs_f64();
        let output = std::fs::read_to_string(&out).unwrap_or_default();
        for l in output.lines() {
            self.say(runner, &format!("  | {l}"));
        }
        let _ = std::fs::remove_file(&out);
        match status.code() {
            Some(0) => {
                let stats = PhaseStats {
                    looked: json_u64(&output, "looked").unwrap_or(0),
                    win: json_u64(&output, "win").unwrap_or(0),
                    loss: json_u64(&output, "loss").unwrap_or(0),
                    draw: json_u64(&output, "draw").unwrap_or(0),
                };
                done::write(self.site, &job, &stats, &self.opts.host, secs)?;
                if !self.opts.dry_run {
                    let mut log = |m: String| self.say(runner, &m);
                    if let Err(e) = pairs::advance(self.site, queue, &self.here, &job, &mut log) {
                        return self.fail(runner, &path, rec, &format!("moving the pair on: {e}"));
                    }
                }
                match std::fs::remove_file(&path) {
                    Ok(()) => {}
                    // wsmonitor took this host for crashed and requeued the job meanwhile: it
                    // will run again, with the same result (the operator was mailed).
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => self.say(
                        runner,
                        &format!(
                            "the running record of \"{line}\" was gone at the end: the job was requeued while it ran"
                        ),
                    ),
                    Err(e) => return Err(format!("{}: {e}", path.display())),
                }
                self.jobs.fetch_add(1, Ordering::Relaxed);
                self.say(runner, &format!("done \"{line}\" in {secs:.2}s"));
                self.wake.bump();
                Ok(None)
            }
            Some(3) => {
                let mut log = |m: String| self.say(runner, &m);
                record::requeue(self.site, &self.here, &path, &rec, &mut log)?;
                self.requeued.fetch_add(1, Ordering::Relaxed);
                self.say(
                    runner,
                    &format!(
                        "\"{line}\" stopped at a checkpoint after {secs:.2}s: requeued at the top of {}",
                        queue.name
                    ),
                );
                self.wake.bump();
                Ok(STOP.load(Ordering::Relaxed).then_some(End::Stopped))
            }
            _ => self.fail(runner, &path, rec, &format!("the job process {status}")),
        }
    }

    /// Keeps the record, marked failed, and tells the operator.
    fn fail(
        &self,
        runner: usize,
        path: &Path,
        mut rec: RunningRecord,
        why: &str,
    ) -> Result<Option<End>, String> {
        self.failed.fetch_add(1, Ordering::Relaxed);
        rec.failed = Some(why.to_string());
        rec.write(path, true)?;
        let msg = format!(
            "FAILED \"{}\": {why}; the running record {} stays until an operator removes it (the job's output is in logs/{}.log)",
            rec.line,
            path.display(),
            self.opts.host
        );
        self.say(runner, &msg);
        self.alert(runner, &format!("job failed: {}", rec.line), &msg);
        Ok(None)
    }

    fn runner(&self, k: usize) -> Result<End, String> {
        loop {
            if STOP.load(Ordering::Relaxed) {
                return Ok(End::Stopped);
            }
            let seen = self.wake.current();
            let step = self.reap_stale(k).and_then(|_| self.take(k));
            match step {
                Ok(Some((q, QueueLine::Stop))) => {
                    self.say(
                        k,
                        &format!("took \"stop\" from {}: this runner exits", q.name),
                    );
                    return Ok(End::Finished);
                }
                Ok(Some((q, QueueLine::Job(job)))) => {
                    if let Some(end) = self.run(k, &q, job)? {
                        return Ok(end);
                    }
                }
                Ok(None) => {
                    if self.opts.until_empty
                        && !self.paused()
                        && let Some(end) = self.until_empty_end()?
                    {
                        return Ok(end);
                    }
                    self.wake.wait(seen, self.opts.poll);
                }
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
}

/// Watches the queue files and stage records for changes, waking idle runners.
fn watch(site: &Site, wake: Arc<Wake>) -> notify::Result<notify::RecommendedWatcher> {
    use notify::{RecursiveMode, Watcher};
    let mut w = notify::recommended_watcher(move |ev: notify::Result<notify::Event>| {
        let relevant = ev.is_ok_and(|ev| {
            ev.paths.iter().any(|p| {
                let name = p
                    .file_name()
                    .map(|n| n.to_string_lossy())
                    .unwrap_or_default();
                name.ends_with(".stage") || crate::queue::QUEUES.iter().any(|(_, q)| name == *q)
            })
        });
        if relevant {
            wake.bump();
        }
    })?;
    for d in ["queues", "done"] {
        w.watch(&site.root().join(d), RecursiveMode::NonRecursive)?;
    }
    Ok(w)
}

/// Runs the host's runners until they stop (SIGTERM, `stop` lines) or, with `until_empty`,
/// until nothing is left to do.
pub fn run_daemon(site: &Site, opts: &DaemonOptions) -> Result<DaemonSummary, String> {
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
        std::fs::create_dir_all(&p).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    let real = Machine::current().map_err(|e| format!("identifying this machine: {e}"))?;
    let log_path = site.root().join("logs").join(format!("{}.log", opts.host));
    let file = crate::files::open_append(&log_path).map_err(|e| e.to_string())?;
    let wake = Arc::new(Wake {
        generation: Mutex::new(0),
        cv: Condvar::new(),
    });
    let d = Daemon {
        site,
        opts,
        here: Machine {
            host: opts.host.clone(),
            boot_id: real.boot_id,
        },
        log: Log {
            file: Arc::new(Mutex::new(file)),
            host: opts.host.clone(),
            echo: opts.echo,
        },
        wake: wake.clone(),
        children: Mutex::default(),
        mailers: Mutex::default(),
        jobs: AtomicU64::new(0),
        failed: AtomicU64::new(0),
        requeued: AtomicU64::new(0),
    };
    let t0 = Instant::now();
    let names: Vec<&str> = opts.queues.iter().map(|q| q.name).collect();
    d.say(
        0,
        &format!(
            "jobrunner daemon: {} runner(s) on queues {}{}",
            opts.runners,
            names.join(", "),
            if opts.until_empty {
                ", until empty"
            } else {
                ""
            }
        ),
    );
    let watcher = match watch(site, wake) {
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
    let results: Vec<Result<End, String>> = std::thread::scope(|scope| {
        // SIGTERM to the daemon becomes SIGTERM to every job process: each checkpoints.
        // It also writes the host's heartbeat for wsmonitor every 10 seconds.
        scope.spawn(|| {
            let mut signalled = std::collections::HashSet::new();
            let mut last_beat: Option<Instant> = None;
            while !runners_done.load(Ordering::Relaxed) {
                if last_beat.is_none_or(|t| t.elapsed() >= Duration::from_secs(10)) {
                    last_beat = Some(Instant::now());
                    if let Err(e) = crate::monitor::write_heartbeat(
                        site,
                        &opts.host,
                        &d.here.boot_id,
                        now_secs(),
                    ) {
                        d.say(0, &format!("heartbeat: {e}"));
                    }
                }
                if STOP.load(Ordering::Relaxed) {
                    for &pid in d.children.lock().expect("children").iter() {
                        if signalled.insert(pid) {
                            let _ = nix::sys::signal::kill(
                                nix::unistd::Pid::from_raw(pid as i32),
                                nix::sys::signal::Signal::SIGTERM,
                            );
                        }
                    }
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        });
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
        requeued: d.requeued.load(Ordering::Relaxed),
        elapsed: t0.elapsed(),
        stopped: results.iter().any(|r| matches!(r, Ok(End::Stopped))),
    };
    d.say(
        0,
        &format!(
            "jobrunner daemon ends: {} job(s) done, {} failed, {} requeued in {:.1}s",
            summary.jobs,
            summary.failed,
            summary.requeued,
            summary.elapsed.as_secs_f64()
        ),
    );
    let errors: Vec<String> = results.into_iter().filter_map(|r| r.err()).collect();
    if !errors.is_empty() {
        return Err(errors.join("; "));
    }
    if summary.failed > 0 && opts.until_empty {
        return Err(format!(
            "{} job(s) failed (see running/ and logs/{}.log)",
            summary.failed, opts.host
        ));
    }
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_utc_civil_dates() {
        assert_eq!(utc_timestamp(0), "1970-01-01 00:00:00");
        assert_eq!(utc_timestamp(951_782_400), "2000-02-29 00:00:00");
        assert_eq!(utc_timestamp(1_795_392_000 + 3661), "2026-11-23 01:01:01");
    }

    #[test]
    fn stats_are_read_from_the_json_line() {
        let t = r#"{"job":"x","stats":{"looked":12,"win":3,"loss":0,"draw":9}}"#;
        assert_eq!(json_u64(t, "looked"), Some(12));
        assert_eq!(json_u64(t, "draw"), Some(9));
        assert_eq!(json_u64(t, "nope"), None);
    }
}
