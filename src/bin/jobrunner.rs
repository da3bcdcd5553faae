//! jobrunner: runs phase jobs. `daemon` drains the queues (what every pool machine runs);
//! `run` does one job in the foreground; `build-local` builds every slice of 2..N pieces in
//! one process.

use clap::{Parser, Subcommand};
use nowdb::solve::Site;
use nowdb::solve::local::BuildOptions;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    version,
    about = "Run nowdb phase jobs: the queue runner daemon, one job, or an in-process build.",
    long_about = "Run nowdb phase jobs.\n\n\
                  jobrunner --site S daemon              take jobs from this host's queues \
                  (hosts.toml) until SIGTERM or a stop line\n\
                  jobrunner --site S daemon --until-empty   ... until nothing is left to do\n\
                  jobrunner --site S run noio 3113.01 0 65536 -r 2   one job in the foreground\n\
                  jobrunner --site S build-local --pieces 5   2..5 pieces in this process\n\n\
                  Exit status: 0 done; 1 an error (said on stderr); 2 a usage error; 3 the job \
                  stopped at a checkpoint (SIGTERM or --deadline-secs: run it again to resume; \
                  a runner requeues it); 4 too little disk space (said with the sizes; a \
                  runner requeues the job without using an attempt and waits for room)."
)]
struct Args {
    #[command(flatten)]
    common: nowdb::cli::SiteArgs,
    /// Page buffers (8 KiB each) per work file [default: 2048; the daemon: from the host's
    /// memory_mb in hosts.toml].
    #[arg(long, global = true)]
    buffers: Option<usize>,
    /// Seconds between checkpoints [default: 60; the daemon: the host's checkpoint_secs in
    /// hosts.toml, else 60].
    #[arg(long, global = true)]
    checkpoint_secs: Option<u64>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run or resume one job, e.g. `noio 3113.01 0 65536 -r 1` (`PHASE SLICE [FIRST LAST]
    /// [-r ROUND]`). SIGTERM or --deadline-secs checkpoint it and exit with status 3; too
    /// little disk space for its pages exits 4 before it writes.
    Run {
        /// The job, as words or one quoted string.
        #[arg(required = true, num_args = 1.., allow_hyphen_values = true)]
        job: Vec<String>,
        /// Checkpoint and stop after this many seconds.
        #[arg(long)]
        deadline_secs: Option<u64>,
        /// Only parse and check the job (a trivial job, for measuring the queues).
        #[arg(long)]
        dry_run: bool,
        /// With --dry-run: then wait this long (a stop request ends the wait as a
        /// checkpoint, exit 3).
        #[arg(long, default_value_t = 0.0, requires = "dry_run")]
        dry_run_secs: f64,
        /// Run as a runner's background job: nice 19, idle I/O class, and stop at a
        /// checkpoint if the runner (the parent process) dies.
        #[arg(long)]
        background: bool,
    },
    /// Take jobs from this host's queues (its [[host]] table in hosts.toml, found by
    /// hostname) and run them in child processes at low priority, one per runner, until
    /// SIGTERM (which checkpoints and requeues the running jobs) or a `stop` line.
    Daemon {
        /// This host's name in hosts.toml (default: the hostname).
        #[arg(long)]
        host: Option<String>,
        /// The hosts file [default: SITE/hosts.toml].
        #[arg(long)]
        hosts: Option<std::path::PathBuf>,
        /// Queue letters to take from, in order (overrides hosts.toml), e.g. `pm`.
        #[arg(long)]
        queues: Option<String>,
        /// Runners (jobs at once; overrides hosts.toml).
        #[arg(long)]
        runners: Option<usize>,
        /// Longest wait in seconds between looks at the queues when idle (inotify wakes
        /// runners sooner for changes made on this machine).
        #[arg(long, default_value_t = 5.0)]
        poll_secs: f64,
        /// Exit once the queues hold no job and no job runs anywhere (non-zero if jobs are
        /// left that can never run, or any failed).
        #[arg(long)]
        until_empty: bool,
        /// Trivial jobs: children only check the job (measures the queue machinery).
        #[arg(long)]
        dry_run: bool,
        /// With --dry-run: each job then waits this long (simulates a pool's phase jobs).
        #[arg(long, default_value_t = 0.0, requires = "dry_run")]
        dry_run_secs: f64,
        /// At most this many jobs a take [default: as many as the runners without a job]
        /// (1 takes the queue's lock once for each job).
        #[arg(long)]
        max_take: Option<usize>,
    },
    /// Run as a Slurm pilot (what `dbstart --slurm` submits; inside a Slurm job only): a
    /// daemon named after the array task (`slurm-<array job>_<task>`), one runner per CPU
    /// Slurm granted, page buffers from the memory it granted, ending when the build is
    /// done. SIGTERM (scancel, requeue, preemption, the time limit's signal) checkpoints and
    /// requeues its jobs; pilots gone silent (SIGKILL, a failed node) are recovered by the
    /// others.
    Pilot {
        /// Queue letters to take from, in order.
        #[arg(long, default_value = "pnsm")]
        queues: String,
        /// Runners [default: the CPUs Slurm granted].
        #[arg(long)]
        runners: Option<usize>,
        /// Memory to size page buffers from, in MB [default: what Slurm granted, else the
        /// node's]; three quarters of it go to page buffers.
        #[arg(long)]
        memory_mb: Option<u64>,
        /// Longest wait in seconds between looks at the queues when idle.
        #[arg(long, default_value_t = 5.0)]
        poll_secs: f64,
        /// At most this many pilots wait while nothing is runnable; one more ends.
        #[arg(long)]
        max_waiting: Option<usize>,
        /// A pilot with no heartbeat for this long that Slurm no longer runs is lost: its
        /// jobs are requeued from their checkpoints.
        #[arg(long, default_value_t = 120)]
        lost_after_secs: u64,
    },
    /// Check every solved slice against its successors (each value must be the best value
    /// among its moves); prints the first mismatch with its FEN and exits non-zero.
    Verify {
        /// Parallel threads.
        #[arg(long, default_value_t = 2)]
        runners: usize,
    },
    /// Solve every slice of 2..=N pieces on this machine with K parallel workers.
    BuildLocal(BuildArgs),
}

