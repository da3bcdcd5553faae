//! The status page's snapshot of a site: one JSON document built from what the `dbstatus`
//! reports compute (the summary, runners, queues, held jobs), plus each slice pair's stage
//! for the slice graph, the throughput of finished jobs over time and the last alerts.
//! `dbstatus html` embeds it in the page; `dbstatus serve` returns it as `/status.json`.

use super::build::{done_files, runners, summary};
use crate::cli::CliError;
use crate::clock::{now_secs, rfc3339};
use crate::solve::Site;
use serde_json::{Value, json};

/// Lines of each queue the page shows.
pub const QUEUE_HEAD: usize = 5;
/// Alerts the page shows (the newest).
pub const ALERTS: usize = 20;
/// Width of one throughput bucket, seconds.
pub const BUCKET_SECS: u64 = 60;
/// Buckets kept (the newest): a day of minutes.
pub const BUCKETS: usize = 24 * 60;

/// Builds the snapshot of `site` for 2..`pieces` (by default what the site builds, as
/// `dbstatus summary`). Its `summary` is exactly `dbstatus summary --json`.
pub fn snapshot(site: &Site, pieces: Option<u32>) -> Result<Value, CliError> {
    let summary = summary(site, pieces)?;
    let plan = crate::slice::plan(summary.pieces);
    let now = now_secs();
    let mut pairs = Vec::new();
    // The material graph (the 1994 paper's picture): which materials a material's pairs
    // read from (conversions land in other materials; a pair's own material is left out).
    let mut feeds: std::collections::BTreeMap<String, std::collections::BTreeSet<String>> =
        Default::default();
    let mut buckets: std::collections::BTreeMap<u64, (u64, u64)> = Default::default();
    for (wave, ws) in plan.waves.iter().enumerate() {
        for pair in ws {
            let stage = crate::queue::pairs::read_stage(site, pair)?;
            let (mut jobs, mut done, mut recent) = (0u64, 0u64, 0u64);
            for s in pair.slices() {
                for (n, at) in done_files(site, &s) {
                    jobs += 1;
                    done += n;
                    if at.is_some_and(|t| now.saturating_sub(t) < 600) {
                        recent += n;
                    }
                    if let Some(t) = at {
                        let b = buckets.entry(t - t % BUCKET_SECS).or_default();
                        b.0 += n;
                        b.1 += 1;
                    }
                }
            }
            let first = pair.0;
            let mine = first.material.to_string();
            let from = feeds.entry(mine.clone()).or_default();
            for d in pair.dependencies() {
                let m = d.0.material.to_string();
                if m != mine {
                    from.insert(m);
                }
            }
            pairs.push(json!({
                "pair": pair.to_string(),
                "pieces": first.pieces(),
                "material": first.material.to_string(),
                "wave": wave,
                "positions": pair.count(),
                "stage": stage.record_text(),
                "solved": pair.slices().iter().all(|s| site.is_solved(s)),
                "jobs": jobs,
                "done_positions": done,
                "recent_positions": recent,
            }));
        }
    }
    let skip = buckets.len().saturating_sub(BUCKETS);
    let throughput: Vec<Value> = buckets
        .into_iter()
        .skip(skip)
        .map(|(t, (n, jobs))| {
            json!({"t": t, "at": rfc3339(t), "positions_per_second": n as f64 / BUCKET_SECS as f64, "jobs": jobs})
        })
        .collect();
    let queues = super::queue_rows(site.root(), QUEUE_HEAD)?;
    Ok(json!({
        "summary": summary,
        "runners": runners(site)?.json(),
        "queues": queues,
        "held": super::held::held_json(site)?,
        "pairs": pairs,
        "material_deps": feeds,
        "throughput": {"bucket_seconds": BUCKET_SECS, "points": throughput},
        "alerts": alerts(site.root()),
        "generated": rfc3339(now),
    }))
}

/// The last alerts: those delivered (`mail/sent`: `TIME COUNT SUBJECT`) and those waiting
/// in the outbox (the first line of each spooled mail), newest first.
fn alerts(site: &std::path::Path) -> Vec<Value> {
    let mut out: Vec<(u64, Value)> = Vec::new();
    let sent = std::fs::read_to_string(site.join("mail/sent")).unwrap_or_default();
    for l in sent.lines() {
        let mut w = l.splitn(3, ' ');
        if let (Some(Ok(t)), Some(n), Some(subject)) =
            (w.next().map(str::parse::<u64>), w.next(), w.next())
        {
            out.push((
                t,
                json!({"at": rfc3339(t), "state": "sent", "count": n, "subject": subject}),
            ));
        }
    }
    let outbox = crate::mail::outbox_dir(site);
    for e in std::fs::read_dir(&outbox).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let t = name
            .split('-')
            .next()
            .and_then(|t| t.parse::<u64>().ok())
            .unwrap_or(0);
        let subject = std::fs::read_to_string(e.path())
            .unwrap_or_default()
            .lines()
            .next()
            .unwrap_or_default()
            .to_string();
        out.push((
            t,
            json!({"at": rfc3339(t), "state": "waiting", "count": "1", "subject": subject}),
        ));
    }
    out.sort_by_key(|a| std::cmp::Reverse(a.0));
    out.into_iter().take(ALERTS).map(|(_, v)| v).collect()
}
