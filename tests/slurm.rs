//! The queues drained by Slurm pilots on a real Slurm cluster (issue: the pool is a cluster):
//! Debian's slurmctld and slurmd with munge, started by `scripts/slurm-cluster` on three
//! network-namespace nodes whose site is an sshfs mount of a file server's directory at the
//! same path on every node. `dbstart --slurm 5` submits the pilots; a node of 5 pieces and
//! what it needs (`common::pool::NODE`) are built through them while
//!
//! - one pilot is `scontrol requeue`d in the middle of a phase job,
//! - one is `scancel`led in the middle of a phase job,
//! - one is killed with SIGKILL (daemon and job, as a node failure would),
//! - one reaches its time limit (cut short with `scontrol update`) in the middle of a phase
//!   job and gets the `--signal` SIGTERM first.
//!
//! Each of these phase jobs is held still (SIGSTOP) once it has a checkpoint, so that it is
//! surely in the middle when Slurm acts. The build still ends by itself, byte-identical to
//! the in-process build, with no job held, and the operator sees each pilot's Slurm job, node
//! and end in `dbstatus runners`. A second `dbstart --slurm 5` submits nothing; one with a
//! partition the cluster lacks is Slurm's own error and submits nothing.
//!
//! Needs root, Slurm, munge, sshd, sshfs and iproute2 (`scripts/test` installs them).

mod common;

use common::fixture::{self, DBSTART, DBSTATUS, JOBRUNNER, text};
use common::parts::{Part, require};
use common::pool::{self, build_finished, diagnostics, still_running, wait_for_long_job};
use common::site::assert_same_build;
use nowdb::queue::{done, held};
use nowdb::runner::record::{self, RunningRecord};
use nowdb::slurm::PilotRecord;
use nowdb::solve::Site;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/slurm-cluster");

/// `dbstart --slurm`'s options of every test: small pilots, found lost after 15 s, a
/// checkpoint at every page.
const PILOTS: [&str; 8] = [
    "--mem-per-pilot",
    "300",
    "--lost-after-secs",
    "15",
    "--checkpoint-secs",
    "0",
    "--jobrunner",
    JOBRUNNER,
];

/// A cluster started by `scripts/slurm-cluster`, stopped when dropped.
struct Cluster {
    dir: PathBuf,
    site: PathBuf,
}

impl Cluster {
    fn start(nodes: usize) -> Cluster {
        require(&[
            Part::Root,
            Part::Slurm,
            Part::Sshd,
            Part::Sshfs,
            Part::Netns,
        ]);
        let dir = fixture::scratch_path("slurm", "cluster");
        let site = dir.join("site");
        let c = Cluster {
            dir: dir.clone(),
            site,
        };
        let t0 = Instant::now();
        let out = Command::new(SCRIPT)
            .arg("start")
            .arg(&dir)
            .args([
                "--nodes",
                &nodes.to_string(),
                "--cpus",
                "2",
                "--mem-mb",
                "2048",
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "scripts/slurm-cluster start: {}\n{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        eprintln!(
            "slurm cluster of {nodes} nodes up in {:.1}s",
            t0.elapsed().as_secs_f64()
        );
        c
    }

    /// A cluster of three nodes whose site has the phase jobs of `pool::NODE` queued, five
    /// attempts a job.
    fn with_plan() -> Cluster {
        let c = Cluster::start(3);
        std::fs::write(
            c.site.join("hosts.toml"),
            "[jobs]\nmax_attempts = 5\nretry_backoff_secs = 1\n",
        )
        .unwrap();
        pool::queue_plan_of_phase_jobs(&c.site);
        c
    }

    /// The build through the pilots held no job, and its bytes are the in-process build's.
    fn nothing_held_and_the_same_bytes(&self, what: &str) {
        let summary: serde_json::Value =
            serde_json::from_str(&fixture::ok(DBSTATUS, &self.site, &["--json", "summary"]))
                .unwrap();
        assert_eq!(summary["held"], 0, "{summary}");
        let reference = self.dir.join("reference");
        pool::build_in_process(&reference);
        assert_same_build(&reference, &self.site, what);
    }

    /// A Slurm client command of this cluster.
    fn slurm(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("SLURM_CONF", self.dir.join("slurm.conf"));
        c
    }

    /// A Slurm command that must succeed: its standard output.
    fn ok(&self, program: &str, args: &[&str]) -> String {
        let out = self.slurm(program).args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{program} {args:?}: {}",
            text(&out.stderr)
        );
        text(&out.stdout)
    }

