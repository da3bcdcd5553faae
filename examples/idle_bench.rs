//! What waiting costs, for one or more builds of the tools, measured in one run, alternating
//! (issue 43):
//!
//! - **idle**: a 2-runner daemon on a finished 2..4 site for `--idle-secs`: its CPU time as
//!   a share of a core and its read system calls a second (`/proc/<pid>/stat`, `/io`);
//! - **pickup**: with that daemon waiting (`--dry-run`, default 5 s poll), `--jobs` jobs
//!   queued one at a time by `addq`: the time from `addq`'s exit to the job's take (its line
//!   gone from the queue file, watched by `stat`, which no watcher sees), p50 and p99;
//! - **build** (with `--pieces N`): 2..N through the queues, `addq p plan 2..N` and
//!   `jobrunner daemon --host local --queues pm --runners 2 --until-empty`, as
//!   `scripts/build-local` runs it: wall and CPU seconds (the daemon and its jobs).
//!
//! Each DIR holds a build's `jobrunner` and `addq` (e.g. `target/release`, or a copy of an
//! older build's). Run:
//! `cargo run --release --example idle_bench -- [--pieces 6] [--rounds 2] DIR...`

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Args {
    dirs: Vec<PathBuf>,
    pieces: Option<u32>,
    rounds: usize,
    idle_secs: u64,
    jobs: usize,
}

fn args() -> Args {
    let mut a = Args {
        dirs: Vec::new(),
        pieces: None,
        rounds: 1,
        idle_secs: 20,
        jobs: 200,
    };
    let mut it = std::env::args().skip(1);
    while let Some(w) = it.next() {
        let mut num = |what: &str| -> u64 {
            let v = it.next().unwrap_or_default();
            v.parse()
                .unwrap_or_else(|_| panic!("{what} {v:?}: not a number"))
        };
        match w.as_str() {
            "--pieces" => a.pieces = Some(num("--pieces") as u32),
            "--rounds" => a.rounds = num("--rounds") as usize,
            "--idle-secs" => a.idle_secs = num("--idle-secs"),
            "--jobs" => a.jobs = num("--jobs") as usize,
            "-h" | "--help" => {
                println!("idle_bench [--pieces N] [--rounds R] [--idle-secs S] [--jobs J] DIR...");
                std::process::exit(0);
            }
            d => a.dirs.push(PathBuf::from(d)),
        }
    }
    if a.dirs.is_empty() {
        a.dirs.push(PathBuf::from("target/release"));
    }
    for d in &a.dirs {
        for tool in ["jobrunner", "addq"] {
            assert!(d.join(tool).is_file(), "{}: no {tool} there", d.display());
        }
    }
    a
}

fn scratch(name: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("nowdb-idle-bench-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&p);
    std::fs::create_dir_all(&p).unwrap();
    p
}

fn ok(c: &mut Command) {
    let out = c.stdin(Stdio::null()).output().unwrap();
    assert!(
        out.status.success(),
        "{c:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn daemon(dir: &Path, site: &Path, extra: &[&str]) -> Command {
    let mut c = Command::new(dir.join("jobrunner"));
    c.arg("--site").arg(site).arg("daemon");
    c.args(["--host", "local", "--queues", "pm", "--runners", "2"]);
    c.args(extra).stdin(Stdio::null());
    c
}

/// CPU seconds of a live process (its own, and its reaped children's).
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let f: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..]
        .split_whitespace()
        .collect();
    let ticks: u64 = f[11..=14].iter().map(|v| v.parse::<u64>().unwrap()).sum();
    // SAFETY: sysconf has no preconditions.
    ticks as f64 / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64
}

fn read_calls(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/io"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("syscr: ")?.trim().parse().ok())
        .unwrap()
}

fn stop(mut c: Child) {
    let pid = nix::unistd::Pid::from_raw(c.id() as i32);
    let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
    let _ = c.wait();
}

