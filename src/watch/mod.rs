//! `wswatch` (1994 paper section 5.2): runs on each workstation beside its runners and
//! gives the machine back to its user.
//!
//! What it reads, and why:
//! - the access times of the terminal devices (`/dev/pts/*`, `/dev/tty[0-9]*`): a key typed
//!   in a terminal or over ssh updates them; `w` computes its IDLE column the same way;
//! - the access times of the input devices (`/dev/input/event*`): the desktop reads mouse and
//!   keyboard events from them, so they move when someone sits at the machine;
//! - `/proc/stat`: CPU time other than *nice* time between two rounds. The jobs run at nice
//!   19 and the runner daemon at nice 1, so their time counts as nice; anything else busy on
//!   the machine is a user's work.
//!   (System time spent for the jobs counts as other load; it is small for these jobs.)
//! - `/proc/meminfo`: whether a suspended job may keep its memory.
//!
//! What it does, by the host's policy in `hosts.toml`:
//! - *public* host, user active: suspend the jobs (SIGSTOP) when at least a quarter of the
//!   memory is free, else checkpoint and requeue them; SIGCONT once the machine has been idle
//!   for `--resume-after` (10 minutes);
//! - *private* host (`public = false`): during working hours any activity checkpoints and
//!   requeues the jobs, and the runners take none until it has been idle for
//!   `--resume-after`; outside working hours it is treated as public;
//! - *night_only* host: during working hours on weekdays the jobs are checkpointed and
//!   requeued and the runners take none; at night and on weekends they work.
//!
//! "Checkpoint and requeue" is SIGTERM to the job process (it checkpoints and exits 3, and its
//! runner puts it back at the top of its queue) while `pause/<host>` tells the runners to
//! take no job. Every action is logged (`logs/wswatch-<host>.log`) and mailed. The clock is
//! injectable (`--now`) and the state between rounds lives in `watch/<host>`.

pub mod command;

use crate::files::{FileOp, failed};
use crate::hosts::Host;
use crate::queue::running as record;
use crate::solve::Site;
use std::path::{Path, PathBuf};

/// Where activity is read from (globs are directory + prefix, to need no glob crate).
#[derive(Clone, Debug)]
pub struct Sources {
    /// (directory, file name prefix) pairs whose files' access times show user input.
    pub devices: Vec<(PathBuf, String)>,
    pub proc_stat: PathBuf,
    pub meminfo: PathBuf,
}

impl Default for Sources {
    fn default() -> Self {
        Sources {
            devices: vec![
                ("/dev/pts".into(), String::new()),
                ("/dev".into(), "tty".into()),
                ("/dev/input".into(), "event".into()),
            ],
            proc_stat: "/proc/stat".into(),
            meminfo: "/proc/meminfo".into(),
        }
    }
}

#[derive(Clone, Debug)]
pub struct WatchOptions {
    /// A machine idle this long gets its jobs back.
    pub resume_after: u64,
    /// Input within this many seconds means someone is there.
    pub active_within: u64,
    /// Share of one CPU of other (not nice) load that counts as a user's work.
    pub busy_cpu: f64,
    /// Working hours, local time, weekdays: [start, end).
    pub day_start: u32,
    pub day_end: u32,
    pub sources: Sources,
}

/// What the watcher remembers between rounds.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WatchState {
    /// Job processes it stopped.
    pub suspended: Vec<u32>,
    /// Whether it paused the runners.
    pub paused: bool,
    /// Last time the user was seen.
    pub last_active: u64,
    /// CPU counters of the last round: (other, total) jiffies.
    pub cpu: (u64, u64),
}

fn state_path(site: &Site, host: &str) -> PathBuf {
    site.root().join("watch").join(host)
}

fn read_state(site: &Site, host: &str) -> WatchState {
    let text = std::fs::read_to_string(state_path(site, host)).unwrap_or_default();
    crate::state::parse(&text, &[]).unwrap_or_else(|_| read_old_state(&text))
}

