//! A host's runners died (a crashed or rebooted workstation, a lost Slurm pilot): what the
//! survivors do for it. Its locks are broken, since no one else would ever break them, and
//! its running jobs go back to the top of their queues to resume from their checkpoints.
//! wsmonitor and the pilots both call these; they sit with the runners, below both.

use crate::clock::local_time;
use crate::error::{Error, Result};
use crate::lock::{self, Machine};
use crate::queue::held::RetryPolicy;
use crate::queue::running as record;
use crate::solve::Site;

/// Settles the running jobs of `host` (not those of boot `keep_boot`, whose runners live):
/// each used an attempt (`why`: the host crashed or rebooted) and goes back to the top of
/// its queue to resume from its checkpoint on any host, or is held after its last attempt.
#[allow(clippy::too_many_arguments)]
pub fn requeue_host_jobs(
    site: &Site,
    here: &Machine,
    host: &str,
    keep_boot: Option<&str>,
    why: &str,
    policy: &RetryPolicy,
    rep: &mut crate::mail::Reporter,
    now: u64,
) -> Result<Vec<String>> {
    let mut requeued = Vec::new();
    for (path, rec) in record::read_host(site, host)? {
        if keep_boot.is_some_and(|b| rec.boot_id == b) {
            continue;
        }
        let mut log = |m: String| rep.say(now, &m);
        // A job whose child never started used no attempt.
        let ending = match rec.child {
            0 => record::Ending::Stopped,
            _ => record::Ending::Failed {
                status: why.to_string(),
                output: None,
            },
        };
        match record::settle(site, here, &path, &rec, &ending, policy, &mut log)? {
            record::Settled::Gone => {}
            record::Settled::Finished => requeued.push(format!("{} (had finished)", rec.line)),
            record::Settled::Requeued => {
                requeued.push(format!("{} (from {})", rec.line, rec.queue))
            }
            record::Settled::Retry { attempt, .. } => requeued.push(format!(
                "{} (from {}; attempt {attempt} of {})",
                rec.line, rec.queue, policy.max_attempts
            )),
            record::Settled::Held { attempts, new } => {
                requeued.push(format!(
                    "{} (HELD after {} attempts)",
                    rec.line,
                    attempts.len()
                ));
                if new {
                    let (_, job) = rec.job()?;
                    let body = crate::queue::held::held_report(site, &job, &attempts);
                    rep.act(now, &format!("job held: {}", rec.line), &body);
                }
            }
        }
    }
    Ok(requeued)
}

/// Breaks the site's locks held by `dead` (see [`lock::break_host_locks`]) before its jobs
/// are settled: settling takes the queue and pair locks a crashed host may have died holding,
/// and no other host would ever break them. Each broken lock is logged.
pub fn break_dead_locks(
    site: &Site,
    here: &Machine,
    dead: &lock::DeadHost,
    rep: &mut crate::mail::Reporter,
    now: u64,
) -> Result<()> {
    let root = site.root();
    let dirs = [
        root.join("queues"),
        root.join("done"),
        site.db_dir().join("parts"),
        root.join("mail"),
    ];
    let mut events = Vec::new();
    let result = lock::break_host_locks(&dirs, dead, here, &mut events);
    for lock::LockEvent::BrokeStale { path, owner } in events {
        rep.say(
            now,
            &format!(
                "broke {} left by pid {} on {} (boot {}, since {})",
                path.display(),
                owner.pid,
                owner.host,
                owner.boot_id,
                local_time(owner.since)
            ),
        );
    }
    result.map_err(|e| Error::io(format_args!("breaking {}'s locks", dead.host), e))
}
