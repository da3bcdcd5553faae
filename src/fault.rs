//! Named fault points for the fault tests: `NOWDB_FAULT=POINT=ACTION[@N]` (several separated
//! by commas) makes this process, the N-th time (default: the first) it reaches `POINT`, do
//! `ACTION`: `kill` (SIGKILL itself, as the OOM killer or a power cut would), `hang` (sleep
//! without end, as on a dead network mount), or `exit:CODE`. Without the variable a point
//! costs one relaxed atomic load.
//!
//! The points are the state changes a job goes through: in the runner daemon
//! `take.recorded` (the running records of a take written, its lines still in the queue
//! file), `take.done` (the jobs in their records only), `done.recorded` (the done record written, the
//! pair not moved on), `done.advanced` (the pair moved on, the running record still there),
//! `settle.counted` (an attempt or hold recorded, the queue not yet changed), `settle.held`
//! (a held record just written, the running record still there),
//! `settle.queued` (the job requeued, its running record still there); in a job process
//! `job.start`, and `mtc.checkpoint` (an `mtc` job not resumed has written a checkpoint);
//! in the local build `local.stage` (a durable pair's stage record written).

use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, Ordering};

/// 0: not read yet, 1: no faults, 2: faults configured.
static STATE: AtomicU8 = AtomicU8::new(0);
static FAULTS: Mutex<Vec<Fault>> = Mutex::new(Vec::new());

#[derive(Debug)]
struct Fault {
    point: String,
    action: String,
    nth: u64,
    seen: u64,
}

fn parse(spec: &str) -> Vec<Fault> {
    spec.split(',')
        .filter_map(|one| {
            let (point, rest) = one.trim().split_once('=')?;
            let (action, nth) = match rest.split_once('@') {
                Some((a, n)) => (a, n.parse().ok()?),
                None => (rest, 1),
            };
            Some(Fault {
                point: point.to_string(),
                action: action.to_string(),
                nth,
                seen: 0,
            })
        })
        .collect()
}

/// Reaching fault point `point`.
pub fn point(point: &str) {
    if STATE.load(Ordering::Relaxed) == 1 {
        return;
    }
    let mut faults = FAULTS.lock().unwrap_or_else(|e| e.into_inner());
    if STATE.load(Ordering::Relaxed) == 0 {
        *faults = std::env::var("NOWDB_FAULT")
            .map(|s| parse(&s))
            .unwrap_or_default();
        let state = if faults.is_empty() { 1 } else { 2 };
        STATE.store(state, Ordering::Relaxed);
    }
    let Some(f) = faults.iter_mut().find(|f| f.point == point) else {
        return;
    };
    f.seen += 1;
    if f.seen != f.nth {
        return;
    }
    let action = f.action.clone();
    drop(faults);
    eprintln!("nowdb fault point {point}: {action}");
    match action.as_str() {
        "kill" => {
            let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGKILL);
        }
        "hang" => loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        },
        other => {
            if let Some(code) = other.strip_prefix("exit:").and_then(|c| c.parse().ok()) {
                std::process::exit(code);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn specs_parse() {
        let f = super::parse("take.done=kill@3, job.start=exit:7,bad");
        assert_eq!(f.len(), 2);
        assert_eq!(
            (f[0].point.as_str(), f[0].action.as_str(), f[0].nth),
            ("take.done", "kill", 3)
        );
        assert_eq!((f[1].action.as_str(), f[1].nth), ("exit:7", 1));
    }
}
