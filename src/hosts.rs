//! `hosts.toml`: the workstations of the pool (1994 paper Appendix C "hosts"), one `[[host]]`
//! table each, read by `jobrunner` (its queues, runner count and memory) and the monitors.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A `hosts.toml` that cannot be used: unreadable, or what is wrong in it, naming the file.
#[derive(Debug, thiserror::Error)]
pub enum HostsError {
    /// The file could not be read (a [`crate::files::FileError`]: "reading PATH: cause").
    #[error(transparent)]
    Read(std::io::Error),
    #[error("{}: {problem}", path.display())]
    Invalid {
        path: PathBuf,
        problem: HostsProblem,
    },
}

/// What is wrong in the text of a `hosts.toml`: each names the table, host and field at fault.
#[derive(Debug, thiserror::Error)]
pub enum HostsProblem {
    /// Not TOML, or a table or field of the wrong name or type (toml's message).
    #[error("{0}")]
    Syntax(String),
    #[error("a [[host]] has an empty name")]
    EmptyName,
    /// A host name that could not name files and fields of the state files.
    #[error("host name {0:?} may not hold white space, control characters or '/'")]
    BadName(String),
    #[error("host {host:?}: {field}: {problem}")]
    Host {
        host: String,
        field: &'static str,
        problem: String,
    },
    /// The `[jobs]` table.
    #[error("[jobs] {field}: {problem}")]
    Jobs {
        field: &'static str,
        problem: String,
    },
    /// The `[mail]` table.
    #[error(transparent)]
    Mail(#[from] crate::mail::MailError),
}

impl From<HostsError> for crate::error::Error {
    fn from(e: HostsError) -> Self {
        match e {
            HostsError::Read(e) => e.into(),
            e => crate::error::Error::Failed(e.to_string()),
        }
    }
}

impl From<HostsError> for crate::cli::CliError {
    fn from(e: HostsError) -> Self {
        crate::error::Error::from(e).into()
    }
}

impl From<HostsProblem> for crate::error::Error {
    fn from(e: HostsProblem) -> Self {
        crate::error::Error::Failed(e.to_string())
    }
}

/// One workstation.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Host {
    pub name: String,
    /// Address for ssh (`user@host` or a name).
    pub ssh: String,
    /// The queues its runners take jobs from, in order of preference: letters of `pnsm`
    /// (`"p"`, or `"pm"` for prime first and then small).
    pub queue: String,
    /// Which binary to start there (`x86_64-linux`, ...).
    pub platform: String,
    /// Memory the runners may use for page buffers, all runners together.
    pub memory_mb: u64,
    /// A public machine may be used at any time; a private one only outside working hours
    /// when its owner is busy.
    #[serde(default = "yes")]
    pub public: bool,
    /// Only at night and on weekends.
    #[serde(default)]
    pub night_only: bool,
    /// Runners (jobs at once) on this host.
    #[serde(default = "one")]
    pub runners: usize,
    /// Where the site is mounted on this host (default: the same path as where the command
    /// that starts its runners sees it).
    #[serde(default)]
    pub site: Option<std::path::PathBuf>,
    /// Seconds between the checkpoints of its jobs (default 60): a crash loses at most this
    /// much work per job.
    #[serde(default)]
    pub checkpoint_secs: Option<u64>,
}

fn yes() -> bool {
    true
}

fn one() -> usize {
    1
}

/// The whole file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hosts {
    #[serde(default, rename = "host")]
    pub hosts: Vec<Host>,
    /// Where alerts go (`crate::mail`).
    #[serde(default)]
    pub mail: Option<crate::mail::MailConfig>,
    /// How failed jobs are retried and held, and when a job counts as hung.
    #[serde(default)]
    pub jobs: RetryPolicy,
}

/// The letters of the queues a host may take from (`queue::QUEUES` has their files; a test
/// there keeps the two equal, so the settings need not import the queues).
pub const QUEUE_LETTERS: &str = "pnsm";

