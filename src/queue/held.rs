//! Failed attempts and held jobs: what keeps a job from being lost when its process dies.
//!
//! A job whose process dies by a signal its runner did not send, exits with a status other
//! than success or "stopped at a checkpoint", or whose host crashed or rebooted, has used one
//! *attempt*. Its attempts are recorded in `attempts/<slice>/<phase>-r<round>-<first>-<last>`
//! (the name of its done record; JSON, one entry per attempt: host, attempt number, exit
//! status or signal, times, where its output is kept). The job goes back to the top of its
//! queue and resumes from its checkpoint, but no runner takes it before a backoff that doubles
//! with each attempt ([`RetryPolicy::backoff`]), so a job that fails at once cannot spin.
//! After `max_attempts` it is *held*: `held/<slice>/<name>` records its queue and line, and it
//! is in no queue until an operator releases it (`addq --release`), which puts it back at the
//! top of its queue with its attempts reset.
//!
//! Both records are written inside the lock of the job's queue (`queue::running::settle`),
//! with the attempt named after the running record it ends, so a crash between two steps
//! never counts an attempt twice. A record that does not parse holds its job: it is listed
//! with the error naming the file, and releasing the job repairs it.

use super::file::{Entry, Queue};
use super::line::{QueueLine, QueuedJob};
use crate::files::{FileOp, failed};
use crate::lock::Machine;
use crate::solve::{Job, Phase, Site};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

/// The retry policy is the site's setting (`hosts.toml`'s `[jobs]`).
pub use crate::hosts::RetryPolicy;

/// One failed attempt.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Attempt {
    /// 1 for the first.
    pub attempt: u32,
    pub host: String,
    /// The running record the attempt ended (its file name and the time it was taken): the
    /// same ending seen twice (a crash between counting and settling) counts once.
    pub record: String,
    /// When the job was taken and when the attempt ended (seconds since the epoch).
    pub taken: u64,
    pub ended: u64,
    /// `exit status 101`, `signal 9 (SIGKILL)`, `host ws2 crashed`, ...
    pub status: String,
    /// The job process's output, relative to the site (none when the host took it along).
    pub output: Option<String>,
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct AttemptsFile {
    job: String,
    attempts: Vec<Attempt>,
}

/// A held job: out of the queues until released.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct HeldRecord {
    pub job: String,
    /// The queue it came from and goes back to, and its line there.
    pub queue: String,
    pub line: String,
    /// When it was held.
    pub since: u64,
    pub attempts: u32,
}

/// Errors of the held-job records and commands.
#[derive(Debug, thiserror::Error)]
pub enum HeldError {
    #[error("{path}: {why}; its job is treated as held (addq --release repairs it)")]
    Corrupt { path: PathBuf, why: String },
    /// A record file or directory that could not be read or written (a
    /// [`crate::files::FileError`]: the operation and the file).
    #[error(transparent)]
    File(std::io::Error),
    #[error("{0}")]
    Io(String),
    #[error(
        "no held job matches {0:?} (`dbstatus held` lists them; give a job as SLICE/PHASE-rROUND-FIRST-LAST, a slice, or all)"
    )]
    NoMatch(String),
    #[error("{key} is not held ({state}); nothing changed")]
    NotHeld { key: String, state: String },
    #[error(
        "{0:?} is not a job name: expected SLICE/PHASE-rROUND-FIRST-LAST, e.g. 3113.01/lookup-r0-0-32768"
    )]
    BadName(String),
}

impl From<HeldError> for crate::error::Error {
    fn from(e: HeldError) -> Self {
        match e {
            HeldError::File(e) => e.into(),
            e => crate::error::Error::from_message(e.to_string()),
        }
    }
}

fn io(op: FileOp, path: &Path, e: std::io::Error) -> HeldError {
    HeldError::File(failed(op, path, e))
}

/// A job's name in these records and commands: `<slice>/<phase>-r<round>-<first>-<last>`,
/// as its done record is named.
pub fn key(job: &Job) -> String {
    format!(
        "{}/{}",
        job.slice,
        super::done::record_name(job.phase, job.round, job.first, job.last)
    )
}

