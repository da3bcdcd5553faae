//! The runner daemons building through the queues: 4 runners give the same bytes as the
//! in-process build, with phase jobs for every pair; SIGTERM requeues the rest of a job at
//! the top; a SIGKILLed runner's stale record is found and its job resumed from its
//! checkpoint, still byte-identical (small pairs as `pair` jobs there); a stopped `pair` job
//! starts its pair again and ends byte-identical; a build stopped by SIGTERM 15 times ends
//! byte-identical; `stop`, failures, jobs that can never run
//! and bad configuration are clear.

mod common;

use common::fixture::{self, ADDQ, DBSTATUS, JOBRUNNER, text};
use common::site::{self, assert_same_build};
use nowdb::queue::QueueLine;
use nowdb::queue::file::Queue;
use nowdb::runner::record;
use nowdb::solve::Site;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::str::FromStr;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The plan of 2..5 with phase jobs for the pairs from 2 M positions (the pairs of more
/// than one range), so that stops land in the middle of phase jobs and their checkpoints.
const PHASE_JOBS_2_5: [&str; 5] = ["--pair-below", "2097152", "p", "plan", "2..5"];

fn daemon(site: &Path, args: &[&str]) -> Command {
    let mut c = fixture::command(JOBRUNNER, site);
    c.arg("daemon").args(["--poll-secs", "0.5"]).args(args);
    c
}

/// A daemon in the background; its stderr (the log lines, also in `logs/`) goes to a file,
/// never to a pipe nobody reads while it runs.
fn spawn_daemon(site: &Path, args: &[&str]) -> Child {
    spawn_daemon_with(site, args, &[])
}

/// [`spawn_daemon`] with these environment variables (which its job children inherit).
fn spawn_daemon_with(site: &Path, args: &[&str], env: &[(&str, &str)]) -> Child {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let err = std::fs::File::create(site.join(format!("daemon-{n}.stderr"))).unwrap();
    daemon(site, args)
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(err)
        .spawn()
        .unwrap()
}

fn wait_ok(child: Child, what: &str) -> String {
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{what}: {}", text(&out.stdout));
    text(&out.stdout)
}

fn tail(s: &str) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}

/// 2..5 pieces built in one process (`jobrunner build-local`), once for all tests.
fn reference5() -> &'static Path {
    static REF: OnceLock<PathBuf> = OnceLock::new();
    REF.get_or_init(|| {
        let d = fixture::scratch("runner", "reference5");
        let out = fixture::run(
            JOBRUNNER,
            &d,
            &["build-local", "--pieces", "5", "--runners", "2"],
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        d
    })
}

/// Also the paths of lower slices larger than the cache (8 pieces), taken here for every
/// slice (`NOWDB_CACHE_BYTES=0`): `cap` in batches, `ver` locating conversions first.
#[test]
fn four_runners_build_2_to_5_byte_identical_to_the_in_process_build() {
    let site = fixture::scratch("runner", "four");
    // Small mini-slices, so that the larger slices are split across runners; phase jobs
    // for every pair (no `pair` jobs), so that the stage machine in files does it all.
    fixture::ok(
        ADDQ,
        &site,
        &[
            "--positions",
            "262144",
            "--pair-below",
            "0",
            "p",
            "plan",
            "2..5",
        ],
    );
    let batched = [("NOWDB_CACHE_BYTES", "0")];
    let runners: Vec<Child> = (0..4)
        .map(|_| spawn_daemon_with(&site, &until_empty("pm", "1"), &batched))
        .collect();
    let jobs: u64 = runners
        .into_iter()
        .map(|r| {
            let out = wait_ok(r, "a runner");
            out.split(' ').nth(1).unwrap().parse::<u64>().unwrap()
        })
        .sum();
    assert!(jobs > 15_000, "{jobs} jobs");
    assert_same_build(reference5(), &site, "queue build");
    // Every runner did some of the work, and nothing is left behind.
    let log = std::fs::read_to_string(site.join("logs/t.log")).unwrap();
    let pids: std::collections::BTreeSet<&str> = log
        .lines()
        .filter(|l| l.contains(" done \""))
        .map(|l| l.split(' ').nth(3).unwrap().split('.').next().unwrap())
        .collect();
    assert_eq!(pids.len(), 4, "runner processes that did jobs");
    assert!(record::read_all(&Site::new(&site)).unwrap().is_empty());
    for q in ["prime", "small"] {
        let t = std::fs::read_to_string(site.join("queues").join(q)).unwrap();
        assert!(t.trim().is_empty(), "{q}: {t}");
    }
    let _ = std::fs::remove_dir_all(&site);
}