/// The state as written before it went through serde (`suspended` once per process): read
/// so that processes a watcher stopped before the upgrade are still resumed after it.
fn read_old_state(text: &str) -> WatchState {
    let mut s = WatchState::default();
    for line in text.lines() {
        let mut w = line.split_whitespace();
        match (w.next(), w.next(), w.next()) {
            (Some("suspended"), Some(p), None) => s.suspended.extend(p.parse::<u32>().ok()),
            (Some("paused"), Some(v), None) => s.paused = v == "yes",
            (Some("last_active"), Some(v), None) => s.last_active = v.parse().unwrap_or(0),
            (Some("cpu"), Some(a), Some(b)) => {
                s.cpu = (a.parse().unwrap_or(0), b.parse().unwrap_or(0))
            }
            _ => {}
        }
    }
    s
}

fn write_state(site: &Site, host: &str, s: &WatchState) -> crate::error::Result<()> {
    let volatile = crate::files::Durability::Volatile;
    crate::state::write(&state_path(site, host), s, volatile)
}

pub use crate::runner::host_files::pause_path;

/// The latest access time (seconds since the epoch) of the activity devices.
pub fn last_input(sources: &Sources) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    let mut latest = None;
    for (dir, prefix) in &sources.devices {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for e in entries.flatten() {
            if !e.file_name().to_string_lossy().starts_with(prefix.as_str()) {
                continue;
            }
            if let Ok(m) = e.metadata() {
                let t = m.atime().max(0) as u64;
                latest = Some(latest.map_or(t, |l: u64| l.max(t)));
            }
        }
    }
    latest
}

/// (other, total) CPU jiffies from the first line of `/proc/stat`: other is everything but
/// idle, iowait and nice.
pub fn cpu_counters(proc_stat: &Path) -> Option<(u64, u64)> {
    let text = std::fs::read_to_string(proc_stat).ok()?;
    let line = text.lines().next()?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    if v.len() < 5 {
        return None;
    }
    let total: u64 = v.iter().take(8).sum();
    let (nice, idle, iowait) = (v[1], v[3], v[4]);
    Some((total - nice - idle - iowait, total))
}

/// Whether a quarter of the memory is available (a suspended job may keep its pages).
pub fn memory_allows_suspend(meminfo: &Path) -> bool {
    let text = std::fs::read_to_string(meminfo).unwrap_or_default();
    let field = |k: &str| crate::procfs::meminfo_field(&text, k);
    match (field("MemAvailable:"), field("MemTotal:")) {
        (Some(a), Some(t)) => a * 4 >= t,
        _ => false,
    }
}

/// Local time of `now`: (weekday 0 = Sunday, hour).
fn local_weekday_hour(now: u64) -> (u32, u32) {
    let t = now as libc::time_t;
    // SAFETY: localtime_r writes only into the tm we pass.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    unsafe { libc::localtime_r(&t, &mut tm) };
    (tm.tm_wday as u32, tm.tm_hour as u32)
}

/// Working hours: a weekday between `day_start` and `day_end`.
pub fn working_hours(now: u64, opts: &WatchOptions) -> bool {
    let (wday, hour) = local_weekday_hour(now);
    (1..=5).contains(&wday) && (opts.day_start..opts.day_end).contains(&hour)
}

fn signal(pid: u32, sig: nix::sys::signal::Signal) -> bool {
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), sig).is_ok()
}

/// The job processes running on `host` now (from its running records).
fn job_processes(site: &Site, host: &str) -> crate::error::Result<Vec<(u32, String)>> {
    Ok(record::read_host(site, host)?
        .into_iter()
        .filter(|(_, r)| r.failed.is_none() && r.child != 0)
        .filter(|(_, r)| record::process_start(r.child) == Some(r.child_start))
        .map(|(_, r)| (r.child, r.line))
        .collect())
}

