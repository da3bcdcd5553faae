//! Running records: `running/<host>-<pid>-<runner>-<take>.<job>` says which job a runner
//! took, from which queue, and which processes work on it. A daemon writes the records of a
//! take inside the queue's lock as it takes the lines (as one take file,
//! [`crate::queue::takes`], whose records count as written), so a job is always in a queue,
//! a record, `done/` or `held/`. Success removes the record; any other end is settled by
//! [`settle`]: requeued, or counted as a failed attempt and requeued after a backoff, or
//! held. A record whose processes are provably gone (same host, and a new boot id or both
//! pids gone) is *stale* and settled as a failed attempt; its job resumes from its
//! checkpoint.

use crate::error::{Error, Result};
use crate::fault;
use crate::files::FileOp;
use crate::queue::held::{self, Attempt, RetryPolicy};
use crate::queue::takes;
use crate::queue::{Machine, Queue, QueueLine, QueuedJob};
use crate::solve::{Job, Site};
use std::path::{Path, PathBuf};

/// One running record.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RunningRecord {
    #[serde(deserialize_with = "crate::state::text")]
    pub host: String,
    #[serde(deserialize_with = "crate::state::text")]
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
    #[serde(deserialize_with = "crate::state::text")]
    pub line: String,
    /// Seconds since the epoch when the job was taken.
    pub since: u64,
    /// Why the job failed, once it has.
    #[serde(
        default,
        deserialize_with = "crate::state::opt_text",
        skip_serializing_if = "Option::is_none"
    )]
    pub failed: Option<String>,
}

pub fn running_dir(site: &Site) -> PathBuf {
    site.root().join("running")
}

pub use crate::procfs::process_start;

pub use crate::clock::now_secs;

impl RunningRecord {
    pub fn to_text(&self) -> String {
        crate::state::to_text(self)
    }

    /// Parses a record (also as written before the records went through serde, when the
    /// runner's and the child's pid and start time shared a line).
    pub fn parse(text: &str) -> Option<RunningRecord> {
        let split = [("pid", "pid_start"), ("child", "child_start")];
        crate::state::parse::<RunningRecord>(text, &split)
            .ok()
            .filter(|r| !r.host.is_empty() && r.pid != 0 && !r.line.is_empty())
    }

    /// Writes the record at `path` (temp file, fsync if `durable`, rename).
    pub fn write(&self, path: &Path, durable: bool) -> Result<()> {
        use crate::files::Durability;
        let durability = match durable {
            true => Durability::Data,
            false => Durability::Volatile,
        };
        crate::files::replace(path, self.to_text().as_bytes(), durability)
            .map_err(|e| Error::io(format_args!("writing {}", path.display()), e))
    }

    /// The job of the record's line.
    pub fn job(&self) -> Result<(QueuedJob, Job)> {
        match crate::queue::line::parse_line(&self.line) {
            Ok(Some(QueueLine::Job(q))) => Ok((q, q.job()?)),
            Ok(_) => Err(Error::Failed(format!(
                "running record line {:?} is not a job",
                self.line
            ))),
            Err(e) => Err(Error::Failed(format!(
                "running record line {:?}: {e}",
                self.line
            ))),
        }
    }

    /// Whether the runner and its child are provably gone, seen from `here`.
    pub fn is_stale(&self, here: &Machine) -> bool {
        if self.host != here.host {
            return false;
        }
        // (`failed`: a record an older version kept for the operator; settled now.)
        if self.failed.is_some() {
            return true;
        }
        if self.boot_id != here.boot_id {
            return true;
        }
        let gone = |pid: u32, start: u64| pid == 0 || process_start(pid) != Some(start);
        gone(self.pid, self.pid_start) && gone(self.child, self.child_start)
    }
}

/// Every running record of the site, with its path (a record still only in its take file
/// too, with the path it will have). A torn or foreign file is reported, not skipped: a
/// record hides a job.
pub fn read_all(site: &Site) -> Result<Vec<(PathBuf, RunningRecord)>> {
    read_matching(site, "", None)
}

/// The running records of `host` (their names start with the host's name, so the others
/// are not even opened: fewer opens, fewer races with rewrites on network filesystems).
pub fn read_host(site: &Site, host: &str) -> Result<Vec<(PathBuf, RunningRecord)>> {
    let prefix = format!("{host}-");
    Ok(read_matching(site, &prefix, None)?
        .into_iter()
        .filter(|(_, r)| r.host == host)
        .collect())
}

