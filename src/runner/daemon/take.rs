//! How a daemon's runners take jobs: in one locked step of a queue, as many runnable lines
//! as the daemon has runners without a job (the taker's and the rest for its idle
//! runners, who find them in the daemon's hand), written inside the lock to one synced take
//! file ([`crate::queue::takes`]) before the lines leave the file, and to each job's own
//! running record after it. One lock, one read and one rewrite of the
//! queue serve a whole host: with many hosts of many runners the queue's lock no longer
//! bounds the takes. A take never asks for more than the daemon can start at once, so no
//! job waits in a hand while a runner elsewhere could run it, and the critical path is not
//! longer for it. Jobs still in the hand when the daemon stops or its host is given back to
//! its user are handed back: requeued at the top of their queue in their order, no attempt
//! used.

use super::*;

/// A job taken from `queue`, in its running record at `path` (a `stop` line has none), whose
/// text this daemon wrote and keeps in `rec`.
#[derive(Clone, Debug)]
pub(super) struct Taken {
    pub queue: Queue,
    pub line: QueueLine,
    pub path: PathBuf,
    pub rec: Option<RunningRecord>,
}

/// A taken job as its runner runs it: from `queue`, in its running record at `path`, whose
/// text this daemon wrote and keeps in `rec`.
pub(super) struct TakenJob {
    pub queue: Queue,
    pub job: QueuedJob,
    pub path: PathBuf,
    pub rec: Option<RunningRecord>,
}

/// A wait for a queue's lock this long is said in the log.
const SLOW_LOCK: Duration = Duration::from_secs(5);

/// What a daemon's takes cost: how many locked steps, how many lines they took, and how
/// long each waited for the queue's lock and held it (the daemon's summary reports them).
#[derive(Clone, Debug, Default)]
pub struct TakeTally {
    /// Locked steps, including those that found nothing to take.
    pub takes: u64,
    /// Lines taken (jobs and `stop`s).
    pub lines: u64,
    /// Each take's wait for the lock, in microseconds.
    pub waits_us: Vec<u64>,
    pub held: Duration,
}

impl TakeTally {
    fn add(&mut self, took: &crate::queue::file::Took) {
        self.takes += 1;
        self.lines += took.lines.len() as u64;
        self.waits_us.push(took.times.wait.as_micros() as u64);
        self.held += took.times.held;
    }

    /// The waits' total.
    pub fn waited(&self) -> Duration {
        Duration::from_micros(self.waits_us.iter().sum())
    }

    /// The `q`-quantile (0..=1) of the waits (zero without takes).
    pub fn wait_quantile(&self, q: f64) -> Duration {
        let mut w = self.waits_us.clone();
        w.sort_unstable();
        match w.len() {
            0 => Duration::ZERO,
            n => Duration::from_micros(w[((n - 1) as f64 * q).round() as usize]),
        }
    }
}

