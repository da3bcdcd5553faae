//! The `wswatch` command around [`super::round`].

use super::{WatchOptions, round};
use crate::cli::{CliError, STOP, output_error};
use crate::clock::now_secs;
use crate::hosts::Hosts;
use crate::mail::Reporter;
use crate::solve::Site;
use std::io::Write;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// `wswatch`'s command line.
#[derive(Clone, Debug)]
pub struct WatchArgs {
    pub host: Option<String>,
    pub once: bool,
    pub interval: Duration,
    /// Pretend the time is this (with `--once`, for tests).
    pub now: Option<u64>,
    pub opts: WatchOptions,
}

/// An entry of `--devices` that is not `DIR:PREFIX`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("--devices {0:?}: expected DIR:PREFIX")]
pub struct BadDevices(pub String);

impl From<BadDevices> for CliError {
    fn from(e: BadDevices) -> Self {
        CliError::Failed(e.to_string())
    }
}

/// `DIR:PREFIX,...` (e.g. `/dev/pts:,/dev:tty`) as activity sources.
pub fn parse_devices(text: &str) -> Result<Vec<(std::path::PathBuf, String)>, BadDevices> {
    text.split(',')
        .filter(|s| !s.is_empty())
        .map(|s| match s.split_once(':') {
            Some((d, p)) if !d.is_empty() => Ok((d.into(), p.to_string())),
            _ => Err(BadDevices(s.to_string())),
        })
        .collect()
}

/// Rounds every `interval` until SIGTERM, or one with `--once`; prints the actions taken.
pub fn watch_command(site: &Site, a: &WatchArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let hosts = Hosts::load(&site.root().join("hosts.toml"))?;
    let name = match &a.host {
        Some(h) => h.clone(),
        None => nix::unistd::gethostname()
            .map_err(|e| format!("reading the hostname: {e}"))?
            .to_string_lossy()
            .into_owned(),
    };
    let host = hosts.host(&name).cloned().ok_or_else(|| {
        format!("host {name:?} has no [[host]] table in hosts.toml (or give --host)")
    })?;
    let mut rep = Reporter::open(
        site.root(),
        &format!("wswatch-{name}"),
        &format!("wswatch {name}"),
        &name,
        hosts.mail.clone(),
    )?;
    loop {
        let t0 = Instant::now();
        let now = a.now.unwrap_or_else(now_secs);
        if let Err(e) = round(site, &host, &a.opts, now, &mut rep) {
            if a.once {
                return Err(e.into());
            }
            rep.say(now, &format!("error: {e}"));
        }
        rep.deliver(now);
        if a.once {
            break;
        }
        while t0.elapsed() < a.interval && !STOP.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(100));
        }
        if STOP.load(Ordering::Relaxed) {
            break;
        }
    }
    let text = format!(
        "{} action(s): {}\n",
        rep.actions.len(),
        rep.actions.join("; ")
    );
    out.write_all(text.as_bytes()).map_err(output_error)
}