/// (CPU share of a core, read calls a second) of an idle daemon on `finished`.
fn idle(dir: &Path, finished: &Path, secs: u64) -> (f64, f64) {
    let d = daemon(dir, finished, &[])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    let (c0, r0, t0) = (cpu_seconds(d.id()), read_calls(d.id()), Instant::now());
    std::thread::sleep(Duration::from_secs(secs));
    let (c1, r1) = (cpu_seconds(d.id()), read_calls(d.id()));
    let s = t0.elapsed().as_secs_f64();
    stop(d);
    ((c1 - c0) / s, (r1 - r0) as f64 / s)
}

/// Milliseconds from `addq`'s exit to the take, for `jobs` jobs queued one at a time.
fn pickup(dir: &Path, jobs: usize) -> Vec<f64> {
    let site = scratch("pickup");
    let d = daemon(dir, &site, &["--dry-run"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    let queue = site.join("queues/prime");
    let mut ms = Vec::new();
    for _ in 0..jobs {
        ok(Command::new(dir.join("addq"))
            .arg("--site")
            .arg(&site)
            .args(["p", "cap", "1100.--"]));
        let t0 = Instant::now();
        while std::fs::metadata(&queue).map(|m| m.len()).unwrap_or(0) > 0 {
            assert!(t0.elapsed() < Duration::from_secs(60), "not taken in 60 s");
            std::thread::sleep(Duration::from_micros(200));
        }
        ms.push(t0.elapsed().as_secs_f64() * 1e3);
        // The job's own time (a dry-run child) is not the next one's wait.
        std::thread::sleep(Duration::from_millis(50));
    }
    stop(d);
    let _ = std::fs::remove_dir_all(&site);
    ms.sort_by(f64::total_cmp);
    ms
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// (wall, CPU) seconds of 2..`pieces` through the queues from an empty site.
fn build(dir: &Path, pieces: u32) -> (f64, f64) {
    let site = scratch("build");
    ok(Command::new(dir.join("addq"))
        .arg("--site")
        .arg(&site)
        .args(["p", "plan", &format!("2..{pieces}")]));
    let before = children_cpu();
    let t0 = Instant::now();
    ok(&mut daemon(
        dir,
        &site,
        &["--until-empty", "--poll-secs", "1"],
    ));
    let wall = t0.elapsed().as_secs_f64();
    let cpu = children_cpu() - before;
    let _ = std::fs::remove_dir_all(&site);
    (wall, cpu)
}

/// CPU seconds of this process's reaped children (and theirs).
fn children_cpu() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let u = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut u);
        u
    };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    s(u.ru_utime) + s(u.ru_stime)
}

fn main() {
    let a = args();
    let finished = scratch("finished");
    let first = &a.dirs[0];
    ok(Command::new(first.join("addq"))
        .arg("--site")
        .arg(&finished)
        .args(["p", "plan", "2..4"]));
    ok(&mut daemon(first, &finished, &["--until-empty"]));
    for round in 1..=a.rounds {
        for dir in &a.dirs {
            let name = dir.display();
            let (share, reads) = idle(dir, &finished, a.idle_secs);
            println!(
                "round {round} {name}: idle daemon {:.2} % of a core, {reads:.0} read calls/s over {} s",
                100.0 * share,
                a.idle_secs
            );
            let ms = pickup(dir, a.jobs);
            println!(
                "round {round} {name}: addq to take, {} jobs: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
                ms.len(),
                percentile(&ms, 0.5),
                percentile(&ms, 0.99),
                ms[ms.len() - 1]
            );
            if let Some(p) = a.pieces {
                let (wall, cpu) = build(dir, p);
                println!(
                    "round {round} {name}: 2..{p} through the queues, 2 runners: {wall:.1} s wall, {cpu:.1} CPU s"
                );
            }
        }
    }
    let _ = std::fs::remove_dir_all(&finished);
}
