//! The `wsmonitor` and `dbstart` commands around [`super::round`] and [`super::start`].

use super::start::{StartOptions, dbstart};
use super::{MonitorOptions, answers, round};
use crate::cli::{CliError, STOP, output_error};
use crate::clock::now_secs;
use crate::hosts::Hosts;
use crate::mail::Reporter;
use crate::solve::Site;
use std::io::Write;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// `wsmonitor`'s command line.
#[derive(Clone, Debug)]
pub struct MonitorArgs {
    pub once: bool,
    pub interval: Duration,
    pub grace: Duration,
    pub timeout: Duration,
    /// The ssh command for starting runners (split on spaces), if not the default.
    pub ssh: Option<String>,
    /// Pretend the time is this (seconds since the epoch) in `--once` rounds: for tests.
    pub now: Option<u64>,
}

fn load_hosts(site: &Site) -> Result<Hosts, crate::hosts::HostsError> {
    Hosts::load(&site.root().join("hosts.toml"))
}

fn start_options(ssh: &Option<String>) -> StartOptions {
    let mut o = StartOptions::default();
    if let Some(cmd) = ssh {
        o.ssh = cmd.split_whitespace().map(String::from).collect();
    }
    o
}

/// `wsmonitor`: rounds every `interval` until SIGTERM, or one with `--once`. Each round
/// re-reads hosts.toml, so hosts can be added while it runs; a bad hosts.toml is logged and
/// the round skipped, never the end of the monitor (except at the first round, where it is a
/// configuration error to report).
pub fn monitor_command(site: &Site, a: &MonitorArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let mut hosts = load_hosts(site)?;
    let opts = MonitorOptions {
        grace: a.grace,
        timeout: a.timeout,
        start: start_options(&a.ssh),
    };
    let mut rep = Reporter::open(
        site.root(),
        "wsmonitor",
        "wsmonitor",
        "wsmonitor",
        hosts.mail.clone(),
    )?;
    loop {
        let t0 = Instant::now();
        let now = a.now.unwrap_or_else(now_secs);
        let timeout = opts.timeout;
        round(
            site,
            &hosts,
            &opts,
            now,
            &mut |h| answers(&h.ssh, timeout),
            &mut rep,
        )?;
        if a.once || STOP.load(Ordering::Relaxed) {
            break;
        }
        while t0.elapsed() < a.interval && !STOP.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(100));
        }
        if STOP.load(Ordering::Relaxed) {
            break;
        }
        match load_hosts(site) {
            Ok(h) => {
                rep.mail = h.mail.clone();
                hosts = h;
            }
            Err(e) => rep.act(
                now_secs(),
                "hosts.toml does not parse",
                &format!("{e}; using the last good one"),
            ),
        }
    }
    let text = format!(
        "{} action(s): {}\n",
        rep.actions.len(),
        rep.actions.join("; ")
    );
    out.write_all(text.as_bytes()).map_err(output_error)
}

/// `dbstart HOST...`.
pub fn dbstart_command(
    site: &Site,
    names: &[String],
    ssh: &Option<String>,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let hosts = load_hosts(site)?;
    let done = dbstart(site, &hosts, names, &start_options(ssh))?;
    let text: String = match json {
        true => crate::cli::json_line(&serde_json::json!({ "started": done })),
        false => done.iter().map(|d| format!("{d}\n")).collect(),
    };
    out.write_all(text.as_bytes()).map_err(output_error)
}
