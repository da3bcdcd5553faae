//! `dbstatus` on a build through the queues: the runners and their jobs, one slice's phase
//! progress (the 1994 paper's capcheck, lookcheck, noncheck and vercheck in one table), and
//! the totals with an estimate of the time left.

use crate::cli::{CliError, output_error};
use crate::clock::now_secs;
use crate::clock::{local_time, rfc3339};
use crate::queue::running::{self as record};
use crate::queue::{QUEUES, Queue, QueueLine, done, pairs};
use crate::slice::{Slice, SlicePair};
use crate::solve::{Phase, Site, checkpoint};
use std::io::Write;

/// How far a running job has got, from its checkpoint: positions done of its range, and
/// for a `pair` job the step it noted (its steps' own checkpoints may be on its machine).
fn job_progress(
    site: &Site,
    rec: &record::RunningRecord,
    now: u64,
) -> Option<(u64, u64, Option<String>)> {
    let (_, job) = rec.job().ok()?;
    if job.phase == Phase::Pair {
        let step = crate::solve::pair_job::read_step(site, &job)
            .map(|(what, since)| format!("{what} for {}s", now.saturating_sub(since)));
        return Some((0, 0, step));
    }
    let size = job.last - job.first;
    let done = match checkpoint::load(site, &job).ok()? {
        Some(c) if c.complete => size,
        Some(c) => c.next.saturating_sub(job.first).min(size),
        None => 0,
    };
    Some((done, size, None))
}

/// What wsmonitor and the runners' heartbeat say of a host.
fn host_health(site: &Site, host: &str, now: u64) -> String {
    let st = crate::monitor::read_state(site, host);
    let monitor = match st.since {
        0 => "not seen by wsmonitor yet".to_string(),
        t => format!("{} since {}", st.status, local_time(t)),
    };
    let beat = match crate::monitor::read_heartbeat(site, host) {
        Some((_, t)) => format!("heartbeat {}s ago", now.saturating_sub(t)),
        None => "no heartbeat".into(),
    };
    let paused = if crate::watch::pause_path(site, host).exists() {
        "; paused by wswatch"
    } else {
        ""
    };
    format!("{monitor}, {beat}{paused}")
}

/// One running record as `dbstatus runners` shows it.
struct RunnerRow {
    host: String,
    runner: String,
    state: String,
    line: String,
    /// Positions done of `size` (from the job's checkpoint).
    done: u64,
    size: u64,
    /// A `pair` job's step instead.
    step: Option<String>,
    since: u64,
}

/// What `dbstatus runners` reports: the hosts of `hosts.toml` with their health, every
/// running record, and the failed jobs' tally.
pub struct Runners {
    hosts: Vec<(crate::hosts::Host, String)>,
    /// Slurm pilots (`slurm/pilots/`), with their heartbeat's time.
    pilots: Vec<(crate::slurm::PilotRecord, Option<u64>)>,
    /// Files of `slurm/pilots/` that are not a record, each error naming its file.
    bad_pilots: Vec<String>,
    rows: Vec<RunnerRow>,
    tally: super::held::Tally,
    now: u64,
}

/// Reads what `dbstatus runners` reports.
pub fn runners(site: &Site) -> Result<Runners, CliError> {
    let hosts_file = site.root().join("hosts.toml");
    let hosts = if hosts_file.exists() {
        crate::hosts::Hosts::load(&hosts_file)?.hosts
    } else {
        Vec::new()
    };
    let records = record::read_all(site)?;
    let tally = super::held::tally(site)?;
    let now = now_secs();
    let mut rows = Vec::new();
    for (path, r) in &records {
        let runner = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let state = match &r.failed {
            Some(f) => format!("failed: {f}"),
            None => "running".to_string(),
        };
        let (done, size, step) = job_progress(site, r, now).unwrap_or((0, 0, None));
        rows.push(RunnerRow {
            host: r.host.clone(),
            runner,
            state,
            line: r.line.clone(),
            done,
            size,
            step,
            since: r.since,
        });
    }
    let hosts = hosts
        .into_iter()
        .map(|h| {
            let health = host_health(site, &h.name, now);
            (h, health)
        })
        .collect();
    let read = crate::slurm::read_pilots(site)?;
    let bad_pilots = read.bad.iter().map(|(_, e)| e.to_string()).collect();
    let pilots = read
        .records
        .into_iter()
        .map(|p| {
            let beat = crate::monitor::read_heartbeat(site, &p.host).map(|(_, t)| t);
            (p, beat)
        })
        .collect();
    Ok(Runners {
        hosts,
        pilots,
        bad_pilots,
        rows,
        tally,
        now,
    })
}

