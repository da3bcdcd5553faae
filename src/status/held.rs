//! `dbstatus held`: the jobs that failed, with every attempt (host, status, times, where
//! the output is kept), held or waiting to run again, and the counts `summary` and
//! `runners` show.

use crate::cli::{CliError, output_error};
use crate::clock::{local_time, now_secs, rfc3339};
use crate::queue::held::{self, Attempt, JobState, RetryPolicy};
use crate::solve::Site;
use serde::Serialize;
use std::io::Write;

fn policy(site: &Site) -> Result<RetryPolicy, crate::hosts::HostsError> {
    crate::hosts::site_policy(site.root())
}

/// Jobs that failed at least once: `retried` (not held; some `waiting` out their backoff)
/// and `held`.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Tally {
    pub retried: usize,
    pub waiting: usize,
    pub held: usize,
}

pub fn tally(site: &Site) -> crate::error::Result<Tally> {
    let states = held::list(site)?;
    Ok(tally_of(&states, &policy(site)?, now_secs()))
}

fn tally_of(states: &[JobState], policy: &RetryPolicy, now: u64) -> Tally {
    let mut t = Tally::default();
    for s in states {
        if s.is_held(policy) {
            t.held += 1;
        } else {
            t.retried += 1;
            t.waiting += s.retry_at(policy).is_some_and(|at| at > now) as usize;
        }
    }
    t
}

/// One job as `dbstatus held` reports it (times as seconds for the table; the JSON carries
/// them in RFC 3339).
struct Row<'a> {
    job: &'a str,
    state: &'static str,
    queue: String,
    line: String,
    /// When a job waiting out its backoff may run again (seconds since the epoch).
    retry_at: Option<u64>,
    held_since: Option<u64>,
    attempts: &'a [Attempt],
    max_attempts: u32,
    /// Records that do not parse (the job is then held).
    errors: Vec<String>,
}

impl Row<'_> {
    fn json(&self) -> serde_json::Value {
        let attempts: Vec<serde_json::Value> = self
            .attempts
            .iter()
            .map(|a| {
                let mut v = serde_json::to_value(a).expect("attempts serialize");
                v["taken"] = rfc3339(a.taken).into();
                v["ended"] = rfc3339(a.ended).into();
                v
            })
            .collect();
        serde_json::json!({
            "job": self.job,
            "state": self.state,
            "queue": self.queue,
            "line": self.line,
            "retry_at": self.retry_at.map(rfc3339),
            "held_since": self.held_since.map(rfc3339),
            "attempts": attempts,
            "max_attempts": self.max_attempts,
            "errors": self.errors,
        })
    }
}

fn row<'a>(s: &'a JobState, policy: &RetryPolicy) -> Row<'a> {
    let (queue, line) = s.queue_and_line();
    Row {
        job: &s.key,
        state: s.state(policy),
        queue,
        line,
        retry_at: s.retry_at(policy),
        held_since: s
            .held
            .as_ref()
            .ok()
            .and_then(|h| h.as_ref().map(|h| h.since)),
        attempts: s.attempts.as_deref().unwrap_or(&[]),
        max_attempts: policy.max_attempts,
        errors: s.errors(),
    }
}

/// The JSON of `dbstatus --json held`: the retry policy, the tally and every job that
/// failed with its attempts.
pub fn held_json(site: &Site) -> Result<serde_json::Value, CliError> {
    let policy = policy(site)?;
    let states = held::list(site).map_err(crate::error::Error::from)?;
    let tally = tally_of(&states, &policy, now_secs());
    let jobs: Vec<serde_json::Value> = states.iter().map(|s| row(s, &policy).json()).collect();
    Ok(serde_json::json!({"policy": policy, "tally": tally, "jobs": jobs}))
}

/// `dbstatus held`: a table (one line per job, one indented line per attempt) or JSON.
pub fn write_held(site: &Site, json: bool, out: &mut dyn Write) -> Result<(), CliError> {
    if json {
        let text = crate::cli::json_line(&held_json(site)?);
        return out.write_all(text.as_bytes()).map_err(output_error);
    }
    let policy = policy(site)?;
    let states = held::list(site).map_err(crate::error::Error::from)?;
    let rows: Vec<Row> = states.iter().map(|s| row(s, &policy)).collect();
    let tally = tally_of(&states, &policy, now_secs());
    let mut t = format!(
        "# {} held, {} retried ({} waiting to run again); up to {} attempts, backoff {}s doubling\n\
         job\tstate\tattempts\tqueue\tline\n",
        tally.held, tally.retried, tally.waiting, policy.max_attempts, policy.retry_backoff_secs
    );
    for r in &rows {
        let state = match (r.state, r.retry_at) {
            ("retry", Some(at)) if at > now_secs() => format!("retry at {}", local_time(at)),
            (s, _) => s.to_string(),
        };
        t += &format!(
            "{}\t{state}\t{}/{}\t{}\t{}\n",
            r.job,
            r.attempts.len(),
            r.max_attempts,
            r.queue,
            r.line
        );
        for a in r.attempts {
            t += &format!(
                "  attempt {} on {} at {}: {}{}\n",
                a.attempt,
                a.host,
                local_time(a.ended),
                a.status,
                a.output
                    .as_ref()
                    .map_or(String::new(), |o| format!(" (output: {o})"))
            );
        }
        for e in &r.errors {
            t += &format!("  error: {e}\n");
        }
    }
    if tally.held > 0 {
        t += &format!(
            "# release: {} (or a job or slice name); remove for good: addq --site {} --remove JOB\n",
            held::release_command(site, "all"),
            site.root().display()
        );
    }
    out.write_all(t.as_bytes()).map_err(output_error)
}