/// The job a [`key`] names.
pub fn parse_key(text: &str) -> Result<Job, HeldError> {
    let bad = || HeldError::BadName(text.to_string());
    let (slice, name) = text.split_once('/').ok_or_else(bad)?;
    let slice: crate::slice::Slice = slice.parse().map_err(|_| bad())?;
    let n = super::done::parse_name(name).ok_or_else(bad)?;
    Job::new(n.phase, slice, n.first, n.last, n.round).map_err(|_| bad())
}

fn record_file(site: &Site, dir: &str, job: &Job) -> PathBuf {
    site.root().join(dir).join(key(job))
}

pub fn attempts_path(site: &Site, job: &Job) -> PathBuf {
    record_file(site, "attempts", job)
}

pub fn held_path(site: &Site, job: &Job) -> PathBuf {
    record_file(site, "held", job)
}

/// Where attempt `n`'s output is kept, relative to the site.
pub fn output_name(job: &Job, n: u32) -> String {
    format!("attempts/{}.{n}.out", key(job))
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Option<T>, HeldError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(FileOp::Reading, path, e)),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| HeldError::Corrupt {
            path: path.to_path_buf(),
            why: format!("not a valid record ({e})"),
        })
}

fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), HeldError> {
    let mut text = serde_json::to_string_pretty(value).expect("records serialize");
    text.push('\n');
    crate::files::replace(path, text.as_bytes(), crate::files::Durability::Full)
        .map_err(|e| io(FileOp::Writing, path, e))
}

/// The job's failed attempts, oldest first (none recorded: empty).
pub fn read_attempts(site: &Site, job: &Job) -> Result<Vec<Attempt>, HeldError> {
    let path = attempts_path(site, job);
    Ok(read_json::<AttemptsFile>(&path)?
        .map(|f| f.attempts)
        .unwrap_or_default())
}

pub fn write_attempts(site: &Site, job: &Job, attempts: &[Attempt]) -> Result<(), HeldError> {
    let file = AttemptsFile {
        job: job.to_string(),
        attempts: attempts.to_vec(),
    };
    write_json(&attempts_path(site, job), &file)
}

pub fn read_held(site: &Site, job: &Job) -> Result<Option<HeldRecord>, HeldError> {
    read_json(&held_path(site, job))
}

pub fn write_held(site: &Site, job: &Job, rec: &HeldRecord) -> Result<(), HeldError> {
    write_json(&held_path(site, job), rec)
}

fn remove_if_there(path: &Path) -> Result<(), HeldError> {
    crate::files::remove_if_there(path)
        .map(drop)
        .map_err(|e| io(FileOp::Removing, path, e))
}

/// Forgets a job's attempts, their kept output (however many attempts a damaged record
/// hides, up to the policy's maximum) and its held record.
fn forget(site: &Site, policy: &RetryPolicy, s: &JobState) -> Result<(), HeldError> {
    let recorded = s.attempts.as_ref().map_or(0, |a| a.len() as u32);
    for n in 1..=recorded.max(policy.max_attempts) {
        remove_if_there(&site.root().join(output_name(&s.job, n)))?;
    }
    remove_if_there(&attempts_path(site, &s.job))?;
    remove_if_there(&held_path(site, &s.job))
}

/// Whether a runner may take a job now, as far as its attempts go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Gate {
    Open,
    /// Backing off until this time (seconds since the epoch).
    Wait(u64),
    /// Held, or its records do not parse: why.
    Held(String),
}

/// Answers [`Gate`]s for one scan of the queues: `attempts/` and `held/` are listed once (on
/// a healthy build both are empty, so a scan costs two directory reads).
pub struct Gates<'a> {
    site: &'a Site,
    policy: RetryPolicy,
    now: u64,
    slices: Option<(HashSet<String>, HashSet<String>)>,
    /// `attempts/` or `held/` could not be listed: nothing is taken until they can.
    unreadable: bool,
    seen: HashMap<Job, Gate>,
}

