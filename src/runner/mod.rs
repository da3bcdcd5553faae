//! What `jobrunner` does: the runner daemon that drains the queues (`jobrunner daemon`,
//! [`daemon`]), one phase job in the foreground (`jobrunner run`, what the daemon's children
//! run), the in-process local build (`jobrunner build-local`) and `verify`.

pub mod child;
pub mod daemon;
pub mod host_files;
pub mod log;
pub mod recover;
/// Running records are queue state ([`crate::queue::running`]); kept under this name too.
pub use crate::queue::running as record;
mod stuck;
pub mod supervise;
mod wake;

use crate::cli::{CliError, STOP, output_error, peak_rss_bytes};
use crate::solve::local::{BuildOptions, BuildSummary, build_local};
use crate::solve::running::{Outcome, PhaseStats, RunOptions};
use crate::solve::{Job, Site, run_job};
use std::io::Write;
use std::time::{Duration, Instant};

fn stats_json(s: &PhaseStats) -> serde_json::Value {
    serde_json::to_value(s).expect("statistics serialize")
}

/// `jobrunner run JOB`: runs (or resumes) one job and reports its statistics. A SIGTERM or
/// the deadline checkpoints it; the exit is then 3 so a caller can requeue the rest.
///
/// With `dry_run` the job is only parsed and checked, then takes the given time (the
/// daemon's trivial jobs, which measure the queue machinery; a stop request ends the wait
/// as a checkpoint would, exit 3).
pub fn run_one(
    site: &Site,
    job_text: &str,
    run: &RunOptions,
    dry_run: Option<Duration>,
    json: bool,
    out: &mut dyn Write,
) -> Result<bool, CliError> {
    let job: Job = job_text.parse()?;
    crate::fault::point("job.start");
    // Said in the report, so a log shows that a requeued job went on from its checkpoint.
    let resumed = match dry_run {
        Some(_) => None,
        None => crate::solve::checkpoint::load(site, &job)?
            .filter(|c| !c.complete)
            .map(|c| c.next),
    };
    let t0 = Instant::now();
    let outcome = match dry_run {
        Some(length) => dry_run_job(&job, length, run),
        None => run_job(site, &job, run)?,
    };
    let secs = t0.elapsed().as_secs_f64();
    let (done, next, stats) = match outcome {
        Outcome::Done(s) => (true, None, s),
        Outcome::Stopped { next, stats } => (false, Some(next), stats),
    };
    if json {
        let value = serde_json::json!({
            "job": job.to_string(),
            "resumed_from": resumed,
            "complete": done,
            "next": next,
            "seconds": crate::cli::millis(secs),
            "stats": stats_json(&stats),
            // The job is its own process: its high-water mark is the job's memory.
            "peak_rss_bytes": peak_rss_bytes(),
        });
        write!(out, "{}", crate::cli::json_line(&value))
    } else {
        let state = match next {
            None => "done".to_string(),
            Some(n) => format!("stopped at checkpoint {n} (run again to resume)"),
        };
        let from = resumed.map_or(String::new(), |n| format!(" (resumed from checkpoint {n})"));
        writeln!(
            out,
            "{job}: {state}{from} in {secs:.2}s; looked at {}, resolved win {} loss {} draw {}",
            stats.looked, stats.win, stats.loss, stats.draw
        )
    }
    .map_err(output_error)?;
    Ok(done)
}

/// A dry-run job: `length` of waiting, ended early by a stop request (SIGTERM) or the
/// deadline as a checkpoint would end a real job.
fn dry_run_job(job: &Job, length: Duration, run: &RunOptions) -> Outcome {
    let end = Instant::now() + length;
    loop {
        let now = Instant::now();
        if now >= end {
            return Outcome::Done(PhaseStats::default());
        }
        let stopped = run
            .stop
            .is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed));
        if stopped || run.deadline.is_some_and(|d| now >= d) {
            return Outcome::Stopped {
                next: job.first,
                stats: PhaseStats::default(),
            };
        }
        std::thread::sleep((end - now).min(Duration::from_millis(50)));
    }
}

fn rate(positions: u64, d: Duration) -> f64 {
    positions as f64 / d.as_secs_f64().max(1e-9)
}

