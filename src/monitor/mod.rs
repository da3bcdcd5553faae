//! `wsmonitor` (1994 paper section 5.2, "a day in the life of a network supercomputer"):
//! watches every host of `hosts.toml` and keeps the build going without an operator.
//!
//! Each round (every minute; `--once` for cron and tests) checks every host with a TCP
//! connect to its ssh port. Not ICMP ping: that needs raw sockets (root or CAP_NET_RAW) and
//! proves only that a kernel answers, while a connect to sshd works unprivileged, passes
//! firewalls that drop ICMP, and is what restarting the runners needs. Runners also write a
//! heartbeat (`heartbeats/<host>`: boot id and time), which tells the monitor the host's
//! boot id without logging in.
//!
//! - A host that stops answering is retried every round for `--grace` (10 minutes). If it
//!   answers again with a new boot id it *rebooted*; with the same one it was a network
//!   glitch. If the grace passes it has *crashed*: it is listed in `crashed`.
//! - A crashed or rebooted host's running jobs go back to the top of their queues in the
//!   explicit-range form (their checkpoints make them resume), and its runners are started
//!   again (`dbstart`) once it answers.
//! - Every action is logged to `logs/wsmonitor.log` and mailed; the outbox is delivered each
//!   round.
//!
//! The per-host state lives in `monitor/<host>` so that rounds may be separate processes.

pub mod command;
pub mod start;

use crate::clock::local_time;
use crate::error::{Error, Result};
use crate::files::{FileOp, failed};
use crate::hosts::{Host, Hosts};
use crate::lock;
use crate::lock::Machine;
use crate::queue::held::RetryPolicy;
use crate::runner::recover::{break_dead_locks, requeue_host_jobs};
use crate::solve::Site;
use std::io::Write;
use std::net::{TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How a monitor runs.
#[derive(Clone, Debug)]
pub struct MonitorOptions {
    /// How long a host may not answer before it counts as crashed.
    pub grace: Duration,
    /// Connect timeout per check.
    pub timeout: Duration,
    /// How runners are started on a host (`dbstart`).
    pub start: start::StartOptions,
}

/// What the monitor remembers about a host between rounds.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HostState {
    /// `up`, `down` (not answering, within the grace) or `crashed`.
    pub status: String,
    /// When the status began.
    pub since: u64,
    /// The boot id last seen (from the heartbeat).
    #[serde(default, deserialize_with = "crate::state::text")]
    pub boot_id: String,
}

fn state_path(site: &Site, host: &str) -> PathBuf {
    site.root().join("monitor").join(host)
}

/// The host's state as wsmonitor last wrote it (`up` since 0 when it has none, or an
/// unreadable one: the next round finds the truth).
pub fn read_state(site: &Site, host: &str) -> HostState {
    let s: Option<HostState> = crate::state::read(&state_path(site, host), "host state", &[])
        .ok()
        .flatten();
    s.unwrap_or_else(|| HostState {
        status: "up".into(),
        ..Default::default()
    })
}

fn write_state(site: &Site, host: &str, s: &HostState) -> Result<()> {
    let volatile = crate::files::Durability::Volatile;
    crate::state::write(&state_path(site, host), s, volatile)
}

pub use crate::runner::host_files::{
    heartbeat_alive, heartbeat_path, read_heartbeat, write_heartbeat,
};

/// Whether the host's sshd accepts a TCP connection (`ssh` is `host`, `user@host` or
/// `host:port`; port 22 by default).
pub fn answers(ssh: &str, timeout: Duration) -> bool {
    let host = ssh.rsplit('@').next().unwrap_or(ssh);
    let addr = if host.contains(':') {
        host.to_string()
    } else {
        format!("{host}:22")
    };
    let Ok(addrs) = addr.to_socket_addrs() else {
        return false;
    };
    addrs
        .into_iter()
        .any(|a| TcpStream::connect_timeout(&a, timeout).is_ok())
}

