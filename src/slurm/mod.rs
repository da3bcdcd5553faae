//! Slurm pilots: the same queues drained by batch jobs on a cluster instead of runner
//! daemons on idle workstations. Slurm only supplies processes; the site stays the one
//! source of truth (queues, running and done records, `solved/`, `db/`).
//!
//! - `dbstart --slurm N` ([`submit`]) submits N pilots as one job array (`sbatch --array`,
//!   `--requeue`, a signal before the time limit, output to `logs/slurm-%A_%a.out`).
//! - Each pilot (`jobrunner pilot`, [`pilot`]) is a runner daemon named after its array task
//!   (`slurm-<array job>_<task>`, `.r<n>` after a requeue), with one runner per CPU Slurm gave it and page buffers
//!   from the memory Slurm granted. It ends when the build is done; with `--max-waiting` only
//!   that many pilots wait while nothing is runnable.
//! - SIGTERM (preemption, `scancel`, `scontrol requeue`, the time limit's `--signal`) makes
//!   the running phase jobs checkpoint and go back to the top of their queues, as wswatch's
//!   pause does on a workstation. A pilot killed outright (SIGKILL, a node failure) stops
//!   writing its heartbeat: the other pilots find it lost ([`lost`]), break its locks and
//!   requeue its jobs from their checkpoints, as wsmonitor does for a crashed host.
//! - Each pilot keeps a record in `slurm/pilots/<host>` (job id, array index, node, CPUs,
//!   memory, restarts, how it ended) for `dbstatus runners` and the status page.

pub mod lost;
pub mod pilot;
pub mod states;
pub mod submit;

use crate::error::{Error, Result};
use crate::solve::Site;
use std::path::PathBuf;

/// `slurm/`: the pilot script, the submissions and the pilots' records.
pub fn slurm_dir(site: &Site) -> PathBuf {
    site.root().join("slurm")
}

/// `slurm/pilots/`: one record per pilot.
pub fn pilots_dir(site: &Site) -> PathBuf {
    slurm_dir(site).join("pilots")
}

/// What Slurm told a pilot about itself (its environment).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlurmJob {
    /// `SLURM_JOB_ID`: this array task's own job id (what `squeue -j` takes).
    pub job_id: u64,
    /// `SLURM_ARRAY_JOB_ID` and `SLURM_ARRAY_TASK_ID` (a job outside an array has none).
    pub array: Option<(u64, u64)>,
    /// `SLURMD_NODENAME`.
    pub node: String,
    /// CPUs for the pilot: `SLURM_CPUS_PER_TASK`, else `SLURM_CPUS_ON_NODE`.
    pub cpus: usize,
    /// Memory granted in MB: `SLURM_MEM_PER_NODE`, else `SLURM_MEM_PER_CPU` times the CPUs;
    /// `None` when the job has no memory limit.
    pub memory_mb: Option<u64>,
    /// `SLURM_RESTART_COUNT`: how often Slurm requeued this job.
    pub restarts: u32,
}

impl SlurmJob {
    /// Reads the job from `var` (the environment in production).
    pub fn from_vars(var: &dyn Fn(&str) -> Option<String>) -> Result<SlurmJob> {
        let num = |name: &str| -> Result<Option<u64>> {
            match var(name).map(|v| v.trim().to_string()) {
                None => Ok(None),
                Some(v) if v.is_empty() => Ok(None),
                Some(v) => v.parse::<u64>().map(Some).map_err(|_| {
                    Error::Failed(format!("{name}={v:?}: not a number (is this a Slurm job?)"))
                }),
            }
        };
        let Some(job_id) = num("SLURM_JOB_ID")? else {
            return Err(Error::Failed(
                "SLURM_JOB_ID is not set: `jobrunner pilot` runs inside a Slurm job (submit it with `dbstart --slurm N`; elsewhere run `jobrunner daemon`)".into(),
            ));
        };
        let array = match (num("SLURM_ARRAY_JOB_ID")?, num("SLURM_ARRAY_TASK_ID")?) {
            (Some(a), Some(t)) => Some((a, t)),
            _ => None,
        };
        let node = var("SLURMD_NODENAME")
            .filter(|n| !n.is_empty())
            .or_else(|| {
                nix::unistd::gethostname()
                    .ok()
                    .map(|h| h.to_string_lossy().into_owned())
            })
            .unwrap_or_default();
        let cpus = num("SLURM_CPUS_PER_TASK")?
            .or(num("SLURM_CPUS_ON_NODE")?)
            .unwrap_or(1)
            .max(1) as usize;
        let memory_mb = match (num("SLURM_MEM_PER_NODE")?, num("SLURM_MEM_PER_CPU")?) {
            (Some(m), _) if m > 0 => Some(m),
            (_, Some(m)) if m > 0 => Some(m * cpus as u64),
            _ => None,
        };
        Ok(SlurmJob {
            job_id,
            array,
            node,
            cpus,
            memory_mb,
            restarts: num("SLURM_RESTART_COUNT")?.unwrap_or(0) as u32,
        })
    }