    /// `program --site SITE ARGS` as the cluster's user runs it (with its SLURM_CONF).
    fn tool(&self, program: &str, args: &[&str]) -> std::process::Output {
        let mut c = self.slurm(program);
        c.arg("--site").arg(&self.site).args(args);
        c.output().unwrap()
    }

    /// Slurm's state of job `job` (`12_3`), or "" once Slurm has forgotten it.
    fn state(&self, job: &str) -> String {
        let out = self
            .slurm("squeue")
            .args(["-h", "-t", "all", "-j", job, "-o", "%T"])
            .output()
            .unwrap();
        text(&out.stdout).trim().to_string()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(SCRIPT).arg("stop").arg(&self.dir).status();
    }
}

fn signal(pid: u32, sig: nix::sys::signal::Signal) {
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), sig);
}

fn pilot(site: &Path, host: &str) -> Option<PilotRecord> {
    nowdb::state::read(&PilotRecord::path(&Site::new(site), host), "pilot", &[])
        .ok()
        .flatten()
}

/// How a pilot is interrupted.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Blow {
    Requeue,
    Cancel,
    Kill,
    TimeLimit,
}

/// Waits for a phase job in the middle on a running pilot that `pick` takes, holds it still
/// (SIGSTOP) and returns its record with its pilot's.
fn hold_a_job(
    c: &Cluster,
    deadline: Instant,
    pick: &dyn Fn(&PilotRecord) -> bool,
) -> (PathBuf, RunningRecord, PilotRecord) {
    loop {
        let (path, rec) = wait_for_long_job(&c.site, deadline, |r| {
            r.host.starts_with("slurm-") && pilot(&c.site, &r.host).is_some_and(|p| pick(&p))
        });
        signal(rec.child, nix::sys::signal::Signal::SIGSTOP);
        // Held with half of its range or more to go: a job stopped on its last pages may
        // finish instead of stopping at a checkpoint.
        let (_, job) = rec.job().unwrap();
        let early = matches!(
            nowdb::solve::checkpoint::load(&Site::new(&c.site), &job),
            Ok(Some(k)) if !k.complete && k.next - job.first <= (job.last - job.first) / 2
        );
        if early
            && still_running(&c.site, &path, &rec)
            && let Some(p) = pilot(&c.site, &rec.host)
            && p.state == "running"
        {
            return (path, rec, p);
        }
        signal(rec.child, nix::sys::signal::Signal::SIGCONT);
    }
}

