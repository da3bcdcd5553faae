//! Queue figures (issue 5): an `addq` + take round trip on a queue of 100 000 jobs (target
//! under 20 ms), and jobs per second through 8 runners on trivial jobs (`jobrunner daemon
//! --dry-run`: each job is still a child process with its running and done records). Run:
//! `cargo bench --bench queue`.

use nowdb::queue::line::{QueueLine, mini_slices};
use nowdb::queue::{Machine, Queue};
use nowdb::solve::Phase;
use std::time::Instant;

fn main() {
    let dir = std::env::temp_dir().join(format!("nowdb-bench-queue-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let q = Queue::named(&dir, "p").unwrap();
    let here = Machine::current().unwrap();
    let mut log = |m: String| eprintln!("{m}");
    // 100 000 jobs: mini-slices of a large 8-piece slice, repeated.
    let slice = "2222.66".parse().unwrap();
    let jobs: Vec<QueueLine> = mini_slices(Phase::Lookup, false, slice, 1, 1 << 15)
        .into_iter()
        .map(QueueLine::Job)
        .cycle()
        .take(100_000)
        .collect();
    q.append(&here, &mut log, &jobs, false).unwrap();
    let bytes = std::fs::metadata(q.path()).unwrap().len();
    let mut times = Vec::new();
    for k in 0..30 {
        let t = Instant::now();
        q.append(&here, &mut log, &jobs[k..k + 1], false).unwrap();
        let got = q.take(&here, &mut log, |_| true).unwrap();
        times.push(t.elapsed().as_secs_f64() * 1e3);
        assert!(got.is_some());
    }
    times.sort_by(f64::total_cmp);
    println!(
        "addq + take round trip, queue of 100000 jobs ({:.1} MB): median {:.2} ms, best {:.2} ms, worst {:.2} ms",
        bytes as f64 / 1e6,
        times[times.len() / 2],
        times[0],
        times[times.len() - 1]
    );
    let _ = std::fs::remove_dir_all(&dir);
    runners_on_trivial_jobs(&dir, &jobs[..2000], 8);
}

/// `n` jobs through one daemon with `runners` runners until the queue is empty.
fn runners_on_trivial_jobs(dir: &std::path::Path, jobs: &[QueueLine], runners: usize) {
    let q = Queue::named(dir, "p").unwrap();
    let here = Machine::current().unwrap();
    q.append(&here, &mut |m| eprintln!("{m}"), jobs, false)
        .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_jobrunner"))
        .arg("--site")
        .arg(dir)
        .args([
            "--json",
            "daemon",
            "--dry-run",
            "--host",
            "bench",
            "--queues",
            "p",
        ])
        .args(["--runners", &runners.to_string(), "--until-empty"])
        .stderr(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success());
    let json = String::from_utf8_lossy(&out.stdout);
    let field = |k: &str| -> f64 {
        let at = json.find(&format!("\"{k}\":")).unwrap() + k.len() + 3;
        json[at..]
            .split([',', '}'])
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    println!(
        "{runners} runners on {} trivial jobs (jobrunner daemon --dry-run): {:.0} jobs/s ({:.2} s)",
        field("jobs"),
        field("jobs_per_second"),
        field("seconds")
    );
    let _ = std::fs::remove_dir_all(dir);
}