impl Runners {
    /// The JSON of `dbstatus --json runners`.
    pub fn json(&self) -> serde_json::Value {
        let hs: Vec<serde_json::Value> = self
            .hosts
            .iter()
            .map(|(h, health)| {
                serde_json::json!({
                    "name": h.name,
                    "queue": h.queue,
                    "runners": h.runners,
                    "memory_mb": h.memory_mb,
                    "health": health,
                })
            })
            .collect();
        let rs: Vec<serde_json::Value> = self
            .rows
            .iter()
            .map(|r| {
                let pilot = self.pilot(&r.host).map(|p| {
                    serde_json::json!({
                        "job_id": p.job_id,
                        "array_job_id": p.array_job_id,
                        "array_task_id": p.array_task_id,
                        "node": p.node,
                    })
                });
                serde_json::json!({
                    "host": r.host,
                    "runner": r.runner,
                    "state": r.state,
                    "job": r.line,
                    "done": r.done,
                    "positions": r.size,
                    "step": r.step,
                    "since": rfc3339(r.since),
                    "slurm": pilot,
                })
            })
            .collect();
        let ps: Vec<serde_json::Value> = self
            .pilots
            .iter()
            .map(|(p, beat)| {
                let mut v = p.json();
                v["heartbeat_secs_ago"] = beat.map(|t| self.now.saturating_sub(t)).into();
                v["jobs_now"] = self.rows.iter().filter(|r| r.host == p.host).count().into();
                v
            })
            .collect();
        serde_json::json!({
            "hosts": hs,
            "pilots": ps,
            "unreadable_pilot_records": self.bad_pilots,
            "running": rs,
            "retried": self.tally.retried,
            "waiting_to_retry": self.tally.waiting,
            "held": self.tally.held,
        })
    }

    fn pilot(&self, host: &str) -> Option<&crate::slurm::PilotRecord> {
        self.pilots.iter().map(|(p, _)| p).find(|p| p.host == host)
    }

    /// The table of `dbstatus runners`.
    pub fn text(&self) -> String {
        let (rows, tally, now) = (&self.rows, &self.tally, self.now);
        let mut t = String::new();
        for (h, health) in &self.hosts {
            let busy = rows.iter().filter(|r| r.host == h.name).count();
            t += &format!(
                "# host {}: queues {}, {} runner(s), {} MB; {busy} job(s) now; {health}\n",
                h.name, h.queue, h.runners, h.memory_mb,
            );
        }
        for (p, beat) in &self.pilots {
            let busy = rows.iter().filter(|r| r.host == p.host).count();
            let beat = match beat {
                Some(b) => format!("heartbeat {}s ago", now.saturating_sub(*b)),
                None => "no heartbeat".into(),
            };
            t += &format!(
                "# pilot {}: {}; {busy} job(s) now; {beat}\n",
                p.host,
                p.describe(now)
            );
        }
        for b in &self.bad_pilots {
            t += &format!("# {b}\n");
        }
        let failed: Vec<&str> = self
            .pilots
            .iter()
            .filter(|(p, _)| p.failed())
            .map(|(p, _)| p.host.as_str())
            .collect();
        if !failed.is_empty() {
            t += &format!(
                "# {} pilot(s) ended non-zero or were lost: {} (their logs: logs/<pilot>.log, logs/slurm-<job>.out)\n",
                failed.len(),
                failed.join(", ")
            );
        }
        t += "host\trunner\tstate\tjob\tprogress\tsince\n";
        for r in rows {
            let progress = match (&r.step, r.size) {
                (Some(step), _) => step.clone(),
                (None, 0) => "0%".into(),
                (None, n) => format!("{:.0}%", 100.0 * r.done as f64 / n as f64),
            };
            t += &format!(
                "{}\t{}\t{}\t{}\t{progress}\t{} ({}s ago)\n",
                r.host,
                r.runner,
                r.state,
                r.line,
                local_time(r.since),
                now.saturating_sub(r.since)
            );
        }
        if tally.retried + tally.held > 0 {
            t += &format!(
                "# retried {} job(s) ({} waiting to run again), held {} (dbstatus held)\n",
                tally.retried, tally.waiting, tally.held
            );
        }
        t
    }
}