/// `jobrunner build-local`: the whole local build with progress on stderr and a summary.
pub fn build_local_command(
    site: &Site,
    opts: &BuildOptions,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let mut report = crate::progress::Progress::stderr(opts.progress_every);
    let s: BuildSummary = build_local(site, opts, &mut report)?;
    report.finish();
    let rss = peak_rss_bytes().unwrap_or(0);
    let wall = s.elapsed.as_secs_f64();
    let per_core = rate(s.positions, s.elapsed) / opts.runners as f64;
    if json {
        let mut phases = serde_json::Map::new();
        for (p, t) in &s.phase_time {
            phases.insert(
                p.to_string(),
                serde_json::json!({
                    "seconds": crate::cli::millis(t.as_secs_f64()),
                    "stats": stats_json(&s.phase_stats[p]),
                }),
            );
        }
        let value = serde_json::json!({
            "pieces": opts.pieces,
            "runners": opts.runners,
            "slices": s.slices,
            "already_solved": s.already_solved,
            "positions": s.positions,
            "seconds": crate::cli::millis(wall),
            "positions_per_second_per_core": per_core.round(),
            "peak_rss_bytes": rss,
            "noio_passes": s.noio_passes,
            "que_rounds": s.que_rounds,
            "verified": s.verified,
            "phases": phases,
        });
        write!(out, "{}", crate::cli::json_line(&value)).map_err(output_error)?;
        return Ok(());
    }
    let mut text = format!(
        "built 2..{} pieces: {} slices ({} were already solved), {} positions\n\
         wall time {wall:.1}s with {} runners: {:.2} M positions/s, {:.2} M per core; peak RSS {} MiB\n\
         noio passes {}, que rounds {}{}\n\
         phase\tjob-seconds\tlooked\twin\tloss\tdraw\n",
        opts.pieces,
        s.slices,
        s.already_solved,
        s.positions,
        opts.runners,
        rate(s.positions, s.elapsed) / 1e6,
        per_core / 1e6,
        rss >> 20,
        s.noio_passes,
        s.que_rounds,
        if opts.verify {
            format!(", verified {} positions", s.verified)
        } else {
            String::new()
        }
    );
    for (p, t) in &s.phase_time {
        let st = &s.phase_stats[p];
        text += &format!(
            "{p}\t{:.1}\t{}\t{}\t{}\t{}\n",
            t.as_secs_f64(),
            st.looked,
            st.win,
            st.loss,
            st.draw
        );
    }
    out.write_all(text.as_bytes()).map_err(output_error)
}

/// The run options from the command line, wired to SIGTERM.
pub fn run_options(buffers: usize, checkpoint_secs: u64, deadline_secs: Option<u64>) -> RunOptions {
    RunOptions {
        buffers,
        solved: None,
        checkpoint_every: Duration::from_secs(checkpoint_secs),
        deadline: deadline_secs.map(|s| Instant::now() + Duration::from_secs(s)),
        stop: Some(&STOP),
        durable: true,
        database: None,
        lower_from_database: false,
    }
}

/// `jobrunner verify`: every solved slice against its successors.
pub fn verify_command(
    site: &Site,
    runners: usize,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let t0 = Instant::now();
    let mut report = crate::progress::Progress::stderr(Duration::from_secs(5));
    let n = crate::solve::verify::verify_site(site, runners, &mut report)?;
    report.finish();
    let d = t0.elapsed();
    let per_core = rate(n, d) / runners.max(1) as f64;
    if json {
        let value = serde_json::json!({
            "verified": n,
            "seconds": crate::cli::millis(d.as_secs_f64()),
            "positions_per_second_per_core": per_core.round(),
        });
        write!(out, "{}", crate::cli::json_line(&value))
    } else {
        writeln!(
            out,
            "verified {n} positions in {:.1}s: every value agrees with its successors ({:.2} M positions/s per core)",
            d.as_secs_f64(),
            per_core / 1e6
        )
    }
    .map_err(output_error)
}