fn add_crashed(site: &Site, host: &str, now: u64) -> Result<()> {
    let path = site.root().join("crashed");
    let mut f = crate::files::open_append(&path)?;
    writeln!(f, "{host} {now} {}", local_time(now))
        .map_err(|e| failed(FileOp::Appending, &path, e).into())
}

fn remove_crashed(site: &Site, host: &str) -> Result<()> {
    let path = site.root().join("crashed");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let kept: String = text
        .lines()
        .filter(|l| l.split_whitespace().next() != Some(host))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&path, kept).map_err(|e| failed(FileOp::Writing, &path, e).into())
}

/// The hosts listed in `crashed`.
pub fn crashed_hosts(site: &Path) -> Vec<String> {
    std::fs::read_to_string(site.join("crashed"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(String::from))
        .collect()
}

/// One round over every host at time `now`; `up` says whether a host answers (the TCP
/// check in production, injectable for tests).
pub fn round(
    site: &Site,
    hosts: &Hosts,
    opts: &MonitorOptions,
    now: u64,
    up: &mut dyn FnMut(&Host) -> bool,
    rep: &mut crate::mail::Reporter,
) -> Result<()> {
    let here = Machine::current().map_err(|e| Error::io("identifying this machine", e))?;
    for h in &hosts.hosts {
        // One host's trouble never stops the round for the others.
        if let Err(e) = check_host(site, h, &hosts.jobs, opts, now, up(h), &here, rep) {
            rep.act(now, &format!("error checking {}", h.name), &e.to_string());
        }
    }
    rep.deliver(now);
    Ok(())
}

/// A heartbeat younger than this gives the host's boot id (runners write one every 10 s).
const HEARTBEAT_FRESH: u64 = 120;

#[allow(clippy::too_many_arguments)]
fn check_host(
    site: &Site,
    h: &Host,
    policy: &RetryPolicy,
    opts: &MonitorOptions,
    now: u64,
    answers: bool,
    here: &Machine,
    rep: &mut crate::mail::Reporter,
) -> Result<()> {
    let mut st = read_state(site, &h.name);
    // The boot id: asked over ssh (a heartbeat may outlive a quick reboot by seconds), else
    // from a fresh heartbeat of its runners.
    let heartbeat = read_heartbeat(site, &h.name)
        .filter(|(_, t)| now.saturating_sub(*t) <= HEARTBEAT_FRESH)
        .map(|(b, _)| b);
    let boot_now = match answers {
        true => start::boot_id(h, &opts.start).or(heartbeat.clone()),
        false => None,
    };
    let name = &h.name;
    match (st.status.as_str(), answers) {
        ("up", true) => {
            // A new boot id with the host up: it rebooted between two rounds. Records of
            // another boot are orphans too when this monitor never saw the old boot (a reboot
            // before its first round).
            if let Some(b) = &boot_now {
                let new_boot = !st.boot_id.is_empty() && *b != st.boot_id;
                if new_boot {
                    break_dead_locks(site, here, &lock::DeadHost::rebooted(name, b), rep, now)?;
                }
                let why = format!("host {name} rebooted while it ran");
                let jobs = requeue_host_jobs(site, here, name, Some(b), &why, policy, rep, now)?;
                if new_boot || !jobs.is_empty() {
                    rep.act(
                        now,
                        &format!("host {name} rebooted"),
                        &format!(
                            "boot id {b}; requeued {} job(s) of the old boot at the top: {}",
                            jobs.len(),
                            jobs.join(", ")
                        ),
                    );
                    restart(site, h, opts, now, rep);
                }
            }
            if let Some(b) = boot_now {
                st.boot_id = b;
            }
        }
        ("up", false) => {
            st.status = "down".into();
            st.since = now;
            rep.say(
                now,
                &format!(
                    "host {name} does not answer on {}; retrying for {}s",
                    h.ssh,
                    opts.grace.as_secs()
                ),
            );
        }
        // Its runners still write heartbeats through the site since it stopped answering: the
        // host works, only its sshd does not answer; taking its jobs away would run them
        // twice. A heartbeat that is no longer alive proves nothing (a host that came back
        // between two rounds, wrote one and went down again has crashed all the same).
        ("down", false)
            if read_heartbeat(site, &h.name)
                .is_some_and(|(_, t)| t > st.since && heartbeat_alive(t, now)) =>
        {
            rep.say(
                now,
                &format!("host {name} does not answer on {} but its runners' heartbeat is fresh: not crashed", h.ssh),
            );
        }
        ("down", false) if now.saturating_sub(st.since) >= opts.grace.as_secs() => {
            let why = format!(
                "host {name} crashed (no answer on {} for {}s)",
                h.ssh,
                opts.grace.as_secs()
            );
            // Its locks taken before it went silent die with it; one taken since shows it
            // alive (it wrote to the site), and is left to its owner.
            let dead = lock::DeadHost::crashed(name, st.since);
            break_dead_locks(site, here, &dead, rep, now)?;
            let jobs = requeue_host_jobs(site, here, name, None, &why, policy, rep, now)?;
            add_crashed(site, name, now)?;
            st.status = "crashed".into();
            st.since = now;
            rep.act(
                now,
                &format!("host {name} crashed"),
                &format!(
                    "no answer on {} for {}s; listed in crashed; requeued {} job(s) at the top: {}",
                    h.ssh,
                    opts.grace.as_secs(),
                    jobs.len(),
                    jobs.join(", ")
                ),
            );
        }
        ("down", true) => {
            let rebooted = boot_now.as_ref().is_some_and(|b| *b != st.boot_id);
            if rebooted {
                if let Some(b) = boot_now.as_deref() {
                    break_dead_locks(site, here, &lock::DeadHost::rebooted(name, b), rep, now)?;
                }
                let why = format!("host {name} rebooted while it ran");
                let jobs = requeue_host_jobs(
                    site,
                    here,
                    name,
                    boot_now.as_deref(),
                    &why,
                    policy,
                    rep,
                    now,
                )?;
                rep.act(
                    now,
                    &format!("host {name} rebooted"),
                    &format!(
                        "answers again after {}s with a new boot id; requeued {} job(s) at the top: {}",
                        now.saturating_sub(st.since),
                        jobs.len(),
                        jobs.join(", ")
                    ),
                );
                restart(site, h, opts, now, rep);
            } else {
                rep.act(
                    now,
                    &format!("host {name} answers again"),
                    &format!(
                        "after {}s without an answer, same boot: its runners went on",
                        now.saturating_sub(st.since)
                    ),
                );
            }
            st.status = "up".into();
            st.since = now;
            if let Some(b) = boot_now {
                st.boot_id = b;
            }
        }
        ("crashed", true) => {
            remove_crashed(site, name)?;
            rep.act(
                now,
                &format!("host {name} is back"),
                &format!(
                    "answers again {}s after it was declared crashed; removed from crashed",
                    now.saturating_sub(st.since)
                ),
            );
            // The same boot: it was cut off, not down, and its old runners may still be
            // working on the jobs that were requeued. Stop them (they checkpoint) before
            // starting new ones.
            if boot_now.is_some() && boot_now.as_deref() == Some(st.boot_id.as_str()) {
                match start::stop_runners(h, &opts.start) {
                    Ok(how) => rep.act(now, &format!("stopped the old runners on {name}"), &how),
                    Err(e) => rep.act(
                        now,
                        &format!("could not stop the old runners on {name}"),
                        &e.to_string(),
                    ),
                }
            }
            restart(site, h, opts, now, rep);
            st.status = "up".into();
            st.since = now;
            if let Some(b) = boot_now {
                st.boot_id = b;
            }
        }
        _ => {}
    }
    write_state(site, &h.name, &st)
}

/// Starts the host's runners, mailing the result (a failure is an action too).
fn restart(
    site: &Site,
    h: &Host,
    opts: &MonitorOptions,
    now: u64,
    rep: &mut crate::mail::Reporter,
) {
    match start::start_runners(site, h, &opts.start) {
        Ok(how) => rep.act(now, &format!("started runners on {}", h.name), &how),
        Err(e) => rep.act(
            now,
            &format!("could not start runners on {}", h.name),
            &e.to_string(),
        ),
    }
}