/// `dbstatus runners`: the hosts of `hosts.toml` and every running record: host, runner,
/// state, job, progress, since.
pub fn write_runners(site: &Site, json: bool, out: &mut dyn Write) -> Result<(), CliError> {
    let r = runners(site)?;
    let text = if json {
        crate::cli::json_line(&r.json())
    } else {
        r.text()
    };
    out.write_all(text.as_bytes()).map_err(output_error)
}

/// One row of `dbstatus slice`: phase, round, done ranges, jobs, job seconds, statistics.
type PhaseRow = (
    Phase,
    u32,
    Vec<(u64, u64)>,
    usize,
    f64,
    crate::solve::PhaseStats,
);

/// `dbstatus slice S`: the pair's stage, then per phase and round the share of the slice its
/// done records cover, their jobs, job seconds and statistics.
pub fn write_slice(
    site: &Site,
    slice: Slice,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let pair = SlicePair::of(slice);
    let stage = pairs::read_stage(site, &pair)?;
    let mut recs = done::records(site, &slice)?;
    if pair.0 != slice {
        // A `pair` job is recorded under the pair's first slice; it did this one too.
        recs.extend(
            done::records(site, &pair.0)?
                .into_iter()
                .filter(|r| r.phase == crate::solve::Phase::Pair),
        );
    }
    let count = slice.count();
    let mut rows: Vec<PhaseRow> = Vec::new();
    for r in &recs {
        match rows.last_mut() {
            Some(row) if row.0 == r.phase && row.1 == r.round => {
                row.2.push((r.first, r.last));
                row.3 += 1;
                row.4 += r.seconds;
                row.5.add(&r.stats);
            }
            _ => rows.push((
                r.phase,
                r.round,
                vec![(r.first, r.last)],
                1,
                r.seconds,
                r.stats,
            )),
        }
    }
    let text = if json {
        let items: Vec<serde_json::Value> = rows
            .iter_mut()
            .map(|(p, r, ranges, jobs, secs, s)| {
                serde_json::json!({
                    "phase": p.to_string(),
                    "round": r,
                    "covered": done::covered(ranges, count),
                    "jobs": jobs,
                    "seconds": crate::cli::millis(*secs),
                    "looked": s.looked,
                    "win": s.win,
                    "loss": s.loss,
                    "draw": s.draw,
                })
            })
            .collect();
        crate::cli::json_line(&serde_json::json!({
            "slice": slice.to_string(),
            "pair": pair.to_string(),
            "positions": count,
            "stage": stage.record_text(),
            "solved": site.is_solved(&slice),
            "phases": items,
        }))
    } else {
        let mut t = format!(
            "# slice {slice} (pair {pair}): {count} positions, stage {}{}\n",
            stage.record_text(),
            if site.is_solved(&slice) {
                ", in solved/"
            } else {
                ""
            }
        );
        t += "phase\tround\tdone\tjobs\tseconds\tlooked\twin\tloss\tdraw\n";
        for (p, r, ranges, jobs, secs, s) in rows.iter_mut() {
            let pct = 100.0 * done::covered(ranges, count) as f64 / count.max(1) as f64;
            t += &format!(
                "{p}\t{r}\t{pct:.1}%\t{jobs}\t{secs:.1}\t{}\t{}\t{}\t{}\n",
                s.looked, s.win, s.loss, s.draw
            );
        }
        t
    };
    out.write_all(text.as_bytes()).map_err(output_error)
}

