//! The local build's progress lines.

use super::Shared;
use crate::progress::Progress;
use std::time::Duration;

pub(super) fn format_duration(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, s / 60 % 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

/// One progress line: slices solved, the rate and ETA of the current part of the build
/// (solving, then the database stages), and what is running.
pub(super) fn progress(
    log: &mut Progress,
    sh: &Shared,
    npairs: usize,
    elapsed: Duration,
    at_start: u64,
) {
    let eta = |left: u64, rate: f64| {
        if rate > 0.0 {
            format_duration(Duration::from_secs_f64(left as f64 / rate))
        } else {
            "?".into()
        }
    };
    let done = sh.done_positions;
    let solving = done < sh.total_positions;
    // While slices remain to be solved the rate and ETA are the solver's; after that, the
    // database stages' (build and ver passes, counted in positions).
    let distances = sh.mtc_done < sh.mtc_total;
    let (rate, left) = if !solving && distances {
        let secs = sh.mtc_started.map_or(0.0, |t| t.elapsed().as_secs_f64());
        (
            sh.mtc_done as f64 / secs.max(1e-9),
            sh.mtc_total - sh.mtc_done,
        )
    } else if solving || sh.db_total == 0 {
        (
            (done - at_start) as f64 / elapsed.as_secs_f64().max(1e-9),
            sh.total_positions - done,
        )
    } else {
        let secs = sh.db_started.map_or(0.0, |t| t.elapsed().as_secs_f64());
        (
            sh.db_done as f64 / secs.max(1e-9),
            sh.db_total.saturating_sub(sh.db_done),
        )
    };
    // Nothing of the current part done yet (a pair's distances or database jobs run
    // first while the solving waits on them): the whole build's rate and what is left of
    // it, every part's positions counted alike, rather than no estimate.
    let (rate, left) = match rate > 0.0 {
        true => (rate, left),
        false => (
            (done - at_start + sh.db_done + sh.mtc_done) as f64 / elapsed.as_secs_f64().max(1e-9),
            (sh.total_positions - done)
                + sh.db_total.saturating_sub(sh.db_done)
                + sh.mtc_total.saturating_sub(sh.mtc_done),
        ),
    };
    let working: Vec<String> = sh
        .pairs
        .iter()
        .filter(|p| p.running > 0)
        .take(3)
        .map(|p| format!("{} {:?}", p.slices[0], p.stage))
        .collect();
    let db = if sh.db_total > 0 {
        format!(
            ", database {:.1}%",
            100.0 * sh.db_done as f64 / sh.db_total as f64
        )
    } else {
        String::new()
    };
    let db = match sh.mtc_total {
        0 => db,
        t => format!(
            ", moves to conversion {:.1}%{db}",
            100.0 * sh.mtc_done as f64 / t as f64
        ),
    };
    let text = format!(
        "[{:>7}] slices {}/{} ({} of {} pairs, {:.1}% of positions){db}, {:.2} M positions/s, ETA {}{}{}",
        format_duration(elapsed),
        sh.pairs
            .iter()
            .filter(|p| p.published)
            .map(|p| p.slices.len())
            .sum::<usize>(),
        sh.summary.slices,
        sh.published,
        npairs,
        100.0 * done as f64 / sh.total_positions.max(1) as f64,
        rate / 1e6,
        eta(left, rate),
        if working.is_empty() { "" } else { "; now " },
        working.join(", ")
    );
    // The bar: positions solved, then positions built and verified.
    log.update(
        done + sh.db_done + sh.mtc_done,
        sh.total_positions + sh.db_total + sh.mtc_total,
        &text,
    );
}