impl<'a> Gates<'a> {
    pub fn new(site: &'a Site, policy: RetryPolicy, now: u64) -> Self {
        Gates {
            site,
            policy,
            now,
            slices: None,
            unreadable: false,
            seen: HashMap::new(),
        }
    }

    fn listed(&mut self) -> &(HashSet<String>, HashSet<String>) {
        let root = self.site.root();
        let unreadable = &mut self.unreadable;
        self.slices.get_or_insert_with(|| {
            let mut names = |d: &str| -> HashSet<String> {
                match crate::files::list(&root.join(d)) {
                    Ok(l) => l.into_iter().map(|(n, _)| n).collect(),
                    Err(_) => {
                        *unreadable = true;
                        HashSet::new()
                    }
                }
            };
            (names("attempts"), names("held"))
        })
    }

    pub fn gate(&mut self, job: &Job) -> Gate {
        if let Some(g) = self.seen.get(job) {
            return g.clone();
        }
        let slice = job.slice.to_string();
        let (in_attempts, in_held) = {
            let (a, h) = self.listed();
            (a.contains(&slice), h.contains(&slice))
        };
        let g = if self.unreadable {
            Gate::Wait(self.now + 1)
        } else if !in_attempts && !in_held {
            Gate::Open
        } else {
            state_gate(self.site, job, &self.policy, self.now)
        };
        self.seen.insert(*job, g.clone());
        g
    }
}

fn state_gate(site: &Site, job: &Job, policy: &RetryPolicy, now: u64) -> Gate {
    match read_held(site, job) {
        Ok(Some(h)) => {
            return Gate::Held(format!(
                "held since {} after {} attempts",
                h.since, h.attempts
            ));
        }
        Ok(None) => {}
        Err(e) => return Gate::Held(e.to_string()),
    }
    match read_attempts(site, job) {
        Err(e) => Gate::Held(e.to_string()),
        Ok(a) if a.len() as u32 >= policy.max_attempts => {
            Gate::Held(format!("{} attempts of {}", a.len(), policy.max_attempts))
        }
        Ok(a) => match a.last() {
            Some(last) if now < last.ended + policy.backoff(a.len() as u32) => {
                Gate::Wait(last.ended + policy.backoff(a.len() as u32))
            }
            _ => Gate::Open,
        },
    }
}

/// A job with failed attempts or a held record, as the operator commands show it.
#[derive(Debug)]
pub struct JobState {
    pub key: String,
    pub job: Job,
    pub held: Result<Option<HeldRecord>, HeldError>,
    pub attempts: Result<Vec<Attempt>, HeldError>,
    /// Its done record exists (it succeeded after failing).
    pub done: bool,
}

impl JobState {
    /// Held: a held record, records that do not parse, or as many attempts as allowed.
    pub fn is_held(&self, policy: &RetryPolicy) -> bool {
        match (&self.held, &self.attempts) {
            (Ok(Some(_)) | Err(_), _) | (_, Err(_)) => true,
            (Ok(None), Ok(a)) => !self.done && a.len() as u32 >= policy.max_attempts,
        }
    }

    /// One word for the table: `held`, `done`, `retry` (waiting or queued again).
    pub fn state(&self, policy: &RetryPolicy) -> &'static str {
        if self.is_held(policy) {
            "held"
        } else if self.done {
            "done"
        } else {
            "retry"
        }
    }

    /// When it may run again, while it backs off.
    pub fn retry_at(&self, policy: &RetryPolicy) -> Option<u64> {
        let a = self.attempts.as_ref().ok()?;
        let last = a.last()?;
        (!self.done && !self.is_held(policy)).then(|| last.ended + policy.backoff(a.len() as u32))
    }

    /// The queue and line it goes back to: from its held record or, when that is missing or
    /// damaged, rebuilt from its name (a `pair` job's queue is small, any other prime).
    pub fn queue_and_line(&self) -> (String, String) {
        if let Ok(Some(h)) = &self.held {
            return (h.queue.clone(), h.line.clone());
        }
        let queue = if self.job.phase == Phase::Pair {
            "small"
        } else {
            "prime"
        };
        (queue.into(), QueuedJob::explicit(&self.job, 0).to_string())
    }

    /// Every error its records gave.
    pub fn errors(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Err(e) = &self.held {
            out.push(e.to_string());
        }
        if let Err(e) = &self.attempts {
            out.push(e.to_string());
        }
        out
    }
}

