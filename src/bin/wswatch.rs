//! wswatch: gives a workstation back to its user: suspends the runners' jobs or checkpoints
//! and requeues them, by the host's policy in hosts.toml.

use clap::Parser;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Parser)]
#[command(
    version,
    about = "Watch this workstation for its user: suspend or requeue the runners' jobs by the host's policy (hosts.toml).",
    long_about = "Watch this workstation for its user. It reads the access times of the terminal \
                  devices (/dev/pts/*, /dev/tty*: typing updates them) and of the input devices \
                  (/dev/input/event*: mouse and keyboard), and the CPU time other than nice time \
                  in /proc/stat (the jobs and the runner daemon run niced, so other busy time is a user's). Public \
                  hosts: activity suspends the jobs (SIGSTOP; SIGCONT after --resume-after idle \
                  seconds) when a quarter of the memory is free, else checkpoints and requeues \
                  them. Private hosts (public = false): in working hours activity checkpoints and \
                  requeues them and pauses the runners. night_only hosts: in working hours the \
                  jobs are requeued and the runners paused. Every action is logged and mailed."
)]
struct Args {
    #[command(flatten)]
    common: nowdb::cli::SiteArgs,
    /// This host's name in hosts.toml (default: the hostname).
    #[arg(long)]
    host: Option<String>,
    /// One round, then exit.
    #[arg(long)]
    once: bool,
    /// Seconds between rounds.
    #[arg(long, default_value_t = 30)]
    interval: u64,
    /// Idle seconds before suspended jobs resume and paused runners take jobs again.
    #[arg(long, default_value_t = 600)]
    resume_after: u64,
    /// Input within this many seconds means someone is at the machine.
    #[arg(long, default_value_t = 60)]
    active_within: u64,
    /// Other (not nice) CPU load, in CPUs, that counts as a user's work.
    #[arg(long, default_value_t = 0.5)]
    busy_cpu: f64,
    /// Working hours on weekdays, local time: START-END.
    #[arg(long, default_value = "8-18")]
    working_hours: String,
    /// Activity devices as DIR:PREFIX,... (default /dev/pts:,/dev:tty,/dev/input:event).
    #[arg(long)]
    devices: Option<String>,
    /// Where to read CPU times (default /proc/stat).
    #[arg(long)]
    proc_stat: Option<std::path::PathBuf>,
    /// Where to read memory (default /proc/meminfo).
    #[arg(long)]
    meminfo: Option<std::path::PathBuf>,
    /// Take this as the time (seconds since the epoch); with --once, for tests.
    #[arg(long, requires = "once")]
    now: Option<u64>,
}

fn run(a: Args) -> Result<(), nowdb::cli::CliError> {
    let site = nowdb::solve::Site::new(&a.common.site);
    let bad_hours = || {
        format!(
            "--working-hours {:?}: expected START-END hours, e.g. 8-18",
            a.working_hours
        )
    };
    let (start, end) = a.working_hours.split_once('-').ok_or_else(bad_hours)?;
    let (day_start, day_end): (u32, u32) = (
        start.parse().map_err(|_| bad_hours())?,
        end.parse().map_err(|_| bad_hours())?,
    );
    if day_start >= day_end || day_end > 24 {
        return Err(bad_hours().into());
    }
    let mut sources = nowdb::watch::Sources::default();
    if let Some(d) = &a.devices {
        sources.devices = nowdb::watch::command::parse_devices(d)?;
    }
    if let Some(p) = a.proc_stat {
        sources.proc_stat = p;
    }
    if let Some(p) = a.meminfo {
        sources.meminfo = p;
    }
    let args = nowdb::watch::command::WatchArgs {
        host: a.host,
        once: a.once,
        interval: Duration::from_secs(a.interval.max(1)),
        now: a.now,
        opts: nowdb::watch::WatchOptions {
            resume_after: a.resume_after,
            active_within: a.active_within,
            busy_cpu: a.busy_cpu,
            day_start,
            day_end,
            sources,
        },
    };
    nowdb::watch::command::watch_command(&site, &args, &mut std::io::stdout().lock())
}

fn main() -> ExitCode {
    if let Err(e) = nowdb::cli::stop_on_signals() {
        return nowdb::cli::finish("wswatch", Err(e));
    }
    nowdb::cli::finish("wswatch", run(nowdb::cli::parse::<Args>("wswatch")))
}
