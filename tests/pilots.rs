//! Slurm pilots without a cluster: the decisions a pilot makes on the site alone.
//!
//! - A pilot whose heartbeat stopped is recovered (its locks broken, its jobs requeued at the
//!   top with an attempt used, its record marked lost, the operator mailed) only once Slurm
//!   no longer runs it; a silent pilot Slurm still runs (suspended, a slow file server) and a
//!   pilot with a fresh heartbeat are left alone. Only the first fresh pilot asks Slurm; a
//!   torn pilot record is shown by `dbstatus runners` and its pilot still recovered, judged
//!   from the file's name. A run whose job Slurm started again (a node failure with
//!   `--requeue`) is recovered though squeue says its job runs.
//! - `jobrunner pilot` (given the environment Slurm gives a job) with `--max-waiting 1`:
//!   of three pilots with nothing runnable while a job runs elsewhere, two end and one waits;
//!   it ends when the build is done. Outside Slurm it says so.
//! - `dbstart --slurm` without Slurm's commands is a clear error that submits nothing.
//!
//! The real cluster (slurmctld, slurmd, sbatch, scancel, requeue, time limits) is
//! `tests/slurm.rs`.

mod common;

use common::fixture::{self, DBSTART, DBSTATUS, JOBRUNNER, text};
use nowdb::lock::Machine;
use nowdb::runner::record::RunningRecord;
use nowdb::slurm::PilotRecord;
use nowdb::solve::Site;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const LINE: &str = "lookup 1100.-- 0 992 -n 00";

fn pilot_record(host: &str, job_id: u64, started: u64) -> PilotRecord {
    PilotRecord {
        host: host.into(),
        job_id,
        slurm_job: format!("40_{job_id}"),
        array_job_id: Some(40),
        array_task_id: Some(job_id),
        node: "n2".into(),
        cpus: 1,
        runners: 1,
        memory_mb: 400,
        restarts: 0,
        started,
        state: "running".into(),
        ended: 0,
        exit: None,
        why: None,
    }
}

fn running_record(site: &Path, host: &str) -> (PathBuf, RunningRecord) {
    running_record_of(site, host, LINE)
}

fn running_record_of(site: &Path, host: &str, line: &str) -> (PathBuf, RunningRecord) {
    let path = site.join("running").join(format!("{host}-999999-0-0.x"));
    let rec = RunningRecord {
        host: host.into(),
        boot_id: "boot-of-n2".into(),
        pid: 999_999,
        pid_start: 1,
        child: 999_998,
        child_start: 1,
        queue: "prime".into(),
        line: line.into(),
        since: 1,
        failed: None,
    };
    rec.write(&path, true).unwrap();
    (path, rec)
}

