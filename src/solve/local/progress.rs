//! The local build's progress lines.

use super::Shared;
use crate::progress::Progress;
use std::time::{Duration, Instant};

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

/// A part of the build counted in positions (the distances, the database passes). Done and
/// in all are the site's, so a resumed build shows what the site has; the rate counts only
/// this run's work.
pub(super) struct Part {
    pub(super) done: u64,
    pub(super) total: u64,
    /// Done when this run began.
    at_start: u64,
    /// When this run's first job of the part started.
    started: Option<Instant>,
}

impl Part {
    pub(super) fn new(done: u64, total: u64) -> Self {
        Part {
            done,
            total,
            at_start: done,
            started: None,
        }
    }

    pub(super) fn start(&mut self) {
        self.started.get_or_insert_with(Instant::now);
    }

    fn pending(&self) -> bool {
        self.done < self.total
    }

    fn this_run(&self) -> u64 {
        self.done - self.at_start
    }

    fn left(&self) -> u64 {
        self.total.saturating_sub(self.done)
    }

    fn rate(&self) -> f64 {
        let secs = self.started.map_or(0.0, |t| t.elapsed().as_secs_f64());
        self.this_run() as f64 / secs.max(1e-9)
    }

    /// ", what N.N%" when the build has this part, else nothing.
    fn shown(&self, what: &str) -> String {
        match self.total {
            0 => String::new(),
            t => format!(", {what} {:.1}%", 100.0 * self.done as f64 / t as f64),
        }
    }
}

/// One progress line: slices solved, the rate and ETA of the current part of the build
/// (solving, the distances, then the database stages), and what is running.
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
    // While slices remain to be solved the rate and ETA are the solver's; after that the
    // distances', then the database stages'.
    let (rate, left) = if !solving && sh.mtc.pending() {
        (sh.mtc.rate(), sh.mtc.left())
    } else if solving || !sh.db.pending() {
        (
            (done - at_start) as f64 / elapsed.as_secs_f64().max(1e-9),
            sh.total_positions - done,
        )
    } else {
        (sh.db.rate(), sh.db.left())
    };
    // Nothing of the current part done yet (a pair's distances or database jobs run
    // first while the solving waits on them): the whole build's rate and what is left of
    // it, every part's positions counted alike, rather than no estimate.
    let (rate, left) = match rate > 0.0 {
        true => (rate, left),
        false => (
            (done - at_start + sh.db.this_run() + sh.mtc.this_run()) as f64
                / elapsed.as_secs_f64().max(1e-9),
            (sh.total_positions - done) + sh.db.left() + sh.mtc.left(),
        ),
    };
    let working: Vec<String> = sh
        .pairs
        .iter()
        .filter(|p| p.working > 0)
        .take(3)
        .map(|p| format!("{} {:?}", p.slices[0], p.stage))
        .collect();
    let parts = sh.mtc.shown("moves to conversion") + &sh.db.shown("database");
    let text = format!(
        "[{:>7}] slices {}/{} ({} of {} pairs, {:.1}% of positions){parts}, {:.2} M positions/s, ETA {}{}{}",
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
    // The bar: positions solved, then positions with distances, built and verified.
    log.update(
        done + sh.db.done + sh.mtc.done,
        sh.total_positions + sh.db.total + sh.mtc.total,
        &text,
    );
}

#[cfg(test)]
mod tests {
    use super::Part;

    #[test]
    fn a_part_counts_the_site_and_rates_this_run() {
        let mut p = Part::new(60, 100);
        assert_eq!(
            p.shown("moves to conversion"),
            ", moves to conversion 60.0%"
        );
        assert!(p.pending());
        assert_eq!((p.this_run(), p.left()), (0, 40));
        assert_eq!(p.rate(), 0.0, "no job of this run yet: no rate");
        p.start();
        p.done += 30;
        assert_eq!((p.this_run(), p.left()), (30, 10));
        assert!(p.rate() > 0.0);
        p.done += 10;
        assert!(!p.pending());
        assert_eq!(
            Part::new(0, 0).shown("database"),
            "",
            "a build without the part"
        );
    }
}
