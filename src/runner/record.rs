//! Running records: `running/<host>-<pid>-<runner>` says which job a runner took, from which
//! queue, and which processes work on it. A runner writes its record inside the queue's lock
//! as it takes the line, so a job is always either in a queue or in a record; success removes
//! the record, failure keeps it (marked `failed`) for the operator. A record whose processes
//! are provably gone (same host, and a new boot id or both pids gone) is *stale*: its job is
//! put back at the top of its queue in the explicit-range form, where the job's checkpoint
//! makes it resume.

use crate::queue::{Machine, Queue, QueueLine, QueuedJob};
use crate::solve::{Job, Site};
use std::path::{Path, PathBuf};

/// One running record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunningRecord {
    pub host: String,
    pub boot_id: String,
    /// The runner process, and when it started (`/proc/<pid>/stat` field 22: a reused pid
    /// has another start time).
    pub pid: u32,
    pub pid_start: u64,
    /// The job's child process (0 before it is started).
    pub child: u32,
    pub child_start: u64,
    /// Queue name (`prime`, ...) the line came from.
    pub queue: String,
    /// The queue line as taken.
    pub line: String,
    /// Seconds since the epoch when the job was taken.
    pub since: u64,
    /// Why the job failed, once it has.
    pub failed: Option<String>,
}

pub fn running_dir(site: &Site) -> PathBuf {
    site.root().join("running")
}

/// When process `pid` started, in clock ticks since boot; `None` when there is no such
/// process.
pub fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count from its end.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

pub fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl RunningRecord {
    pub fn to_text(&self) -> String {
        let mut t = format!(
            "host {}\nboot_id {}\npid {} {}\nchild {} {}\nqueue {}\nline {}\nsince {}\n",
            self.host,
            self.boot_id,
            self.pid,
            self.pid_start,
            self.child,
            self.child_start,
            self.queue,
            self.line,
            self.since
        );
        if let Some(f) = &self.failed {
            t += &format!("failed {f}\n");
        }
        t
    }

    pub fn parse(text: &str) -> Option<RunningRecord> {
        let mut r = RunningRecord {
            host: String::new(),
            boot_id: String::new(),
            pid: 0,
            pid_start: 0,
            child: 0,
            child_start: 0,
            queue: String::new(),
            line: String::new(),
            since: 0,
            failed: None,
        };
        let pair = |v: &str| -> Option<(u32, u64)> {
            let (a, b) = v.split_once(' ')?;
            Some((a.parse().ok()?, b.parse().ok()?))
        };
        for line in text.lines() {
            let (k, v) = line.split_once(' ')?;
            match k {
                "host" => r.host = v.into(),
                "boot_id" => r.boot_id = v.into(),
                "pid" => (r.pid, r.pid_start) = pair(v)?,
                "child" => (r.child, r.child_start) = pair(v)?,
                "queue" => r.queue = v.into(),
                "line" => r.line = v.into(),
                "since" => r.since = v.parse().ok()?,
                "failed" => r.failed = Some(v.into()),
                _ => return None,
            }
        }
        (!r.host.is_empty() && r.pid != 0 && !r.line.is_empty()).then_some(r)
    }

    /// Writes the record at `path` (temp file, fsync if `durable`, rename).
    pub fn write(&self, path: &Path, durable: bool) -> Result<(), String> {
        use crate::files::Durability;
        let durability = match durable {
            true => Durability::Data,
            false => Durability::Volatile,
        };
        crate::files::replace(path, self.to_text().as_bytes(), durability)
            .map_err(|e| format!("writing {}: {e}", path.display()))
    }

    /// The job of the record's line.
    pub fn job(&self) -> Result<(QueuedJob, Job), String> {
        match crate::queue::line::parse_line(&self.line) {
            Ok(Some(QueueLine::Job(q))) => Ok((q, q.job()?)),
            Ok(_) => Err(format!("running record line {:?} is not a job", self.line)),
            Err(e) => Err(format!("running record line {:?}: {e}", self.line)),
        }
    }

    /// Whether the runner and its child are provably gone, seen from `here`.
    pub fn is_stale(&self, here: &Machine) -> bool {
        if self.host != here.host || self.failed.is_some() {
            return false;
        }
        if self.boot_id != here.boot_id {
            return true;
        }
        let gone = |pid: u32, start: u64| pid == 0 || process_start(pid) != Some(start);
        gone(self.pid, self.pid_start) && gone(self.child, self.child_start)
    }
}