/// The records where stale ones of `host` may be: those of its daemons other than the live
/// one `pid` (whose records its runners hold), from one listing of `running/`. A record a
/// live daemon writes meanwhile may be missed, and is not stale. Over a network filesystem
/// a listing costs the server a look at every file of `running/`, and a daemon looks every
/// two seconds.
pub fn read_host_stale_candidates(
    site: &Site,
    host: &str,
    pid: u32,
) -> Result<Vec<(PathBuf, RunningRecord)>> {
    let prefix = format!("{host}-");
    let live = format!("{host}-{pid}-");
    Ok(read_matching(site, &prefix, Some(&live))?
        .into_iter()
        .filter(|(_, r)| r.host == host)
        .collect())
}

/// The records named `prefix...`, but not `live...`; without `live`, from two listings
/// (see [`read_listing`]), with it from one.
fn read_matching(
    site: &Site,
    prefix: &str,
    live: Option<&str>,
) -> Result<Vec<(PathBuf, RunningRecord)>> {
    // A take file completed between the listing and its reading has its records written
    // before it goes: listed again, they are found.
    for _ in 0..20 {
        if let Some(found) = read_listing(site, prefix, live)? {
            return Ok(found);
        }
    }
    Err(Error::Failed(format!(
        "{}: take files kept vanishing while it was read",
        running_dir(site).display()
    )))
}

/// The records of two listings, one after the other, and the take files' records that are
/// not written yet; `None` when a take file listed was gone when read. Two: a listing is no
/// snapshot, and one made while a daemon completes a take may pass the place of a record
/// before it is written and that of the take file after it is removed; the record is there
/// for the second. (With the queue's lock held no take file is made meanwhile.)
fn read_listing(
    site: &Site,
    prefix: &str,
    live: Option<&str>,
) -> Result<Option<Vec<(PathBuf, RunningRecord)>>> {
    let dir = running_dir(site);
    let mut listed: Vec<(String, PathBuf)> = crate::files::list(&dir).map_err(|e| e.to_string())?;
    if live.is_none() {
        listed.extend(crate::files::list(&dir).map_err(|e| e.to_string())?);
    }
    listed.sort_unstable();
    listed.dedup();
    let mut out = Vec::new();
    let mut takes = Vec::new();
    for (name, path) in listed {
        // Not records: temporaries (`.tmp`, and `.NAME.PID.tmp` while one is written) and
        // FUSE's `.fuse_hidden*` (sshfs renames a removed file that is still open to that
        // until its last close reaches it).
        if !name.starts_with(prefix)
            || live.is_some_and(|l| name.starts_with(l))
            || name.ends_with(".tmp")
            || name.starts_with('.')
        {
            continue;
        }
        if takes::is_take(&name) {
            takes.push(path);
            continue;
        }
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            // Removed since the listing (the job finished); a network filesystem may report
            // that as another error on a file that is gone.
            Err(_) if !path.exists() => continue,
            Err(e) => return Err(Error::file(FileOp::Reading, &path, e)),
        };
        let rec = RunningRecord::parse(&text)
            .ok_or_else(|| format!("{}: not a running record", path.display()))?;
        out.push((path, rec));
    }
    let written: std::collections::HashSet<PathBuf> = out.iter().map(|(p, _)| p.clone()).collect();
    for take in takes {
        let Some(records) = takes::read(&take)? else {
            return Ok(None);
        };
        out.extend(records.into_iter().filter(|(p, _)| !written.contains(p)));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(Some(out))
}

/// How a taken job's attempt ended, for [`settle`].
#[derive(Clone, Debug)]
pub enum Ending {
    /// Stopped at a checkpoint (exit 3, or a stop signal its runner sent): requeued, and no
    /// attempt used.
    Stopped,
    /// Failed: one attempt used. `status` says how (`signal 9 (SIGKILL)`, `host ws2
    /// crashed`, ...); `output` is the file holding the job process's output, if any.
    Failed {
        status: String,
        output: Option<PathBuf>,
    },
}

