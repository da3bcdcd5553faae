//! The four queue files (`queues/prime`, `nonprime`, `slow`, `small`; letters p n s m) and
//! the operations on them, each inside the queue's lock file: append (at the end or the
//! top), take the first runnable line, list, and replace after an edit. Every change
//! rewrites the file as a temp file, fsync, rename, so a reader sees the old or the new
//! queue and never a torn one.

use super::line::{LineError, QueueLine, parse_line};
use crate::error::{Error, Result};
use crate::files::{FileOp, failed};
use crate::lock::{LockFile, Machine};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The queues: letter and file name.
pub const QUEUES: [(char, &str); 4] = [
    ('p', "prime"),
    ('n', "nonprime"),
    ('s', "slow"),
    ('m', "small"),
];

/// One queue file of a site.
#[derive(Clone, Debug)]
pub struct Queue {
    pub name: &'static str,
    path: PathBuf,
}

/// A line of a queue file as stored. Lines are parsed when needed (a take reads only as far
/// as the first runnable job), so a large queue costs little per operation.
#[derive(Clone, Debug)]
pub struct Entry {
    /// 1-based line number in the file when read (0 for a line not yet written).
    pub line: usize,
    pub text: String,
}

/// A line of a queue text that is not a queue line: "line 3: unknown job type ...".
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {error}")]
pub struct BadLine {
    pub line: usize,
    pub error: LineError,
}

/// A queue file holding a line that is not a queue line: the file, the line and the problem.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}: {bad}", path.display())]
pub struct BadQueueFile {
    pub path: PathBuf,
    pub bad: BadLine,
}

impl From<BadQueueFile> for Error {
    fn from(e: BadQueueFile) -> Self {
        Error::Failed(e.to_string())
    }
}

impl Entry {
    /// The line's meaning (`None` for blanks and comments); the error names the line.
    pub fn parse(&self) -> std::result::Result<Option<QueueLine>, BadLine> {
        parse_numbered(self.line, &self.text)
    }
}

/// Line `line` of a queue text parsed; the error names the line.
fn parse_numbered(line: usize, text: &str) -> std::result::Result<Option<QueueLine>, BadLine> {
    parse_line(text).map_err(|error| BadLine { line, error })
}

/// How long a queue's lock took to get, and how long it was held.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LockTimes {
    pub wait: Duration,
    pub held: Duration,
}

/// What [`Queue::take_many`] took, and what its lock cost.
#[derive(Clone, Debug, Default)]
pub struct Took {
    pub lines: Vec<QueueLine>,
    pub times: LockTimes,
}

/// How long to wait for a queue's lock before giving up.
const LOCK_WAIT: Duration = Duration::from_secs(60);