/// Record names under `attempts/` or `held/`: `<slice>/<name>`, kept output (`.out`) and
/// hidden temporaries left out.
fn record_keys(site: &Site, dir: &str) -> Result<Vec<String>, HeldError> {
    let root = site.root().join(dir);
    let mut keys = Vec::new();
    let walk = walkdir::WalkDir::new(&root).min_depth(2).max_depth(2);
    for e in walk
        .into_iter()
        .filter_entry(|e| !e.file_name().to_string_lossy().starts_with('.'))
    {
        let e = match e {
            Ok(e) => e,
            Err(err) if crate::files::root_missing(&err) => break,
            Err(err) => {
                let text = err.to_string();
                let e = err
                    .into_io_error()
                    .unwrap_or_else(|| std::io::Error::other(text));
                return Err(io(FileOp::Listing, &root, e));
            }
        };
        let name = e.file_name().to_string_lossy();
        let slice = e
            .path()
            .parent()
            .and_then(|p| p.file_name())
            .map(|s| s.to_string_lossy());
        if let Some(slice) = slice
            && !name.contains('.')
        {
            keys.push(format!("{slice}/{name}"));
        }
    }
    Ok(keys)
}

/// Every job with failed attempts or a held record, by name. A file whose name is not a job
/// is an error naming it (it could hide a job).
pub fn list(site: &Site) -> Result<Vec<JobState>, HeldError> {
    let mut keys: BTreeMap<String, Job> = BTreeMap::new();
    for dir in ["attempts", "held"] {
        for k in record_keys(site, dir)? {
            let job = parse_key(&k).map_err(|_| HeldError::Corrupt {
                path: site.root().join(dir).join(&k),
                why: "not named after a job".into(),
            })?;
            keys.insert(k, job);
        }
    }
    Ok(keys
        .into_iter()
        .map(|(key, job)| JobState {
            held: read_held(site, &job),
            attempts: read_attempts(site, &job),
            done: super::done::record_path(site, &job).exists(),
            key,
            job,
        })
        .collect())
}

/// The held jobs a selector names: `all`, a job name, or a slice. Errors when it names
/// nothing, or names a job that is not held.
fn select(site: &Site, policy: &RetryPolicy, which: &str) -> Result<Vec<JobState>, HeldError> {
    let states = list(site)?;
    if which.contains('/') {
        let job = parse_key(which)?;
        let key = key(&job);
        return match states.into_iter().find(|s| s.key == key) {
            Some(s) if s.is_held(policy) => Ok(vec![s]),
            Some(s) => Err(HeldError::NotHeld {
                key,
                state: match s.retry_at(policy) {
                    Some(t) => format!("it is waiting to retry at {t}, in its queue"),
                    None => format!("it is {}", s.state(policy)),
                },
            }),
            None => Err(HeldError::NotHeld {
                key,
                state: "it has no failed attempts".into(),
            }),
        };
    }
    let slice: Option<crate::slice::Slice> = which.parse().ok();
    let held: Vec<JobState> = states
        .into_iter()
        .filter(|s| s.is_held(policy) && (which == "all" || slice == Some(s.job.slice)))
        .collect();
    if held.is_empty() {
        return Err(HeldError::NoMatch(which.to_string()));
    }
    Ok(held)
}