/// What [`settle`] did with a record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Settled {
    /// The record was gone or changed: another process settled it first.
    Gone,
    /// The job had finished (its done record exists): its pair was moved on, its record
    /// removed, and it is not run again.
    Finished,
    /// Back at the top of its queue (stopped, or failed after it was done: its run again
    /// only moves its pair on).
    Requeued,
    /// Failed attempt `attempt`; back at the top of its queue, runnable from `at`.
    Retry { attempt: u32, at: u64 },
    /// Held after these attempts; `new` when this call held it (mail the operator once).
    Held { attempts: Vec<Attempt>, new: bool },
}

/// The name an attempt is recorded under: the record's file name and when it was taken.
fn record_id(path: &Path, rec: &RunningRecord) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("{name}@{}", rec.since)
}

/// Settles the running record at `path` whose job ended (or whose processes are gone):
/// inside the lock of the job's queue, and only if the record is still there unchanged (two
/// runners of one host may find the same stale record), a failure is counted as an attempt
/// (once, however often a crash makes this run again), then the job is requeued at the top
/// in the explicit-range form, where its checkpoint makes it resume, or held after
/// `policy.max_attempts`. The record is removed last: a crash in between leaves the job in
/// two places, never in none.
pub fn settle(
    site: &Site,
    here: &Machine,
    path: &Path,
    rec: &RunningRecord,
    ending: &Ending,
    policy: &RetryPolicy,
    log: &mut dyn FnMut(String),
) -> Result<Settled> {
    let queue = Queue::named(site.root(), &rec.queue)?;
    let (q, job) = rec.job()?;
    // A record still only in its take file (its daemon died before it wrote the records).
    takes::complete_listing(site, path)?;
    // A finished job is never run again (a phase job of a published pair would fail): its
    // pair is moved on (`advance` queues only what is not queued, running or done), then
    // its record goes.
    if crate::queue::done::record_path(site, &job).exists() {
        if !is_current(path, rec)? {
            return Ok(Settled::Gone);
        }
        crate::queue::pairs::advance(site, &queue, here, &job, log)?;
        remove_record(path)?;
        return Ok(Settled::Finished);
    }
    let line = QueueLine::Job(QueuedJob::explicit(&job, q.n));
    queue.with_lines_then(
        here,
        log,
        |lines| {
            if !is_current(path, rec)? {
                return Ok((Settled::Gone, false));
            }
            let settled = match ending {
                Ending::Failed { status, output } => {
                    count_attempt(site, path, rec, &job, status, output.as_deref(), policy)?
                }
                Ending::Stopped => Settled::Requeued,
            };
            fault::point("settle.counted");
            // Queued again already, or taken by another runner since (a crash left the job
            // in two places): queueing it once more would run it twice at once.
            if matches!(settled, Settled::Held { .. })
                || held::queued_already(lines, &job)
                || running_elsewhere(site, path, &job)?
            {
                return Ok((settled, false));
            }
            lines.insert(
                0,
                crate::queue::file::Entry {
                    line: 0,
                    text: line.to_string(),
                },
            );
            Ok((settled, true))
        },
        // Still inside the lock: no other process sees the job queued and recorded at once.
        |settled| {
            fault::point("settle.queued");
            match settled {
                Settled::Gone => Ok(()),
                _ => remove_record(path),
            }
        },
    )
}