impl Queue {
    /// The queue with this letter (`p`, `n`, `s`, `m`) or name (`prime`, ...).
    pub fn named(site: &Path, which: &str) -> Result<Queue> {
        let found = QUEUES
            .iter()
            .find(|(l, n)| which.len() == 1 && which.starts_with(*l) || which == *n);
        match found {
            Some((_, name)) => Ok(Queue {
                name,
                path: site.join("queues").join(name),
            }),
            None => Err(Error::Failed(format!(
                "no queue {which:?}: the queues are p (prime), n (nonprime), s (slow), m (small)"
            ))),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn lock_path(&self) -> PathBuf {
        self.path.with_extension("lock")
    }

    /// Runs `f` on the queue's lines inside its lock; when `f` says they changed the file is
    /// rewritten with them. `log` receives what the lock had to do (a broken stale lock).
    pub fn with_lines<T>(
        &self,
        here: &Machine,
        log: &mut dyn FnMut(String),
        f: impl FnOnce(&mut Vec<Entry>) -> Result<(T, bool)>,
    ) -> Result<T> {
        self.with_lines_then(here, log, f, |_| Ok(()))
    }

    /// [`Queue::with_lines`], then `after` with the value, still inside the lock (after the
    /// rewrite): what must happen before another process can look at the queue again.
    pub fn with_lines_then<T>(
        &self,
        here: &Machine,
        log: &mut dyn FnMut(String),
        f: impl FnOnce(&mut Vec<Entry>) -> Result<(T, bool)>,
        after: impl FnOnce(&T) -> Result<()>,
    ) -> Result<T> {
        self.with_lines_timed(here, log, &mut LockTimes::default(), f, after)
    }

    fn with_lines_timed<T>(
        &self,
        here: &Machine,
        log: &mut dyn FnMut(String),
        times: &mut LockTimes,
        f: impl FnOnce(&mut Vec<Entry>) -> Result<(T, bool)>,
        after: impl FnOnce(&T) -> Result<()>,
    ) -> Result<T> {
        self.locked_timed(here, log, times, || {
            let mut lines = self.read_unlocked()?;
            let (value, changed) = f(&mut lines)?;
            if changed {
                self.write_unlocked(&lines)?;
            }
            after(&value)?;
            Ok(value)
        })
    }

    /// Runs `f` inside the queue's lock.
    fn locked<T>(
        &self,
        here: &Machine,
        log: &mut dyn FnMut(String),
        f: impl FnOnce() -> Result<T>,
    ) -> Result<T> {
        self.locked_timed(here, log, &mut LockTimes::default(), f)
    }

    /// [`Queue::locked`], adding to `times` how long the lock took to get and was held.
    fn locked_timed<T>(
        &self,
        here: &Machine,
        log: &mut dyn FnMut(String),
        times: &mut LockTimes,
        f: impl FnOnce() -> Result<T>,
    ) -> Result<T> {
        let mut events = Vec::new();
        let t0 = std::time::Instant::now();
        let mut lock = LockFile::acquire(&self.lock_path(), here, LOCK_WAIT, &mut events);
        // `queues/` is made when a lock finds it missing, not looked for before every take
        // (a round trip to the file server each).
        if matches!(&lock, Err(e) if e.kind() == std::io::ErrorKind::NotFound) {
            let dir = self.path.parent().expect("queues/ directory");
            std::fs::create_dir_all(dir).map_err(|e| failed(FileOp::Creating, dir, e))?;
            lock = LockFile::acquire(&self.lock_path(), here, LOCK_WAIT, &mut events);
        }
        let got = std::time::Instant::now();
        times.wait += got - t0;
        for crate::lock::LockEvent::BrokeStale { path, owner } in events {
            log(format!(
                "broke the stale lock {} of pid {} on {} (boot {}) since {}: its owner is gone",
                path.display(),
                owner.pid,
                owner.host,
                owner.boot_id,
                owner.since
            ));
        }
        let lock =
            lock.map_err(|e| Error::io(format_args!("locking {}", self.path.display()), e))?;
        let result = f();
        let released = lock.release();
        times.held += got.elapsed();
        released.map_err(|e| Error::io(format_args!("unlocking {}", self.path.display()), e))?;
        result
    }

    fn bad_line(&self, bad: BadLine) -> Error {
        BadQueueFile {
            path: self.path.clone(),
            bad,
        }
        .into()
    }

    /// The lines as stored (not parsed).
    pub fn read_unlocked(&self) -> Result<Vec<Entry>> {
        Ok(self
            .read_text()?
            .lines()
            .enumerate()
            .map(|(k, t)| Entry {
                line: k + 1,
                text: t.trim_end().to_string(),
            })
            .collect())
    }

    /// The queue's text (empty when the file does not exist).
    fn read_text(&self) -> Result<String> {
        match std::fs::read_to_string(&self.path) {
            Ok(t) => Ok(t),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(String::new()),
            Err(e) => Err(failed(FileOp::Reading, &self.path, e).into()),
        }
    }

    /// Every line parsed, strictly: the first bad line is an error naming the file and line.
    pub fn read_checked(&self) -> Result<Vec<(Entry, Option<QueueLine>)>> {
        self.read_unlocked()?
            .into_iter()
            .map(|e| {
                let p = e.parse().map_err(|bad| self.bad_line(bad))?;
                Ok((e, p))
            })
            .collect()
    }

    fn write_unlocked(&self, lines: &[Entry]) -> Result<()> {
        let mut text = String::with_capacity(lines.iter().map(|l| l.text.len() + 1).sum());
        for l in lines {
            text.push_str(&l.text);
            text.push('\n');
        }
        static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let k = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = self
            .path
            .with_extension(format!("tmp.{}.{k}", std::process::id()));
        let tmp = tmp.file_name().unwrap_or_default().to_string_lossy();
        crate::files::replace_through(
            &self.path,
            &tmp,
            text.as_bytes(),
            crate::files::Durability::Data,
        )
        .map_err(|e| Error::io(format_args!("rewriting {}", self.path.display()), e))
    }

    /// Adds `lines` at the top (rewriting the file) or at the end. Adding at the end is one
    /// `O_APPEND` write of whole lines and an fsync, inside the lock: no rewrite of a long
    /// queue, and a crash can at worst leave a torn last line, which the next reader reports
    /// with its line number.
    pub fn append(
        &self,
        here: &Machine,
        log: &mut dyn FnMut(String),
        new: &[QueueLine],
        top: bool,
    ) -> Result<()> {
        let entries = new.iter().map(|l| Entry {
            line: 0,
            text: l.to_string(),
        });
        if top {
            return self.with_lines(here, log, |lines| {
                let rest = std::mem::take(lines);
                lines.extend(entries);
                lines.extend(rest);
                Ok(((), true))
            });
        }
        let mut text = String::new();
        for e in entries {
            text += &e.text;
            text.push('\n');
        }
        self.locked(here, log, || {
            // The opening error names the file already.
            let mut f =
                crate::files::open_append(&self.path).map_err(|e| Error::io("appending to", e))?;
            f.write_all(text.as_bytes())
                .and_then(|()| f.sync_all())
                .map_err(|e| Error::io(format_args!("appending to {}", self.path.display()), e))
        })
    }

    /// Removes and returns the first line that is `stop` or a job `runnable` accepts.
    pub fn take(
        &self,
        here: &Machine,
        log: &mut dyn FnMut(String),
        mut runnable: impl FnMut(&QueueLine) -> bool,
    ) -> Result<Option<QueueLine>> {
        self.take_with(here, log, |l| Ok(runnable(l)), |_| Ok(()))
    }

    /// [`Queue::take`] where `runnable` may fail, and `on_take` runs inside the lock before
    /// the line leaves the file (a runner writes its running record there, so the job is at
    /// every moment either in the queue or in a record). If `on_take` fails the queue is
    /// unchanged.
    pub fn take_with(
        &self,
        here: &Machine,
        log: &mut dyn FnMut(String),
        runnable: impl FnMut(&QueueLine) -> Result<bool>,
        on_take: impl FnOnce(&QueueLine) -> Result<()>,
    ) -> Result<Option<QueueLine>> {
        let took = self.take_many(here, log, || 1, runnable, |lines| on_take(&lines[0]))?;
        Ok(took.lines.into_iter().next())
    }

    /// Takes up to `max()` lines in one locked step (`max` is asked once the lock is held,
    /// so that a taker who waited for it can take for whoever became free meanwhile): the first line that is `stop` or a job
    /// `runnable` accepts and, after a job, the next runnable jobs in queue order (adjacent
    /// mini-slices of a phase, as a rule), up to a `stop` line, which stays for a runner of
    /// its own. A `stop` is taken alone. `on_take` gets the lines inside the lock before
    /// they leave the file; if it fails the queue is unchanged. One lock, one read and one
    /// rewrite however many lines are taken: what lets many runners share one queue.
    pub fn take_many(
        &self,
        here: &Machine,
        log: &mut dyn FnMut(String),
        max: impl FnOnce() -> usize,
        mut runnable: impl FnMut(&QueueLine) -> Result<bool>,
        on_take: impl FnOnce(&[QueueLine]) -> Result<()>,
    ) -> Result<Took> {
        let mut times = LockTimes::default();
        let lines = self.with_lines_timed(
            here,
            log,
            &mut times,
            |lines| {
                let max = max().max(1);
                let mut picked: Vec<(usize, QueueLine)> = Vec::new();
                for (k, entry) in lines.iter().enumerate() {
                    let parsed = entry.parse().map_err(|bad| self.bad_line(bad))?;
                    match parsed {
                        Some(QueueLine::Stop) if picked.is_empty() => {
                            picked.push((k, QueueLine::Stop));
                            break;
                        }
                        Some(QueueLine::Stop) => break,
                        Some(job) if runnable(&job)? => {
                            picked.push((k, job));
                            if picked.len() == max {
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                if picked.is_empty() {
                    return Ok((Vec::new(), false));
                }
                let taken: Vec<QueueLine> = picked.iter().map(|(_, l)| *l).collect();
                on_take(&taken)?;
                let mut gone = picked.iter().map(|(k, _)| *k).peekable();
                let mut k = 0;
                lines.retain(|_| {
                    let keep = gone.peek() != Some(&k);
                    if !keep {
                        gone.next();
                    }
                    k += 1;
                    keep
                });
                Ok((taken, true))
            },
            |_| Ok(()),
        )?;
        Ok(Took { lines, times })
    }

    /// Whether some line is `stop` or runnable, read without the lock: a cheap look before
    /// [`Queue::take_with`], so idle runners do not keep taking the lock. Stops at the first
    /// such line.
    pub fn peek(&self, mut runnable: impl FnMut(&QueueLine) -> Result<bool>) -> Result<bool> {
        // Line by line from the text: a runnable line is often near the top of a long queue.
        for (k, t) in self.read_text()?.lines().enumerate() {
            let parsed = parse_numbered(k + 1, t.trim_end());
            let found = match parsed.map_err(|bad| self.bad_line(bad))? {
                Some(QueueLine::Stop) => true,
                Some(job) => runnable(&job)?,
                None => false,
            };
            if found {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Job lines in the queue (read without the lock).
    pub fn job_count(&self) -> Result<usize> {
        let mut jobs = 0;
        for e in self.read_unlocked()? {
            if let Some(QueueLine::Job(_)) = e.parse().map_err(|bad| self.bad_line(bad))? {
                jobs += 1;
            }
        }
        Ok(jobs)
    }
}

/// Checks a whole queue text strictly; the error names the first bad line.
pub fn parse_queue_text(text: &str) -> std::result::Result<Vec<Entry>, BadLine> {
    let entries: Vec<Entry> = text
        .lines()
        .enumerate()
        .map(|(k, t)| Entry {
            line: k + 1,
            text: t.trim_end().to_string(),
        })
        .collect();
    for e in &entries {
        e.parse()?;
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_take_of_many_lines_takes_runnable_jobs_in_order_and_a_stop_alone() {
        let dir = crate::files::test_dir("take-many");
        let q = Queue::named(&dir, "p").unwrap();
        let here = Machine {
            host: "h".into(),
            boot_id: "b".into(),
        };
        let text = "cap 2222.66 -max 04 -s 1 -n 00\n# note\ncap 2222.66 -max 04 -s 1 -n 01\n\
                    noio 2222.66 -max 04 -s 1 -n 00\ncap 2222.66 -max 04 -s 1 -n 02\nstop\n\
                    cap 2222.66 -max 04 -s 1 -n 03\n";
        std::fs::create_dir_all(dir.join("queues")).unwrap();
        std::fs::write(q.path(), text).unwrap();
        let mut log = |_: String| {};
        let cap = |l: &QueueLine| Ok(l.to_string().starts_with("cap"));
        // A failing on_take leaves the queue as it was.
        let failed = q.take_many(&here, &mut log, || 8, cap, |_| Err("no room".into()));
        assert!(failed.is_err());
        assert_eq!(std::fs::read_to_string(q.path()).unwrap(), text);
        // Up to the stop line, skipping what is not runnable.
        let took = q.take_many(&here, &mut log, || 8, cap, |_| Ok(())).unwrap();
        let names: Vec<String> = took.lines.iter().map(|l| l.to_string()).collect();
        assert_eq!(
            names,
            [
                "cap 2222.66 -max 04 -s 1 -n 00",
                "cap 2222.66 -max 04 -s 1 -n 01",
                "cap 2222.66 -max 04 -s 1 -n 02"
            ]
        );
        // No more than asked for; a stop is taken alone.
        let left =
            "# note\nnoio 2222.66 -max 04 -s 1 -n 00\nstop\ncap 2222.66 -max 04 -s 1 -n 03\n";
        assert_eq!(std::fs::read_to_string(q.path()).unwrap(), left);
        let any = |_: &QueueLine| Ok(true);
        let took = q.take_many(&here, &mut log, || 1, any, |_| Ok(())).unwrap();
        assert_eq!(took.lines.len(), 1);
        let took = q.take_many(&here, &mut log, || 8, any, |_| Ok(())).unwrap();
        assert_eq!(took.lines, [QueueLine::Stop]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_settings_know_the_queue_letters() {
        let letters: String = QUEUES.iter().map(|(l, _)| *l).collect();
        assert_eq!(letters, crate::hosts::QUEUE_LETTERS);
    }
}