/// How failed jobs are retried: `hosts.toml`'s `[jobs]` table.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RetryPolicy {
    /// Attempts before a job is held (default 3).
    #[serde(default = "default_max_attempts")]
    pub max_attempts: u32,
    /// Wait after the first failed attempt, doubled after each further one (default 10 s).
    #[serde(default = "default_backoff")]
    pub retry_backoff_secs: u64,
    /// A job process that gets no CPU time for this long (and is not stopped by wswatch) is
    /// reported as hung; after twice this long it is killed, which uses an attempt (default
    /// 900 s).
    #[serde(default = "default_stall")]
    pub stall_secs: u64,
}

fn default_max_attempts() -> u32 {
    3
}

fn default_backoff() -> u64 {
    10
}

fn default_stall() -> u64 {
    900
}

/// The longest backoff, however many attempts.
pub const MAX_BACKOFF_SECS: u64 = 3600;

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: default_max_attempts(),
            retry_backoff_secs: default_backoff(),
            stall_secs: default_stall(),
        }
    }
}

impl RetryPolicy {
    /// The error names the field, as the rest of `hosts.toml`'s checks do.
    pub fn validate(&self) -> Result<(), HostsProblem> {
        let bad = |field: &'static str, problem: String| Err(HostsProblem::Jobs { field, problem });
        if self.max_attempts == 0 {
            return bad("max_attempts", "must be at least 1".into());
        }
        if self.max_attempts > 100 {
            return bad(
                "max_attempts",
                format!("{} is more than 100", self.max_attempts),
            );
        }
        if self.retry_backoff_secs > MAX_BACKOFF_SECS {
            return bad(
                "retry_backoff_secs",
                format!(
                    "{} is more than {MAX_BACKOFF_SECS}",
                    self.retry_backoff_secs
                ),
            );
        }
        if self.stall_secs > 86_400 {
            return bad(
                "stall_secs",
                format!("{} is more than a day", self.stall_secs),
            );
        }
        if self.stall_secs < 10 {
            return bad(
                "stall_secs",
                format!(
                    "{} is too short (at least 10: a job writing a checkpoint may wait on the \
                     disk that long)",
                    self.stall_secs
                ),
            );
        }
        Ok(())
    }

    /// Seconds to wait after `attempts` failed attempts before the job may run again.
    pub fn backoff(&self, attempts: u32) -> u64 {
        let doubled = self
            .retry_backoff_secs
            .saturating_mul(1 << attempts.saturating_sub(1).min(20));
        doubled.min(MAX_BACKOFF_SECS)
    }
}

/// A host name names files (`logs/<host>.log`, `running/<host>-...`) and fields of the
/// line-based state files: no white space, control characters or '/'.
pub fn check_name(name: &str) -> Result<(), HostsProblem> {
    // Nor a leading dot: files named after a host (running records, heartbeats) would be
    // taken for temporaries and hidden files, which readers skip.
    if name.starts_with('.')
        || name
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || c == '/')
    {
        return Err(HostsProblem::BadName(name.to_string()));
    }
    Ok(())
}

/// Page buffers per work file when `runners` jobs share `memory_mb` (two work files a job).
pub fn buffers_per_file(memory_mb: u64, runners: usize) -> usize {
    let bytes = memory_mb << 20;
    ((bytes / runners.max(1) as u64 / 2) / crate::solve::store::PAGE_BYTES as u64)
        .clamp(16, 1 << 24) as usize
}

/// The site's retry policy: `SITE/hosts.toml`'s `[jobs]`, or the defaults without a
/// hosts.toml.
pub fn site_policy(site: &Path) -> Result<RetryPolicy, HostsError> {
    let file = site.join("hosts.toml");
    Ok(match file.exists() {
        true => Hosts::load(&file)?.jobs,
        false => Default::default(),
    })
}

impl Host {
    /// The queue letters, checked.
    pub fn queue_letters(&self) -> Vec<char> {
        self.queue.chars().collect()
    }

    /// Page buffers (8 KiB each) per work file for one runner: the host's memory shared by its
    /// runners, each job holding up to two work files (a slice and its mirror).
    pub fn buffers_per_file(&self) -> usize {
        buffers_per_file(self.memory_mb, self.runners)
    }
}

