//! Alerts for the operators (1994 paper section 5.2: failures and recoveries are mailed).
//!
//! Every alert is first spooled to the site's outbox (`mail/outbox/<time>-<host>-<pid>-<n>.txt`:
//! a subject line, a blank line, the body), so nothing is lost while the mail server is away
//! and no runner ever waits for it. [`deliver`] then sends what the outbox holds through the
//! transport of `hosts.toml`'s `[mail]` table (SMTP with STARTTLS or TLS and login, a
//! sendmail program, or files), one delivery at a time under a lock file:
//!
//! - one alert goes out as it is; several are sent as one digest;
//! - at most `max_per_hour` mails leave per hour; the rest waits in the outbox and goes into
//!   the next digest, so a flapping host cannot flood an inbox;
//! - a failure to send is returned for the caller to log; the outbox is kept and the next
//!   delivery retries it.

pub mod config;
pub use config::{MailConfig, Security, Transport};

use crate::files::{FileOp, failed};
use crate::lock::{LockFile, Machine};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

static SEQ: AtomicU64 = AtomicU64::new(0);

/// An alert that could not be spooled or sent, or a `[mail]` table that cannot be used: each
/// names the file, field or server at fault.
#[derive(Debug, thiserror::Error)]
pub enum MailError {
    /// A field of the `[mail]` table.
    #[error("[mail] {field}: {problem}")]
    Config {
        field: &'static str,
        problem: String,
    },
    #[error("spooling the alert {subject:?} in {}: {source}", dir.display())]
    Spool {
        subject: String,
        dir: PathBuf,
        source: std::io::Error,
    },
    /// The outbox, a spooled alert, the log of sent mail or the delivery lock (a
    /// [`crate::files::FileError`] where a file is at fault).
    #[error(transparent)]
    File(std::io::Error),
    #[error("identifying this machine: {0}")]
    Machine(std::io::Error),
    /// The outbox is kept for the next delivery.
    #[error("sending {count} alert(s) to {to}: {source}; they stay in {} for the next try", outbox.display())]
    NotSent {
        count: usize,
        to: String,
        outbox: PathBuf,
        source: Box<MailError>,
    },
    /// A message lettre would not build (an address, a header).
    #[error("{0}")]
    Message(String),
    #[error("password_file {}: {source}", path.display())]
    Password {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The transport failed: "smtp HOST:PORT", the sendmail program or the file directory.
    #[error("{via}: {problem}")]
    Transport { via: String, problem: String },
}

impl From<MailError> for crate::cli::CliError {
    fn from(e: MailError) -> Self {
        crate::error::Error::from(e).into()
    }
}

impl From<MailError> for crate::error::Error {
    fn from(e: MailError) -> Self {
        crate::error::Error::from_message(e.to_string())
    }
}

pub fn outbox_dir(site: &Path) -> PathBuf {
    site.join("mail/outbox")
}

/// Spools an alert. A failure to write it is returned for the caller to log; it is never a
/// reason to stop work.
pub fn alert(site: &Path, host: &str, subject: &str, body: &str) -> Result<(), MailError> {
    let dir = outbox_dir(site);
    let name = format!(
        "{:012}-{host}-{}-{}.txt",
        crate::clock::now_secs(),
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    );
    let text = format!("[nowdb {host}] {subject}\n\n{body}\n");
    crate::files::replace(
        &dir.join(&name),
        text.as_bytes(),
        crate::files::Durability::Data,
    )
    .map_err(|source| MailError::Spool {
        subject: subject.to_string(),
        dir,
        source,
    })
}

/// What one delivery did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Delivery {
    /// Nothing in the outbox.
    Empty,
    /// Another process is delivering.
    Busy,
    /// This many alerts went out in one mail.
    Sent(usize),
    /// The hourly limit is reached; this many alerts wait.
    Held(usize),
}

/// The spooled alerts, oldest first.
fn spooled(site: &Path) -> Result<Vec<PathBuf>, MailError> {
    let mut files: Vec<PathBuf> = crate::files::list(&outbox_dir(site))
        .map_err(MailError::File)?
        .into_iter()
        .filter(|(name, _)| name.ends_with(".txt"))
        .map(|(_, path)| path)
        .collect();
    files.sort();
    Ok(files)
}