/// `jobrunner daemon`'s command line, before `hosts.toml` fills the gaps.
#[derive(Clone, Debug, Default)]
pub struct DaemonArgs {
    pub host: Option<String>,
    pub hosts_file: Option<std::path::PathBuf>,
    pub queues: Option<String>,
    pub runners: Option<usize>,
    pub buffers: Option<usize>,
    pub checkpoint_secs: Option<u64>,
    pub poll: Duration,
    pub until_empty: bool,
    /// Dry-run jobs of this length (see [`daemon::DaemonOptions::dry_run`]).
    pub dry_run: Option<Duration>,
    /// At most this many jobs a take (see [`daemon::DaemonOptions::max_take`]).
    pub max_take: Option<usize>,
    /// At most this many daemons of the site wait with nothing runnable (see
    /// [`daemon::DaemonOptions::max_waiting`]).
    pub max_waiting: Option<usize>,
}

/// Resolves the daemon's options: this host's `[[host]]` table in `hosts.toml` (by hostname,
/// or `--host`) gives its queues, runner count and memory; the command line overrides them.
pub fn daemon_options(site: &Site, a: &DaemonArgs) -> crate::error::Result<daemon::DaemonOptions> {
    use crate::error::Error;
    let host = match &a.host {
        Some(h) => h.clone(),
        None => nix::unistd::gethostname()
            .map_err(|e| Error::io("reading the hostname", e.into()))?
            .to_string_lossy()
            .into_owned(),
    };
    crate::hosts::check_name(&host)?;
    let file = a
        .hosts_file
        .clone()
        .unwrap_or_else(|| site.root().join("hosts.toml"));
    let (entry, mail, policy) = if file.exists() {
        let hosts = crate::hosts::Hosts::load(&file)?;
        (hosts.host(&host).cloned(), hosts.mail, hosts.jobs)
    } else {
        (None, None, Default::default())
    };
    if entry.is_none() && (a.queues.is_none() || a.runners.is_none()) {
        return Err(Error::Failed(format!(
            "host {host:?} has no [[host]] table in {} (add one, or give --queues and --runners)",
            file.display()
        )));
    }
    let letters = a
        .queues
        .clone()
        .or_else(|| entry.as_ref().map(|e| e.queue.clone()))
        .unwrap_or_default();
    let mut queues = Vec::new();
    for c in letters.chars() {
        let q = crate::queue::Queue::named(site.root(), &c.to_string())?;
        if !queues
            .iter()
            .any(|x: &crate::queue::Queue| x.name == q.name)
        {
            queues.push(q);
        }
    }
    if queues.is_empty() {
        return Err(Error::Failed(
            "--queues: give at least one queue letter (p, n, s, m)".into(),
        ));
    }
    let runners = a.runners.or(entry.as_ref().map(|e| e.runners)).unwrap_or(1);
    let buffers = a
        .buffers
        .or(entry.as_ref().map(|e| e.buffers_per_file()))
        .unwrap_or(2048);
    Ok(daemon::DaemonOptions {
        host,
        queues,
        runners,
        buffers,
        checkpoint_secs: a
            .checkpoint_secs
            .or(entry.as_ref().and_then(|e| e.checkpoint_secs))
            .unwrap_or(60),
        poll: a.poll,
        until_empty: a.until_empty,
        dry_run: a.dry_run,
        max_take: a.max_take.unwrap_or(usize::MAX).max(1),
        exe: std::env::current_exe().map_err(|e| Error::io("finding jobrunner itself", e))?,
        echo: true,
        mail,
        policy,
        max_waiting: a.max_waiting,
        tend: None,
    })
}

/// `jobrunner daemon`: runs the host's runners; prints a summary at the end.
pub fn daemon_command(
    site: &Site,
    args: &DaemonArgs,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let opts = daemon_options(site, args)?;
    let s = daemon::run_daemon(site, &opts)?;
    report_daemon(&opts, &s, json, out)
}