/// The pieces `dbstatus summary` counts up to on a site with nothing queued or solved.
pub const DEFAULT_PIECES: u32 = 5;

/// A done record of a slice as its file shows it: the positions of its range (from the
/// name, which ends in `-FIRST-LAST`) and when it was written (seconds since the epoch).
/// A bounded scan: directory entries and their times, no record is opened.
pub fn done_files(site: &Site, slice: &Slice) -> Vec<(u64, Option<u64>)> {
    let dir = done::slice_dir(site, slice);
    let mut out = Vec::new();
    for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let mut parts = name.rsplit('-').map(|p| p.parse::<u64>());
        if let (Some(Ok(last)), Some(Ok(first))) = (parts.next(), parts.next()) {
            let at = e
                .metadata()
                .ok()
                .and_then(|m| m.modified().ok())
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map(|d| d.as_secs());
            out.push((last.saturating_sub(first), at));
        }
    }
    out
}

/// The totals of `dbstatus summary` (its JSON fields, in order).
#[derive(Clone, Debug, serde::Serialize)]
pub struct Summary {
    pub pieces: u32,
    /// The plans the site was given (`work/plans`: `2..7`, `2..8 4v4`) when one of them is a
    /// part; the counts are then of the pairs they cover, and of any other solved slice.
    /// Empty: every slice of 2..`pieces`.
    pub planned: Vec<String>,
    pub slices: u64,
    pub positions: u64,
    pub solved: u64,
    pub solved_positions: u64,
    pub built: u64,
    /// Slices whose moves to conversion are computed (`solved/<slice>.mtc`), when the site
    /// builds them (`work/mtc`); `verified` then counts their check (`mtcver`) too.
    pub distances: Option<u64>,
    pub verified: u64,
    pub queued_jobs: u64,
    pub queued_positions: u64,
    pub running: usize,
    pub retried: usize,
    pub waiting_to_retry: usize,
    pub held: usize,
    /// Jobs that failed for good: held (issue 20 replaced failed running records).
    pub failed: usize,
    pub positions_per_second: f64,
    pub eta_seconds: Option<f64>,
    pub at: String,
}