/// Every running record of the site, with its path. A torn or foreign file is reported, not
/// skipped: a record hides a job.
pub fn read_all(site: &Site) -> Result<Vec<(PathBuf, RunningRecord)>, String> {
    read_matching(site, "")
}

/// The running records of `host` (their names start with the host's name, so the others
/// are not even opened: fewer opens, fewer races with rewrites on network filesystems).
pub fn read_host(site: &Site, host: &str) -> Result<Vec<(PathBuf, RunningRecord)>, String> {
    let prefix = format!("{host}-");
    Ok(read_matching(site, &prefix)?
        .into_iter()
        .filter(|(_, r)| r.host == host)
        .collect())
}

fn read_matching(site: &Site, prefix: &str) -> Result<Vec<(PathBuf, RunningRecord)>, String> {
    let mut out = Vec::new();
    for (name, path) in crate::files::list(&running_dir(site)).map_err(|e| e.to_string())? {
        // (`.tmp`: a temporary of an older version, which named them so.)
        if !name.starts_with(prefix) || name.ends_with(".tmp") {
            continue;
        }
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            // Removed since the listing (the job finished); a network filesystem may report
            // that as another error on a file that is gone.
            Err(_) if !path.exists() => continue,
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        let rec = RunningRecord::parse(&text)
            .ok_or_else(|| format!("{}: not a running record", path.display()))?;
        out.push((path, rec));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// Puts the job of a record back at the top of its queue, in the explicit-range form, and
/// removes the record: both inside the queue's lock and only if the record is still there
/// unchanged (two runners of one host may find the same stale record). Returns whether this
/// call requeued it.
pub fn requeue(
    site: &Site,
    here: &Machine,
    path: &Path,
    rec: &RunningRecord,
    log: &mut dyn FnMut(String),
) -> Result<bool, String> {
    let queue = Queue::named(site.root(), &rec.queue)?;
    let (q, job) = rec.job()?;
    let line = QueueLine::Job(QueuedJob::explicit(&job, q.n));
    queue
        .with_lines(here, log, |lines| {
            let current = std::fs::read_to_string(path)
                .ok()
                .and_then(|t| RunningRecord::parse(&t));
            if current.as_ref() != Some(rec) {
                return Ok((false, false));
            }
            lines.insert(
                0,
                crate::queue::file::Entry {
                    line: 0,
                    text: line.to_string(),
                },
            );
            Ok((true, true))
        })
        .and_then(|requeued| {
            if requeued {
                // After the queue holds the job again: a crash in between leaves it in both
                // places, and running a finished job twice is a no-op, never a loss.
                std::fs::remove_file(path).map_err(|e| format!("{}: {e}", path.display()))?;
            }
            Ok(requeued)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_this_process_is_alive() {
        let me = std::process::id();
        let rec = RunningRecord {
            host: "h".into(),
            boot_id: "b".into(),
            pid: me,
            pid_start: process_start(me).unwrap(),
            child: 0,
            child_start: 0,
            queue: "prime".into(),
            line: "cap 2200.-- -max 01 -s 1 -n 00".into(),
            since: 5,
            failed: None,
        };
        assert_eq!(RunningRecord::parse(&rec.to_text()), Some(rec.clone()));
        let here = Machine {
            host: "h".into(),
            boot_id: "b".into(),
        };
        assert!(!rec.is_stale(&here));
        let reused = RunningRecord {
            pid_start: rec.pid_start + 1,
            ..rec.clone()
        };
        assert!(reused.is_stale(&here));
        let rebooted = Machine {
            boot_id: "c".into(),
            ..here.clone()
        };
        assert!(rec.is_stale(&rebooted));
        let elsewhere = Machine {
            host: "other".into(),
            ..here
        };
        assert!(!reused.is_stale(&elsewhere));
        assert_eq!(RunningRecord::parse("host h\n"), None);
    }
}
