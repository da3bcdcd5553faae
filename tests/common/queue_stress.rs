//! The queue stress shared by tests/queue.rs and tests/sshfs.rs: streams of `addq`
//! processes adding jobs while real runner daemons (`jobrunner daemon --dry-run`, trivial
//! jobs) drain the queue; then every job must have run exactly once, by the `done/` records
//! and by the runners' logs.

use nowdb::Slice;
use nowdb::solve::store::PAGE_POSITIONS;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// A slice with at least `pages` pages, so that every job can have its own range.
pub fn slice_with_pages(pages: u64) -> Slice {
    nowdb::Material::all_with_pieces(8)
        .into_iter()
        .flat_map(|m| m.slices())
        .find(|s| s.count() >= pages * PAGE_POSITIONS)
        .expect("a big 8-piece slice")
}

fn start_runner(jobrunner: &str, site: &Path, host: &str) -> Child {
    Command::new(jobrunner)
        .arg("--site")
        .arg(site)
        .args([
            "daemon",
            "--dry-run",
            "--host",
            host,
            "--queues",
            "p",
            "--runners",
            "1",
            "--poll-secs",
            "0.2",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// 8 streams of `addq` processes (stream `p` on site `adder_sites[p % len]`) add
/// `per_stream` jobs each, one per process, every other one at the top, while 4 runner
/// daemons (runner `k` on `runner_sites[k % len]`, host `h<k % len>`) drain queue `p`; then
/// 4 `stop` lines end the runners. Asserts that every job ran exactly once (one done record
/// per range, one "done" log line per line), that nothing is left queued or running, and that
/// no lock was ever broken.
pub fn addq_streams_against_runners(
    addq: &str,
    jobrunner: &str,
    adder_sites: &[PathBuf],
    runner_sites: &[PathBuf],
    per_stream: u64,
) {
    let total = 8 * per_stream;
    let slice = slice_with_pages(total);
    let mut runners: Vec<Child> = (0..4)
        .map(|k| {
            let site = &runner_sites[k % runner_sites.len()];
            start_runner(jobrunner, site, &format!("h{}", k % runner_sites.len()))
        })
        .collect();
    let adders: Vec<_> = (0..8u64)
        .map(|p| {
            let site = adder_sites[p as usize % adder_sites.len()].clone();
            let addq = addq.to_string();
            let name = slice.to_string();
            std::thread::spawn(move || {
                for k in 0..per_stream {
                    let job = p * per_stream + k;
                    let (first, last) = (job * PAGE_POSITIONS, (job + 1) * PAGE_POSITIONS);
                    let (first, last, n) = (first.to_string(), last.to_string(), job.to_string());
                    let mut args = vec!["p", "cap", &name, &first, &last, "-n", &n];
                    if k % 2 == 1 {
                        args.insert(0, "--top");
                    }
                    let out = Command::new(&addq)
                        .arg("--site")
                        .arg(&site)
                        .args(&args)
                        .output()
                        .unwrap();
                    assert!(
                        out.status.success(),
                        "{}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                }
            })
        })
        .collect();
    for a in adders {
        a.join().unwrap();
    }
    for _ in 0..4 {
        let out = Command::new(addq)
            .arg("--site")
            .arg(&adder_sites[0])
            .args(["p", "stop"])
            .output()
            .unwrap();
        assert!(out.status.success());
    }
    let deadline = Instant::now() + Duration::from_secs(600);
    for r in &mut runners {
        loop {
            if let Some(status) = r.try_wait().unwrap() {
                assert!(status.success(), "a runner failed: {status}");
                break;
            }
            assert!(Instant::now() < deadline, "runners did not finish");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    let shared = &runner_sites[0];
    // One done record per range.
    let dir = shared.join("done").join(slice.to_string());
    let mut ranges: Vec<(u64, u64)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            let parts: Vec<&str> = name.split('-').collect();
            assert_eq!(parts.len(), 4, "{name}");
            (parts[2].parse().unwrap(), parts[3].parse().unwrap())
        })
        .collect();
    ranges.sort();
    let expected: Vec<(u64, u64)> = (0..total)
        .map(|j| (j * PAGE_POSITIONS, (j + 1) * PAGE_POSITIONS))
        .collect();
    assert_eq!(ranges, expected, "done records");
    // One "done" log line per job, over every runner's log.
    let mut done_lines: BTreeMap<String, usize> = BTreeMap::new();
    for e in std::fs::read_dir(shared.join("logs")).unwrap() {
        let text = std::fs::read_to_string(e.unwrap().path()).unwrap();
        assert!(!text.contains("broke the stale lock"), "{text}");
        for l in text.lines() {
            if let Some(rest) = l.split_once(" done \"").map(|x| x.1) {
                let line = rest.split('"').next().unwrap().to_string();
                *done_lines.entry(line).or_default() += 1;
            }
        }
    }
    assert_eq!(done_lines.len() as u64, total, "distinct jobs in the logs");
    assert!(
        done_lines.values().all(|&c| c == 1),
        "a job ran twice: {:?}",
        done_lines.iter().find(|x| *x.1 > 1)
    );
    // Records only: sshfs keeps a `.fuse_hidden*` copy of a file replaced while open.
    let running: Vec<_> = std::fs::read_dir(shared.join("running"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with('.'))
        .collect();
    assert!(running.is_empty(), "left running: {running:?}");
}
