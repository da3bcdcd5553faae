//! What `jobrunner daemon --until-empty` says when nothing more can run: the held jobs and
//! how to release them, or the jobs left whose inputs never come and what each waits for.

use crate::queue::held::{self, JobState};
use crate::queue::pairs::Readiness;
use crate::queue::{Queue, QueueLine};
use crate::solve::Site;

/// Lines named in full before "and N more".
const SHOWN: usize = 8;

fn listed(items: &[String]) -> String {
    let mut text = items[..items.len().min(SHOWN)].join("; ");
    if items.len() > SHOWN {
        text += &format!("; and {} more", items.len() - SHOWN);
    }
    text
}

/// The verdict for `jobs` job lines left in `queues` with nothing running and nothing
/// runnable, `held` the held jobs (empty text: nothing is left after all).
pub fn explain(
    site: &Site,
    queues: &[Queue],
    held: &[JobState],
    jobs: usize,
) -> crate::error::Result<String> {
    if !held.is_empty() {
        let names: Vec<String> = held
            .iter()
            .map(|s| {
                let last = match &s.attempts {
                    Ok(a) => a.last().map_or("no attempt recorded".into(), |a| {
                        format!("attempt {} on {}: {}", a.attempt, a.host, a.status)
                    }),
                    Err(e) => e.to_string(),
                };
                format!("{} ({last})", s.key)
            })
            .collect();
        return Ok(format!(
            "{} job(s) held after failing: {}; {jobs} queued job(s) wait for them. \
             `dbstatus --site {} held` shows every attempt; once the cause is fixed, \
             `{}` (or a job or slice name) puts them back, then run this again",
            held.len(),
            listed(&names),
            site.root().display(),
            held::release_command(site, "all")
        ));
    }
    if jobs == 0 {
        return Ok(String::new());
    }
    let mut ready = Readiness::new(site);
    let mut why = Vec::new();
    for q in queues {
        for (e, parsed) in q.read_checked()? {
            if let Some(QueueLine::Job(j)) = parsed {
                why.push(format!(
                    "{} \"{}\": {}",
                    q.name,
                    e.text,
                    ready.why_not(&j.job()?)?
                ));
            }
        }
    }
    Ok(format!(
        "{jobs} job(s) left in the queues can never run (nothing runs and nothing is held \
         that they wait for; were the jobs they need ever queued? `addq plan` queues them): {}",
        listed(&why)
    ))
}
