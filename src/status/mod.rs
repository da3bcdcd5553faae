//! `dbstatus` reports: the plan of slices to compute, the value counts of solved slices, the
//! queues, and (in [`build`]) the runners, one slice's progress and the totals.

pub mod build;
pub mod held;
pub mod page;
pub mod serve;
pub mod snapshot;

use crate::cli::{CliError, output_error};
use crate::slice::{Material, Slice, plan};
use crate::solve::Site;
use crate::solve::solved::SolvedSlice;
use std::collections::BTreeMap;
use std::io::{self, Write};

/// Prints the computation plan for 2..=`pieces` pieces: one line per slice pair with its
/// wave (pairs of one wave can run side by side), positions, and dependencies.
pub fn write_plan(pieces: u32, json: bool, out: &mut dyn Write) -> io::Result<()> {
    let p = plan(pieces);
    if json {
        let waves: Vec<serde_json::Value> = p
            .waves
            .iter()
            .map(|w| serde_json::Value::from(w.iter().map(|x| x.to_string()).collect::<Vec<_>>()))
            .collect();
        let value = serde_json::json!({"pieces": pieces, "waves": waves});
        return write!(out, "{}", crate::cli::json_line(&value));
    }
    writeln!(out, "wave\tpair\tpositions\tdepends_on")?;
    for (w, pairs) in p.waves.iter().enumerate() {
        for pair in pairs {
            let deps: Vec<String> = pair.dependencies().iter().map(|d| d.to_string()).collect();
            writeln!(out, "{w}\t{pair}\t{}\t{}", pair.count(), deps.join(","))?;
        }
    }
    let pairs = p.pairs().count();
    let positions: u64 = p.pairs().map(|x| x.count()).sum();
    writeln!(
        out,
        "# {pairs} slice pairs, {positions} positions, {} waves",
        p.waves.len()
    )
}

pub use crate::solve::solved::ValueCounts;

/// Every solved slice under `site` with its counts, in (pieces, name) order.
pub fn solved_counts(site: &Site) -> crate::error::Result<Vec<(Slice, ValueCounts)>> {
    let mut out = Vec::new();
    for s in site.solved_slices()? {
        let solved = SolvedSlice::load(site, s)?;
        let c = solved.counts();
        if c.win + c.loss + c.draw != c.positions {
            return Err(crate::error::Error::Failed(format!(
                "{}: {} positions are still unknown",
                site.solved_file(&s).display(),
                c.positions - c.win - c.loss - c.draw
            )));
        }
        out.push((s, c));
    }
    Ok(out)
}

/// One row of the counts report: a slice (ranks given) or a material (ranks `None`).
type Row = (
    String,
    Material,
    Option<Option<u8>>,
    Option<Option<u8>>,
    ValueCounts,
);

/// `dbstatus counts`: a TSV (or JSON) of the values per slice or per material.
pub fn write_counts(
    site: &Site,
    by_material: bool,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let counts = solved_counts(site)?;
    let mut rows: Vec<Row> = Vec::new();
    if by_material {
        let mut agg: BTreeMap<(u32, String), (Material, ValueCounts)> = BTreeMap::new();
        for (s, c) in &counts {
            let e = agg
                .entry((s.pieces(), s.material.to_string()))
                .or_insert((s.material, ValueCounts::default()));
            e.1.positions += c.positions;
            e.1.win += c.win;
            e.1.loss += c.loss;
            e.1.draw += c.draw;
        }
        for ((_, name), (m, c)) in agg {
            rows.push((name, m, None, None, c));
        }
    } else {
        for (s, c) in counts {
            rows.push((s.to_string(), s.material, Some(s.rb), Some(s.rw), c));
        }
    }
    let rank = |r: Option<Option<u8>>| match r {
        Some(Some(r)) => r.to_string(),
        _ => "-".to_string(),
    };
    let mut text = String::new();
    if json {
        let items: Vec<serde_json::Value> = rows
            .iter()
            .map(|(name, m, rb, rw, c)| {
                let jr = |r: &Option<Option<u8>>| r.flatten();
                serde_json::json!({
                    "slice": name, "pieces": m.pieces(), "bk": m.bk, "wk": m.wk, "bm": m.bm,
                    "wm": m.wm, "rb": jr(rb), "rw": jr(rw), "positions": c.positions,
                    "win": c.win, "loss": c.loss, "draw": c.draw,
                })
            })
            .collect();
        text = crate::cli::json_line(&serde_json::Value::from(items));
    } else {
        text += "slice\tpieces\tbk\twk\tbm\twm\trb\trw\tpositions\twin\tloss\tdraw\n";
        for (name, m, rb, rw, c) in &rows {
            text += &format!(
                "{name}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n",
                m.pieces(),
                m.bk,
                m.wk,
                m.bm,
                m.wm,
                rank(*rb),
                rank(*rw),
                c.positions,
                c.win,
                c.loss,
                c.draw
            );
        }
    }
    out.write_all(text.as_bytes()).map_err(output_error)
}

/// One queue as `dbstatus queues` and the status page show it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct QueueRow {
    pub queue: &'static str,
    pub letter: String,
    pub jobs: u64,
    pub stops: u64,
    pub positions: u64,
    /// The first job line (empty when there is none).
    pub first: String,
    /// The first `head` lines of the file, as written (jobs, `stop` lines, comments).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub head: Vec<String>,
}

/// Per queue its jobs, `stop` lines, positions, first job and first `head` lines. Every
/// line is checked.
pub fn queue_rows(site: &std::path::Path, head: usize) -> Result<Vec<QueueRow>, CliError> {
    use crate::queue::{QUEUES, Queue, QueueLine};
    let mut rows = Vec::new();
    for (letter, name) in QUEUES {
        let q = Queue::named(site, name)?;
        let (mut jobs, mut stops, mut positions, mut first) = (0u64, 0u64, 0u64, None);
        let mut lines = Vec::new();
        for (entry, parsed) in q.read_checked()? {
            if lines.len() < head {
                lines.push(entry.text.clone());
            }
            match parsed {
                Some(QueueLine::Job(j)) => {
                    let job = j
                        .job()
                        .map_err(|e| format!("{}: line {}: {e}", q.path().display(), entry.line))?;
                    jobs += 1;
                    positions += job.last - job.first;
                    first.get_or_insert(entry.text);
                }
                Some(QueueLine::Stop) => stops += 1,
                None => {}
            }
        }
        rows.push(QueueRow {
            queue: name,
            letter: letter.to_string(),
            jobs,
            stops,
            positions,
            first: first.unwrap_or_default(),
            head: lines,
        });
    }
    Ok(rows)
}

/// `dbstatus queues`: per queue its jobs, `stop` lines, positions and first job (TSV:
/// `queue letter jobs stops positions first`), or JSON. Every line is checked.
pub fn write_queues(
    site: &std::path::Path,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let rows = queue_rows(site, 0)?;
    let text = if json {
        crate::cli::json_line(&serde_json::to_value(&rows).expect("queue rows serialize"))
    } else {
        let mut t = String::from("queue\tletter\tjobs\tstops\tpositions\tfirst\n");
        for r in &rows {
            t += &format!(
                "{}\t{}\t{}\t{}\t{}\t{}\n",
                r.queue, r.letter, r.jobs, r.stops, r.positions, r.first
            );
        }
        t
    };
    out.write_all(text.as_bytes()).map_err(output_error)
}
