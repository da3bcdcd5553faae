//! Pilots that died without a word (SIGKILL, a node failure, the OOM killer): their
//! heartbeat stops. Every pilot looks every so often; a pilot whose heartbeat is older than
//! `lost_after` and that Slurm no longer runs is *lost*: its locks are broken, its running
//! jobs go back to the top of their queues (each used an attempt; its checkpoint makes it
//! resume), its record says so and the operator is mailed: wsmonitor's crashed host, with
//! Slurm instead of an ssh port as the judge of life.
//!
//! Only one pilot asks Slurm: the first, in array order, whose own heartbeat is fresh. With
//! 64 pilots a silent one would otherwise cost 63 `squeue` calls a round at the controller;
//! when the asker itself falls silent, the next pilot in order takes over within
//! `lost_after`. A record that cannot be read stops nothing: its pilot is judged from its
//! file's name, which names the Slurm job (`slurm-50_7.r2` is job `50_7`).

use super::{PilotRecord, read_pilots};
use crate::error::Result;
use crate::lock::{DeadHost, Machine};
use crate::queue::held::RetryPolicy;
use crate::solve::Site;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs `cmd` for at most `limit`; its standard output and error, or `None` when it could
/// not be run or did not end in time (a controller that does not answer).
pub(super) fn output_within(cmd: &mut Command, limit: Duration) -> Option<std::process::Output> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    let t0 = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => return child.wait_with_output().ok(),
            Ok(None) if t0.elapsed() < limit => std::thread::sleep(Duration::from_millis(50)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}

/// Whether Slurm still runs job `job` (`12_3` for an array task, `12` otherwise: an array's
/// last task has the array's own id, which names every task of it): `Some(false)` when it
/// says the job is in no live state (or no longer knows it), `None` when it cannot be asked.
pub fn slurm_runs(job: &str) -> Option<bool> {
    let out = output_within(
        Command::new("squeue").args(["-h", "-j", job, "-o", "%T"]),
        Duration::from_secs(30),
    )?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return err.contains("Invalid job id").then_some(false);
    }
    // No line at all: squeue no longer knows the job (it ended a while ago).
    let text = String::from_utf8_lossy(&out.stdout);
    Some(
        text.lines()
            .filter(|s| !s.trim().is_empty())
            .any(super::states::processes_may_live),
    )
}

/// The last sign of life of a pilot: its heartbeat, or its start when it wrote none yet.
fn last_seen(site: &Site, p: &PilotRecord) -> u64 {
    let beat = crate::runner::host_files::read_heartbeat(site, &p.host).map_or(0, |(_, t)| t);
    beat.max(p.started)
}

/// What one look for lost pilots did.
#[derive(Debug, Default)]
pub struct Recovery {
    /// Whether this pilot was the one to ask Slurm (see the module).
    pub asked: bool,
    /// A line per pilot recovered.
    pub done: Vec<String>,
    /// Pilot records that could not be read, each naming its file.
    pub bad: Vec<String>,
}

/// A stand-in for a pilot whose record cannot be read, from its host name: the Slurm job
/// to ask about, nothing else known.
fn stand_in(host: &str) -> Option<PilotRecord> {
    let name = host.strip_prefix("slurm-")?;
    let (job, restarts) = match name.split_once(".r") {
        Some((j, r)) => (j, r.parse().ok()?),
        None => (name, 0),
    };
    let (job_id, array) = match job.split_once('_') {
        Some((a, t)) => (0, Some((a.parse().ok()?, t.parse().ok()?))),
        None => (job.parse().ok()?, None),
    };
    Some(PilotRecord {
        host: host.to_string(),
        job_id,
        slurm_job: job.to_string(),
        array_job_id: array.map(|(a, _)| a),
        array_task_id: array.map(|(_, t)| t),
        node: "unknown".into(),
        cpus: 0,
        runners: 0,
        memory_mb: 0,
        restarts,
        started: 0,
        state: "running".into(),
        ended: 0,
        exit: None,
        why: None,
    })
}