/// One round at time `now` on `host`.
pub fn round(
    site: &Site,
    host: &Host,
    opts: &WatchOptions,
    now: u64,
    rep: &mut crate::mail::Reporter,
) -> crate::error::Result<()> {
    use nix::sys::signal::Signal;
    let mut st = read_state(site, &host.name);
    let input = last_input(&opts.sources);
    let cpu = cpu_counters(&opts.sources.proc_stat);
    let busy = match (cpu, st.cpu) {
        (Some((o, t)), (o0, t0)) if t > t0 && t0 > 0 => {
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
            (o.saturating_sub(o0)) as f64 / (t - t0) as f64 * cores > opts.busy_cpu
        }
        _ => false,
    };
    if let Some(c) = cpu {
        st.cpu = c;
    }
    let typed = input.is_some_and(|t| now.saturating_sub(t) < opts.active_within);
    let active = typed || busy;
    if active {
        st.last_active = now;
    }
    let idle_long = now.saturating_sub(st.last_active) >= opts.resume_after;
    let day = working_hours(now, opts);
    let why = if typed {
        "keyboard or mouse input"
    } else {
        "other processes keep the CPU busy"
    };
    // What the policy wants now: run, suspend, or requeue and pause.
    enum Want {
        Run,
        Suspend,
        Requeue(String),
    }
    let want = if host.night_only && day {
        Want::Requeue("working hours on a night-only host".into())
    } else if !host.public && day && (active || (st.paused && !idle_long)) {
        Want::Requeue(format!("its owner is at work ({why})"))
    } else if active || (!st.suspended.is_empty() && !idle_long) {
        if memory_allows_suspend(&opts.sources.meminfo) || !st.suspended.is_empty() {
            Want::Suspend
        } else {
            Want::Requeue(format!(
                "{why}, and too little free memory to keep a job suspended"
            ))
        }
    } else {
        Want::Run
    };
    let pause = pause_path(site, &host.name);
    match want {
        Want::Run => {
            if !st.suspended.is_empty() {
                let pids = std::mem::take(&mut st.suspended);
                for &p in &pids {
                    signal(p, Signal::SIGCONT);
                }
                rep.act(
                    now,
                    &format!("resumed jobs on {}", host.name),
                    &format!("idle for {}s: SIGCONT to {pids:?}", now - st.last_active),
                );
            }
            if st.paused {
                let _ = std::fs::remove_file(&pause);
                st.paused = false;
                rep.act(
                    now,
                    &format!("runners on {} take jobs again", host.name),
                    "the machine is free",
                );
            }
        }
        Want::Suspend => {
            let mut stopped = Vec::new();
            for (pid, line) in job_processes(site, &host.name)? {
                if !st.suspended.contains(&pid) && signal(pid, Signal::SIGSTOP) {
                    st.suspended.push(pid);
                    stopped.push(line);
                }
            }
            if !stopped.is_empty() {
                rep.act(
                    now,
                    &format!("suspended jobs on {}", host.name),
                    &format!(
                        "{why}: SIGSTOP to {}; SIGCONT after {}s idle",
                        stopped.join(", "),
                        opts.resume_after
                    ),
                );
            }
        }
        Want::Requeue(reason) => {
            if !st.paused {
                let dir = pause.parent().expect("pause/");
                std::fs::create_dir_all(dir).map_err(|e| failed(FileOp::Creating, dir, e))?;
                std::fs::write(&pause, format!("{reason}\n"))
                    .map_err(|e| failed(FileOp::Writing, &pause, e))?;
                st.paused = true;
            }
            let mut stopped = Vec::new();
            for (pid, line) in job_processes(site, &host.name)? {
                // A suspended job must run again to reach its checkpoint.
                signal(pid, Signal::SIGCONT);
                if signal(pid, Signal::SIGTERM) {
                    stopped.push(line);
                }
            }
            st.suspended.clear();
            if !stopped.is_empty() {
                rep.act(
                    now,
                    &format!("requeued jobs on {}", host.name),
                    &format!(
                        "{reason}: SIGTERM to {} (they checkpoint and go back to the top of their queues); runners paused",
                        stopped.join(", ")
                    ),
                );
            }
        }
    }
    write_state(site, &host.name, &st)
}
