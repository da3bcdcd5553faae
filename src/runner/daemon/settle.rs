//! How a runner settles the running records of its jobs: a job that ended (stopped, failed)
//! or whose processes are gone goes back to its queue, uses an attempt or is held
//! (`queue::running::settle`); a settlement that fails (disk full, file server away) is kept
//! and tried again every loop; stale records of this host are found and settled.

use super::*;

impl Daemon<'_> {
    /// Settles a running record whose job ended (or whose processes are gone), and tells
    /// the log and, for a held job, the operator.
    pub(super) fn settle(
        &self,
        runner: usize,
        path: &Path,
        rec: &RunningRecord,
        ending: &Ending,
    ) -> Result<Settled> {
        let mut log = |m: String| self.say(runner, &m);
        let settled = match record::settle(
            self.site,
            &self.here,
            path,
            rec,
            ending,
            &self.opts.policy,
            &mut log,
        ) {
            Ok(s) => s,
            // A full disk or an unreachable file server: the job stays in its running
            // record, and the settling is tried again every loop until it goes through.
            Err(e) => {
                let why = format!(
                    "could not settle {} of \"{}\" ({e}); the job stays in its running record, tried again every loop",
                    path.display(),
                    rec.line
                );
                self.keep_unsettled(runner, path, rec, ending, &why);
                return Ok(Settled::Gone);
            }
        };
        let why = match ending {
            Ending::Failed { status, .. } => status.as_str(),
            Ending::Stopped => "stopped at a checkpoint",
        };
        if settled != Settled::Gone {
            let mut waiting = self.unsettled.lock().expect("unsettled");
            waiting.retain(|(p, _, _)| p != path);
        }
        match &settled {
            Settled::Gone => {}
            Settled::Finished => self.say(
                runner,
                &format!(
                    "\"{}\" had finished (its done record is there): its pair moved on, not run again",
                    rec.line
                ),
            ),
            Settled::Requeued => {
                self.requeued.fetch_add(1, Ordering::Relaxed);
                self.say(
                    runner,
                    &format!(
                        "\"{}\" ({why}): requeued at the top of {}",
                        rec.line, rec.queue
                    ),
                );
            }
            Settled::Retry { attempt, at } => {
                self.failed.fetch_add(1, Ordering::Relaxed);
                self.say(
                    runner,
                    &format!(
                        "FAILED \"{}\": {why}; attempt {attempt} of {}, requeued at the top of {} to resume from its checkpoint after {}s",
                        rec.line,
                        self.opts.policy.max_attempts,
                        rec.queue,
                        at.saturating_sub(now_secs())
                    ),
                );
            }
            Settled::Held { attempts, new } => {
                self.failed.fetch_add(1, Ordering::Relaxed);
                let (_, job) = rec.job()?;
                let key = held::key(&job);
                self.say(
                    runner,
                    &format!(
                        "FAILED \"{}\": {why}; HELD after {} attempt(s): out of the queues until `{}`",
                        rec.line,
                        attempts.len(),
                        held::release_command(self.site, &key)
                    ),
                );
                if *new {
                    self.held.fetch_add(1, Ordering::Relaxed);
                    let body = held::held_report(self.site, &job, attempts);
                    self.alert(runner, &format!("job held: {}", rec.line), &body);
                }
            }
        }
        if settled != Settled::Gone {
            self.wake.bump();
        }
        Ok(settled)
    }

    /// Remembers a record to settle again every loop (once per record), saying `why` the
    /// first time.
    pub(super) fn keep_unsettled(
        &self,
        runner: usize,
        path: &Path,
        rec: &RunningRecord,
        ending: &Ending,
        why: &str,
    ) {
        let mut waiting = self.unsettled.lock().expect("unsettled");
        if !waiting.iter().any(|(p, _, _)| p == path) {
            self.say(runner, why);
            waiting.push((path.to_path_buf(), rec.clone(), ending.clone()));
        }
    }

    /// Tries again the settlings that failed.
    pub(super) fn settle_again(&self, runner: usize) -> Result<()> {
        let waiting = self.unsettled.lock().expect("unsettled").clone();
        for (path, rec, ending) in waiting {
            self.settle(runner, &path, &rec, &ending)?;
        }
        Ok(())
    }

    /// Settles this host's stale running records (their jobs used an attempt), at most
    /// once every [`REAP_PERIOD`].
    pub(super) fn reap_stale(&self, runner: usize) -> Result<()> {
        let mut one_runner = self.reaping.lock().expect("reaping");
        if !one_runner.due() {
            return Ok(());
        }
        let (host, pid) = (&self.opts.host, std::process::id());
        for (path, rec) in record::read_host_stale_candidates(self.site, host, pid)? {
            if !rec.is_stale(&self.here) {
                continue;
            }
            // Its runner died before recording the child: wait for an orphan to end.
            if rec.child == 0
                && let Ok((_, job)) = rec.job()
                && record::orphan_job_alive(self.site, &job)
            {
                continue;
            }
            let status = if let Some(f) = &rec.failed {
                f.clone()
            } else if rec.boot_id != self.here.boot_id {
                format!("host {} rebooted while it ran", rec.host)
            } else {
                format!(
                    "its runner (pid {}) and job process (pid {}) on {} are gone",
                    rec.pid, rec.child, rec.host
                )
            };
            self.say(
                runner,
                &format!("stale running record {}: {status}", path.display()),
            );
            // A record whose child never started (the runner died as it took the job) used
            // no attempt.
            let ending = match rec.child {
                0 if rec.failed.is_none() => Ending::Stopped,
                _ => Ending::Failed {
                    status,
                    output: Some(self.output_path(&path)),
                },
            };
            let settled = self.settle(runner, &path, &rec, &ending)?;
            // (A failed attempt's output is in `attempts/` now; a stopped one's is not kept.)
            let _ = std::fs::remove_file(self.output_path(&path));
            if matches!(settled, Settled::Requeued | Settled::Retry { .. }) {
                let msg = format!(
                    "stale running record {} of \"{}\": its job was settled (see logs/{}.log)",
                    path.display(),
                    rec.line,
                    self.opts.host
                );
                self.alert(runner, &format!("requeued {}", rec.line), &msg);
            }
        }
        Ok(())
    }
}