/// Computes [`Summary`]: slices solved, built and verified of 2..`pieces` (by default the
/// most pieces of any slice queued or solved, what the site builds); jobs queued and
/// running; the rate of the last ten minutes (positions of finished jobs per second) and the
/// time the queued work needs at that rate.
pub fn summary(site: &Site, pieces: Option<u32>) -> crate::error::Result<Summary> {
    let (mut queued, mut queued_pos, mut queued_pieces) = (0u64, 0u64, 0u32);
    for (_, name) in QUEUES {
        for (_, parsed) in Queue::named(site.root(), name)?.read_checked()? {
            if let Some(QueueLine::Job(q)) = parsed {
                queued += 1;
                if let Ok(j) = q.job() {
                    queued_pos += j.last - j.first;
                    queued_pieces = queued_pieces.max(j.slice.pieces());
                }
            }
        }
    }
    // Plans of whole piece counts (`2..7`) cover what 2..N does: only parts change the count.
    let planned = match pieces {
        Some(_) => None,
        None => {
            crate::queue::plans::planned(site)?.filter(|p| p.lines.iter().any(|l| l.contains(' ')))
        }
    };
    let pieces = match (pieces, &planned) {
        (Some(p), _) => p,
        (None, Some(p)) => p.pieces,
        (None, None) => site
            .solved_slices()?
            .iter()
            .map(|s| s.pieces())
            .chain([queued_pieces])
            .max()
            .filter(|&p| p >= 2)
            .unwrap_or(DEFAULT_PIECES),
    };
    let (planned, pairs): (Vec<String>, Vec<SlicePair>) = match planned {
        Some(crate::queue::plans::Planned {
            lines, mut pairs, ..
        }) => {
            // A part solved before the site kept its plans still counts.
            for s in site
                .solved_slices()?
                .iter()
                .filter(|s| s.pieces() <= pieces)
            {
                pairs.insert(SlicePair::of(*s));
            }
            (lines, pairs.into_iter().collect())
        }
        None => (
            Vec::new(),
            crate::slice::plan(pieces).pairs().copied().collect(),
        ),
    };
    let (mut slices, mut solved, mut built, mut verified, mut positions, mut solved_pos) =
        (0u64, 0u64, 0u64, 0u64, 0u64, 0u64);
    let db = site.db_dir();
    let now = now_secs();
    let mut recent = 0u64;
    let mut distances = crate::solve::mtc::wanted(site).then_some(0u64);
    for pair in &pairs {
        for s in pair.slices() {
            slices += 1;
            positions += s.count();
            if site.is_solved(&s) {
                solved += 1;
                solved_pos += s.count();
            }
            built += crate::db::probe::slice_path(&db, &s).exists() as u64;
            verified += crate::solve::stage::is_verified(site, &s) as u64;
            if let Some(d) = distances.as_mut() {
                *d += crate::solve::stage::mtc_done(site, &[s]) as u64;
            }
            for (n, at) in done_files(site, &s) {
                if at.is_some_and(|t| now.saturating_sub(t) < 600) {
                    recent += n;
                }
            }
        }
    }
    let running = record::read_all(site)?.len();
    let tally = super::held::tally(site)?;
    let rate = recent as f64 / 600.0;
    let eta = (rate > 0.0).then(|| queued_pos as f64 / rate);
    Ok(Summary {
        pieces,
        planned,
        slices,
        positions,
        solved,
        solved_positions: solved_pos,
        built,
        distances,
        verified,
        queued_jobs: queued,
        queued_positions: queued_pos,
        running,
        retried: tally.retried,
        waiting_to_retry: tally.waiting,
        held: tally.held,
        failed: tally.held,
        positions_per_second: rate.round(),
        eta_seconds: eta.map(f64::round),
        at: rfc3339(now),
    })
}

/// `dbstatus summary`: [`summary`] as text or JSON.
pub fn write_summary(
    site: &Site,
    pieces: Option<u32>,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let s = summary(site, pieces)?;
    let text = if json {
        crate::cli::json_line(&serde_json::to_value(&s).expect("a summary serializes"))
    } else {
        let Summary {
            pieces,
            slices,
            positions,
            solved,
            built,
            verified,
            queued_jobs: queued,
            queued_positions: queued_pos,
            running,
            ..
        } = s;
        let what = match s.planned.as_slice() {
            [] => format!("2..{pieces} pieces"),
            plans => format!("planned {}", plans.join(", ")),
        };
        format!(
            "{what}: {slices} slices, {positions} positions\n\
             solved {solved} slices ({:.1}% of positions){}, built {built}, verified {verified}\n\
             queued {queued} jobs ({queued_pos} positions), running {running}, retried {} ({} waiting to run again), held {}{}\n\
             last 10 minutes: {:.2} M positions/s of finished jobs; queued work {}\n",
            100.0 * s.solved_positions as f64 / positions.max(1) as f64,
            match s.distances {
                Some(d) => format!(", moves to conversion of {d}"),
                None => String::new(),
            },
            s.retried,
            s.waiting_to_retry,
            s.held,
            if s.held > 0 { " (dbstatus held)" } else { "" },
            s.positions_per_second / 1e6,
            match s.eta_seconds {
                _ if queued == 0 => "is none".to_string(),
                Some(e) => format!(
                    "needs about {:.0} min at that rate (later rounds not counted)",
                    e / 60.0
                ),
                None => "has no estimate (nothing finished lately)".into(),
            }
        )
    };
    out.write_all(text.as_bytes()).map_err(output_error)
}