#[test]
fn a_silent_pilot_is_recovered_only_once_slurm_no_longer_runs_it() {
    let root = fixture::scratch("pilots", "lost");
    let site = Site::new(&root);
    for d in ["queues", "running", "heartbeats"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    let now = 1_000_000;
    let here = Machine {
        host: "slurm-40_0".into(),
        boot_id: "boot-of-n1".into(),
    };
    // Pilot 1: silent for 200 s, with a job. Pilot 2: silent too, no job. Pilot 3: a fresh
    // heartbeat.
    pilot_record("slurm-40_1", 41, now - 500)
        .write(&site)
        .unwrap();
    pilot_record("slurm-40_2", 42, now - 500)
        .write(&site)
        .unwrap();
    pilot_record("slurm-40_3", 43, now - 500)
        .write(&site)
        .unwrap();
    nowdb::monitor::write_heartbeat(&site, "slurm-40_1", "boot-of-n2", now - 200).unwrap();
    nowdb::monitor::write_heartbeat(&site, "slurm-40_3", "boot-of-n2", now - 5).unwrap();
    // Pilot 4 ended (a runner met an error it could not settle) and left a record.
    let mut ended = pilot_record("slurm-40_4", 44, now - 500);
    (ended.state, ended.ended, ended.exit) = ("ended".into(), now - 400, Some(1));
    ended.write(&site).unwrap();
    let (left, _) = running_record_of(&root, "slurm-40_4", "lookup 2100.-- -max 01 -s 1 -n 00");
    let (record, rec) = running_record(&root, "slurm-40_1");
    let (_, job) = rec.job().unwrap();
    // Pilot 5's record is torn (a full disk): its file's name still names its Slurm job, and
    // it had a job.
    let torn = root.join("slurm/pilots/slurm-40_5.r1");
    std::fs::write(&torn, "host = \"slurm-40_5.r1\"\njob_id = 4").unwrap();
    let (torn_job, _) = running_record_of(&root, "slurm-40_5.r1", "cap 1100.-- 0 992 -n 00");
    // Pilot 6 died with its node, and Slurm started its job again (`--requeue`) as
    // slurm-40_6.r1: squeue says the job runs, and means the new run.
    pilot_record("slurm-40_6", 46, now - 500)
        .write(&site)
        .unwrap();
    let (node_failed, _) = running_record_of(&root, "slurm-40_6", "cap 2100.-- 0 14880 -n 00");
    let mut rerun = pilot_record("slurm-40_6.r1", 46, now - 60);
    rerun.restarts = 1;
    rerun.write(&site).unwrap();
    nowdb::monitor::write_heartbeat(&site, "slurm-40_6.r1", "boot-of-n3", now - 2).unwrap();
    // This pilot (the first in array order, fresh) is the one that asks Slurm.
    pilot_record(&here.host, 40, now - 500)
        .write(&site)
        .unwrap();
    nowdb::monitor::write_heartbeat(&site, &here.host, "boot-of-n1", now - 1).unwrap();
    let policy = nowdb::queue::held::RetryPolicy::default();
    let after = Duration::from_secs(120);
    let recover_as = |me: &Machine, runs: &dyn Fn(&str) -> Option<bool>| {
        let mut rep = nowdb::mail::Reporter::open(&root, "slurm", "pilot", &me.host, None).unwrap();
        nowdb::slurm::lost::recover_lost(&site, me, &policy, after, runs, &mut rep, now).unwrap()
    };
    let recover = |runs: &dyn Fn(&str) -> Option<bool>| {
        let r = recover_as(&here, runs);
        assert!(r.asked);
        assert!(
            r.bad.is_empty() || r.bad[0].contains("slurm-40_5.r1: corrupt pilot record"),
            "{:?}",
            r.bad
        );
        r.done
    };
    // The operator sees the torn record.
    let out = fixture::ok(DBSTATUS, &root, &["runners"]);
    assert!(out.contains("slurm-40_5.r1: corrupt pilot record"), "{out}");
    // Another fresh pilot leaves Slurm alone: one asker, not every pilot.
    let other = Machine {
        host: "slurm-40_3".into(),
        boot_id: "boot-of-n2".into(),
    };
    let asked = std::cell::Cell::new(0);
    let r = recover_as(&other, &|_| {
        asked.set(asked.get() + 1);
        Some(false)
    });
    assert!(!r.asked && r.done.is_empty() && asked.get() == 0, "{r:?}");

    // Slurm still runs them, or cannot be asked: nothing is touched but the run that a later
    // run of its job replaced.
    let done = recover(&|_| Some(true));
    assert_eq!(done.len(), 1, "{done:?}");
    assert!(
        done[0].contains(
            "pilot slurm-40_6 (Slurm job 40_46 on n2) lost: no heartbeat for 500s and Slurm runs its job again as slurm-40_6.r1"
        ) && done[0].contains("requeued 1 job(s) at the top: cap 2100.-- 0 14880 -n 00"),
        "{done:?}"
    );
    assert!(!node_failed.exists());
    assert!(recover(&|_| None).is_empty());
    assert!(record.exists());
    // Slurm no longer runs any of them; 40_43 has a fresh heartbeat and is left alone.
    let done = recover(&|_| Some(false));
    assert_eq!(done.len(), 4, "{done:?}");
    // In array order: the torn record's pilot is task 5.
    assert!(
        done[0].contains("pilot slurm-40_5.r1 (Slurm job 40_5 on unknown) lost: no heartbeat ever")
            && done[0].contains("requeued 1 job(s)"),
        "{done:?}"
    );
    assert!(!torn_job.exists(), "the torn pilot's job was not settled");
    assert!(
        !left.exists(),
        "the ended pilot's leftover record was not settled"
    );
    assert!(
        done[1].contains("pilot slurm-40_1 (Slurm job 40_41 on n2) lost: no heartbeat for 200s")
            && done[1].contains("requeued 1 job(s)"),
        "{done:?}"
    );
    assert!(!record.exists(), "the lost pilot's record was not settled");
    // The four jobs are back at the top of the prime queue.
    let prime = std::fs::read_to_string(root.join("queues/prime")).unwrap();
    let top: Vec<&str> = prime.lines().take(4).collect();
    assert!(
        top.contains(&LINE)
            && top.contains(&"cap 2100.-- 0 14880 -n 00")
            && top.contains(&"lookup 2100.-- 0 14880 -n 00")
            && top.contains(&"cap 1100.-- 0 992 -n 00"),
        "{prime}"
    );
    let attempts = nowdb::queue::held::read_attempts(&site, &job).unwrap();
    assert_eq!(attempts.len(), 1, "{attempts:?}");
    assert!(attempts[0].status.contains("lost"), "{attempts:?}");
    let pilots = nowdb::slurm::read_pilots(&site).unwrap();
    assert!(pilots.bad.is_empty(), "{:?}", pilots.bad);
    let states: Vec<(&str, &str)> = pilots
        .records
        .iter()
        .map(|p| (p.host.as_str(), p.state.as_str()))
        .collect();
    assert_eq!(
        states,
        [
            ("slurm-40_5.r1", "lost"),
            ("slurm-40_0", "running"),
            ("slurm-40_1", "lost"),
            ("slurm-40_2", "lost"),
            ("slurm-40_3", "running"),
            ("slurm-40_4", "ended"),
            ("slurm-40_6", "lost"),
            ("slurm-40_6.r1", "running"),
        ]
    );
    // Said once: a second look finds nothing to do.
    assert!(recover(&|_| None).is_empty());
    // The operator sees it: the alert is spooled, and dbstatus lists the lost pilots.
    let outbox = nowdb::mail::outbox_dir(&root);
    let spooled: String = std::fs::read_dir(&outbox)
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap_or_default())
        .collect();
    assert!(spooled.contains("pilot slurm-40_1 lost"), "{spooled}");
    let out = fixture::ok(DBSTATUS, &root, &["runners"]);
    assert!(
        out.contains("# pilot slurm-40_1: Slurm job 40_41 (id 41) on n2")
            && out.contains("LOST")
            && out.contains(
                "5 pilot(s) ended non-zero or were lost: slurm-40_5.r1, slurm-40_1, slurm-40_2, slurm-40_4, slurm-40_6"
            ),
        "{out}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&fixture::ok(DBSTATUS, &root, &["--json", "runners"])).unwrap();
    assert_eq!(json["pilots"][2]["state"], "lost");
    assert_eq!(json["pilots"][2]["failed"], true);
    assert_eq!(json["pilots"][4]["node"], "n2");
    assert_eq!(json["unreadable_pilot_records"], serde_json::json!([]));
}

/// A fake pilot of task `task` with one CPU, its output piped.
fn fake_pilot(site: &Path, task: u64, args: &[&str]) -> std::process::Child {
    fixture::fake_pilot(site, task, 1, args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The record of fake pilot `task`.
fn pilot_of(site: &Site, task: usize) -> PilotRecord {
    let path = PilotRecord::path(site, &format!("slurm-100_{task}"));
    nowdb::state::read(&path, "pilot", &[]).unwrap().unwrap()
}

#[test]
fn pilots_beyond_max_waiting_end_and_the_last_ends_with_the_build() {
    let root = fixture::scratch("pilots", "waiting");
    let site = Site::new(&root);
    for d in ["queues", "running"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    // A job runs on a live workstation (this process stands for its runner): nothing is
    // queued, but the build is not done.
    let rec = root.join("running/ws1-1-0-0.x");
    RunningRecord {
        host: "ws1".into(),
        boot_id: Machine::current().unwrap().boot_id,
        pid: std::process::id(),
        pid_start: nowdb::runner::record::process_start(std::process::id()).unwrap(),
        child: 0,
        child_start: 0,
        queue: "prime".into(),
        line: LINE.into(),
        since: 1,
        failed: None,
    }
    .write(&rec, true)
    .unwrap();
    let args = ["--max-waiting", "1", "--poll-secs", "0.2"];
    let mut pilots: Vec<_> = (0..3).map(|t| fake_pilot(&root, t, &args)).collect();
    // Two end by themselves, one waits.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut ended = Vec::new();
    while ended.len() < 2 {
        assert!(
            Instant::now() < deadline,
            "the pilots beyond one did not end"
        );
        for (t, p) in pilots.iter_mut().enumerate() {
            if !ended.contains(&t) && p.try_wait().unwrap().is_some() {
                ended.push(t);
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_secs(2));
    let waiting: Vec<usize> = (0..3).filter(|t| !ended.contains(t)).collect();
    assert_eq!(waiting.len(), 1);
    let w = waiting[0];
    assert!(
        pilots[w].try_wait().unwrap().is_none(),
        "the last pilot did not wait"
    );
    for t in &ended {
        let log = std::fs::read_to_string(root.join(format!("logs/slurm-100_{t}.log"))).unwrap();
        assert!(
            log.contains("daemon(s) already wait (at most 1): this one ends"),
            "{log}"
        );
        let p = pilot_of(&site, *t);
        assert_eq!((p.state.as_str(), p.exit), ("ended", Some(0)), "{p:?}");
    }
    // The waiting pilot sized its buffers from the memory Slurm granted.
    let log = std::fs::read_to_string(root.join(format!("logs/slurm-100_{w}.log"))).unwrap();
    let said = format!(
        "Slurm pilot: job 100_{w} (id {}) on node n{w}, 1 CPU(s), 300 MB granted by Slurm: 1 runner(s), 14400 page buffers per work file",
        100 + w
    );
    assert!(log.contains(&said), "{said}\n{log}");
    // The job elsewhere ends: the build is done, and the last pilot ends with status 0.
    std::fs::remove_file(&rec).unwrap();
    let p = pilots.remove(w);
    let out = p.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    for mut p in pilots {
        let _ = p.wait();
    }
    let rec = pilot_of(&site, w);
    assert_eq!(rec.why.as_deref(), Some("nothing left for it to do"));
    assert!(!root.join("waiting").join(format!("slurm-100_{w}")).exists());
}

#[test]
fn outside_slurm_the_pilot_and_dbstart_say_what_is_missing() {
    let root = fixture::scratch("pilots", "noslurm");
    std::fs::create_dir_all(root.join("queues")).unwrap();
    let out = Command::new(JOBRUNNER)
        .arg("--site")
        .arg(&root)
        .arg("pilot")
        .env_remove("SLURM_JOB_ID")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("SLURM_JOB_ID is not set"),
        "{}",
        text(&out.stderr)
    );
    let out = Command::new(DBSTART)
        .arg("--site")
        .arg(&root)
        .args(["--slurm", "3"])
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("sbatch not found") || err.contains("squeue not found"),
        "{err}"
    );
    assert!(!root.join("slurm/submitted").exists());
}