/// Times (seconds since the epoch) of the mails sent in the last hour, from `mail/sent`.
fn sent_last_hour(site: &Path, now: u64) -> Vec<u64> {
    std::fs::read_to_string(site.join("mail/sent"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_whitespace().next()?.parse().ok())
        .filter(|&t: &u64| t + 3600 > now)
        .collect()
}

/// Sends what the outbox holds (module documentation). `now` is injectable for tests.
pub fn deliver(site: &Path, cfg: &MailConfig, now: u64) -> Result<Delivery, MailError> {
    let files = spooled(site)?;
    if files.is_empty() {
        return Ok(Delivery::Empty);
    }
    let here = Machine::current().map_err(MailError::Machine)?;
    let lock_path = site.join("mail/deliver.lock");
    let Some(lock) = LockFile::try_acquire(&lock_path, &here).map_err(MailError::File)? else {
        return Ok(Delivery::Busy);
    };
    // Read again under the lock: another deliverer may have sent some.
    let files = spooled(site)?;
    let recent = sent_last_hour(site, now);
    if files.is_empty() {
        return lock
            .release()
            .map(|_| Delivery::Empty)
            .map_err(MailError::File);
    }
    if recent.len() >= cfg.max_per_hour as usize {
        let _ = lock.release();
        return Ok(Delivery::Held(files.len()));
    }
    let mut alerts = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f)
            .map_err(|e| MailError::File(failed(FileOp::Reading, f, e)))?;
        let (subject, body) = text.split_once("\n\n").unwrap_or((text.as_str(), ""));
        alerts.push((subject.trim().to_string(), body.trim_end().to_string()));
    }
    let (subject, body) = if let [(s, b)] = alerts.as_slice() {
        (s.clone(), b.clone())
    } else {
        let subject = format!("{} alerts, first: {}", alerts.len(), alerts[0].0);
        let body = alerts
            .iter()
            .map(|(s, b)| format!("== {s}\n{b}\n"))
            .collect::<Vec<_>>()
            .join("\n");
        (subject, body)
    };
    let sent = config::send(cfg, site, &subject, &body);
    if let Err(e) = sent {
        let _ = lock.release();
        return Err(MailError::NotSent {
            count: alerts.len(),
            to: cfg.to.join(", "),
            outbox: outbox_dir(site),
            source: Box::new(e),
        });
    }
    for f in &files {
        let _ = std::fs::remove_file(f);
    }
    let log = site.join("mail/sent");
    let mut f = crate::files::open_append(&log).map_err(MailError::File)?;
    let _ = writeln!(f, "{now} {} {subject}", alerts.len());
    lock.release().map_err(MailError::File)?;
    Ok(Delivery::Sent(alerts.len()))
}

/// The log line for a delivery's outcome (none when there was nothing to do).
pub fn delivery_line(outcome: &Result<Delivery, MailError>, cfg: &MailConfig) -> Option<String> {
    match outcome {
        Ok(Delivery::Sent(n)) => Some(format!("mailed {n} alert(s) to {}", cfg.to.join(", "))),
        Ok(Delivery::Held(n)) => Some(format!(
            "mail limit of {} per hour reached: {n} alert(s) wait in the outbox",
            cfg.max_per_hour
        )),
        Ok(Delivery::Empty | Delivery::Busy) => None,
        Err(e) => Some(format!("mail: {e}")),
    }
}

/// The log and alerts of a watching daemon (`wsmonitor`, `wswatch`): each line stamped with
/// the time and who speaks, and echoed to standard error; an action is also spooled
/// as an alert, and remembered for the summary `--once` prints.
pub struct Reporter {
    site: PathBuf,
    /// At the head of every log line after the time: `wsmonitor`, `wswatch HOST`.
    speaker: String,
    /// The host an alert is from (its subject's tag).
    sender: String,
    log: std::fs::File,
    /// The `[mail]` table of hosts.toml, for the daemon's deliveries.
    pub mail: Option<MailConfig>,
    pub actions: Vec<String>,
}

impl Reporter {
    /// Appends to `<site>/logs/<log_name>.log` (created with its directory).
    pub fn open(
        site: &Path,
        log_name: &str,
        speaker: &str,
        sender: &str,
        mail: Option<MailConfig>,
    ) -> Result<Reporter, MailError> {
        let path = site.join("logs").join(format!("{log_name}.log"));
        let log = crate::files::open_append(&path).map_err(MailError::File)?;
        Ok(Reporter {
            site: site.to_path_buf(),
            speaker: speaker.into(),
            sender: sender.into(),
            log,
            mail,
            actions: Vec::new(),
        })
    }

    /// Logs `msg` at time `now`.
    pub fn say(&mut self, now: u64, msg: &str) {
        let line = format!("{} {} {msg}\n", crate::clock::local_time(now), self.speaker);
        let _ = self.log.write_all(line.as_bytes());
        // Not eprint!: a closed stderr must not stop the watcher.
        let _ = std::io::stderr().write_all(line.as_bytes());
    }

    /// Logs and mails an action.
    pub fn act(&mut self, now: u64, subject: &str, body: &str) {
        self.say(now, &format!("{subject}: {body}"));
        self.actions.push(subject.to_string());
        if let Err(e) = alert(&self.site, &self.sender, subject, body) {
            self.say(now, &format!("could not spool the alert: {e}"));
        }
    }

    /// Sends what the outbox holds if hosts.toml has a `[mail]` table, and logs the outcome.
    pub fn deliver(&mut self, now: u64) {
        let Some(cfg) = &self.mail else {
            return;
        };
        if let Some(line) = delivery_line(&deliver(&self.site, cfg, now), cfg) {
            self.say(now, &line);
        }
    }
}