/// Requeues, in one locked step per queue, the jobs of running records that stopped at a
/// checkpoint (a daemon's runners stopping together on SIGTERM, or the jobs it took and had
/// not started): back at the top of their queues in the explicit-range form, in the order of
/// their ranges, no attempt used; then the records go, still inside the lock. One lock for
/// all of them, where settling each ([`settle`]) takes it once a job: a pilot of 32 runners
/// preempted on a network filesystem otherwise queues 32 takers for the lock at once.
/// Left alone, and not returned: a record gone or changed since, and a job whose done record
/// exists (for [`settle`], which moves its pair on). Returns the records it settled.
pub fn settle_stopped(
    site: &Site,
    here: &Machine,
    records: &[(PathBuf, RunningRecord)],
    log: &mut dyn FnMut(String),
) -> Result<Vec<PathBuf>> {
    for (path, _) in records {
        takes::complete_listing(site, path)?;
    }
    let mut settled = Vec::new();
    let mut queues: Vec<&str> = records.iter().map(|(_, r)| r.queue.as_str()).collect();
    queues.sort_unstable();
    queues.dedup();
    for name in queues {
        let queue = Queue::named(site.root(), name)?;
        let mut group: Vec<(&PathBuf, &RunningRecord, QueuedJob, Job)> = Vec::new();
        for (path, rec) in records.iter().filter(|(_, r)| r.queue == name) {
            let (q, job) = rec.job()?;
            group.push((path, rec, q, job));
        }
        group.sort_by_key(|(_, _, _, j)| {
            (j.slice.to_string(), j.phase.to_string(), j.round, j.first)
        });
        // Jobs other runners hold (a crash can leave a job in two places): not queued again.
        let mine: std::collections::HashSet<&PathBuf> = group.iter().map(|g| g.0).collect();
        let elsewhere: std::collections::HashSet<Job> = read_all(site)?
            .iter()
            .filter(|(p, _)| !mine.contains(p))
            .filter_map(|(_, r)| r.job().ok().map(|(_, j)| j))
            .collect();
        let done = queue.with_lines_then(
            here,
            log,
            |lines| {
                let queued: std::collections::HashSet<Job> = lines
                    .iter()
                    .filter_map(|e| match e.parse() {
                        Ok(Some(QueueLine::Job(q))) => q.job().ok(),
                        _ => None,
                    })
                    .collect();
                let (mut new, mut gone) = (Vec::new(), Vec::new());
                for (path, rec, q, job) in &group {
                    if !is_current(path, rec)?
                        || crate::queue::done::record_path(site, job).exists()
                    {
                        continue;
                    }
                    gone.push((*path).clone());
                    if queued.contains(job) || elsewhere.contains(job) {
                        continue;
                    }
                    new.push(crate::queue::file::Entry {
                        line: 0,
                        text: QueueLine::Job(QueuedJob::explicit(job, q.n)).to_string(),
                    });
                }
                let changed = !new.is_empty();
                new.append(lines);
                *lines = new;
                Ok((gone, changed))
            },
            |gone| {
                fault::point("settle.queued");
                gone.iter().try_for_each(|p| remove_record(p))
            },
        )?;
        settled.extend(done);
    }
    Ok(settled)
}

/// Whether the record at `path` is still `rec` (a missing file is not; any other error to
/// read it is an error, not a "no").
fn is_current(path: &Path, rec: &RunningRecord) -> Result<bool> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(RunningRecord::parse(&t).as_ref() == Some(rec)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(Error::file(FileOp::Reading, path, e)),
    }
}

/// Removes a file of `running/` (a record or a take file); one already gone is no error.
pub(crate) fn remove_record(path: &Path) -> Result<()> {
    crate::files::remove_if_there(path)
        .map(drop)
        .map_err(|e| Error::file(FileOp::Removing, path, e))
}

/// Whether a running record other than the one at `path` holds `job`.
fn running_elsewhere(site: &Site, path: &Path, job: &Job) -> Result<bool> {
    Ok(read_all(site)?
        .iter()
        .any(|(p, r)| p != path && r.job().is_ok_and(|(_, j)| j == *job)))
}

/// Whether a job process of `job` on this site is alive on this machine (found by its
/// command line): a runner killed between starting its child and recording the child's pid
/// leaves a record that names no child, while the orphan checkpoints after its SIGTERM.
pub fn orphan_job_alive(site: &Site, job: &Job) -> bool {
    let (site_arg, job_arg) = (site.root().as_os_str().as_encoded_bytes(), job.to_string());
    crate::procfs::process_with_args(&[b"--background", site_arg, job_arg.as_bytes()])
}

