//! What a runner daemon watches while its jobs run: stop requests (passed on to every job
//! process as SIGTERM, so each checkpoints), the host's heartbeat for wsmonitor, and jobs
//! that hang.
//!
//! A hung job is one whose process gets no CPU time and does no I/O: blocked in
//! uninterruptible sleep on a dead network mount, or waiting for something that never comes. A job stopped by wswatch
//! (SIGSTOP, state `T`) is not hung. After `stall_secs` without CPU time the runner logs and
//! mails an alert; after twice that it sends SIGKILL, and the job's end counts as a failed
//! attempt (`hung: ...`): it is retried from its checkpoint, on any host. A process in
//! uninterruptible sleep dies only when its system call returns; until then the runner waits
//! for it, having said so. (A job that spins without progress uses CPU time and is not
//! caught here; its checkpoints show it in `dbstatus runners`.)

use super::child::Interventions;
use crate::procfs::{Activity, activity};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How often the children's CPU time is read.
const SAMPLE: Duration = Duration::from_secs(2);

struct Watched {
    runner: usize,
    line: String,
    cpu: u64,
    since: Instant,
    alerted: bool,
    did: Interventions,
}

/// The job processes running now.
#[derive(Default)]
pub struct Children {
    map: Mutex<HashMap<u32, Watched>>,
}

/// What the supervisor asks the daemon to report.
pub enum Event {
    Hung {
        runner: usize,
        line: String,
        pid: u32,
        secs: u64,
        state: char,
    },
    Killed {
        runner: usize,
        line: String,
        pid: u32,
        secs: u64,
    },
}

fn signal(pid: u32, sig: nix::sys::signal::Signal) {
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), sig);
}

impl Children {
    pub fn add(&self, pid: u32, runner: usize, line: &str) {
        let cpu = activity(pid).map_or(0, |a| a.work);
        self.map.lock().expect("children").insert(
            pid,
            Watched {
                runner,
                line: line.to_string(),
                cpu,
                since: Instant::now(),
                alerted: false,
                did: Interventions::default(),
            },
        );
    }

    /// Forgets an ended child; what was done to it.
    pub fn remove(&self, pid: u32) -> Interventions {
        self.map
            .lock()
            .expect("children")
            .remove(&pid)
            .map(|w| w.did)
            .unwrap_or_default()
    }

    /// Passes a stop request on: SIGTERM to each child not yet told, then SIGCONT, since a
    /// suspended job (wswatch's SIGSTOP, a debugger, a batch system's suspend) cannot
    /// checkpoint until it runs again.
    pub fn stop_all(&self) {
        for (&pid, w) in self.map.lock().expect("children").iter_mut() {
            if !w.did.stopped {
                w.did.stopped = true;
                signal(pid, nix::sys::signal::Signal::SIGTERM);
                signal(pid, nix::sys::signal::Signal::SIGCONT);
            }
        }
    }

    /// One look at the children's CPU time (module documentation).
    pub fn check_stalls(&self, stall: Duration) -> Vec<Event> {
        let mut events = Vec::new();
        for (&pid, w) in self.map.lock().expect("children").iter_mut() {
            let Some(Activity { work: cpu, state }) = activity(pid) else {
                continue;
            };
            if cpu != w.cpu || state == 'T' || state == 't' {
                w.cpu = cpu;
                w.since = Instant::now();
                w.alerted = false;
                continue;
            }
            let idle = w.since.elapsed();
            let secs = idle.as_secs();
            if idle >= stall * 2 && w.did.killed_hung.is_none() {
                w.did.killed_hung = Some(secs);
                signal(pid, nix::sys::signal::Signal::SIGKILL);
                events.push(Event::Killed {
                    runner: w.runner,
                    line: w.line.clone(),
                    pid,
                    secs,
                });
            } else if idle >= stall && !w.alerted {
                w.alerted = true;
                events.push(Event::Hung {
                    runner: w.runner,
                    line: w.line.clone(),
                    pid,
                    secs,
                    state,
                });
            }
        }
        events
    }
}

/// When the next stall check is due.
pub struct Every {
    last: Option<Instant>,
    period: Duration,
}

impl Every {
    pub fn new(period: Duration) -> Self {
        Every { last: None, period }
    }

    pub fn due(&mut self) -> bool {
        let due = self.last.is_none_or(|t| t.elapsed() >= self.period);
        if due {
            self.last = Some(Instant::now());
        }
        due
    }
}

/// The stall checks' period for a stall limit: often enough to act within a few percent.
pub fn sample_period(stall: Duration) -> Duration {
    SAMPLE.min(stall / 5).max(Duration::from_millis(200))
}