/// `addq --release WHICH`: puts the held jobs it names back at the top of their queues
/// (unless a line for them is there already) with their attempts reset. The queue is
/// written before the records go, so a crash in between leaves the job queued and still
/// listed as held, never nowhere. Returns what it released, as `key -> queue: line`.
pub fn release(
    site: &Site,
    here: &Machine,
    policy: &RetryPolicy,
    which: &str,
    log: &mut dyn FnMut(String),
) -> Result<Vec<String>, HeldError> {
    let chosen = select(site, policy, which)?;
    let mut done = Vec::new();
    for s in chosen {
        let (queue_name, line) = s.queue_and_line();
        let queue =
            Queue::named(site.root(), &queue_name).map_err(|e| HeldError::Io(e.to_string()))?;
        // A job with damaged attempts but no held record is still in a queue or running:
        // resetting its attempts is all it needs.
        let requeue = !matches!(s.held, Ok(None));
        if requeue {
            queue
                .with_lines(here, log, |lines| {
                    if queued_already(lines, &s.job) {
                        return Ok(((), false));
                    }
                    lines.insert(
                        0,
                        Entry {
                            line: 0,
                            text: line.clone(),
                        },
                    );
                    Ok(((), true))
                })
                .map_err(|e| HeldError::Io(e.to_string()))?;
        }
        forget(site, policy, &s)?;
        done.push(if requeue {
            format!("{} -> top of {queue_name}: {line}", s.key)
        } else {
            format!("{}: attempts reset", s.key)
        });
    }
    Ok(done)
}

/// `addq --remove KEY`: forgets a held job for good (its held record, attempts and kept
/// output). Only a held job can be removed this way; a queued one is edited out of its
/// queue with `addq --edit`.
pub fn remove(site: &Site, policy: &RetryPolicy, which: &str) -> Result<JobState, HeldError> {
    if !which.contains('/') {
        return Err(HeldError::BadName(which.to_string()));
    }
    let s = select(site, policy, which)?.remove(0);
    forget(site, policy, &s)?;
    Ok(s)
}

/// The command that releases a job (or `all`), as the messages print it.
pub fn release_command(site: &Site, which: &str) -> String {
    format!(
        "addq --site {} --release {}",
        shell_word(&site.root().display().to_string()),
        shell_word(which)
    )
}

/// `text` as one word for a POSIX shell (quoted only when it needs to be).
fn shell_word(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        return text.to_string();
    }
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// What the operator is told when a job is held: the job, every attempt's reason, the last
/// lines of its last output, and the command that releases it.
pub fn held_report(site: &Site, job: &Job, attempts: &[Attempt]) -> String {
    let mut text = format!(
        "{job} ({}) failed {} time(s) and is held: it is in no queue until released.\n\n",
        key(job),
        attempts.len()
    );
    for a in attempts {
        text += &format!(
            "attempt {} on {}: {} (taken {}, ended {}){}\n",
            a.attempt,
            a.host,
            a.status,
            crate::clock::local_time(a.taken),
            crate::clock::local_time(a.ended),
            a.output
                .as_ref()
                .map_or(String::new(), |o| format!("; output in {o}"))
        );
    }
    if let Some(out) = attempts.iter().rev().find_map(|a| a.output.as_ref()) {
        let output = std::fs::read_to_string(site.root().join(out)).unwrap_or_default();
        let lines: Vec<&str> = output.lines().collect();
        text += &format!("\nlast lines of {out}:\n");
        for l in &lines[lines.len().saturating_sub(15)..] {
            text += &format!("  | {l}\n");
        }
    }
    text += &format!(
        "\nOnce the cause is fixed, put it back at the top of its queue with\n  {}\n",
        release_command(site, &key(job))
    );
    text
}