#[derive(clap::Args)]
struct BuildArgs {
    /// Largest number of pieces.
    #[arg(long, default_value_t = 5)]
    pieces: u32,
    /// Parallel workers.
    #[arg(long, default_value_t = 2)]
    runners: usize,
    /// Check every finished slice against its successors.
    #[arg(long)]
    verify: bool,
    /// Positions per job when a slice is split (page aligned).
    #[arg(long, default_value_t = 4 << 20)]
    job_positions: u64,
    /// Split every phase of every slice into exactly N ranges instead.
    #[arg(long)]
    splits: Option<u64>,
    /// Run each pair's ready jobs in a pseudo-random order from this seed.
    #[arg(long)]
    shuffle: Option<u64>,
    /// Pairs below this many positions skip fsync and are redone after a restart.
    #[arg(long, default_value_t = 1 << 21)]
    small_pair: u64,
    /// Switch from noio passes to the position queue when a pass resolves fewer than
    /// 1/R of the positions it looked at.
    #[arg(long, default_value_t = nowdb::solve::stage::machine::QUE_RATIO)]
    que_ratio: u64,
    /// Seconds between two progress lines when stderr is not a terminal (a terminal gets a
    /// bar, redrawn five times a second).
    #[arg(long, default_value_t = 2.0)]
    progress_secs: f64,
    /// Build only these and what they depend on: slices (2221.66), nodes (2221: every slice)
    /// or splits by piece count (4v4: every node of four pieces a side).
    #[arg(long, num_args = 1..)]
    only: Vec<nowdb::Selection>,
    /// Stop at the solved slices: skip the compressed database (build and ver phases).
    #[arg(long)]
    no_db: bool,
    /// cap and lookup read the lower slices from the verified compressed database instead
    /// of solved/ work files (slower; figures in docs/PERFORMANCE.md).
    #[arg(long, conflicts_with = "no_db")]
    lower_from_db: bool,
    /// Also compute moves to conversion (plies to a capture or a man's move under best
    /// play) of every won and lost position into solved/<slice>.mtc; the site remembers it
    /// (work/mtc), so later builds of it do too.
    #[arg(long)]
    mtc: bool,
}

