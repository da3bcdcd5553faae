//! No job is ever lost (issue 20), with real processes:
//!
//! - a 2..5 build through the queues with 3 runners in which job processes (pair jobs and
//!   phase jobs) are SIGKILLed 20 times at random moments ends by itself, byte-identical to
//!   the in-process build, with every planned job done;
//! - a job killed once is retried, and its runner's next job does not touch its records;
//! - a job that always fails (a damaged input file) is attempted `max_attempts` times with a
//!   growing backoff, held, mailed once through a real SMTP server, listed, and once the
//!   input is repaired, released to a byte-identical build; damaged records and bad release
//!   commands are clear errors that change nothing;
//! - SIGKILL of the runner daemon itself at each of its state changes (take, done, requeue,
//!   hold) loses no job: after each crash every planned job is in a queue, a running
//!   record, `done/` or `held/`, and a restarted daemon finishes byte-identical.

mod common;

use common::fixture::{self, ADDQ, DBSTATUS, JOBRUNNER, text};
use common::site::assert_same_build;
use nowdb::queue::file::Queue;
use nowdb::queue::{QueueLine, done, held};
use nowdb::runner::record;
use nowdb::solve::{Job, Site};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// 2..N pieces built in one process (`jobrunner build-local`), once per N for all tests.
fn reference(pieces: u32) -> &'static Path {
    static R4: OnceLock<PathBuf> = OnceLock::new();
    static R5: OnceLock<PathBuf> = OnceLock::new();
    let cell = if pieces == 4 { &R4 } else { &R5 };
    cell.get_or_init(|| {
        let d = fixture::scratch("faults", &format!("reference{pieces}"));
        let n = pieces.to_string();
        let out = fixture::run(
            JOBRUNNER,
            &d,
            &["build-local", "--pieces", &n, "--runners", "2"],
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        d
    })
}

/// `[jobs]` for a test site (and more tables after it).
fn write_hosts(site: &Path, max_attempts: u32, rest: &str) {
    std::fs::write(
        site.join("hosts.toml"),
        format!("[jobs]\nmax_attempts = {max_attempts}\nretry_backoff_secs = 1\n\n{rest}"),
    )
    .unwrap();
}

/// A daemon in the background, its stderr in a file of the site (never a pipe nobody reads).
fn spawn(mut cmd: Command, site: &Path, name: &str) -> Child {
    let err = std::fs::File::create(site.join(format!("{name}.stderr"))).unwrap();
    cmd.stdout(Stdio::null()).stderr(err).spawn().unwrap()
}

fn read_stderr(site: &Path, name: &str) -> String {
    std::fs::read_to_string(site.join(format!("{name}.stderr"))).unwrap_or_default()
}

fn tail(s: &str) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(25)..].join("\n")
}

/// The jobs the plan queued (read before any runner starts).
fn planned(site: &Path) -> Vec<Job> {
    let mut jobs = Vec::new();
    for q in ["prime", "small"] {
        for (_, parsed) in Queue::named(site, q).unwrap().read_checked().unwrap() {
            if let Some(QueueLine::Job(j)) = parsed {
                jobs.push(j.job().unwrap());
            }
        }
    }
    assert!(!jobs.is_empty());
    jobs
}

/// A fresh site with `max_attempts` and the plan of 2..4 queued; the jobs it queued.
fn planned_site(name: &str, max_attempts: u32) -> (PathBuf, Vec<Job>) {
    let site = fixture::scratch("faults", name);
    write_hosts(&site, max_attempts, "");
    fixture::ok(ADDQ, &site, &["p", "plan", "2..4"]);
    let plan = planned(&site);
    (site, plan)
}

/// Where `job` is now: any of queue, running, done, held.
fn whereabouts(site: &Path, job: &Job) -> Vec<&'static str> {
    let s = Site::new(site);
    let mut at = Vec::new();
    let queued = ["prime", "small"].iter().any(|q| {
        Queue::named(site, q)
            .unwrap()
            .read_checked()
            .unwrap()
            .into_iter()
            .any(|(_, p)| matches!(p, Some(QueueLine::Job(j)) if j.job().unwrap() == *job))
    });
    if queued {
        at.push("queue");
    }
    let running = record::read_all(&s)
        .unwrap()
        .iter()
        .any(|(_, r)| r.job().unwrap().1 == *job);
    if running {
        at.push("running");
    }
    if done::record_path(&s, job).exists() {
        at.push("done");
    }
    if held::held_path(&s, job).exists() {
        at.push("held");
    }
    at
}