/// Whether a line for `job` is in the queue already, in any form (mini-slice or explicit):
/// a requeue after a crash, or a release, must not queue a job twice, or two runners would
/// run it side by side.
pub fn queued_already(lines: &[Entry], job: &Job) -> bool {
    lines.iter().any(
        |e| matches!(e.parse(), Ok(Some(QueueLine::Job(q))) if q.job().is_ok_and(|j| j == *job)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job() -> Job {
        Job::whole(Phase::Cap, "2100".parse().unwrap(), 0)
    }

    fn attempt(n: u32, ended: u64) -> Attempt {
        Attempt {
            attempt: n,
            host: "h".into(),
            record: format!("h-1-0-{n}@5"),
            taken: 5,
            ended,
            status: "signal 9 (SIGKILL)".into(),
            output: None,
        }
    }

    #[test]
    fn keys_round_trip_and_bad_names_are_errors() {
        let j = job();
        assert_eq!(parse_key(&key(&j)).unwrap(), j);
        for bad in [
            "2100.--",
            "2100.--/cap",
            "xx/cap-r0-0-1",
            "2100.--/cap-r0-0-99999999",
        ] {
            assert!(
                matches!(parse_key(bad), Err(HeldError::BadName(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn commands_quote_what_the_shell_would_split() {
        assert_eq!(shell_word("1100.--/pair-r0-0-992"), "1100.--/pair-r0-0-992");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
    }

    #[test]
    fn backoff_doubles_and_is_capped() {
        let p = RetryPolicy::default();
        assert_eq!((p.backoff(1), p.backoff(2), p.backoff(3)), (10, 20, 40));
        assert_eq!(p.backoff(40), crate::hosts::MAX_BACKOFF_SECS);
        assert!(
            RetryPolicy {
                max_attempts: 0,
                ..p
            }
            .validate()
            .is_err()
        );
        assert!(RetryPolicy { stall_secs: 1, ..p }.validate().is_err());
    }

    #[test]
    fn gates_follow_the_attempts_and_held_records() {
        let dir = crate::files::test_dir("held-gates");
        let site = Site::new(&dir);
        let p = RetryPolicy::default();
        let j = job();
        assert_eq!(Gates::new(&site, p, 100).gate(&j), Gate::Open);
        write_attempts(&site, &j, &[attempt(1, 100)]).unwrap();
        assert_eq!(Gates::new(&site, p, 105).gate(&j), Gate::Wait(110));
        assert_eq!(Gates::new(&site, p, 110).gate(&j), Gate::Open);
        write_attempts(
            &site,
            &j,
            &[attempt(1, 100), attempt(2, 120), attempt(3, 200)],
        )
        .unwrap();
        assert!(matches!(Gates::new(&site, p, 1000).gate(&j), Gate::Held(_)));
        // A torn record holds the job and names the file.
        std::fs::write(attempts_path(&site, &j), "{\"job\":").unwrap();
        let Gate::Held(why) = Gates::new(&site, p, 1000).gate(&j) else {
            panic!()
        };
        assert!(why.contains(&format!("attempts/{}", key(&j))), "{why}");
        let states = list(&site).unwrap();
        assert_eq!(states.len(), 1);
        assert!(states[0].is_held(&p) && !states[0].errors().is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn release_requeues_once_and_bad_selectors_change_nothing() {
        let dir = crate::files::test_dir("held-release");
        let site = Site::new(&dir);
        let p = RetryPolicy::default();
        let here = Machine {
            host: "h".into(),
            boot_id: "b".into(),
        };
        let j = job();
        let line = QueuedJob::explicit(&j, 0).to_string();
        write_attempts(&site, &j, &[attempt(1, 1), attempt(2, 2), attempt(3, 3)]).unwrap();
        write_held(
            &site,
            &j,
            &HeldRecord {
                job: j.to_string(),
                queue: "prime".into(),
                line: line.clone(),
                since: 3,
                attempts: 3,
            },
        )
        .unwrap();
        let mut log = |_: String| {};
        assert!(matches!(
            release(&site, &here, &p, "3300", &mut log),
            Err(HeldError::NoMatch(_))
        ));
        assert!(matches!(
            release(
                &site,
                &here,
                &p,
                &format!("{}/winmove-r0-0-{}", j.slice, j.last),
                &mut log
            ),
            Err(HeldError::NotHeld { .. })
        ));
        assert!(held_path(&site, &j).exists());
        let r = release(&site, &here, &p, "2100", &mut log).unwrap();
        assert_eq!(r.len(), 1, "{r:?}");
        let q = Queue::named(&dir, "p").unwrap();
        let texts: Vec<String> = q
            .read_unlocked()
            .unwrap()
            .into_iter()
            .map(|e| e.text)
            .collect();
        assert_eq!(texts, vec![line]);
        assert!(!held_path(&site, &j).exists() && !attempts_path(&site, &j).exists());
        assert!(list(&site).unwrap().is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