fn main() -> ExitCode {
    let args = nowdb::cli::parse::<Args>("jobrunner");
    let site = Site::new(&args.common.site);
    let json = args.common.json;
    let mut out = std::io::stdout().lock();
    if let Err(e) = nowdb::cli::stop_on_signals() {
        return nowdb::cli::finish("jobrunner", Err(e));
    }
    let deadline = match &args.command {
        Command::Run { deadline_secs, .. } => *deadline_secs,
        _ => None,
    };
    let run = nowdb::runner::run_options(
        args.buffers.unwrap_or(2048),
        args.checkpoint_secs.unwrap_or(60),
        deadline,
    );
    match args.command {
        Command::Run {
            job,
            dry_run,
            dry_run_secs,
            background,
            ..
        } => {
            if background && let Err(e) = nowdb::runner::become_background_job() {
                return nowdb::cli::finish("jobrunner", Err(e.into()));
            }
            let dry_run = match dry_run_length(dry_run, dry_run_secs) {
                Ok(d) => d,
                Err(e) => return nowdb::cli::finish("jobrunner", Err(e)),
            };
            match nowdb::runner::run_one(&site, &job.join(" "), &run, dry_run, json, &mut out) {
                Ok(true) => ExitCode::SUCCESS,
                Ok(false) => ExitCode::from(3),
                Err(e) => nowdb::cli::finish("jobrunner", Err(e)),
            }
        }
        Command::Daemon {
            host,
            hosts,
            queues,
            runners,
            poll_secs,
            until_empty,
            dry_run,
            dry_run_secs,
            max_take,
        } => {
            let dry_run = match dry_run_length(dry_run, dry_run_secs) {
                Ok(d) => d,
                Err(e) => return nowdb::cli::finish("jobrunner", Err(e)),
            };
            if max_take == Some(0) {
                return nowdb::cli::finish(
                    "jobrunner",
                    Err("--max-take 0: a take must be allowed at least one job"
                        .to_string()
                        .into()),
                );
            }
            if !(poll_secs > 0.0 && poll_secs.is_finite()) {
                return nowdb::cli::finish(
                    "jobrunner",
                    Err(
                        format!("--poll-secs {poll_secs}: must be a positive number of seconds")
                            .into(),
                    ),
                );
            }
            let a = nowdb::runner::DaemonArgs {
                host,
                hosts_file: hosts,
                queues,
                runners,
                buffers: args.buffers,
                checkpoint_secs: args.checkpoint_secs,
                poll: std::time::Duration::from_secs_f64(poll_secs),
                until_empty,
                dry_run,
                max_take,
                max_waiting: None,
            };
            let r = nowdb::runner::daemon_command(&site, &a, json, &mut out);
            nowdb::cli::finish("jobrunner", r)
        }
        Command::Pilot {
            queues,
            runners,
            memory_mb,
            poll_secs,
            max_waiting,
            lost_after_secs,
        } => {
            let poll = match poll_secs {
                p if p > 0.0 && p.is_finite() => std::time::Duration::from_secs_f64(p),
                p => {
                    let e = format!("--poll-secs {p}: must be a positive number of seconds");
                    return nowdb::cli::finish("jobrunner", Err(e.into()));
                }
            };
            let a = nowdb::slurm::pilot::PilotArgs {
                queues,
                runners,
                memory_mb,
                checkpoint_secs: args.checkpoint_secs,
                poll,
                max_waiting,
                lost_after: std::time::Duration::from_secs(lost_after_secs),
            };
            let r = nowdb::slurm::pilot::pilot_command(&site, &a, json, &mut out);
            nowdb::cli::finish("jobrunner", r)
        }
        Command::Verify { runners } => {
            let r = nowdb::runner::verify_command(&site, runners, json, &mut out);
            nowdb::cli::finish("jobrunner", r)
        }
        Command::BuildLocal(b) => {
            let opts = BuildOptions {
                pieces: b.pieces,
                runners: b.runners,
                run: nowdb::solve::RunOptions {
                    lower_from_database: b.lower_from_db,
                    ..run
                },
                verify: b.verify,
                job_positions: b.job_positions,
                splits: b.splits,
                shuffle: b.shuffle,
                small_pair: b.small_pair,
                que_ratio: b.que_ratio,
                only: b.only.into_iter().flat_map(|s| s.0).collect(),
                database: !b.no_db,
                mtc: b.mtc,
                progress_every: std::time::Duration::from_secs_f64(b.progress_secs.max(0.0)),
            };
            let r = nowdb::runner::build_local_command(&site, &opts, json, &mut out);
            nowdb::cli::finish("jobrunner", r)
        }
    }
}

/// `--dry-run` and `--dry-run-secs` as the library takes them.
fn dry_run_length(
    dry_run: bool,
    secs: f64,
) -> Result<Option<std::time::Duration>, nowdb::cli::CliError> {
    if !(secs >= 0.0 && secs.is_finite()) {
        return Err(
            format!("--dry-run-secs {secs}: must be a number of seconds, 0 or more").into(),
        );
    }
    Ok(dry_run.then(|| std::time::Duration::from_secs_f64(secs)))
}