/// Every planned job is somewhere (`what` names the moment for the message).
fn assert_every_job_somewhere(site: &Path, plan: &[Job], what: &str) {
    for job in plan {
        assert!(
            !whereabouts(site, job).is_empty(),
            "{what}: {job} is in no queue, record, done/ or held/"
        );
    }
}

fn assert_every_job_done(site: &Path, plan: &[Job]) {
    let s = Site::new(site);
    for job in plan {
        assert!(done::record_path(&s, job).exists(), "{job} is not done");
    }
    assert!(
        record::read_all(&s).unwrap().is_empty(),
        "running records left"
    );
    assert!(
        held::list(&s).unwrap().iter().all(|j| j.done),
        "jobs not done"
    );
}

/// A running job process of the site, as (record path, record), chosen by `pick`.
fn running_children(site: &Path) -> Vec<(PathBuf, record::RunningRecord)> {
    record::read_all(&Site::new(site))
        .unwrap_or_default()
        .into_iter()
        .filter(|(_, r)| r.child != 0 && record::process_start(r.child) == Some(r.child_start))
        .collect()
}

/// SIGKILL a job process that has not ended, so that the kill is its exit status: the
/// process is stopped first and seen stopped. A process that already finished its work is a
/// zombie whose status no signal changes any more: `false`, nothing killed.
fn sigkill(pid: u32) -> bool {
    use nix::sys::signal::{Signal, kill};
    let pid = nix::unistd::Pid::from_raw(pid as i32);
    if kill(pid, Signal::SIGSTOP).is_err() {
        return false;
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match process_state(pid.as_raw()) {
            Some('T') => return kill(pid, Signal::SIGKILL).is_ok(),
            Some('Z' | 'X') | None => return false,
            Some(_) => {
                assert!(Instant::now() < deadline, "{pid} did not stop");
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }
}

/// The state letter of `/proc/<pid>/stat` (after the parenthesised command name).
fn process_state(pid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 1..].trim_start().chars().next()
}

#[test]
fn twenty_sigkilled_job_processes_lose_nothing_and_change_no_byte() {
    let site = fixture::scratch("faults", "twenty");
    // Kills at random moments hit the long jobs most; enough attempts that none is held.
    write_hosts(&site, 25, "");
    // Pairs from 300,000 positions are phase jobs of about a million positions, so kills hit
    // cap ... fill, build and ver jobs as well as whole-pair jobs.
    fixture::ok(
        ADDQ,
        &site,
        &[
            "--positions",
            "1048576",
            "--pair-below",
            "300000",
            "p",
            "plan",
            "2..5",
        ],
    );
    let plan = planned(&site);
    let runner = spawn(
        {
            let mut c = fixture::daemon(&site, 3);
            c.args(["--checkpoint-secs", "0"]);
            c
        },
        &site,
        "daemon",
    );
    let mut rng = nowdb::rng::XorShift::new(0x5eed_2026);
    let mut killed = Vec::new();
    let (mut phases, mut pairs) = (0, 0);
    let deadline = Instant::now() + Duration::from_secs(900);
    let mut child = runner;
    while killed.len() < 20 {
        assert!(Instant::now() < deadline, "20 kills did not happen");
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100 + rng.below(900)));
        let live = running_children(&site);
        if live.is_empty() {
            continue;
        }
        let (_, rec) = &live[rng.below(live.len() as u64) as usize];
        if sigkill(rec.child) {
            let job = rec.job().unwrap().1;
            match job.phase {
                nowdb::solve::Phase::Pair => pairs += 1,
                _ => phases += 1,
            }
            killed.push(job);
        }
    }
    let status = child.wait().unwrap();
    let err = read_stderr(&site, "daemon");
    assert!(
        status.success(),
        "the build did not end by itself: {}",
        tail(&err)
    );
    assert_eq!(
        killed.len(),
        20,
        "the build ended before 20 kills: {}",
        tail(&err)
    );
    assert!(
        pairs > 0 && phases > 0,
        "pair jobs {pairs}, phase jobs {phases} killed"
    );
    assert_same_build(reference(5), &site, "build with 20 SIGKILLed jobs");
    assert_every_job_done(&site, &plan);
    for job in &killed {
        assert!(done::record_path(&Site::new(&site), job).exists());
    }
    // Each kill is one attempt, named SIGKILL (every kill landed before its job ended).
    let states = held::list(&Site::new(&site)).unwrap();
    let attempts: Vec<held::Attempt> = states
        .iter()
        .flat_map(|s| s.attempts.as_ref().unwrap().clone())
        .collect();
    assert_eq!(attempts.len(), 20, "{attempts:?}");
    assert!(attempts.iter().all(|a| a.status == "signal 9 (SIGKILL)"));
    assert!(err.contains("FAILED"), "{}", tail(&err));
    let _ = std::fs::remove_dir_all(&site);
}