impl Hosts {
    /// Reads and checks `path`; errors name the file, and the host and field at fault.
    pub fn load(path: &Path) -> Result<Hosts, HostsError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            HostsError::Read(crate::files::failed(crate::files::FileOp::Reading, path, e))
        })?;
        Self::parse(&text).map_err(|problem| HostsError::Invalid {
            path: path.to_path_buf(),
            problem,
        })
    }

    pub fn parse(text: &str) -> Result<Hosts, HostsProblem> {
        let hosts: Hosts = toml::from_str(text)
            .map_err(|e| HostsProblem::Syntax(e.to_string().trim().to_string()))?;
        let mut seen = std::collections::HashSet::new();
        for h in &hosts.hosts {
            let bad = |field: &'static str, problem: String| HostsProblem::Host {
                host: h.name.clone(),
                field,
                problem,
            };
            if h.name.is_empty() {
                return Err(HostsProblem::EmptyName);
            }
            check_name(&h.name)?;
            if !seen.insert(h.name.as_str()) {
                return Err(bad("name", "listed twice".into()));
            }
            if h.queue.is_empty() {
                return Err(bad("queue", "no queue letter (p, n, s or m)".into()));
            }
            for c in h.queue.chars() {
                if !QUEUE_LETTERS.contains(c) {
                    return Err(bad(
                        "queue",
                        format!("{c:?} is not a queue (p prime, n nonprime, s slow, m small)"),
                    ));
                }
            }
            if h.runners == 0 {
                return Err(bad("runners", "must be at least 1".into()));
            }
            if h.memory_mb < 16 {
                return Err(bad(
                    "memory_mb",
                    format!("{} MB is too little", h.memory_mb),
                ));
            }
            if h.ssh.is_empty() {
                return Err(bad("ssh", "empty address".into()));
            }
        }
        if let Some(m) = &hosts.mail {
            m.validate()?;
        }
        hosts.jobs.validate()?;
        Ok(hosts)
    }

    pub fn host(&self, name: &str) -> Option<&Host> {
        self.hosts.iter().find(|h| h.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
[[host]]
name = "a"
ssh = "a"
queue = "pm"
platform = "x86_64-linux"
memory_mb = 2048
runners = 2
"#;

    #[test]
    fn a_good_file_parses_with_defaults() {
        let h = Hosts::parse(GOOD).unwrap();
        let a = h.host("a").unwrap();
        assert_eq!(a.queue_letters(), vec!['p', 'm']);
        assert!(a.public && !a.night_only);
        assert_eq!(a.buffers_per_file(), 2048 * 1024 / 8 / 2 / 2);
    }

    #[test]
    fn errors_name_the_host_and_field() {
        for (text, needle) in [
            (GOOD.replace("\"pm\"", "\"px\""), "host \"a\": queue: 'x'"),
            (
                GOOD.replace("runners = 2", "runners = 0"),
                "host \"a\": runners",
            ),
            (
                GOOD.replace("memory_mb = 2048", "memory_mb = 1"),
                "memory_mb",
            ),
            (
                GOOD.replace("memory_mb = 2048", "memory_mb = \"lots\""),
                "memory_mb",
            ),
            (
                GOOD.replace("runners = 2", "runners = 2\ncolour = 1"),
                "colour",
            ),
            (format!("{GOOD}{GOOD}"), "listed twice"),
            (
                GOOD.replace("name = \"a\"", "name = \"a b\""),
                "white space",
            ),
            (
                format!("{GOOD}[jobs]\nmax_attempts = 0\n"),
                "[jobs] max_attempts",
            ),
            (format!("{GOOD}[jobs]\nretries = 2\n"), "retries"),
            (GOOD.replace("ssh = \"a\"\n", ""), "ssh"),
            (
                format!("{GOOD}[mail]\ntransport = \"smtp\"\nfrom = \"x@y\"\nto = [\"z@w\"]\n"),
                "[mail] server",
            ),
            (
                format!(
                    "{GOOD}[mail]\ntransport = \"file\"\nfrom = \"nobody\"\nto = [\"z@w\"]\ndir = \"m\"\n"
                ),
                "[mail] from",
            ),
            (
                format!("{GOOD}[mail]\ntransport = \"pigeon\"\nfrom = \"x@y\"\nto = [\"z@w\"]\n"),
                "pigeon",
            ),
        ] {
            let e = Hosts::parse(&text).unwrap_err().to_string();
            assert!(e.contains(needle), "{e}");
        }
    }
}
