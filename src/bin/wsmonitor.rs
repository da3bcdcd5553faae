//! wsmonitor: watches the hosts of hosts.toml, requeues the jobs of crashed and rebooted
//! hosts, restarts their runners, and mails every action.

use clap::Parser;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Parser)]
#[command(
    version,
    about = "Watch the pool's hosts: requeue the jobs of crashed or rebooted hosts, restart their runners, mail every action.",
    long_about = "Watch every host of SITE/hosts.toml with a TCP connect to its ssh port each \
                  --interval. A host that stops answering is retried for --grace; then it has \
                  crashed: its running jobs go back to the top of their queues (they resume from \
                  their checkpoints) and it is listed in SITE/crashed. A host that answers with a \
                  new boot id (from its runners' heartbeat) rebooted: the same, at once. When a \
                  host answers again its runners are started (dbstart). Every action goes to \
                  SITE/logs/wsmonitor.log and is mailed ([mail] of hosts.toml). A command run \
                  over ssh (boot id, starting runners) that has not finished after 60 s is \
                  killed and reported, so one hung host never stalls the round."
)]
struct Args {
    #[command(flatten)]
    common: nowdb::cli::SiteArgs,
    /// One round, then exit (for cron and tests).
    #[arg(long)]
    once: bool,
    /// Seconds between rounds.
    #[arg(long, default_value_t = 60)]
    interval: u64,
    /// Seconds a host may not answer before it counts as crashed.
    #[arg(long, default_value_t = 600)]
    grace: u64,
    /// Seconds to wait for each connection.
    #[arg(long, default_value_t = 5)]
    timeout: u64,
    /// The ssh command used to start runners on other hosts.
    #[arg(long)]
    ssh: Option<String>,
    /// Take this as the time (seconds since the epoch); with --once, for tests.
    #[arg(long, requires = "once")]
    now: Option<u64>,
}

fn main() -> ExitCode {
    let a = nowdb::cli::parse::<Args>("wsmonitor");
    if let Err(e) = nowdb::cli::stop_on_signals() {
        return nowdb::cli::finish("wsmonitor", Err(e));
    }
    let site = nowdb::solve::Site::new(&a.common.site);
    let args = nowdb::monitor::command::MonitorArgs {
        once: a.once,
        interval: Duration::from_secs(a.interval.max(1)),
        grace: Duration::from_secs(a.grace),
        timeout: Duration::from_secs(a.timeout.max(1)),
        ssh: a.ssh,
        now: a.now,
    };
    let r = nowdb::monitor::command::monitor_command(&site, &args, &mut std::io::stdout().lock());
    nowdb::cli::finish("wsmonitor", r)
}
