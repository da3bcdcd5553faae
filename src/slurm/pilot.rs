//! `jobrunner pilot`: what each Slurm array task runs. A runner daemon named after the task,
//! with one runner per CPU Slurm granted and page buffers from the memory it granted, that
//! ends when the build is done (or, with `max_waiting`, when enough pilots already wait),
//! recovers lost pilots as it goes, and leaves a record of itself in `slurm/pilots/`.

use super::{PilotRecord, SlurmJob, lost};
use crate::cli::CliError;
use crate::clock::now_secs;
use crate::runner::daemon::{self, Tend};
use crate::solve::Site;
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

/// The share of the granted memory given to page buffers: the rest is the daemon's,
/// `ver`'s decoded slices and the page cache's (Slurm kills a job that passes its limit).
const MEMORY_SHARE: (u64, u64) = (3, 4);

/// `jobrunner pilot`'s command line.
#[derive(Clone, Debug)]
pub struct PilotArgs {
    /// Queue letters, in order of preference.
    pub queues: String,
    /// Runners [default: the CPUs Slurm granted].
    pub runners: Option<usize>,
    /// Memory to size page buffers from [default: what Slurm granted, else the node's].
    pub memory_mb: Option<u64>,
    pub checkpoint_secs: Option<u64>,
    pub poll: Duration,
    pub max_waiting: Option<usize>,
    /// A pilot silent this long, and not running in Slurm's eyes, is lost.
    pub lost_after: Duration,
}

/// Runs this Slurm job's pilot (see the module) and reports like `jobrunner daemon`.
pub fn pilot_command(
    site: &Site,
    a: &PilotArgs,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let job = SlurmJob::from_vars(&|k| std::env::var(k).ok())?;
    if a.max_waiting == Some(0) {
        return Err(CliError::Failed(
            "--max-waiting 0: at least one pilot must wait, to recover lost pilots and take the jobs that become runnable".into(),
        ));
    }
    // SAFETY: set before the daemon starts its threads; nothing reads the environment
    // concurrently at this point. The job processes inherit it.
    unsafe { std::env::set_var("NOWDB_HOST", job.host()) };
    let runners = a.runners.unwrap_or(job.cpus).max(1);
    let (memory_mb, memory_from) = match (a.memory_mb, job.memory_mb) {
        (Some(m), _) => (m, "--memory-mb"),
        (None, Some(m)) => (m, "granted by Slurm"),
        (None, None) => (
            crate::procfs::total_memory_mb(),
            "the node's (Slurm set no limit)",
        ),
    };
    let share = memory_mb * MEMORY_SHARE.0 / MEMORY_SHARE.1;
    let args = crate::runner::DaemonArgs {
        host: Some(job.host()),
        hosts_file: None,
        queues: Some(a.queues.clone()),
        runners: Some(runners),
        buffers: Some(crate::hosts::buffers_per_file(share, runners)),
        checkpoint_secs: a.checkpoint_secs,
        poll: a.poll,
        until_empty: true,
        dry_run: None,
        max_take: None,
        max_waiting: a.max_waiting,
    };
    let mut opts = crate::runner::daemon_options(site, &args)?;
    opts.tend = Some(recovery(site, &opts, a.lost_after));
    let mut record = PilotRecord {
        host: job.host(),
        job_id: job.job_id,
        slurm_job: job.name(),
        array_job_id: job.array.map(|a| a.0),
        array_task_id: job.array.map(|a| a.1),
        node: job.node.clone(),
        cpus: job.cpus,
        runners,
        memory_mb,
        restarts: job.restarts,
        started: now_secs(),
        state: "running".into(),
        ended: 0,
        exit: None,
        why: None,
    };
    record.write(site)?;
    crate::runner::log::Log::open(site.root(), &opts.host, false)
        .map_err(crate::error::Error::from)?
        .line(
        0,
        &format!(
            "Slurm pilot: job {} (id {}) on node {}, {} CPU(s), {memory_mb} MB {memory_from}: {runners} runner(s), {} page buffers per work file, restarts {}",
            job.name(),
            job.job_id,
            job.node,
            job.cpus,
            opts.buffers,
            job.restarts
        ),
    );
    let result = daemon::run_daemon(site, &opts);
    let (exit, why) = match &result {
        Ok(s) => match &s.error {
            Some(e) => (1, e.clone()),
            None if s.stopped => (
                0,
                "stopped by a signal: its jobs checkpointed and went back to their queues".into(),
            ),
            None => (0, "nothing left for it to do".into()),
        },
        Err(e) => (1, e.to_string()),
    };
    record.state = "ended".into();
    record.ended = now_secs();
    record.exit = Some(exit);
    record.why = Some(why);
    // A record that cannot be written must not hide how the pilot ended: the log has it.
    let written = record.write(site);
    let s = result?;
    written?;
    crate::runner::report_daemon(&opts, &s, json, out)
}

/// The pilot's periodic task: recover lost pilots, logged to `logs/slurm.log` and mailed.
fn recovery(site: &Site, opts: &daemon::DaemonOptions, lost_after: Duration) -> Tend {
    let site = site.clone();
    let (host, policy, mail) = (opts.host.clone(), opts.policy, opts.mail.clone());
    let every = (lost_after / 4).clamp(Duration::from_secs(5), Duration::from_secs(60));
    // The bad records already logged, and whether this pilot was the asker last time.
    let said = std::sync::Mutex::new((std::collections::HashSet::new(), false));
    Tend {
        every,
        task: Arc::new(move |log: &dyn Fn(&str)| {
            let here = match crate::lock::Machine::current() {
                Ok(m) => crate::lock::Machine {
                    host: host.clone(),
                    boot_id: m.boot_id,
                },
                Err(e) => return log(&format!("identifying this machine: {e}")),
            };
            let speaker = format!("pilot {host}");
            let mut rep = match crate::mail::Reporter::open(
                site.root(),
                "slurm",
                &speaker,
                &host,
                mail.clone(),
            ) {
                Ok(r) => r,
                Err(e) => return log(&format!("opening logs/slurm.log: {e}")),
            };
            let now = now_secs();
            match lost::recover_lost(
                &site,
                &here,
                &policy,
                lost_after,
                &lost::slurm_runs,
                &mut rep,
                now,
            ) {
                Ok(r) => {
                    let mut said = said.lock().expect("said");
                    if r.asked != said.1 {
                        said.1 = r.asked;
                        log(match r.asked {
                            true => "this pilot now asks Slurm about silent pilots",
                            false => "another pilot asks Slurm about silent pilots",
                        });
                    }
                    // Once each: the file stays bad until someone mends or removes it.
                    for b in r.bad {
                        if said.0.insert(b.clone()) {
                            log(&b);
                        }
                    }
                    for l in r.done {
                        log(&l);
                    }
                }
                Err(e) => log(&format!("looking for lost pilots: {e}")),
            }
            rep.deliver(now);
        }),
    }
}