    /// The pilot's host name on the site: `slurm-<array job>_<task>`, or `slurm-<job>`,
    /// with `.r<n>` after the n-th requeue. Each run has a name of its own: the runs of one
    /// task never take each other's records or locks for theirs, and a run that died
    /// without a word is recovered by the other pilots like any lost one.
    pub fn host(&self) -> String {
        let base = match self.array {
            Some((a, t)) => format!("slurm-{a}_{t}"),
            None => format!("slurm-{}", self.job_id),
        };
        match self.restarts {
            0 => base,
            n => format!("{base}.r{n}"),
        }
    }

    /// The job as Slurm's commands name it: `123_4` or `123`.
    pub fn name(&self) -> String {
        match self.array {
            Some((a, t)) => format!("{a}_{t}"),
            None => self.job_id.to_string(),
        }
    }
}

/// A pilot's record: who it is, where it runs, and how it ended.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PilotRecord {
    #[serde(deserialize_with = "crate::state::text")]
    pub host: String,
    pub job_id: u64,
    /// `123_4` (array job and index) or `123`.
    #[serde(deserialize_with = "crate::state::text")]
    pub slurm_job: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub array_job_id: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub array_task_id: Option<u64>,
    #[serde(deserialize_with = "crate::state::text")]
    pub node: String,
    pub cpus: usize,
    pub runners: usize,
    /// The memory its page buffers were sized from (granted by Slurm, or the node's).
    pub memory_mb: u64,
    pub restarts: u32,
    pub started: u64,
    /// `running`, `ended` or `lost`.
    #[serde(deserialize_with = "crate::state::text")]
    pub state: String,
    #[serde(default)]
    pub ended: u64,
    /// The pilot's exit status once it ended (0: done or stopped by a signal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit: Option<i32>,
    /// Why it ended or was found lost.
    #[serde(
        default,
        deserialize_with = "crate::state::opt_text",
        skip_serializing_if = "Option::is_none"
    )]
    pub why: Option<String>,
}

impl PilotRecord {
    pub fn path(site: &Site, host: &str) -> PathBuf {
        pilots_dir(site).join(host)
    }

    pub fn write(&self, site: &Site) -> Result<()> {
        let volatile = crate::files::Durability::Volatile;
        crate::state::write(&Self::path(site, &self.host), self, volatile)
    }

    /// Whether it ended with a non-zero status or was lost: the operator should look.
    pub fn failed(&self) -> bool {
        self.state == "lost" || self.exit.is_some_and(|c| c != 0)
    }

    /// One line for `dbstatus runners`.
    pub fn describe(&self, now: u64) -> String {
        let how = match self.state.as_str() {
            "running" => format!("running since {}", crate::clock::local_time(self.started)),
            "lost" => format!(
                "LOST {}s ago: {}",
                now.saturating_sub(self.ended),
                self.why.as_deref().unwrap_or("")
            ),
            _ => format!(
                "ended {} with status {}{}",
                crate::clock::local_time(self.ended),
                self.exit.unwrap_or(0),
                self.why
                    .as_deref()
                    .map(|w| format!(": {w}"))
                    .unwrap_or_default()
            ),
        };
        format!(
            "Slurm job {} (id {}) on {}, {} CPU(s), {} runner(s), {} MB, restarts {}; {how}",
            self.slurm_job,
            self.job_id,
            self.node,
            self.cpus,
            self.runners,
            self.memory_mb,
            self.restarts
        )
    }