/// `addq plan --release-solved`: each pair's `solved/` files go once its database is
/// verified, the pairs above read them from `db/`, and the database is byte-identical to one
/// built keeping them; a plan added again finds nothing to do.
#[test]
fn a_build_that_releases_solved_files_writes_the_same_database() {
    let site = fixture::scratch("runner", "release");
    let mut plan = PHASE_JOBS_2_5.to_vec();
    plan.push("--release-solved");
    let said = fixture::ok(ADDQ, &site, &plan);
    assert!(
        said.contains("released once their pair is verified"),
        "{said}"
    );
    wait_ok(spawn_daemon(&site, &until_empty("pm", "2")), "the daemon");
    let db = |site: &Path| {
        let mut files = site::build_files(site);
        files.retain(|name, _| name.starts_with("db/"));
        files
    };
    assert_eq!(
        db(&site),
        db(reference5()),
        "db/ of a build releasing solved/"
    );
    let s = Site::new(&site);
    for pair in nowdb::slice::plan(5).pairs() {
        for slice in pair.slices() {
            assert!(!s.solved_file(&slice).exists(), "{slice} kept");
            assert!(s.values_released(&slice) && s.is_solved(&slice), "{slice}");
        }
    }
    let log = std::fs::read_to_string(site.join("logs/t.log")).unwrap();
    assert!(log.contains("solved/ files: "), "no release in the log");
    let again = fixture::ok(ADDQ, &site, &["--json", "p", "plan", "2..5"]);
    let v: serde_json::Value = serde_json::from_str(again.trim()).unwrap();
    assert_eq!(
        (v["prime"].as_u64(), v["small"].as_u64()),
        (Some(0), Some(0))
    );
    assert_eq!(v["release_solved"], true);
    let _ = std::fs::remove_dir_all(&site);
}