#[test]
fn a_job_killed_once_is_retried_and_its_runners_next_job_leaves_its_records_alone() {
    let (site, plan) = planned_site("once", 3);
    let mut d = spawn(fixture::daemon(&site, 1), &site, "daemon");
    // The first job process caught before it ends.
    let deadline = Instant::now() + Duration::from_secs(120);
    let (path, rec) = loop {
        assert!(Instant::now() < deadline, "no job killed");
        if let Some(found) = running_children(&site).into_iter().next()
            && sigkill(found.1.child)
        {
            break found;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let (_, job) = rec.job().unwrap();
    // The killed job's record is settled, the job queued again (or already retaken under a
    // new record), never lost.
    let deadline = Instant::now() + Duration::from_secs(60);
    while path.exists() {
        assert!(Instant::now() < deadline, "record not settled");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(!whereabouts(&site, &job).is_empty(), "{job} lost");
    assert!(
        d.wait().unwrap().success(),
        "{}",
        tail(&read_stderr(&site, "daemon"))
    );
    assert_same_build(reference(4), &site, "build with one killed job");
    assert_every_job_done(&site, &plan);
    let attempts = held::read_attempts(&Site::new(&site), &job).unwrap();
    assert_eq!(attempts.len(), 1, "{attempts:?}");
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    assert_eq!(attempts[0].record, format!("{name}@{}", rec.since));
    assert_eq!(attempts[0].status, "signal 9 (SIGKILL)");
    // Record names carry the runner's take and the job: the same runner's later jobs had
    // records of their own, and the log says the job ran again.
    let log = std::fs::read_to_string(site.join("logs/t.log")).unwrap();
    assert_eq!(log.matches("FAILED").count(), 1, "{}", tail(&log));
    assert!(log.contains(&format!(
        "attempt 1 of 3, requeued at the top of {}",
        rec.queue
    )));
    assert!(name.contains(&held::key(&job).replace('/', ".")), "{name}");
    let _ = std::fs::remove_dir_all(&site);
}

/// The 3-piece slice whose pair the fewest 4-piece pairs need, and those pairs.
fn least_needed_three_piece_slice() -> (nowdb::Slice, Vec<nowdb::slice::SlicePair>) {
    let plan = nowdb::slice::plan(4);
    let pairs: Vec<_> = plan.pairs().copied().collect();
    pairs
        .iter()
        .filter(|p| p.0.pieces() == 3)
        .map(|p| {
            let users: Vec<_> = pairs
                .iter()
                .filter(|q| q.0.pieces() == 4 && q.dependencies().contains(p))
                .copied()
                .collect();
            (p.0, users)
        })
        .filter(|(_, users)| !users.is_empty())
        .min_by_key(|(_, users)| users.len())
        .unwrap()
}

#[test]
fn a_job_that_always_fails_is_held_mailed_once_listed_and_released_to_the_same_bytes() {
    let site = fixture::scratch("faults", "held");
    let port = common::smtp::free_port();
    let server = common::smtp::SmtpServer::start(&site.join("maildir"), port);
    write_hosts(
        &site,
        3,
        &format!(
            "[mail]\ntransport = \"smtp\"\nsecurity = \"none\"\nserver = \"127.0.0.1\"\n\
             port = {port}\nfrom = \"nowdb@localhost\"\nto = [\"operator@localhost\"]\n\
             max_per_hour = 100\n"
        ),
    );
    // 2..3 first; then one of its solved slices is damaged and 2..4 planned.
    fixture::ok(ADDQ, &site, &["p", "plan", "2..3"]);
    assert!(fixture::daemon(&site, 2).output().unwrap().status.success());
    let (slice, users) = least_needed_three_piece_slice();
    let s = Site::new(&site);
    let input = s.solved_file(&slice);
    let good = std::fs::read(&input).unwrap();
    std::fs::write(&input, b"damaged by the test").unwrap();
    fixture::ok(ADDQ, &site, &["p", "plan", "2..4"]);
    let plan = planned(&site);
    let out = fixture::daemon(&site, 2).output().unwrap();
    let err = text(&out.stderr);
    assert!(!out.status.success(), "{}", tail(&err));
    // One message, once, naming the held jobs and the release command.
    assert_eq!(
        err.matches("held after failing").count(),
        1,
        "{}",
        tail(&err)
    );
    assert!(err.contains("--release all"), "{}", tail(&err));
    let held_jobs: Vec<held::JobState> = held::list(&s)
        .unwrap()
        .into_iter()
        .filter(|j| j.is_held(&Default::default()))
        .collect();
    // The pairs that read the damaged slice and whose other inputs were there are held; the
    // pairs that wait for those never ran.
    let users: Vec<String> = users.iter().map(|p| p.0.to_string()).collect();
    assert!(!held_jobs.is_empty());
    for j in &held_jobs {
        assert!(
            users.contains(&j.job.slice.to_string()),
            "{} does not read {slice}",
            j.key
        );
    }
    let users = held_jobs.len();
    for j in &held_jobs {
        assert!(err.contains(&j.key), "{} not named: {}", j.key, tail(&err));
        let a = j.attempts.as_ref().unwrap();
        assert_eq!(a.len(), 3, "{a:?}");
        assert!(a.iter().all(|a| a.status == "exit status 1"), "{a:?}");
        // The backoff doubles: 1 s, then 2 s.
        assert!(
            a[1].ended > a[0].ended && a[2].ended >= a[1].ended + 2,
            "{a:?}"
        );
        let kept = std::fs::read_to_string(site.join(a[2].output.as_ref().unwrap())).unwrap();
        assert!(kept.contains(&input.display().to_string()), "{kept}");
        assert!(
            !whereabouts(&site, &j.job).contains(&"queue"),
            "held is out of the queues"
        );
    }
    assert_every_job_somewhere(&site, &plan, "after the holds");
    // Listed by `dbstatus held`, as a table and as JSON.
    let listed = fixture::run(DBSTATUS, &site, &["held"]);
    let table = text(&listed.stdout);
    assert!(table.starts_with(&format!("# {users} held")), "{table}");
    let json: serde_json::Value =
        serde_json::from_slice(&fixture::run(DBSTATUS, &site, &["--json", "held"]).stdout).unwrap();
    assert_eq!(json["tally"]["held"], users);
    assert_eq!(json["jobs"][0]["attempts"].as_array().unwrap().len(), 3);
    let summary = text(&fixture::run(DBSTATUS, &site, &["summary", "--pieces", "4"]).stdout);
    assert!(summary.contains(&format!("held {users}")), "{summary}");
    // Mailed once each, through the SMTP server.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mails = loop {
        let m: Vec<String> = server
            .messages()
            .into_iter()
            .map(|m| m.replace("=\r\n", "").replace("\r\n", "\n"))
            .collect();
        let n: usize = m
            .iter()
            .map(|m| m.matches("failed 3 time(s) and is held").count())
            .sum();
        if n >= users || Instant::now() > deadline {
            break m;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    for j in &held_jobs {
        let n: usize = mails
            .iter()
            .map(|m| m.matches(&format!("--release {}", j.key)).count())
            .sum();
        assert_eq!(n, 1, "{} mailed {n} times", j.key);
    }

    // Bad commands are clear errors and change nothing.
    let queues = |site: &Path| {
        ["prime", "small"].map(|q| std::fs::read(site.join("queues").join(q)).unwrap_or_default())
    };
    let before = queues(&site);
    let done_job = held::key(&plan[0]);
    for (args, needle) in [
        (vec!["--release", "2200"], "no held job matches \"2200\""),
        (vec!["--release", done_job.as_str()], "is not held"),
        (vec!["--release", "nonsense/x"], "is not a job name"),
        (vec!["--remove", held_jobs[0].key.as_str()], "add --yes"),
    ] {
        let out = fixture::run(ADDQ, &site, &args);
        assert!(!out.status.success(), "{args:?}");
        assert!(
            text(&out.stderr).contains(needle),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    assert_eq!(queues(&site), before);
    assert_eq!(held::list(&s).unwrap().len(), held_jobs.len());

    // A damaged held record: an error naming the file, and the job still held.
    let damaged = held::held_path(&s, &held_jobs[0].job);
    std::fs::write(&damaged, "{\"job\": ").unwrap();
    let listed = text(&fixture::run(DBSTATUS, &site, &["held"]).stdout);
    assert!(listed.contains(&damaged.display().to_string()), "{listed}");
    assert!(
        listed.contains(&format!("{}\theld", held_jobs[0].key)),
        "{listed}"
    );

    // Repaired, released, finished: the same bytes as a build that never failed.
    std::fs::write(&input, good).unwrap();
    let released = fixture::ok(ADDQ, &site, &["--release", "all"]);
    assert_eq!(released.lines().count(), users, "{released}");
    assert!(held::list(&s).unwrap().is_empty());
    let out = fixture::daemon(&site, 2).output().unwrap();
    assert!(out.status.success(), "{}", tail(&text(&out.stderr)));
    assert_same_build(reference(4), &site, "released build");
    assert_every_job_done(&site, &plan);
    let _ = std::fs::remove_dir_all(&site);
}

#[test]
fn sigkill_of_the_daemon_at_each_state_change_loses_no_job() {
    // Every crash of the daemon costs its running jobs an attempt.
    let (site, plan) = planned_site("daemon", 20);
    let mut rng = nowdb::rng::XorShift::new(20);
    // The last crash is at a hold: one attempt allowed, so the first failure holds its job.
    let points = [
        ("take.recorded", 20),
        ("take.done", 20),
        ("done.recorded", 20),
        ("done.advanced", 20),
        ("settle.counted", 20),
        ("settle.queued", 20),
        ("settle.held", 1),
    ];
    for (k, &(point, max_attempts)) in points.iter().enumerate() {
        write_hosts(&site, max_attempts, "");
        let settle = point.starts_with("settle");
        let nth = if settle { 1 } else { 1 + rng.below(40) };
        let mut cmd = fixture::daemon(&site, 2);
        cmd.env("NOWDB_FAULT", format!("{point}=kill@{nth}"));
        let name = format!("crash-{k}");
        let mut d = spawn(cmd, &site, &name);
        // The settle points are reached when a job ends badly (kill one), or when the
        // daemon settles the records an earlier crash left.
        if settle {
            let deadline = Instant::now() + Duration::from_secs(60);
            while d.try_wait().unwrap().is_none() {
                assert!(Instant::now() < deadline, "no job to kill");
                if let Some((_, r)) = running_children(&site).into_iter().next()
                    && sigkill(r.child)
                {
                    break;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        let status = d.wait().unwrap();
        let err = read_stderr(&site, &name);
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(9), "{point}: {}", tail(&err));
        assert!(
            err.contains(&format!("fault point {point}")),
            "{}",
            tail(&err)
        );
        // The job processes of the dead daemon checkpoint and end (they were told SIGTERM).
        let deadline = Instant::now() + Duration::from_secs(60);
        while !running_children(&site).is_empty() {
            assert!(
                Instant::now() < deadline,
                "job processes outlived their runner"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_every_job_somewhere(&site, &plan, &format!("after a crash at {point}"));
    }
    // The held job released, a daemon without faults settles the dead daemons' records and
    // finishes.
    write_hosts(&site, 20, "");
    let released = fixture::ok(ADDQ, &site, &["--release", "all"]);
    assert!(released.starts_with("released "), "{released}");
    let out = fixture::daemon(&site, 2).output().unwrap();
    assert!(out.status.success(), "{}", tail(&text(&out.stderr)));
    assert_same_build(reference(4), &site, "build through seven daemon crashes");
    assert_every_job_done(&site, &plan);
    // A crash between counting an attempt and settling its record counted it once.
    for s in held::list(&Site::new(&site)).unwrap() {
        let a = s.attempts.unwrap();
        let mut ids: Vec<&str> = a.iter().map(|a| a.record.as_str()).collect();
        ids.dedup();
        assert_eq!(ids.len(), a.len(), "{}: {a:?}", s.key);
    }
    let _ = std::fs::remove_dir_all(&site);
}

#[test]
fn a_hung_job_is_reported_then_killed_and_counted() {
    let site = fixture::scratch("faults", "hung");
    std::fs::write(
        site.join("hosts.toml"),
        "[jobs]\nmax_attempts = 1\nstall_secs = 10\n",
    )
    .unwrap();
    fixture::ok(ADDQ, &site, &["p", "plan", "2..2"]);
    let t0 = Instant::now();
    // Every job process sleeps at its start, as on a dead network mount.
    let out = fixture::daemon(&site, 1)
        .env("NOWDB_FAULT", "job.start=hang")
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert!(!out.status.success(), "{}", tail(&err));
    assert!(t0.elapsed() >= Duration::from_secs(20), "killed too soon");
    assert!(err.contains("has had no CPU time for 1"), "{}", tail(&err));
    assert!(err.contains("sent SIGKILL"), "{}", tail(&err));
    let s = Site::new(&site);
    let held: Vec<held::JobState> = held::list(&s).unwrap();
    assert_eq!(held.len(), 1, "{}", tail(&err));
    let a = held[0].attempts.as_ref().unwrap();
    assert!(a[0].status.starts_with("hung: no CPU time for 2"), "{a:?}");
    let alerts: Vec<String> = std::fs::read_dir(site.join("mail/outbox"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    assert!(
        alerts.iter().any(|m| m.contains("job hung: ")),
        "{alerts:?}"
    );
    assert!(
        alerts.iter().any(|m| m.contains("job held: ")),
        "{alerts:?}"
    );
    let _ = std::fs::remove_dir_all(&site);
}

/// The site's disk fills during a build (a 2 MB tmpfs in a private mount namespace; needs
/// root, as CI has): the job that finds too little room for its pages is refused before it
/// writes, goes back to the top of its queue without using an attempt, and the runner waits
/// (the operator alerted once); once the disk is larger the build ends byte-identical, with
/// no attempt counted and nothing held.
#[test]
fn a_full_disk_costs_no_attempt_waits_for_room_and_changes_no_byte() {
    let (src, plan) = planned_site("fullsrc", 1);
    let (mnt, out) = (
        fixture::scratch("faults", "fullmnt"),
        fixture::scratch("faults", "fullout"),
    );
    let err = out.join("daemon.stderr");
    let (s, o, e, src_s) = (mnt.display(), out.display(), err.display(), src.display());
    let script = format!(
        r#"set -u
mount -t tmpfs -o size=2m tmpfs {s} || exit 90
cp -a {src_s}/. {s}/
{JOBRUNNER} --site {s} daemon --host t --queues pm --poll-secs 0.3 --runners 1 --until-empty 2> {e} &
pid=$!
i=0
until grep -q "too little disk space" {e}; do sleep 0.1; i=$((i+1)); [ $i -gt 1800 ] && break; done
sleep 3
mount -o remount,size=64m {s} || exit 91
wait $pid; echo "daemon $?"
cp -a {s}/. {o}/
"#
    );
    let run = Command::new("unshare")
        .args(["-m", "sh", "-c", &script])
        .output()
        .unwrap();
    let said = text(&run.stdout);
    let log = std::fs::read_to_string(&err).unwrap_or_default();
    assert!(
        said.contains("daemon 0"),
        "{said} {}\n{}",
        text(&run.stderr),
        tail(&log)
    );
    // Where the disk filled first decides who met it: a job (refused before writing a page,
    // or unable to write its report) or the runner's own queue and record files.
    let full: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("too little disk space"))
        .collect();
    assert!(!full.is_empty(), "the disk never filled: {}", tail(&log));
    for l in &full {
        assert!(l.contains("this host's runners take no job for"), "{l}");
        if l.contains("too little disk space for") {
            assert!(l.contains("no attempt used"), "{l}");
        }
    }
    assert!(log.contains("the disk has room again"), "{}", tail(&log));
    assert_same_build(reference(4), &out, "build through a full disk");
    assert_every_job_done(&out, &plan);
    let site = Site::new(&out);
    for job in &plan {
        assert!(
            held::read_attempts(&site, job).unwrap().is_empty(),
            "{job} used an attempt"
        );
    }
    let alerts: Vec<String> = std::fs::read_dir(out.join("mail/outbox"))
        .map(|d| {
            d.map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
                .filter(|m| m.contains("disk full on t"))
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(alerts.len(), 1, "{alerts:?}");
    for d in [&src, &mnt, &out] {
        let _ = std::fs::remove_dir_all(d);
    }
}

/// A job's range.
type Range = (u64, u64);

/// The jobs of a dry-run site: each job's range, from the queue lines, the running records
/// and the done records, counted where each is.
fn where_dry_jobs(site: &Path) -> (Vec<Range>, Vec<Range>, Vec<Range>) {
    let s = Site::new(site);
    let range = |j: Job| (j.first, j.last);
    let queued: Vec<_> = Queue::named(site, "p")
        .unwrap()
        .read_checked()
        .unwrap()
        .into_iter()
        .filter_map(|(_, l)| match l {
            Some(QueueLine::Job(q)) => Some(range(q.job().unwrap())),
            _ => None,
        })
        .collect();
    let running: Vec<_> = record::read_all(&s)
        .unwrap()
        .into_iter()
        .map(|(_, r)| range(r.job().unwrap().1))
        .collect();
    // The library's listing: a record being written (`.NAME.PID.tmp`) is not yet done.
    let done = done::names(&s, &"2222.66".parse().unwrap())
        .unwrap()
        .into_iter()
        .map(|(_, n)| (n.first, n.last))
        .collect();
    (queued, running, done)
}

#[test]
fn a_daemon_killed_inside_a_take_of_many_jobs_or_stopped_with_them_loses_none() {
    let site = fixture::scratch("faults", "many-takes");
    fixture::ok(
        ADDQ,
        &site,
        &["--positions", "1000000", "p", "lookup", "2222.66"],
    );
    let planned = where_dry_jobs(&site).0;
    assert!(planned.len() > 1000, "{} jobs", planned.len());
    let dry = |extra: &[&str], env: Option<String>| {
        let mut c = fixture::command(JOBRUNNER, &site);
        c.args([
            "daemon",
            "--dry-run",
            "--host",
            "t",
            "--queues",
            "p",
            "--runners",
            "8",
        ])
        .args(["--poll-secs", "0.3"])
        .args(extra);
        if let Some(e) = env {
            c.env("NOWDB_FAULT", e);
        }
        c
    };
    let killed = |point: &str| {
        let out = dry(&["--until-empty"], Some(format!("{point}=kill@1")))
            .output()
            .unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(out.status.signal(), Some(9), "{}", tail(&text(&out.stderr)));
    };
    // Killed with eight records written and the lines still in the queue: each job is in
    // two places, never in none.
    killed("take.recorded");
    let (queued, running, done) = where_dry_jobs(&site);
    assert_eq!(queued, planned);
    assert_eq!(running.len(), 8, "one take for the eight runners");
    assert!(running.iter().all(|r| queued.contains(r)) && done.is_empty());
    // The next daemon settles them without queueing them twice, takes eight, and is killed
    // with them in their records only.
    killed("take.done");
    let (queued, running, _) = where_dry_jobs(&site);
    assert_eq!(running.len(), 8, "{running:?}");
    assert_eq!(queued.len() + running.len(), planned.len());
    assert!(running.iter().all(|r| !queued.contains(r)));
    // SIGTERM while the runners hold jobs of a second each: they are requeued together at
    // the top, in the order of their ranges, with no attempt used.
    let mut d = spawn(dry(&["--dry-run-secs", "1"], None), &site, "stopped");
    let deadline = Instant::now() + Duration::from_secs(60);
    while where_dry_jobs(&site).2.len() < 8 {
        assert!(Instant::now() < deadline, "no job finished");
        std::thread::sleep(Duration::from_millis(50));
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(d.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    assert!(d.wait().unwrap().success());
    let err = read_stderr(&site, "stopped");
    let (queued, running, done) = where_dry_jobs(&site);
    assert!(running.is_empty(), "{running:?}\n{}", tail(&err));
    assert_eq!(queued.len() + done.len(), planned.len(), "{}", tail(&err));
    let requeued = err
        .matches("(stopped at a checkpoint): requeued at the top")
        .count();
    assert!(requeued >= 1, "{}", tail(&err));
    let top: Vec<(u64, u64)> = queued[..requeued].to_vec();
    let mut sorted = top.clone();
    sorted.sort();
    assert_eq!(top, sorted, "requeued in the order of their ranges");
    // The rest drains, each job done once.
    let out = dry(&["--until-empty"], None).output().unwrap();
    assert!(out.status.success(), "{}", tail(&text(&out.stderr)));
    let (queued, running, mut done) = where_dry_jobs(&site);
    assert!(queued.is_empty() && running.is_empty());
    done.sort();
    let mut all = planned.clone();
    all.sort();
    assert_eq!(done, all);
    assert!(
        held::list(&Site::new(&site)).unwrap().is_empty(),
        "no attempt used"
    );
    std::fs::remove_dir_all(&site).unwrap();
}
