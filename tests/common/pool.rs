//! Watching a pool of runners work on a site (the workstation cluster and the Slurm pilots):
//! what a failed wait prints, waiting for a job worth interrupting, whether it is still in
//! the middle, and whether the build is finished.

use nowdb::queue::QueueLine;
use nowdb::queue::done;
use nowdb::queue::file::Queue;
use nowdb::runner::record::{self, RunningRecord};
use nowdb::solve::{Site, checkpoint};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What a failed wait prints: the last lines of every log, the running records, heartbeats,
/// queue lengths and pilot records of the site.
pub fn diagnostics(site: &Path) -> String {
    let mut out = String::new();
    let tail = |path: &Path, n: usize| {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(n)..].join("\n")
    };
    for dir in [
        "logs",
        "running",
        "heartbeats",
        "queues",
        "pause",
        "slurm/pilots",
    ] {
        let mut names: Vec<PathBuf> = std::fs::read_dir(site.join(dir))
            .into_iter()
            .flatten()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_file())
            .collect();
        names.sort();
        for path in names {
            let n = if dir == "logs" { 25 } else { 3 };
            out += &format!("--- {}\n{}\n", path.display(), tail(&path, n));
        }
    }
    out
}

/// Waits for a running record that `accept` takes, of a job on a range of 4+ pages whose
/// child runs and that has a checkpoint: a job worth interrupting.
pub fn wait_for_long_job(
    site: &Path,
    deadline: Instant,
    accept: impl Fn(&RunningRecord) -> bool,
) -> (PathBuf, RunningRecord) {
    let s = Site::new(site);
    loop {
        assert!(
            Instant::now() < deadline,
            "no runner ran a long job\n{}",
            diagnostics(site)
        );
        for (path, rec) in record::read_all(&s).unwrap_or_default() {
            let Ok((_, job)) = rec.job() else { continue };
            if rec.child != 0
                && accept(&rec)
                && job.last - job.first >= 4 * 32768
                && s.checkpoint_file(&job).exists()
            {
                return (path, rec);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether the job of `rec` is still in the middle: its record is there, the job is not
/// done (a stop after the done record, before the running record goes, costs no attempt)
/// and its checkpoint is not the final one (a job child that had finished before its daemon
/// recorded it is run again from its complete checkpoint, not resumed: these jobs take a
/// tenth of a second, so the tests met that window).
pub fn still_running(site: &Path, path: &Path, rec: &RunningRecord) -> bool {
    let (_, job) = rec.job().unwrap();
    let s = Site::new(site);
    std::fs::read_to_string(path).is_ok_and(|t| t.contains(&rec.line))
        && !done::record_path(&s, &job).exists()
        && matches!(checkpoint::load(&s, &job), Ok(Some(c)) if !c.complete)
}

/// The node the multi-machine tests build through the queues, with what it needs: 2 kings
/// and a man against 2 kings. The kings-only pair it promotes into (2300/3200, 4.0 M
/// positions) gives the phase jobs of 8 pages that are interrupted; the smaller pairs give 46
/// pair jobs. All of 2..5 is 1,278 jobs, and over sshfs each costs most of a second of lock
/// files and records; the runner tests build the whole of 2..5 through the queues on a local
/// disk.
pub const NODE: &str = "2210";

/// Whether the build of [`NODE`] is finished: no job queued, none running, every slice of
/// it and of what it needs verified.
pub fn build_finished(site: &Path) -> bool {
    let s = Site::new(site);
    let queued: usize = ["prime", "nonprime", "slow", "small"]
        .iter()
        .map(|q| {
            std::fs::read_to_string(site.join("queues").join(q))
                .unwrap_or_default()
                .lines()
                .count()
        })
        .sum();
    let node: nowdb::slice::Selection = NODE.parse().unwrap();
    let verified = nowdb::slice::with_dependencies(&node.0, 5)
        .unwrap()
        .iter()
        .all(|p| {
            p.slices()
                .iter()
                .all(|x| nowdb::solve::stage::verified_marker(&s, x).exists())
        });
    queued == 0 && record::read_all(&s).unwrap_or_default().is_empty() && verified
}

/// Queues [`NODE`] and what it needs for a pool as the multi-machine tests do: phase jobs from
/// 2 M positions, split into ranges of 262,144 (8 pages) so that jobs have checkpoints to
/// resume from.
pub fn queue_plan_of_phase_jobs(site: &Path) {
    let plan = [
        "--positions",
        "262144",
        "--pair-below",
        "2097152",
        "p",
        "plan",
        "2..5",
        "--only",
        NODE,
    ];
    super::fixture::ok(super::fixture::ADDQ, site, &plan);
}

/// The same slices built in one process at `reference`, to compare the pool's bytes with.
pub fn build_in_process(reference: &Path) {
    super::fixture::ok(
        super::fixture::JOBRUNNER,
        reference,
        &[
            "build-local",
            "--pieces",
            "5",
            "--only",
            NODE,
            "--runners",
            "2",
        ],
    );
}

/// The first job line of the prime queue ("" when it has none).
pub fn top_line(site: &Path) -> String {
    Queue::named(site, "p")
        .unwrap()
        .read_checked()
        .unwrap()
        .into_iter()
        .find_map(|(e, p)| matches!(p, Some(QueueLine::Job(_))).then_some(e.text))
        .unwrap_or_default()
}

/// Whether runner logs `logs` show `job` run from a checkpoint (its process's JSON report
/// says where it resumed).
pub fn resumed_in(logs: &str, job: &nowdb::solve::Job) -> bool {
    logs.lines().any(|l| {
        l.contains(&format!("\"job\":\"{job}\",\"resumed_from\":"))
            && !l.contains("\"resumed_from\":null")
    })
}