/// Waits for a running record of this host's job on a range of at least 16 pages that has
/// written a checkpoint; returns the record's path, record and checkpoint path.
fn wait_for_checkpointed_job(site: &Path) -> (PathBuf, record::RunningRecord, PathBuf) {
    let s = Site::new(site);
    let deadline = Instant::now() + Duration::from_secs(900);
    loop {
        assert!(Instant::now() < deadline, "no long job started");
        for (path, rec) in record::read_all(&s).unwrap_or_default() {
            let Ok((_, job)) = rec.job() else { continue };
            if rec.child == 0 || job.last - job.first < 16 * 32768 {
                continue;
            }
            let ckpt = s.checkpoint_file(&job);
            if ckpt.exists() {
                return (path, rec, ckpt);
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn first_job_line(site: &Path, queue: &str) -> String {
    let q = Queue::named(site, queue).unwrap();
    q.read_checked()
        .unwrap()
        .into_iter()
        .find_map(|(e, p)| matches!(p, Some(QueueLine::Job(_))).then_some(e.text))
        .unwrap()
}

/// SIGTERM: the job checkpoints and goes back to the top of its queue as an explicit range.
/// Then SIGKILL of a runner and its job: the next runner on the host finds the stale record,
/// requeues the job, which resumes from its checkpoint; the build ends byte-identical.
#[test]
fn sigterm_requeues_and_a_sigkilled_runner_is_recovered_byte_identical() {
    let site = fixture::scratch("runner", "kill");
    fixture::ok(ADDQ, &site, &PHASE_JOBS_2_5);
    let args = [
        "--host",
        "t",
        "--queues",
        "pm",
        "--runners",
        "1",
        "--checkpoint-secs",
        "0",
    ];

    let a = spawn_daemon(&site, &args);
    let (path, rec, _) = wait_for_checkpointed_job(&site);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(a.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let out = wait_ok(a, "the stopped runner");
    assert!(out.contains("stopped at a checkpoint"), "{out}");
    assert!(!path.exists(), "the running record is gone");
    // The stopped job (this one, unless it had just finished) is at the top of its queue,
    // as an explicit range with its checkpoint beside it.
    let queue = if rec.queue == "prime" { "p" } else { "m" };
    let top = first_job_line(&site, queue);
    let Ok(Some(QueueLine::Job(q))) = nowdb::queue::line::parse_line(&top) else {
        panic!("{top}")
    };
    assert!(
        matches!(q.range, nowdb::queue::line::Range::Explicit { .. }),
        "{top}"
    );
    assert!(Site::new(&site).checkpoint_file(&q.job().unwrap()).exists());
    let log = std::fs::read_to_string(site.join("logs/t.log")).unwrap();
    assert!(log.contains("stopped at a checkpoint"), "{}", tail(&log));

    // SIGKILL the next runner and its job process mid-job.
    let b = spawn_daemon(&site, &args);
    let (killed_path, killed, ckpt) = wait_for_checkpointed_job(&site);
    for pid in [killed.child, b.id()] {
        // The job may just have ended; the runner is there until killed.
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    let status = b.wait_with_output().unwrap().status;
    assert!(!status.success());
    std::thread::sleep(Duration::from_millis(100));
    let left = record::read_all(&Site::new(&site)).unwrap();
    assert_eq!(left.len(), 1, "one stale record");
    let (path, rec) = left.into_iter().next().unwrap();
    if rec == killed {
        // Unless the job had just ended: the killed job left its checkpoint to resume from.
        assert_eq!(path, killed_path);
        assert!(ckpt.exists(), "checkpoint {}", ckpt.display());
    }

    let c = spawn_daemon(&site, &until_empty("pm", "2"));
    wait_ok(c, "the runner that finishes the build");
    let log = std::fs::read_to_string(site.join("logs/t.log")).unwrap();
    // Found and reported by one of the two runners.
    let reaped = format!("stale running record {}: ", path.display());
    assert_eq!(log.matches(&reaped).count(), 1, "{}", tail(&log));
    let outbox: Vec<String> = std::fs::read_dir(site.join("mail/outbox"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    assert!(
        outbox
            .iter()
            .any(|m| m.contains("requeued") && m.contains(&rec.line)),
        "{outbox:?}"
    );
    assert_same_build(reference5(), &site, "queue build");
    let _ = std::fs::remove_dir_all(&site);
}

/// The build stopped by SIGTERM again and again, as an operator stops a long build at night
/// and starts it in the morning: each time the running jobs checkpoint and go back to their
/// queues, the same command resumes, and the end is byte-identical to the in-process build.
#[test]
fn a_build_stopped_by_sigterm_many_times_ends_byte_identical() {
    let site = fixture::scratch("runner", "many-stops");
    fixture::ok(ADDQ, &site, &PHASE_JOBS_2_5);
    let mut args = until_empty("pm", "2").to_vec();
    args.extend(["--checkpoint-secs", "0"]);
    // Stops 0.5..3 s apart (fixed seed): some land mid-job, some between jobs.
    let mut rng = nowdb::rng::XorShift::new(0x5EED_0023);
    let (mut stops, mut finished) = (0, false);
    let start = Instant::now();
    while !finished {
        assert!(
            start.elapsed() < Duration::from_secs(900),
            "no end after {stops} stops"
        );
        let d = spawn_daemon(&site, &args);
        let stop = stops < 15;
        if stop {
            std::thread::sleep(Duration::from_millis(500 + rng.below(2500)));
            // It may have ended by itself; then the signal finds nobody.
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(d.id() as i32),
                nix::sys::signal::Signal::SIGTERM,
            );
        }
        let out = wait_ok(d, "a daemon stopped by SIGTERM");
        if out.contains("stopped at a checkpoint") {
            stops += 1;
        } else {
            finished = true;
        }
        // Between two runs every job is in a queue or done: none is running.
        assert!(
            record::read_all(&Site::new(&site)).unwrap().is_empty(),
            "a running record outlived its daemon"
        );
    }
    assert_eq!(stops, 15, "the build ended before its 15 stops");
    let log = std::fs::read_to_string(site.join("logs/t.log")).unwrap();
    let mid_job = log.matches("stopped at a checkpoint").count();
    // Each stop of a daemon that had jobs running logs them as stopped, and the daemon too.
    assert!(
        mid_job > 15,
        "only {mid_job} stops hit a running job:\n{}",
        tail(&log)
    );
    assert_same_build(reference5(), &site, "queue build stopped 15 times");
    let _ = std::fs::remove_dir_all(&site);
}

/// A `pair` job stopped on the way (here by its deadline; SIGTERM sets the same flag)
/// exits 3 without publishing; run again it starts the pair from nothing, over the
/// unsynced work it left, and ends with the same bytes as the in-process build.
#[test]
fn a_stopped_pair_job_starts_again_and_ends_byte_identical() {
    let site = fixture::scratch("runner", "pair");
    assert!(
        Command::new("cp")
            .arg("-a")
            .arg(format!("{}/.", reference5().display()))
            .arg(&site)
            .status()
            .unwrap()
            .success()
    );
    // The largest 5-piece pair under the pair-job size, taken out of the copy.
    let plan = nowdb::slice::plan(5);
    let pair = plan
        .pairs()
        .filter(|p| p.0.pieces() == 5 && p.count() < nowdb::queue::addq::SMALL_PAIR_POSITIONS)
        .max_by_key(|p| p.count())
        .copied()
        .unwrap();
    let s = Site::new(&site);
    for x in pair.slices() {
        for f in [
            s.solved_file(&x),
            nowdb::db::probe::slice_path(&s.db_dir(), &x),
            nowdb::solve::stage::verified_marker(&s, &x),
        ] {
            std::fs::remove_file(&f).unwrap();
        }
    }
    let stopped = fixture::run(
        JOBRUNNER,
        &site,
        &["run", "--deadline-secs", "0", &format!("pair {}", pair.0)],
    );
    assert_eq!(stopped.status.code(), Some(3), "{}", text(&stopped.stderr));
    assert!(pair.slices().iter().all(|x| !s.is_solved(x)));
    assert!(s.work_file(&pair.0).exists(), "the stopped job left work");
    // The second run works in a scratch directory on another filesystem (as on a network
    // site): its publication copies across, and neither its scratch nor the first run's
    // work is left behind.
    let shm = Path::new("/dev/shm").join(format!("nowdb-runner-{}", std::process::id()));
    std::fs::create_dir_all(&shm).unwrap();
    let done = fixture::command(JOBRUNNER, &site)
        .env("TMPDIR", &shm)
        .args(["run", &format!("pair {}", pair.0)])
        .output()
        .unwrap();
    assert!(done.status.success(), "{}", text(&done.stderr));
    assert_eq!(std::fs::read_dir(&shm).unwrap().count(), 0, "scratch left");
    let _ = std::fs::remove_dir_all(&shm);
    assert!(pair.slices().iter().all(|x| !s.work_file(x).exists()));
    assert!(
        pair.slices()
            .iter()
            .all(|x| nowdb::solve::stage::verified_marker(&s, x).exists())
    );
    assert_same_build(reference5(), &site, "queue build");
    // Only whole slices make a pair job.
    let bad = fixture::run(
        ADDQ,
        &site,
        &["m", "pair", &pair.0.to_string(), "0", "32768"],
    );
    assert!(!bad.status.success());
    assert!(
        text(&bad.stderr).contains("a pair job covers its whole slice"),
        "{}",
        text(&bad.stderr)
    );
    let _ = std::fs::remove_dir_all(&site);
}

/// `addq plan` run again adds nothing that is queued (even in the explicit form a stopped job
/// is requeued in) or running; a job neither queued nor running nor done comes back.
/// The local build killed just after it recorded a stage of a pair (`--small-pair 0`: every
/// pair keeps a stage record; one runner, so the moment is always the same), then the queues
/// take over with phase jobs everywhere. `addq plan` starts the pairs the local build left
/// half way from nothing (their jobs had other ranges): before, such a pair either never
/// moved (its record named a stage nobody queued) or, solved again over the leftovers, kept
/// a wrong draw that `ver` caught. The build ends byte-identical to the in-process one.
#[test]
fn the_queues_start_again_a_pair_the_local_build_left_half_way() {
    let site = fixture::scratch("runner", "local-then-queues");
    let killed = fixture::command(JOBRUNNER, &site)
        .env("NOWDB_FAULT", "local.stage=kill@60")
        .args([
            "build-local",
            "--pieces",
            "4",
            "--runners",
            "1",
            "--small-pair",
            "0",
        ])
        .output()
        .unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        killed.status.signal(),
        Some(9),
        "{}",
        fixture::stderr(&killed)
    );
    let s = Site::new(&site);
    let plan = nowdb::slice::plan(4);
    let half_way: Vec<_> = plan
        .pairs()
        .filter(|p| {
            let slices = p.slices();
            !slices.iter().all(|x| s.is_solved(x))
                && nowdb::solve::stage::read_record(&s, &slices)
                    .unwrap()
                    .is_some()
        })
        .collect();
    assert!(!half_way.is_empty(), "the kill left a pair half way");
    fixture::ok(ADDQ, &site, &["--pair-below", "0", "p", "plan", "2..4"]);
    for p in &half_way {
        let slices = p.slices();
        assert!(
            nowdb::solve::stage::read_record(&s, &slices)
                .unwrap()
                .is_none()
        );
        assert!(slices.iter().all(|x| !s.work_file(x).exists()), "{p}");
    }
    let out = run_daemon(&site, &until_empty("pm", "2"));
    assert!(out.status.success(), "{}", tail(&fixture::stderr(&out)));
    let reference = fixture::scratch("runner", "local-then-queues-reference");
    fixture::ok(JOBRUNNER, &reference, &["build-local", "--pieces", "4"]);
    assert_same_build(&site, &reference, "local build killed, then the queues");
}

/// `addq plan --only NODE` plans every slice of the node: the same queues as naming each
/// slice (several after one `--only`, or each after its own); a word that is neither a slice
/// nor a node is refused, naming it, with nothing queued.
#[test]
fn plan_only_a_node_plans_each_of_its_slices() {
    let node: nowdb::Material = "2210".parse().unwrap();
    let slices: Vec<String> = node.slices().iter().map(|s| s.to_string()).collect();
    assert_eq!(slices.len(), 7);
    let by_node = fixture::scratch("runner", "only-node");
    fixture::ok(ADDQ, &by_node, &["p", "plan", "2..5", "--only", "2210"]);
    let by_slice = fixture::scratch("runner", "only-slices");
    let mut args = vec!["p", "plan", "2..5"];
    for (k, s) in slices.iter().enumerate() {
        if k % 3 == 0 {
            args.push("--only");
        }
        args.push(s);
    }
    fixture::ok(ADDQ, &by_slice, &args);
    let queued = |site: &Path| {
        ["prime", "small"].map(|q| std::fs::read_to_string(site.join("queues").join(q)).unwrap())
    };
    assert_eq!(queued(&by_node), queued(&by_slice));
    let all = queued(&by_node).concat();
    for s in &slices {
        let pair = nowdb::slice::SlicePair::of(s.parse().unwrap())
            .0
            .to_string();
        assert!(
            all.contains(&format!(" {pair} ")),
            "{s} (pair {pair}) not planned"
        );
    }
    let bad = fixture::scratch("runner", "only-bad");
    let out = fixture::run(ADDQ, &bad, &["p", "plan", "2..5", "--only", "22x1"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("--only 22x1"),
        "{}",
        text(&out.stderr)
    );
    assert!(!bad.join("queues/prime").exists() || queued(&bad).concat().trim().is_empty());
}

/// `addq plan 2..8 --only 4v4` is the 1994 paper's target: every node of four pieces a side
/// and what it reads. The four-men node alone plans the same (its crownings reach every other
/// 4v4 node), and every 8-piece slice planned, with its mirror, is one of the 25 nodes'.
#[test]
fn plan_only_4v4_plans_the_1994_closure() {
    let plan = |name: &str, only: &str| {
        let site = fixture::scratch("runner", name);
        let args = ["p", "plan", "2..8", "--only", only, "--no-space-check"];
        fixture::ok(ADDQ, &site, &args);
        let queued = ["prime", "small"]
            .map(|q| std::fs::read_to_string(site.join("queues").join(q)).unwrap());
        (site, queued)
    };
    let (site, split) = plan("only-4v4", "4v4");
    assert_eq!(split, plan("only-0044", "0044").1);
    // dbstatus counts what was planned, not all of 2..8 (440 G positions).
    let out = fixture::ok(DBSTATUS, &site, &["--json", "summary"]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["planned"], serde_json::json!(["2..8 4v4"]));
    let positions = v["positions"].as_u64().unwrap();
    assert!(
        (111_378_534_401..148_193_593_345).contains(&positions),
        "{positions}"
    );
    let mut eight = std::collections::BTreeSet::new();
    for line in split.concat().lines() {
        let slice: nowdb::Slice = line.split_whitespace().nth(1).unwrap().parse().unwrap();
        if slice.pieces() == 8 {
            eight.insert(slice.material);
            eight.insert(slice.material.mirror());
        }
    }
    assert_eq!(eight.len(), 25, "{eight:?}");
    assert!(eight.iter().all(|m| m.black() == 4 && m.white() == 4));
}

#[test]
fn plan_again_skips_queued_requeued_and_running_jobs() {
    let site = fixture::scratch("runner", "replan");
    fixture::ok(ADDQ, &site, &["p", "plan", "2..3"]);
    let small = site.join("queues/small");
    let queued = std::fs::read_to_string(&small).unwrap();
    let lines: Vec<&str> = queued.lines().collect();
    // The first job is running, the second was stopped and requeued in the explicit form.
    let Ok(Some(QueueLine::Job(second))) = nowdb::queue::line::parse_line(lines[1]) else {
        panic!("{}", lines[1])
    };
    let explicit = nowdb::queue::line::QueuedJob::explicit(&second.job().unwrap(), 0);
    let mut rest = vec![explicit.to_string()];
    rest.extend(lines[2..].iter().map(|l| l.to_string()));
    std::fs::write(&small, rest.join("\n") + "\n").unwrap();
    let me = std::process::id();
    let running = site.join("running").join(format!("t-{me}-0"));
    record::RunningRecord {
        host: "t".into(),
        boot_id: "b".into(),
        pid: me,
        pid_start: record::process_start(me).unwrap(),
        child: 0,
        child_start: 0,
        queue: "small".into(),
        line: lines[0].into(),
        since: 1,
        failed: None,
    }
    .write(&running, true)
    .unwrap();
    let again = fixture::ok(ADDQ, &site, &["p", "plan", "2..3"]);
    assert!(
        again.contains("added 0 job(s) to prime and 0 to small"),
        "{again}"
    );
    // Once it is neither running nor done, the first job is planned again.
    std::fs::remove_file(&running).unwrap();
    let again = fixture::ok(ADDQ, &site, &["p", "plan", "2..3"]);
    assert!(again.contains("and 1 to small"), "{again}");
    let _ = std::fs::remove_dir_all(&site);
}

/// Daemon arguments for host `t`: `runners` runners on `queues`, ending when the queues are
/// empty and nothing runs.
fn until_empty<'a>(queues: &'a str, runners: &'a str) -> [&'a str; 7] {
    [
        "--host",
        "t",
        "--queues",
        queues,
        "--runners",
        runners,
        "--until-empty",
    ]
}

fn run_daemon(site: &Path, args: &[&str]) -> Output {
    daemon(site, args).output().unwrap()
}

#[test]
fn stop_lines_failures_and_stuck_queues_are_reported() {
    // A stop line ends the runner that takes it.
    let site = fixture::scratch("runner", "stop");
    fixture::ok(ADDQ, &site, &["p", "stop"]);
    let out = run_daemon(&site, &["--host", "t", "--queues", "p", "--runners", "1"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("took \"stop\""));

    // A job whose inputs never come: --until-empty fails and says so, once, with what it
    // waits for.
    fixture::ok(ADDQ, &site, &["p", "ver", "1100"]);
    let out = run_daemon(&site, &until_empty("p", "2"));
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert_eq!(err.matches("can never run").count(), 1, "{err}");
    assert!(
        err.contains("1 job(s) left in the queues can never run")
            && err.contains(
                "prime \"ver 1100.-- -max 01 -s 1 -n 00\": waits for pair 1100.--'s files in db/"
            ),
        "{err}"
    );
    assert_eq!(first_job_line(&site, "p"), "ver 1100.-- -max 01 -s 1 -n 00");

    // A job that fails every time: retried with a growing backoff, then held (out of the
    // queues), the operator mailed once; --until-empty names it and the release command.
    let site = fixture::scratch("runner", "fail");
    std::fs::write(
        site.join("hosts.toml"),
        "[jobs]\nmax_attempts = 2\nretry_backoff_secs = 1\n",
    )
    .unwrap();
    for s in ["1100.--", "0011.00"] {
        std::fs::create_dir_all(site.join("solved")).unwrap();
        std::fs::write(site.join(format!("solved/{s}.nwk")), b"not a work file").unwrap();
    }
    fixture::ok(ADDQ, &site, &["p", "build", "1100"]);
    let out = run_daemon(&site, &until_empty("p", "1"));
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(err.contains("FAILED \"build 1100.--"), "{err}");
    assert!(err.contains("attempt 1 of 2"), "{err}");
    assert!(err.contains("HELD after 2 attempt(s)"), "{err}");
    assert_eq!(
        err.matches("1 job(s) held after failing").count(),
        1,
        "{err}"
    );
    assert!(err.contains("--release all"), "{err}");
    assert!(record::read_all(&Site::new(&site)).unwrap().is_empty());
    let queued = std::fs::read_to_string(site.join("queues/prime")).unwrap();
    assert!(
        queued.trim().is_empty(),
        "held jobs are in no queue: {queued}"
    );
    let key = format!(
        "1100.--/build-r0-0-{}",
        nowdb::Slice::from_str("1100").unwrap().count()
    );
    assert!(site.join("held").join(&key).exists());
    let alerts = std::fs::read_dir(site.join("mail/outbox")).unwrap().count();
    assert_eq!(alerts, 1);
}

#[test]
fn bad_configuration_is_a_clear_error() {
    let site = fixture::scratch("runner", "config");
    // No hosts.toml and no --queues/--runners.
    let out = run_daemon(&site, &["--host", "nohost"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("host \"nohost\" has no [[host]] table"));
    // A hosts.toml with a bad field names the host and the field.
    std::fs::write(
        site.join("hosts.toml"),
        "[[host]]\nname = \"a\"\nssh = \"a\"\nqueue = \"q\"\nplatform = \"x\"\nmemory_mb = 64\n",
    )
    .unwrap();
    let out = run_daemon(&site, &["--host", "a"]);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("hosts.toml") && err.contains("host \"a\": queue"),
        "{err}"
    );
    std::fs::write(site.join("hosts.toml"), "[[host]]\nname = 3\n").unwrap();
    let out = run_daemon(&site, &["--host", "a"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("hosts.toml"),
        "{}",
        text(&out.stderr)
    );
    // An unknown queue letter.
    std::fs::remove_file(site.join("hosts.toml")).unwrap();
    let out = run_daemon(&site, &["--host", "a", "--queues", "x", "--runners", "1"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("no queue \"x\""));
    // A good entry is used: its queue and runner count.
    std::fs::write(
        site.join("hosts.toml"),
        "[[host]]\nname = \"a\"\nssh = \"a\"\nqueue = \"s\"\nplatform = \"x\"\nmemory_mb = 64\nrunners = 3\n",
    )
    .unwrap();
    fixture::ok(ADDQ, &site, &["s", "stop"]);
    fixture::ok(ADDQ, &site, &["s", "stop"]);
    fixture::ok(ADDQ, &site, &["s", "stop"]);
    let out = run_daemon(&site, &["--host", "a"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("3 runner(s) on queues slow"));
}

#[test]
fn dbstatus_reports_runners_slices_and_totals() {
    let site = fixture::scratch("runner", "status");
    fixture::ok(ADDQ, &site, &["p", "plan", "2..3"]);
    let dbstatus = |args: &[&str]| {
        let out = fixture::run(DBSTATUS, &site, args);
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        text(&out.stdout)
    };
    // Every pair of 2..3 is small: one `pair` job each.
    let pairs = nowdb::slice::plan(3).pairs().count();
    let before = dbstatus(&["summary", "--pieces", "3"]);
    assert!(
        before.contains("solved 0 slices") && before.contains(&format!("queued {pairs} jobs")),
        "{before}"
    );
    // Without --pieces: what the site builds (its queued slices), not a fixed 2..5.
    assert_eq!(dbstatus(&["summary"]), before);
    let empty = fixture::scratch("runner", "status-empty");
    let out = fixture::run(DBSTATUS, &empty, &["summary"]);
    assert!(
        text(&out.stdout).starts_with("2..5 pieces: "),
        "{}",
        text(&out.stdout)
    );
    let out = run_daemon(&site, &until_empty("pm", "2"));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let after = dbstatus(&["summary", "--pieces", "3"]);
    assert!(
        after.contains("solved 304 slices (100.0% of positions), built 304, verified 304")
            && after.contains("queued 0 jobs"),
        "{after}"
    );
    // Nothing queued now: the solved slices say 2..3.
    assert!(dbstatus(&["summary"]).starts_with("2..3 pieces: "));
    // The pair's job shows under both of its slices.
    for name in ["1200", "2100"] {
        let slice = dbstatus(&["slice", name]);
        assert!(slice.contains("stage done, in solved/"), "{slice}");
        assert!(slice.contains("pair\t0\t100.0%\t1\t"), "{slice}");
        let json = dbstatus(&["--json", "slice", name]);
        assert!(
            json.contains("\"stage\":\"done\"") && json.contains("\"phase\":\"pair\""),
            "{json}"
        );
    }
    let runners = dbstatus(&["runners"]);
    assert!(runners.starts_with("host\trunner\tstate"), "{runners}");
    assert!(dbstatus(&["--json", "runners"]).contains("\"running\":[]"));
    // A running pair job shows the step it noted (its phase jobs' checkpoints may be in a
    // scratch directory on its machine).
    let line = "pair 1200.-- -max 01 -s 1 -n 00";
    let job = match nowdb::queue::line::parse_line(line) {
        Ok(Some(nowdb::queue::QueueLine::Job(q))) => q.job().unwrap(),
        other => panic!("{other:?}"),
    };
    let sitedir = nowdb::solve::Site::new(&site);
    let now = nowdb::runner::record::now_secs();
    std::fs::write(
        sitedir.job_note_file(&job),
        format!("step 5 noio 1200.-- round 2 since {}\n", now - 7),
    )
    .unwrap();
    let record = nowdb::runner::record::RunningRecord {
        host: "w1".into(),
        boot_id: "b".into(),
        pid: 1,
        pid_start: 1,
        child: 0,
        child_start: 0,
        queue: "small".into(),
        line: line.into(),
        since: now - 9,
        failed: None,
    };
    let path = nowdb::runner::record::running_dir(&sitedir).join("w1-1-0");
    record.write(&path, false).unwrap();
    let runners = dbstatus(&["runners"]);
    assert!(
        runners.contains(&format!("{line}\tstep 5 noio 1200.-- round 2 for ")),
        "{runners}"
    );
    let json = dbstatus(&["--json", "runners"]);
    assert!(
        json.contains("\"step\":\"step 5 noio 1200.-- round 2 for "),
        "{json}"
    );
    std::fs::remove_file(&path).unwrap();
    let _ = std::fs::remove_dir_all(&site);
}

/// `scripts/build-local`, the documented way to build through the queues on one machine: a
/// bad `--memory-mb` is refused before anything is written; a good one builds 2..4
/// byte-identical to the in-process build.
#[test]
fn the_build_local_script_refuses_bad_memory_and_builds() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/build-local");
    let site = fixture::scratch_path("runner", "script");
    let run = |memory: &str| {
        Command::new(&script)
            .args(["--site", site.to_str().unwrap(), "--pieces", "4"])
            .args(["--runners", "2", "--memory-mb", memory])
            .output()
            .unwrap()
    };
    for bad in ["lots", "1"] {
        let out = run(bad);
        assert_eq!(out.status.code(), Some(2), "--memory-mb {bad}");
        let err = text(&out.stderr);
        assert!(err.contains(&format!("--memory-mb {bad}")), "{err}");
        assert!(!site.exists(), "--memory-mb {bad} wrote {}", site.display());
    }
    let out = run("64");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let reference = fixture::scratch("runner", "script-reference");
    fixture::ok(JOBRUNNER, &reference, &["build-local", "--pieces", "4"]);
    assert_same_build(&site, &reference, "scripts/build-local");
}

/// A plan added again with another `--pair-below` queues nothing beside the first: a pair
/// whose phase jobs are queued gets no `pair` job, and one with a `pair` job queued gets no
/// phase jobs (both ways would write the pair's work files).
#[test]
fn a_plan_added_again_with_another_pair_size_adds_nothing() {
    for (first, second) in [("2097152", "16777216"), ("16777216", "0")] {
        let site = fixture::scratch("runner", &format!("replan-{first}"));
        let plan = |below: &str| {
            let out = fixture::ok(
                ADDQ,
                &site,
                &["--json", "--pair-below", below, "p", "plan", "2..5"],
            );
            let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
            v["prime"].as_u64().unwrap() + v["small"].as_u64().unwrap()
        };
        assert!(plan(first) > 1000);
        assert_eq!(plan(second), 0, "--pair-below {first}, then {second}");
        let _ = std::fs::remove_dir_all(&site);
    }
}
