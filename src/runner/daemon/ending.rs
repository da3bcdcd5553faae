//! When `--until-empty` ends: nothing queued and nothing running anywhere, or nothing more
//! can run (held jobs, jobs whose inputs never come), said once for all runners.

use super::*;

/// How long an empty pool must stay empty before `--until-empty` ends.
const CONFIRM_PAUSE: Duration = Duration::from_millis(200);

impl Daemon<'_> {
    /// With `--until-empty`: whether to end (the queues hold no job and nothing runs
    /// anywhere), or why nothing more can run (held jobs, or jobs whose inputs never come).
    pub(super) fn until_empty_end(&self) -> Result<Option<End>> {
        if self.verdict.get().is_some() {
            return Ok(Some(End::Stuck));
        }
        let Some(jobs) = self.idle_everywhere()? else {
            return Ok(None);
        };
        let held_jobs = || -> Result<Vec<held::JobState>> {
            Ok(held::list(self.site)
                .map_err(|e| e.to_string())?
                .into_iter()
                .filter(|s| s.is_held(&self.opts.policy))
                .collect())
        };
        // Nothing runnable and nothing running. `idle_everywhere` reads the records after
        // the queues, so a take between its reads is seen; the same again after a short
        // pause is for whatever a file server makes visible late. (A daemon that ends too
        // soon only leaves the last jobs' successors to the daemons still running them.)
        std::thread::sleep(CONFIRM_PAUSE);
        if self.idle_everywhere()? != Some(jobs) {
            return Ok(None);
        }
        let held = held_jobs()?;
        if jobs == 0 && held.is_empty() {
            return Ok(Some(End::Finished));
        }
        let why = crate::runner::stuck::explain(self.site, &self.opts.queues, &held, jobs)?;
        if why.is_empty() {
            return Ok(Some(End::Finished));
        }
        let _ = self.verdict.set(why);
        Ok(Some(End::Stuck))
    }

    /// `Some(job lines left)` when no job runs anywhere and none of this runner's queues
    /// holds a line that is runnable or waiting out a retry's backoff; `None` otherwise.
    pub(super) fn idle_everywhere(&self) -> Result<Option<usize>> {
        let live = |recs: &[(PathBuf, RunningRecord)]| !recs.is_empty();
        if live(&record::read_all(self.site)?) {
            return Ok(None);
        }
        // Read after the records: a runner removes its record only after queueing what its
        // job led to, so this sees every job that finished job leads to.
        let (mut any, mut jobs) = (false, 0);
        let (mut ready, mut gates) = (Readiness::new(self.site), self.gates());
        for q in &self.opts.queues {
            any |= q.peek(|l| match l {
                QueueLine::Job(j) => {
                    let job = j.job()?;
                    Ok((self.opts.dry_run.is_some() || ready.runnable(&job)?)
                        && matches!(gates.gate(&job), Gate::Open | Gate::Wait(_)))
                }
                QueueLine::Stop => Ok(true),
            })?;
            jobs += q.job_count()?;
        }
        if any || live(&record::read_all(self.site)?) {
            return Ok(None);
        }
        Ok(Some(jobs))
    }
}