/// A daemon's summary on `out` (a JSON line with `json`); its error, if any, as the result.
pub fn report_daemon(
    opts: &daemon::DaemonOptions,
    s: &daemon::DaemonSummary,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let secs = s.elapsed.as_secs_f64();
    let t = &s.takes;
    let ms = |d: Duration| (d.as_secs_f64() * 1e4).round() / 10.0;
    // Of the runners' time, the part spent waiting for a queue's lock.
    let wait_share = t.waited().as_secs_f64() / (secs * opts.runners as f64).max(1e-9);
    let text = if json {
        crate::cli::json_line(&serde_json::json!({
            "host": opts.host,
            "jobs": s.jobs,
            "failed": s.failed,
            "held": s.held,
            "requeued": s.requeued,
            "seconds": crate::cli::millis(secs),
            "jobs_per_second": (s.jobs as f64 / secs.max(1e-9) * 10.0).round() / 10.0,
            "stopped": s.stopped,
            "takes": {
                "takes": t.takes,
                "lines": t.lines,
                "lock_wait_p50_ms": ms(t.wait_quantile(0.5)),
                "lock_wait_p99_ms": ms(t.wait_quantile(0.99)),
                "lock_wait_seconds": crate::cli::millis(t.waited().as_secs_f64()),
                "lock_held_seconds": crate::cli::millis(t.held.as_secs_f64()),
                "lock_wait_share": (wait_share * 1e4).round() / 1e4,
            },
            "error": s.error,
        }))
    } else {
        format!(
            "{}: {} job(s) done, {} failed attempt(s), {} held, {} requeued in {secs:.1}s ({:.1} jobs/s){}\n\
             {} take(s) of {:.1} line(s) on average; the queue lock's wait p50 {:.1} ms, p99 {:.1} ms, {:.1} % of the runners' time\n",
            opts.host,
            s.jobs,
            s.failed,
            s.held,
            s.requeued,
            s.jobs as f64 / secs.max(1e-9),
            if s.stopped {
                "; stopped at a checkpoint"
            } else {
                ""
            },
            t.takes,
            t.lines as f64 / t.takes.max(1) as f64,
            ms(t.wait_quantile(0.5)),
            ms(t.wait_quantile(0.99)),
            wait_share * 100.0,
        )
    };
    out.write_all(text.as_bytes()).map_err(output_error)?;
    match &s.error {
        Some(e) => Err(CliError::Failed(e.clone())),
        None => Ok(()),
    }
}

/// The daemon's own priority, set before it starts its threads (Linux keeps a nice value
/// per thread, and new threads inherit their creator's): nice 1. The kernel counts the CPU
/// time of any thread with a positive nice value as nice time, which `wswatch` does not
/// count as a user's, so the daemon's own work (takes, records, heartbeats) never makes its
/// desktop look busy. Not 19 like its jobs: then each handoff between two jobs (settle,
/// take, start the next) waited behind the other runner's job for a scheduler slice, and
/// 2..4 through the queues took 1.3 times as long (`scripts/bench-ab`). Its I/O stays in the
/// best-effort class at the lowest level rather than the jobs' idle class: on a busy disk
/// the idle class can wait without bound, and a heartbeat or a queue lock held behind
/// another program's writes would make the host look crashed, or stall every host's takes.
pub fn become_background_daemon() {
    // SAFETY: plain system calls on this thread.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, DAEMON_NICE);
        libc::syscall(
            libc::SYS_ioprio_set,
            IOPRIO_WHO_PROCESS,
            0,
            IOPRIO_CLASS_BE << 13 | 7,
        );
    }
}

/// The runner daemon's nice value ([`become_background_daemon`]).
pub const DAEMON_NICE: i32 = 1;

const IOPRIO_WHO_PROCESS: libc::c_long = 1;
const IOPRIO_CLASS_BE: libc::c_long = 2;
const IOPRIO_CLASS_IDLE: libc::c_long = 3;

/// What `jobrunner run --background` does first: the lowest CPU priority and the idle I/O
/// class (the paper's background computations), and a SIGTERM (checkpoint and stop) when
/// the runner that started it dies. Done in the child itself rather than between fork and
/// exec, so the runner can start it with the cheaper `posix_spawn`.
pub fn become_background_job() -> crate::error::Result<()> {
    let parent = nix::unistd::getppid();
    // SAFETY: plain system calls on this process.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, 19);
        libc::syscall(
            libc::SYS_ioprio_set,
            IOPRIO_WHO_PROCESS,
            0,
            IOPRIO_CLASS_IDLE << 13,
        );
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
            return Err(crate::error::Error::io(
                "asking for SIGTERM on the runner's death",
                std::io::Error::last_os_error(),
            ));
        }
    }
    // The runner may have died before the request was in place.
    if nix::unistd::getppid() != parent {
        return Err(crate::error::Error::Failed(
            "the runner that started this job is gone".into(),
        ));
    }
    Ok(())
}