/// Records a failed attempt of `job` (unless this record's ending is recorded already) and
/// holds the job once it has used its attempts. Runs inside the queue's lock.
fn count_attempt(
    site: &Site,
    path: &Path,
    rec: &RunningRecord,
    job: &Job,
    status: &str,
    output: Option<&Path>,
    policy: &RetryPolicy,
) -> Result<Settled> {
    let now = now_secs();
    let id = record_id(path, rec);
    let (mut attempts, damaged) = match held::read_attempts(site, job) {
        Ok(a) => (a, None),
        // A damaged record holds its job; it is kept for the operator to see.
        Err(e @ held::HeldError::Corrupt { .. }) => (Vec::new(), Some(e.to_string())),
        // Not readable now: the job stays where it is until it is.
        Err(e) => return Err(Error::from_message(e.to_string())),
    };
    if !attempts.iter().any(|a| a.record == id) {
        let n = attempts.len() as u32 + 1;
        let kept = match output {
            Some(out) if out.exists() => {
                // Copied, not renamed: the runner's output is on its own disk, not the site's
                // (the runner removes it once the job is settled).
                let name = held::output_name(job, n);
                let to = site.root().join(&name);
                let text = std::fs::read(out).map_err(|e| Error::file(FileOp::Reading, out, e))?;
                crate::files::replace(&to, &text, crate::files::Durability::Data)
                    .map_err(|e| Error::file(FileOp::Writing, &to, e))?;
                Some(name)
            }
            _ => None,
        };
        attempts.push(Attempt {
            attempt: n,
            host: rec.host.clone(),
            record: id,
            taken: rec.since,
            ended: now,
            status: match &damaged {
                Some(e) => format!("{status} (earlier attempts unreadable: {e})"),
                None => status.to_string(),
            },
            output: kept,
        });
        if damaged.is_none() {
            held::write_attempts(site, job, &attempts).map_err(|e| e.to_string())?;
        }
    }
    let n = attempts.len() as u32;
    if damaged.is_none() && n < policy.max_attempts {
        return Ok(Settled::Retry {
            attempt: n,
            at: attempts[attempts.len() - 1].ended + policy.backoff(n),
        });
    }
    let new = !matches!(held::read_held(site, job), Ok(Some(_)));
    if new {
        let held = held::HeldRecord {
            job: job.to_string(),
            queue: rec.queue.clone(),
            line: QueuedJob::explicit(job, rec.job()?.0.n).to_string(),
            since: now,
            attempts: n,
        };
        held::write_held(site, job, &held).map_err(|e| e.to_string())?;
        fault::point("settle.held");
    }
    Ok(Settled::Held { attempts, new })
}

#[cfg(test)]
pub(crate) mod tests {
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

    /// The record of runner `pid` of host `h` that took `line` from prime, no child yet.
    pub(crate) fn taken(pid: u32, line: &str) -> RunningRecord {
        RunningRecord {
            host: "h".into(),
            boot_id: "b".into(),
            pid,
            pid_start: 1,
            child: 0,
            child_start: 0,
            queue: "prime".into(),
            line: line.into(),
            since: 5,
            failed: None,
        }
    }

    /// A scratch site, and this machine as host `h` of boot `b`.
    fn test_site(name: &str) -> (PathBuf, Site, Machine) {
        let dir = crate::files::test_dir(name);
        let site = Site::new(&dir);
        let here = Machine {
            host: "h".into(),
            boot_id: "b".into(),
        };
        (dir, site, here)
    }