impl Daemon<'_> {
    /// A new running record's path: this host, daemon and taking runner, the take's number
    /// and the job, so the record of one job is never the record of another.
    fn record_path(&self, runner: usize, job: &Job) -> PathBuf {
        let take = self.takes.fetch_add(1, Ordering::Relaxed);
        record::running_dir(self.site).join(format!(
            "{}-{}-{runner}-{take}.{}",
            self.opts.host,
            std::process::id(),
            held::key(job).replace('/', ".")
        ))
    }

    pub(super) fn runnable(
        &self,
        line: &QueueLine,
        ready: &mut Readiness,
        gates: &mut Gates,
    ) -> Result<bool> {
        match line {
            QueueLine::Stop => Ok(true),
            QueueLine::Job(q) => {
                let job = q.job()?;
                Ok((self.opts.dry_run.is_some() || ready.runnable(&job)?)
                    && gates.gate(&job) == Gate::Open)
            }
        }
    }

    pub(super) fn gates(&self) -> Gates<'_> {
        Gates::new(self.site, self.opts.policy, now_secs())
    }

    /// The next job for `runner`: one from the hand, or a new take. A job returned counts
    /// as busy until [`Daemon::run_counted`] ends it.
    pub(super) fn take(&self, runner: usize) -> Result<Option<Taken>> {
        if self.paused() {
            self.hand_back(runner);
            return Ok(None);
        }
        let _one_at_a_time = self.taking.lock().expect("taking");
        if let Some(t) = self.hand.lock().expect("hand").pop_front() {
            self.busy.fetch_add(1, Ordering::SeqCst);
            return Ok(Some(t));
        }
        let mut taken = self.take_from_queues(runner)?.into_iter();
        let Some(first) = taken.next() else {
            return Ok(None);
        };
        if matches!(first.line, QueueLine::Job(_)) {
            self.busy.fetch_add(1, Ordering::SeqCst);
        }
        let mut hand = self.hand.lock().expect("hand");
        hand.extend(taken);
        if !hand.is_empty() {
            drop(hand);
            self.wake.bump();
        }
        Ok(Some(first))
    }

    /// Runnable lines of the first queue that has one, in one locked step: as many as this
    /// daemon has runners without a job once the lock is held (whoever became free while
    /// the taker waited for it is served too: the busier the lock, the larger the takes).
    /// Each job's running record is written (durably, side by side) inside the lock.
    fn take_from_queues(&self, runner: usize) -> Result<Vec<Taken>> {
        for queue in &self.opts.queues {
            // One readiness memo for the look and the take: what the look found runnable
            // stays so (stages only advance, files only appear), so the take inside the lock
            // asks the file server only about the lines the look did not reach. A line that
            // became runnable in between waits for the next take, which the job that made
            // it so wakes. (Gates are read again: held jobs and attempts.)
            let (mut ready, mut gates) = (Readiness::new(self.site), self.gates());
            if !queue.peek(|l| self.runnable(l, &mut ready, &mut gates))? {
                continue;
            }
            let mut gates = self.gates();
            let (mut records, mut jobs) = (Vec::new(), Vec::new());
            let take = self.take_path();
            let mut log = |m: String| self.say(runner, &m);
            let took = queue.take_many(
                &self.here,
                &mut log,
                || {
                    let free = self
                        .opts
                        .runners
                        .saturating_sub(self.busy.load(Ordering::SeqCst));
                    free.min(self.opts.max_take)
                },
                |l| self.runnable(l, &mut ready, &mut gates),
                |lines| {
                    records = self.records(runner, queue, lines)?;
                    jobs = records.iter().flatten().cloned().collect();
                    match jobs.as_slice() {
                        [] => {}
                        // One job: its own record is the take's one synced file, with no
                        // take file to write, complete and remove after the lock.
                        [(path, rec)] => rec.write(path, true)?,
                        _ => takes::write(&take, &jobs)?,
                    }
                    fault::point("take.recorded");
                    Ok(())
                },
            )?;
            self.tally.lock().expect("tally").add(&took);
            if took.times.wait > SLOW_LOCK {
                self.say(
                    runner,
                    &format!(
                        "waited {:.1}s for the lock of {} (a slow file server, or too many takers)",
                        took.times.wait.as_secs_f64(),
                        queue.name
                    ),
                );
            }
            if took.lines.is_empty() {
                continue;
            }
            fault::point("take.done");
            if jobs.len() > 1 {
                self.complete_take(runner, &take, jobs)?;
            }
            return Ok(took
                .lines
                .into_iter()
                .zip(records)
                .map(|(line, r)| {
                    let (path, rec) = r.map_or((PathBuf::new(), None), |(p, r)| (p, Some(r)));
                    Taken {
                        queue: queue.clone(),
                        line,
                        path,
                        rec,
                    }
                })
                .collect());
        }
        Ok(Vec::new())
    }

    /// This daemon's next take file.
    fn take_path(&self) -> PathBuf {
        let n = self.takes.fetch_add(1, Ordering::Relaxed);
        takes::path(self.site, &self.opts.host, std::process::id(), n)
    }

    /// The running records of the taken `lines`, each at its own path (a `stop` has none).
    fn records(
        &self,
        runner: usize,
        queue: &Queue,
        lines: &[QueueLine],
    ) -> Result<Vec<Option<(PathBuf, RunningRecord)>>> {
        let pid = std::process::id();
        let pid_start = process_start(pid).unwrap_or(0);
        lines
            .iter()
            .map(|l| {
                let QueueLine::Job(q) = l else {
                    return Ok(None);
                };
                let rec = RunningRecord {
                    host: self.opts.host.clone(),
                    boot_id: self.here.boot_id.clone(),
                    pid,
                    pid_start,
                    child: 0,
                    child_start: 0,
                    queue: queue.name.to_string(),
                    line: l.to_string(),
                    since: now_secs(),
                    failed: None,
                };
                Ok(Some((self.record_path(runner, &q.job()?), rec)))
            })
            .collect()
    }

    /// After the lock: each taken job's own record, then the take file goes, before any of
    /// the jobs starts (so no record of a job that has ended can come back from it). If that
    /// keeps failing, the jobs are handed back with the daemon's stopped ones (settling them
    /// completes the take first) and the take fails.
    fn complete_take(
        &self,
        runner: usize,
        take: &Path,
        records: Vec<(PathBuf, RunningRecord)>,
    ) -> Result<()> {
        let mut last = None;
        for wait in [0, 50, 200, 1000] {
            std::thread::sleep(Duration::from_millis(wait));
            match takes::complete_own(take, &records) {
                Ok(()) => return Ok(()),
                Err(e) => last = Some(e),
            }
        }
        let e = last.expect("tried");
        self.say(
            runner,
            &format!("could not write the records of a take ({e}): its jobs are handed back"),
        );
        let mut log = |m: String| self.say(runner, &m);
        if let Err(again) = record::settle_stopped(self.site, &self.here, &records, &mut log) {
            self.say(
                runner,
                &format!(
                    "handing them back failed too ({again}): tried again when the daemon stops"
                ),
            );
            self.stopped.lock().expect("stopped").extend(records);
        }
        Err(e)
    }

    /// Requeues the jobs still in the hand (the daemon stops, or its host was given back to
    /// its user) and those its stop ended at a checkpoint: all of a queue's in one locked
    /// step (`record::settle_stopped`), back at its top in the order of their ranges, no
    /// attempt used. What that leaves (a job that had finished, a settling that failed) is
    /// settled one by one, which keeps and retries a failure like any other.
    pub(super) fn hand_back(&self, runner: usize) {
        let mut records: Vec<(PathBuf, RunningRecord)> =
            std::mem::take(&mut *self.stopped.lock().expect("stopped"));
        for t in self.hand.lock().expect("hand").drain(..) {
            let rec = std::fs::read_to_string(&t.path)
                .ok()
                .and_then(|text| RunningRecord::parse(&text));
            match rec {
                Some(rec) => records.push((t.path, rec)),
                None => self.say(
                    runner,
                    &format!(
                        "handing back \"{}\": its running record {} is unreadable; it is settled once this daemon is gone",
                        t.line,
                        t.path.display()
                    ),
                ),
            }
        }
        if records.is_empty() {
            return;
        }
        let mut log = |m: String| self.say(runner, &m);
        let settled = record::settle_stopped(self.site, &self.here, &records, &mut log)
            .unwrap_or_else(|e| {
                self.say(
                    runner,
                    &format!("requeueing the stopped jobs together: {e}; one by one instead"),
                );
                Vec::new()
            });
        for (path, rec) in &records {
            if settled.contains(path) {
                self.requeued.fetch_add(1, Ordering::Relaxed);
                self.say(
                    runner,
                    &format!(
                        "\"{}\" (stopped at a checkpoint): requeued at the top of {}",
                        rec.line, rec.queue
                    ),
                );
            } else if let Err(e) = self.settle(runner, path, rec, &Ending::Stopped) {
                self.say(runner, &format!("handing back \"{}\": {e}", rec.line));
            }
        }
    }
}
