//! dbstart: starts the runner daemons of the named hosts (locally for this host, over ssh
//! for the others), with the jobrunner binary of each host's platform; or, with `--slurm N`,
//! submits N Slurm pilots as one job array.

use clap::Parser;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    version,
    about = "Start the runners of the named hosts of hosts.toml (here for this host, over ssh for the others), or submit Slurm pilots (--slurm N).",
    long_about = "Start the runners of the named hosts of hosts.toml (here for this host, over ssh for the others), or submit Slurm pilots.\n\n\
                  dbstart --site S ws1 ws2                 start the runner daemons of ws1 and ws2\n\
                  dbstart --site S --slurm 16 --cpus-per-pilot 32 --mem-per-pilot 64G --time 12:00:00 --partition long\n\
                  \x20                                        keep 16 pilots (one Slurm job array) draining the queues\n\n\
                  With --slurm, run again it submits only what is missing to have N pilots pending or running."
)]
struct Args {
    #[command(flatten)]
    common: nowdb::cli::SiteArgs,
    /// Host names as in hosts.toml.
    #[arg(required_unless_present = "slurm", conflicts_with = "slurm")]
    hosts: Vec<String>,
    /// The ssh command (default: ssh -o BatchMode=yes -o ConnectTimeout=10).
    #[arg(long, conflicts_with = "slurm")]
    ssh: Option<String>,
    #[command(flatten)]
    slurm: SlurmArgs,
}

#[derive(clap::Args)]
#[group(id = "slurm_options", multiple = true, requires = "slurm")]
struct SlurmArgs {
    /// Submit pilots as one Slurm job array so that N are pending or running.
    #[arg(long, value_name = "N", group = "mode")]
    slurm: Option<usize>,
    /// Slurm partition (sbatch --partition).
    #[arg(long)]
    partition: Option<String>,
    /// Slurm account to charge (sbatch --account).
    #[arg(long)]
    account: Option<String>,
    /// Quality of service (sbatch --qos).
    #[arg(long)]
    qos: Option<String>,
    /// Each pilot's time limit (sbatch --time, e.g. 12:00:00 or 1-0).
    #[arg(long)]
    time: Option<String>,
    /// CPUs per pilot: one runner each.
    #[arg(long, default_value_t = 1)]
    cpus_per_pilot: usize,
    /// Memory per pilot (sbatch --mem, e.g. 8G); page buffers get three quarters of it.
    #[arg(long)]
    mem_per_pilot: Option<String>,
    /// Slurm sends the pilot SIGTERM this many seconds before its time limit, so its
    /// jobs checkpoint (sbatch --signal=B:TERM@SECS).
    #[arg(long, default_value_t = 300)]
    signal_secs: u64,
    /// At most this many pilots wait while nothing is runnable; the others end.
    #[arg(long)]
    max_waiting: Option<usize>,
    /// A pilot with no heartbeat for this long that Slurm no longer runs is lost; the
    /// others requeue its jobs.
    #[arg(long, default_value_t = 120)]
    lost_after_secs: u64,
    /// Queue letters the pilots take from, in order.
    #[arg(long, default_value = "pnsm")]
    queues: String,
    /// The job name in Slurm (squeue shows it; dbstart counts alive pilots by it).
    #[arg(long, default_value = "nowdb")]
    job_name: String,
    /// The jobrunner the pilots run, at a path every node sees [default: the site's
    /// bin/jobrunner, else the one beside dbstart].
    #[arg(long)]
    jobrunner: Option<std::path::PathBuf>,
    /// Seconds between the pilots' checkpoints [default: 60].
    #[arg(long)]
    checkpoint_secs: Option<u64>,
    /// How long sbatch and squeue may take before dbstart stops them (a slurmctld that does
    /// not answer).
    #[arg(long, default_value_t = 60)]
    slurm_wait_secs: u64,
    /// One more sbatch argument, passed through as it is (repeat for more), e.g.
    /// --sbatch-arg=--constraint=avx2.
    #[arg(long = "sbatch-arg", allow_hyphen_values = true, value_name = "ARG")]
    sbatch_args: Vec<String>,
}

fn main() -> ExitCode {
    let a = nowdb::cli::parse::<Args>("dbstart");
    let site = nowdb::solve::Site::new(&a.common.site);
    let mut out = std::io::stdout().lock();
    let r = match a.slurm.slurm {
        Some(pilots) => {
            let s = a.slurm;
            let o = nowdb::slurm::submit::SubmitOptions {
                pilots,
                partition: s.partition,
                account: s.account,
                qos: s.qos,
                time: s.time,
                cpus_per_pilot: s.cpus_per_pilot,
                mem: s.mem_per_pilot,
                signal_secs: s.signal_secs,
                job_name: s.job_name,
                queues: s.queues,
                max_waiting: s.max_waiting,
                lost_after_secs: s.lost_after_secs,
                checkpoint_secs: s.checkpoint_secs,
                jobrunner: s.jobrunner,
                extra: s.sbatch_args,
                sbatch: "sbatch".into(),
                squeue: "squeue".into(),
                wait: std::time::Duration::from_secs(s.slurm_wait_secs),
            };
            nowdb::slurm::submit::submit_command(&site, &o, a.common.json, &mut out)
        }
        None => nowdb::monitor::command::dbstart_command(
            &site,
            &a.hosts,
            &a.ssh,
            a.common.json,
            &mut out,
        ),
    };
    nowdb::cli::finish("dbstart", r)
}
