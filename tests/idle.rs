//! Waiting costs nothing (issue 43): a runner daemon or a Slurm pilot with nothing to run
//! sleeps until something that matters changes, instead of reading the queues thousands of
//! times a second. Each test reads the process's CPU time from `/proc/<pid>/stat` over
//! [`WINDOW`] and wants at most 1 % of a core; it also counts the read system calls
//! (`/proc/<pid>/io`), the wake-ups the bug was made of, and checks that every thread of
//! the daemon runs at nice 1: the kernel counts a niced thread's time as nice time, which
//! `wswatch` does not count as a user's.
//!
//! - a daemon on a finished site (its queues empty), and a job queued while it waits is
//!   still taken at once (long before its poll interval);
//! - a daemon whose only queued job waits for a pair that another host is solving;
//! - a Slurm pilot (`jobrunner pilot`, in the environment Slurm gives it) waiting while a
//!   job runs elsewhere.
//!
//! The three are watched side by side, so the test takes about one window.

mod common;

use common::fixture::{self, ADDQ, JOBRUNNER, text};
use nowdb::lock::Machine;
use nowdb::runner::record::{RunningRecord, process_start};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// How long each waiting process is watched.
const WINDOW: Duration = Duration::from_secs(30);

/// The most CPU a waiting process may use over the window, as a share of one core.
const MOST_CPU: f64 = 0.01;

/// The most read system calls over the window: a look at the queues every poll interval
/// and a heartbeat every 10 s take a few hundred; the spinning daemon made some 100,000 a
/// second.
const MOST_READS: u64 = 3_000;

/// CPU seconds of `pid` and of its children it has waited for.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // The fields after the command name, which is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // utime, stime, cutime, cstime are fields 14..=17 of the whole line: 11..=14 here.
    let ticks: u64 = f[11..=14].iter().map(|v| v.parse::<u64>().unwrap()).sum();
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    ticks as f64 / hz
}

/// Read system calls of `pid` so far (all its threads).
fn read_calls(pid: u32) -> u64 {
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).unwrap();
    io.lines()
        .find_map(|l| l.strip_prefix("syscr: "))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// The nice value of every thread of `pid`.
fn thread_nices(pid: u32) -> Vec<i64> {
    let mut nices = Vec::new();
    for t in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        let Ok(stat) = std::fs::read_to_string(t.unwrap().path().join("stat")) else {
            continue;
        };
        let rest = &stat[stat.rfind(')').unwrap() + 2..];
        // nice is field 19 of the whole line.
        nices.push(rest.split_whitespace().nth(16).unwrap().parse().unwrap());
    }
    nices
}

/// A process under test, stopped (SIGTERM, then waited for) when dropped, a failed
/// assertion too: a daemon left behind would spin on through the rest of the suite.
struct Waiter(Child);

impl Drop for Waiter {
    fn drop(&mut self) {
        let pid = nix::unistd::Pid::from_raw(self.0.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let _ = self.0.wait();
    }
}

/// What a watched process used over the window.
struct Use {
    cpu: f64,
    reads: u64,
    secs: f64,
}

/// Watches each `(process, site, what)` (all started a moment ago) side by side for
/// [`WINDOW`] after they settle, and checks that each used no more than [`MOST_CPU`] and
/// [`MOST_READS`] and runs at the daemon's nice value.
fn assert_sleep(watched: &mut [(&mut Waiter, &Path, &str)]) {
    // Start-up (reading the site, the first look at the queues) is not waiting.
    std::thread::sleep(Duration::from_secs(3));
    let sample = |w: &mut Waiter, site: &Path, what: &str| {
        assert!(
            w.0.try_wait().unwrap().is_none(),
            "{what}: ended instead of waiting\n{}",
            log_of(site)
        );
        (cpu_seconds(w.0.id()), read_calls(w.0.id()), Instant::now())
    };
    let first: Vec<_> = watched
        .iter_mut()
        .map(|(w, s, what)| sample(w, s, what))
        .collect();
    std::thread::sleep(WINDOW);
    for ((w, site, what), (cpu0, reads0, t0)) in watched.iter_mut().zip(first) {
        let (cpu1, reads1, t1) = sample(w, site, what);
        let u = Use {
            cpu: cpu1 - cpu0,
            reads: reads1 - reads0,
            secs: (t1 - t0).as_secs_f64(),
        };
        let share = u.cpu / u.secs;
        eprintln!(
            "{what}: {:.2} CPU s over {:.1} s ({:.2} % of a core), {} read calls",
            u.cpu,
            u.secs,
            100.0 * share,
            u.reads
        );
        assert!(
            share <= MOST_CPU,
            "{what}: {:.1} % of a core while waiting (at most {} %)\n{}",
            100.0 * share,
            100.0 * MOST_CPU,
            log_of(site)
        );
        assert!(
            u.reads <= MOST_READS,
            "{what}: {} read calls in {:.0} s while waiting (at most {MOST_READS})",
            u.reads,
            u.secs
        );
        let nices = thread_nices(w.0.id());
        let nice = nowdb::runner::DAEMON_NICE as i64;
        assert!(
            nice > 0 && !nices.is_empty() && nices.iter().all(|&n| n == nice),
            "{what}: its threads run at nice {nices:?}, not {nice}"
        );
    }
}

/// Every log of the site, for a failure's message.
fn log_of(site: &Path) -> String {
    let mut all = String::new();
    if let Ok(dir) = std::fs::read_dir(site.join("logs")) {
        for e in dir.flatten() {
            all += &std::fs::read_to_string(e.path()).unwrap_or_default();
        }
    }
    all
}

/// A daemon of host `t` on queues p and m, without `--until-empty`, its output in files.
fn spawn_daemon(site: &Path, poll_secs: &str) -> Waiter {
    Waiter(
        fixture::command(JOBRUNNER, site)
            .args(["daemon", "--host", "t", "--queues", "pm", "--runners", "2"])
            .args(["--poll-secs", poll_secs])
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(site.join("daemon.stderr")).unwrap())
            .spawn()
            .unwrap(),
    )
}