/// Waits until `what` holds, with the site's diagnostics on a timeout.
fn wait_until(site: &Path, deadline: Instant, what: &str, mut f: impl FnMut() -> bool) {
    while !f() {
        assert!(Instant::now() < deadline, "{what}\n{}", diagnostics(site));
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits until the job of `rec` leaves its record (back at the top of its queue, or
/// recovered from a lost pilot), then is taken again by a pilot or done.
fn requeued_and_taken(
    site: &Path,
    path: &Path,
    rec: &RunningRecord,
    deadline: Instant,
    what: &str,
) {
    wait_until(
        site,
        deadline,
        &format!("{what}: the record stayed"),
        || !path.exists(),
    );
    let (_, job) = rec.job().unwrap();
    let s = Site::new(site);
    wait_until(
        site,
        deadline,
        &format!("{what}: the job was not taken again"),
        || {
            done::record_path(&s, &job).exists()
                || record::read_all(&s)
                    .unwrap_or_default()
                    .iter()
                    .any(|(_, r)| r.job().is_ok_and(|(_, j)| j == job))
        },
    );
}

/// Waits until Slurm has no task of the job arrays `arrays` left.
fn pilots_ended(c: &Cluster, deadline: Instant, arrays: &[u64]) {
    for array in arrays {
        let array = array.to_string();
        wait_until(&c.site, deadline, "the pilots did not end", || {
            c.ok("squeue", &["-h", "-r", "-j", &array, "-o", "%i %T"])
                .trim()
                .is_empty()
        });
    }
}

/// Every pilot run's log, in order (a requeued pilot's next run is `slurm-<array>_<i>.r1`).
fn pilot_logs(site: &Path) -> String {
    let mut names: Vec<String> = std::fs::read_dir(site.join("logs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("slurm-") && n.ends_with(".log"))
        .collect();
    names.sort();
    names.iter().map(|n| log(site, n)).collect()
}

/// The job of `rec` is done, and went on from its checkpoint.
fn done_from_checkpoint(site: &Path, pilot_logs: &str, rec: &RunningRecord, what: &str) {
    let (_, job) = rec.job().unwrap();
    assert!(
        done::record_path(&Site::new(site), &job).exists(),
        "{what}: {job} not done"
    );
    assert!(
        pool::resumed_in(pilot_logs, &job),
        "{what}: {job} was not resumed from its checkpoint\n{}",
        diagnostics(site)
    );
}

/// The pilot of `rec` stopped its job at a checkpoint and requeued it at the top.
fn stopped_at_a_checkpoint(site: &Path, rec: &RunningRecord, p: &PilotRecord, what: &str) {
    let mine = log(site, &format!("{}.log", p.host));
    assert!(
        mine.contains(&format!(
            "\"{}\" (stopped at a checkpoint): requeued at the top",
            rec.line
        )),
        "{what}: {mine}"
    );
}

/// The pilot that ran `rec` was found lost (`end`: its record now): its job used an
/// attempt, and the Slurm log says so.
fn found_lost(site: &Path, rec: &RunningRecord, end: &PilotRecord) {
    assert_eq!(end.state, "lost", "{end:?}");
    let (_, job) = rec.job().unwrap();
    let attempts = held::read_attempts(&Site::new(site), &job).unwrap();
    assert!(
        attempts
            .iter()
            .any(|a| a.host == end.host && a.status.contains("lost")),
        "{attempts:?}"
    );
    let slurm_log = log(site, "slurm.log");
    assert!(
        slurm_log.contains(&format!("pilot {} lost", end.host)),
        "{slurm_log}"
    );
}

/// One cluster at a time: two would share the 2 cores and the builds' timings.
fn one_cluster() -> std::sync::MutexGuard<'static, ()> {
    static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    ONE.lock().unwrap_or_else(|e| e.into_inner())
}

fn log(site: &Path, name: &str) -> String {
    std::fs::read_to_string(site.join("logs").join(name)).unwrap_or_default()
}

#[test]
fn pilots_build_a_node_through_requeue_scancel_sigkill_and_a_time_limit() {
    let _one = one_cluster();
    let c = Cluster::with_plan();
    let site = c.site.clone();

    // A partition the cluster lacks: Slurm's own message, nothing submitted.
    let out = c.tool(DBSTART, &["--slurm", "2", "--partition", "nosuch"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("Slurm refused the pilots") && err.contains("invalid partition"),
        "{err}"
    );
    assert!(!site.join("slurm/submitted").exists());

    let submit = [
        &[
            "--slurm",
            "5",
            "--cpus-per-pilot",
            "1",
            "--signal-secs",
            "100",
        ][..],
        &PILOTS,
    ]
    .concat();
    let out = c.tool(DBSTART, &submit);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(
        said.contains("submitted 5 pilot(s) as Slurm job array"),
        "{said}"
    );
    // Run again: the five are pending or running, nothing more is submitted.
    let out = c.tool(DBSTART, &submit);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("5 pilot(s) of earlier submissions are pending or running"),
        "{}",
        text(&out.stdout)
    );

    let deadline = Instant::now() + Duration::from_secs(1500);
    let mut spared = BTreeSet::new();
    let mut blows: Vec<(Blow, RunningRecord, PilotRecord)> = Vec::new();
    let mut requeue_to_taken = None;
    for blow in [Blow::Requeue, Blow::Cancel, Blow::Kill, Blow::TimeLimit] {
        let (path, rec, p) = hold_a_job(&c, deadline, &|p| !spared.contains(&p.host));
        spared.insert(rec.host.clone());
        let (t0, t0_epoch) = (Instant::now(), nowdb::clock::now_secs());
        match blow {
            Blow::Requeue => drop(c.ok("scontrol", &["requeue", &p.slurm_job])),
            Blow::Cancel => drop(c.ok("scancel", &[&p.slurm_job])),
            Blow::Kill => {
                signal(rec.pid, nix::sys::signal::Signal::SIGKILL);
                signal(rec.child, nix::sys::signal::Signal::SIGKILL);
            }
            Blow::TimeLimit => {
                // A limit 60 to 120 s away: Slurm sends the pilot SIGTERM once it is 100 s
                // (--signal-secs) away, well before it (it looks about every 30 s).
                let secs = nowdb::clock::now_secs() - p.started;
                let minutes = (secs / 60 + 2).to_string();
                c.ok(
                    "scontrol",
                    &[
                        "update",
                        &format!("JobId={}", p.slurm_job),
                        &format!("TimeLimit={minutes}"),
                    ],
                );
            }
        }
        requeued_and_taken(&site, &path, &rec, deadline, &format!("{blow:?}"));
        if blow == Blow::Requeue {
            requeue_to_taken = Some((t0.elapsed(), t0_epoch));
        }
        blows.push((blow, rec, p));
    }
    let (requeue_to_taken, requeued_at) = requeue_to_taken.unwrap();
    eprintln!(
        "scontrol requeue to the checkpointed job taken again: {:.2}s",
        requeue_to_taken.as_secs_f64()
    );

    // The build ends by itself: every pilot ends once it is done.
    wait_until(&site, deadline, "the build did not finish", || {
        build_finished(&site)
    });
    let array = blows[0].2.array_job_id.unwrap();
    pilots_ended(&c, deadline, &[array]);

    // Each interrupted job went on from its checkpoint and is done.
    let pilot_logs = pilot_logs(&site);
    for (blow, rec, p) in &blows {
        done_from_checkpoint(&site, &pilot_logs, rec, &format!("{blow:?}"));
        let end = pilot(&site, &p.host).unwrap();
        match blow {
            Blow::Requeue | Blow::Cancel | Blow::TimeLimit => {
                stopped_at_a_checkpoint(&site, rec, p, &format!("{blow:?}"))
            }
            Blow::Kill => found_lost(&site, rec, &end),
        }
        match blow {
            // Requeued by Slurm: the same pilot ran again, and ended when the build was done.
            // Requeued by Slurm: this run stopped at a checkpoint; the next run, with a
            // name of its own, ran again and ended when the build was done.
            Blow::Requeue => {
                assert_eq!(end.exit, Some(0), "{end:?}");
                let next = pilot(&site, &format!("{}.r1", p.host)).unwrap();
                assert_eq!((next.restarts, next.exit), (1, Some(0)), "{next:?}");
                eprintln!(
                    "scontrol requeue to the requeued pilot running again: about {}s",
                    next.started.saturating_sub(requeued_at)
                );
            }
            Blow::Cancel => assert_eq!(end.exit, Some(0), "{end:?}"),
            // Stopped before the limit: it ended by itself, not killed by the limit.
            Blow::TimeLimit => {
                assert_eq!(end.exit, Some(0), "{end:?}");
                assert!(
                    end.why
                        .as_deref()
                        .unwrap_or("")
                        .contains("stopped by a signal"),
                    "{end:?}"
                );
                let state = c.state(&p.slurm_job);
                assert!(state.is_empty() || state == "COMPLETED", "{state}");
            }
            Blow::Kill => {}
        }
    }

    // The operator sees Slurm: each pilot's job, index and node; the lost one listed.
    let out = fixture::ok(DBSTATUS, &site, &["runners"]);
    let killed = &blows[2].2.host;
    assert!(
        out.contains(&format!("1 pilot(s) ended non-zero or were lost: {killed}")),
        "{out}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&fixture::ok(DBSTATUS, &site, &["--json", "runners"])).unwrap();
    let pilots = json["pilots"].as_array().unwrap();
    assert_eq!(
        pilots.len(),
        6,
        "five pilots and the requeued one's next run: {json}"
    );
    for p in pilots {
        assert!(p["node"].as_str().unwrap().starts_with('n'), "{p}");
        assert_eq!(p["array_job_id"], array, "{p}");
    }
    // Every job is accounted for: none held, every slice done and verified, and the bytes
    // are those of the in-process build.
    c.nothing_held_and_the_same_bytes("build through Slurm pilots");
}

/// Slurm's own faults, each in the middle of a phase job held still: a pilot preempted by a
/// job of a higher-priority partition with `PreemptMode=CANCEL`, one with `REQUEUE`, and a
/// node that fails (every process of it killed: Slurm marks it down and requeues its pilot)
/// and comes back with a new boot id. The build ends by itself, byte-identical to the
/// in-process build, nothing held.
#[test]
#[ignore = "2 minutes more for CI, whose budget it would crowd: cargo test --release --test slurm -- --ignored"]
fn pilots_build_a_node_through_preemption_and_a_node_failure() {
    let _one = one_cluster();
    let c = Cluster::with_plan();
    let site = c.site.clone();
    // A pilot fills a node (2 CPUs): a preempting job needs its CPU.
    let submit = |partition: &str, pilots: &str, new: usize| -> u64 {
        let out = c.tool(
            DBSTART,
            &[
                &[
                    "--slurm",
                    pilots,
                    "--partition",
                    partition,
                    "--cpus-per-pilot",
                    "2",
                ][..],
                &PILOTS,
            ]
            .concat(),
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        let said = text(&out.stdout);
        assert!(
            said.contains(&format!("submitted {new} pilot(s) as Slurm job array ")),
            "{said}"
        );
        said.split("Slurm job array ")
            .nth(1)
            .and_then(|t| t.split_whitespace().next())
            .and_then(|w| w.parse().ok())
            .unwrap_or_else(|| panic!("{said}"))
    };
    let requeued = submit("debug", "2", 2);
    // Tops the site's pilots up to 3: one more, in the partition whose jobs are cancelled.
    let cancelled = submit("cancelled", "3", 1);
    let preempt = |node: &str| {
        c.ok(
            "sbatch",
            &[
                "--parsable",
                "--partition=urgent",
                &format!("--nodelist={node}"),
                "--cpus-per-task=1",
                "--mem=100",
                "--job-name=urgent",
                "--output=/dev/null",
                "--chdir=/",
                "--wrap",
                "sleep 20",
            ],
        )
    };
    let deadline = Instant::now() + Duration::from_secs(1500);
    let s = Site::new(&site);

    // Preempted, PreemptMode=CANCEL: SIGTERM, the job checkpoints and goes back to the top.
    let (path, rec, cancel) = hold_a_job(&c, deadline, &|p| p.array_job_id == Some(cancelled));
    preempt(&cancel.node);
    requeued_and_taken(&site, &path, &rec, deadline, "preempted (CANCEL)");
    let mut blows = vec![("preempted (CANCEL)", rec, cancel)];

    // Preempted, PreemptMode=REQUEUE: the same, and Slurm runs the pilot again later.
    let (path, rec, requeue) = hold_a_job(&c, deadline, &|p| {
        p.array_job_id == Some(requeued) && p.restarts == 0
    });
    preempt(&requeue.node);
    requeued_and_taken(&site, &path, &rec, deadline, "preempted (REQUEUE)");
    blows.push(("preempted (REQUEUE)", rec, requeue));

    // A node fails (not n1, where slurmctld runs): its pilot and job die without a word.
    let (path, rec, failed) = hold_a_job(&c, deadline, &|p| {
        p.array_job_id == Some(requeued) && p.node != "n1"
    });
    let node = failed.node.trim_start_matches('n').to_string();
    let boot = std::fs::read_to_string(c.dir.join(format!("run/boot-{}", failed.node))).unwrap();
    assert_eq!(
        nowdb::runner::host_files::read_heartbeat(&s, &failed.host).map(|(b, _)| b),
        Some(boot.trim().to_string()),
        "each node has a boot id of its own"
    );
    let out = Command::new(SCRIPT)
        .args(["fail", &c.dir.to_string_lossy(), &node])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    requeued_and_taken(&site, &path, &rec, deadline, "node failure");
    // The node comes back, rebooted: Slurm takes it into service again.
    let out = Command::new(SCRIPT)
        .args(["revive", &c.dir.to_string_lossy(), &node])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let state = || {
        c.ok(
            "sinfo",
            &["-h", "-p", "debug", "-n", &failed.node, "-o", "%t"],
        )
    };
    wait_until(&site, deadline, "the failed node did not come back", || {
        matches!(state().trim(), "idle" | "mix" | "alloc")
    });
    blows.push(("node failure", rec, failed));

    // The build ends by itself, and every pilot with it.
    wait_until(&site, deadline, "the build did not finish", || {
        build_finished(&site)
    });
    pilots_ended(&c, deadline, &[requeued, cancelled]);
    let pilot_logs = pilot_logs(&site);
    for (blow, rec, p) in &blows {
        done_from_checkpoint(&site, &pilot_logs, rec, blow);
        let end = pilot(&site, &p.host).unwrap();
        // The task's later runs (`.r<n>`, n counting Slurm's requeues): the node that fails
        // may be the one where the preempted task ran again.
        let base = p.host.split(".r").next().unwrap_or(&p.host).to_string();
        let later: Vec<PilotRecord> = (p.restarts + 1..p.restarts + 4)
            .map_while(|n| pilot(&site, &format!("{base}.r{n}")))
            .collect();
        let next = later.last();
        if blow.starts_with("preempted") {
            assert_eq!(end.exit, Some(0), "{blow}: {end:?}");
            stopped_at_a_checkpoint(&site, rec, p, blow);
        }
        match *blow {
            // Cancelled: no later run.
            "preempted (CANCEL)" => assert!(next.is_none(), "{next:?}"),
            // Requeued by Slurm, preempted or after its node failed: a later run ran, and the
            // last ended with the build.
            _ => {
                let next = next.unwrap_or_else(|| panic!("{blow}: no next run"));
                assert_eq!(next.exit, Some(0), "{blow}: {later:?}");
            }
        }
        if *blow == "node failure" {
            found_lost(&site, rec, &end);
        }
    }
    c.nothing_held_and_the_same_bytes("build through preempted and failed pilots");
}