    #[test]
    fn a_record_that_cannot_be_written_leaves_the_job_where_it_was() {
        let (dir, site, here) = test_site("settle-full");
        let rec = RunningRecord {
            host: "h".into(),
            boot_id: "b".into(),
            pid: 1,
            pid_start: 1,
            child: 2,
            child_start: 2,
            queue: "prime".into(),
            line: "cap 2100.-- -max 01 -s 1 -n 00".into(),
            since: 5,
            failed: None,
        };
        let path = running_dir(&site).join("h-1-0-0.job");
        rec.write(&path, false).unwrap();
        // A file where the attempts directory should be: writing the attempt fails, as on a
        // full disk.
        std::fs::write(dir.join("attempts"), "in the way").unwrap();
        let policy = RetryPolicy::default();
        let ending = Ending::Failed {
            status: "signal 9 (SIGKILL)".into(),
            output: None,
        };
        let mut log = |_: String| {};
        assert!(settle(&site, &here, &path, &rec, &ending, &policy, &mut log).is_err());
        assert!(path.exists(), "the job is still in its running record");
        let queue = Queue::named(&dir, "p").unwrap();
        assert!(queue.read_unlocked().unwrap().is_empty());
        // Once the write can go through, the same settling does.
        std::fs::remove_file(dir.join("attempts")).unwrap();
        let settled = settle(&site, &here, &path, &rec, &ending, &policy, &mut log).unwrap();
        assert!(
            matches!(settled, Settled::Retry { attempt: 1, .. }),
            "{settled:?}"
        );
        assert!(!path.exists());
        assert_eq!(queue.read_unlocked().unwrap().len(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn stopped_jobs_are_requeued_together_in_order_and_only_once() {
        let (dir, site, here) = test_site("settle-stopped");
        let rec = |pid: u32, n: u32| taken(pid, &format!("cap 2222.66 -max 08 -s 1 -n {n:02}"));
        let queue = Queue::named(&dir, "p").unwrap();
        std::fs::create_dir_all(dir.join("queues")).unwrap();
        std::fs::write(queue.path(), "cap 2222.66 -max 08 -s 1 -n 07\n").unwrap();
        // Stopped in another order than the queue's; job 5 is queued already (a crash left
        // it in two places), job 6 another runner holds, job 4 had finished.
        let mut records = Vec::new();
        for n in [3, 1, 2, 5, 4] {
            let path = running_dir(&site).join(format!("h-1-0-{n}.job"));
            rec(1, n).write(&path, false).unwrap();
            records.push((path, rec(1, n)));
        }
        std::fs::write(
            queue.path(),
            format!(
                "{}\ncap 2222.66 -max 08 -s 1 -n 07\n",
                rec(1, 5).job().unwrap().0
            ),
        )
        .unwrap();
        let other = running_dir(&site).join("h-2-0-6.job");
        rec(2, 6).write(&other, false).unwrap();
        records.push((other.clone(), rec(2, 6)));
        let (_, finished) = rec(1, 4).job().unwrap();
        crate::queue::done::write(&site, &finished, &Default::default(), "h", 0.1).unwrap();
        // The other runner's record changed since it was read: left alone.
        rec(3, 6).write(&other, false).unwrap();
        let mut log = |_: String| {};
        let settled = settle_stopped(&site, &here, &records, &mut log).unwrap();
        assert_eq!(settled.len(), 4, "1, 2, 3 and 5 settled: {settled:?}");
        let text: Vec<String> = queue
            .read_unlocked()
            .unwrap()
            .into_iter()
            .map(|e| e.text)
            .collect();
        let explicit = |n: u32| {
            let (q, job) = rec(1, n).job().unwrap();
            QueuedJob::explicit(&job, q.n).to_string()
        };
        assert_eq!(
            text,
            [
                explicit(1),
                explicit(2),
                explicit(3),
                rec(1, 5).job().unwrap().0.to_string(),
                "cap 2222.66 -max 08 -s 1 -n 07".to_string()
            ]
        );
        let left: Vec<String> = read_all(&site)
            .unwrap()
            .into_iter()
            .map(|(p, _)| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            left,
            ["h-1-0-4.job", "h-2-0-6.job"],
            "the finished and the changed stay"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_job_another_runner_took_is_not_queued_again_and_a_finished_one_not_rerun() {
        let (dir, site, here) = test_site("settle-twice");
        let rec = |pid: u32| taken(pid, "cap 2100.-- -max 01 -s 1 -n 00");
        // A crash left the job in a dead runner's record and in the queue; another runner
        // took it from the queue since.
        let (dead, live) = (rec(1), rec(2));
        let dead_path = running_dir(&site).join("h-1-0-0.job");
        let live_path = running_dir(&site).join("h-2-0-0.job");
        dead.write(&dead_path, false).unwrap();
        live.write(&live_path, false).unwrap();
        let policy = RetryPolicy::default();
        let mut log = |_: String| {};
        let settled = settle(
            &site,
            &here,
            &dead_path,
            &dead,
            &Ending::Stopped,
            &policy,
            &mut log,
        );
        assert_eq!(settled.unwrap(), Settled::Requeued);
        let queue = Queue::named(&dir, "p").unwrap();
        assert!(queue.read_unlocked().unwrap().is_empty(), "queued twice");
        assert!(!dead_path.exists() && live_path.exists());
        // The live runner's job finished (its done record is there) before its record went:
        // settled, it is not queued to run again.
        let (_, job) = live.job().unwrap();
        crate::queue::done::write(&site, &job, &Default::default(), "h", 0.1).unwrap();
        let failed = Ending::Failed {
            status: "its runner is gone".into(),
            output: None,
        };
        let settled = settle(&site, &here, &live_path, &live, &failed, &policy, &mut log);
        assert_eq!(settled.unwrap(), Settled::Finished);
        assert!(
            queue.read_unlocked().unwrap().is_empty(),
            "a finished job requeued"
        );
        assert!(!live_path.exists());
        assert!(held::read_attempts(&site, &job).unwrap().is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