/// A running record saying that host `ws1` (this live process stands for its runner) runs
/// `line`.
fn runs_elsewhere(site: &Path, line: &str) {
    std::fs::create_dir_all(site.join("running")).unwrap();
    RunningRecord {
        host: "ws1".into(),
        boot_id: Machine::current().unwrap().boot_id,
        pid: std::process::id(),
        pid_start: process_start(std::process::id()).unwrap(),
        child: 0,
        child_start: 0,
        queue: "small".into(),
        line: line.into(),
        since: 1,
        failed: None,
    }
    .write(&site.join("running/ws1-1-0-0.x"), true)
    .unwrap();
}

/// A site whose only queued job, the pair 1200.--, waits for the pair 1100.--, which host
/// `ws1` is solving. Returns the queue's text.
fn waiting_for_another_host(site: &Path) -> String {
    fixture::ok(ADDQ, site, &["p", "plan", "2..3", "--only", "2100"]);
    let small = site.join("queues/small");
    let queued = std::fs::read_to_string(&small).unwrap();
    let lines: Vec<&str> = queued.lines().collect();
    assert_eq!(lines.len(), 2, "{queued}");
    assert!(lines[0].starts_with("pair 1100.--"), "{queued}");
    runs_elsewhere(site, lines[0]);
    let left = format!("{}\n", lines[1]);
    std::fs::write(&small, &left).unwrap();
    left
}

#[test]
fn waiting_daemons_and_pilots_sleep_and_a_new_job_is_still_taken_at_once() {
    // A finished site: its queues empty, nothing running.
    let finished = fixture::scratch("idle", "finished");
    fixture::ok(ADDQ, &finished, &["p", "plan", "2..4"]);
    let out = fixture::daemon(&finished, 2).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    // A poll interval far longer than the wake-up wanted below: only inotify can be quick.
    let mut idle = spawn_daemon(&finished, "60");

    let dependency = fixture::scratch("idle", "dependency");
    let left = waiting_for_another_host(&dependency);
    let mut waiting = spawn_daemon(&dependency, "5");

    let pilot_site = fixture::scratch("idle", "pilot");
    waiting_for_another_host(&pilot_site);
    let mut pilot = Waiter(
        fixture::fake_pilot(&pilot_site, 1, 2, &["--max-waiting", "1"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );

    assert_sleep(&mut [
        (&mut idle, &finished, "daemon on a finished site"),
        (
            &mut waiting,
            &dependency,
            "daemon waiting for another host's pair",
        ),
        (
            &mut pilot,
            &pilot_site,
            "Slurm pilot waiting for another host's pair",
        ),
    ]);
    // Nothing was taken while they waited.
    for site in [&dependency, &pilot_site] {
        assert_eq!(
            std::fs::read_to_string(site.join("queues/small")).unwrap(),
            left
        );
    }

    // Queued while the runners wait: taken at once (one stop line for each runner).
    let t0 = Instant::now();
    fixture::ok(ADDQ, &finished, &["p", "stop"]);
    fixture::ok(ADDQ, &finished, &["p", "stop"]);
    while idle.0.try_wait().unwrap().is_none() {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "two stop lines queued while the runners waited were not taken within 10 s\n{}",
            log_of(&finished)
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    eprintln!(
        "stop lines taken and the daemon ended {:.0} ms after addq",
        t0.elapsed().as_secs_f64() * 1e3
    );
}