/// Recovers the pilots other than `here` found lost at `now` (see the module). `runs` asks
/// Slurm whether a job lives ([`slurm_runs`] in production); only the asker calls it.
pub fn recover_lost(
    site: &Site,
    here: &Machine,
    policy: &RetryPolicy,
    lost_after: Duration,
    runs: &dyn Fn(&str) -> Option<bool>,
    rep: &mut crate::mail::Reporter,
    now: u64,
) -> Result<Recovery> {
    let pilots = read_pilots(site)?;
    let mut out = Recovery::default();
    let mut all = pilots.records;
    let mut torn = std::collections::HashSet::new();
    for (host, e) in pilots.bad {
        out.bad
            .push(format!("{e} (its pilot is judged from the name)"));
        if let Some(p) = stand_in(&host) {
            torn.insert(host);
            all.push(p);
        }
    }
    super::sort_pilots(&mut all);
    let fresh = |p: &PilotRecord| {
        p.state == "running" && now.saturating_sub(last_seen(site, p)) <= lost_after.as_secs()
    };
    out.asked = all.iter().find(|p| fresh(p)).map(|p| &p.host) == Some(&here.host);
    if !out.asked {
        return Ok(out);
    }
    // The later runs of each array task: Slurm starts a requeued job (a node failure, a
    // preemption) only once its run has ended, and squeue then names the new run by the
    // same id, so an earlier run is known dead without asking.
    let later: Vec<(String, u32, String)> = all
        .iter()
        .map(|q| (q.slurm_job.clone(), q.restarts, q.host.clone()))
        .collect();
    for p in all {
        let torn = torn.contains(&p.host);
        if p.host == here.host {
            continue;
        }
        // A pilot that ended with records left (a runner that met an error it could not
        // settle) is recovered the same way, once silent: no later run of it comes.
        let leftovers =
            p.state != "running" && !crate::queue::running::read_host(site, &p.host)?.is_empty();
        if p.state != "running" && !leftovers {
            continue;
        }
        let seen = last_seen(site, &p);
        let silent = now.saturating_sub(seen);
        // Only Slurm's word that the job no longer runs: a squeue that cannot answer (the
        // controller down, a timeout) proves nothing, and a live pilot's jobs must not run
        // twice.
        if silent <= lost_after.as_secs() {
            continue;
        }
        let next_run = later
            .iter()
            .find(|(job, restarts, _)| *job == p.slurm_job && *restarts > p.restarts)
            .map(|(_, _, host)| host.as_str());
        let judge = match next_run {
            Some(next) => format!("Slurm runs its job again as {next}"),
            None if runs(&p.slurm_job) == Some(false) => "Slurm no longer runs it".into(),
            None => continue,
        };
        // Another pilot may have recovered it meanwhile, or a requeued run of it started.
        let current = crate::state::read(&PilotRecord::path(site, &p.host), "pilot record", &[]);
        let unchanged = match current {
            Ok(c) => c.as_ref() == Some(&p),
            Err(_) => torn,
        };
        if !unchanged {
            continue;
        }
        let silence = match seen {
            0 => "no heartbeat ever".to_string(),
            _ => format!("no heartbeat for {silent}s"),
        };
        let why = format!(
            "pilot {} (Slurm job {} on {}) lost: {silence} and {judge}",
            p.host, p.slurm_job, p.node
        );
        // Slurm says no process of it lives: every lock it holds is dead, whenever taken.
        let dead = DeadHost {
            host: &p.host,
            keep_boot: None,
            taken_by: Some(now),
        };
        crate::runner::recover::break_dead_locks(site, here, &dead, rep, now)?;
        let jobs = crate::runner::recover::requeue_host_jobs(
            site, here, &p.host, None, &why, policy, rep, now,
        )?;
        if !leftovers {
            PilotRecord {
                state: "lost".into(),
                ended: now,
                why: Some(format!("{silence}; {judge}")),
                ..p.clone()
            }
            .write(site)?;
        }
        let line = match jobs.len() {
            0 => format!("{why}; it was running no job"),
            n => format!("{why}; requeued {n} job(s) at the top: {}", jobs.join(", ")),
        };
        rep.act(now, &format!("pilot {} lost", p.host), &line);
        out.done.push(line);
    }
    Ok(out)
}