    /// The Slurm part of `dbstatus --json runners` and the status page.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "host": self.host,
            "job_id": self.job_id,
            "slurm_job": self.slurm_job,
            "array_job_id": self.array_job_id,
            "array_task_id": self.array_task_id,
            "node": self.node,
            "cpus": self.cpus,
            "runners": self.runners,
            "memory_mb": self.memory_mb,
            "restarts": self.restarts,
            "state": self.state,
            "started": crate::clock::rfc3339(self.started),
            "ended": (self.ended > 0).then(|| crate::clock::rfc3339(self.ended)),
            "exit": self.exit,
            "why": self.why,
            "failed": self.failed(),
        })
    }
}

/// The pilot records of a site, by array job and task.
#[derive(Debug, Default)]
pub struct Pilots {
    pub records: Vec<PilotRecord>,
    /// Files of `slurm/pilots/` that are not a record (torn by a full disk, edited by hand),
    /// by host, each error naming its file. They stop nothing: the other pilots are still
    /// recovered and shown.
    pub bad: Vec<(String, Error)>,
}

/// Every pilot record of the site (see [`Pilots`]); an error only when the directory
/// cannot be listed.
pub fn read_pilots(site: &Site) -> Result<Pilots> {
    let mut out = Pilots::default();
    let dir = pilots_dir(site);
    for (name, path) in crate::files::list(&dir)
        .map_err(|e| Error::io(format_args!("listing {}", dir.display()), e))?
    {
        if name.starts_with('.') {
            continue;
        }
        match crate::state::read::<PilotRecord>(&path, "pilot record", &[]) {
            Ok(Some(r)) => out.records.push(r),
            Ok(None) => {}
            Err(e) => out.bad.push((name, e)),
        }
    }
    sort_pilots(&mut out.records);
    Ok(out)
}

/// Array order: by array job, task, job id, then run.
pub(crate) fn sort_pilots(records: &mut [PilotRecord]) {
    records.sort_by_key(|p| (p.array_job_id, p.array_task_id, p.job_id, p.restarts));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: std::collections::HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| m.get(k).cloned()
    }

    #[test]
    fn a_pilot_reads_what_slurm_granted() {
        let j = SlurmJob::from_vars(&vars(&[
            ("SLURM_JOB_ID", "57"),
            ("SLURM_ARRAY_JOB_ID", "50"),
            ("SLURM_ARRAY_TASK_ID", "7"),
            ("SLURMD_NODENAME", "n2"),
            ("SLURM_CPUS_PER_TASK", "4"),
            ("SLURM_CPUS_ON_NODE", "32"),
            ("SLURM_MEM_PER_CPU", "1000"),
            ("SLURM_RESTART_COUNT", "2"),
        ]))
        .unwrap();
        assert_eq!(j.host(), "slurm-50_7.r2");
        assert_eq!(j.name(), "50_7");
        assert_eq!((j.cpus, j.memory_mb, j.restarts), (4, Some(4000), 2));
        let j = SlurmJob::from_vars(&vars(&[
            ("SLURM_JOB_ID", "9"),
            ("SLURM_CPUS_ON_NODE", "2"),
            ("SLURM_MEM_PER_NODE", "1500"),
        ]))
        .unwrap();
        assert_eq!(
            (j.host(), j.cpus, j.memory_mb),
            ("slurm-9".into(), 2, Some(1500))
        );
    }

    #[test]
    fn outside_slurm_or_with_nonsense_it_says_so() {
        let e = SlurmJob::from_vars(&vars(&[])).unwrap_err().to_string();
        assert!(e.contains("SLURM_JOB_ID is not set"), "{e}");
        let e = SlurmJob::from_vars(&vars(&[("SLURM_JOB_ID", "x1")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("SLURM_JOB_ID=\"x1\""), "{e}");
    }

    #[test]
    fn records_round_trip() {
        let r = PilotRecord {
            host: "slurm-5_1".into(),
            job_id: 6,
            slurm_job: "5_1".into(),
            array_job_id: Some(5),
            array_task_id: Some(1),
            node: "n1".into(),
            cpus: 2,
            runners: 2,
            memory_mb: 900,
            restarts: 0,
            started: 100,
            state: "ended".into(),
            ended: 200,
            exit: Some(1),
            why: Some("jobs held".into()),
        };
        let back: PilotRecord = crate::state::parse(&crate::state::to_text(&r), &[]).unwrap();
        assert_eq!(back, r);
        assert!(back.failed());
    }
}
