//! Checking the compressed database against the solver's exact values (`solved/`): every
//! position of some slices, or random positions (`dbprobe --check`).

use crate::db::probe::{CaptureCache, Database};
use crate::notation::position_fen;
use crate::progress::Progress;
use crate::slice::Slice;
use crate::slice::index::SliceIndex;
use crate::solve::solved::SolvedSlice;
use crate::solve::{Result, Site};
use crate::solve_err;
use std::time::{Duration, Instant};

/// What a check covered.
#[derive(Clone, Debug, Default)]
pub struct CheckReport {
    pub slices: usize,
    pub positions: u64,
    pub elapsed: Duration,
    /// Blocks read from disk during the check.
    pub blocks_read: u64,
}

fn mismatch(
    slice: &Slice,
    i: u64,
    pos: &crate::Position,
    got: crate::solve::Value,
    want: crate::solve::Value,
) -> crate::solve::SolveError {
    solve_err!(
        "{slice} position {i} ({}): the database says {got}, the solver {want}",
        position_fen(pos)
    )
}

/// Probes every position of `slices` (Black to move) and compares it with `solved/`,
/// with `threads` threads.
pub fn check_every_position(
    site: &Site,
    db: &Database,
    slices: &[Slice],
    threads: usize,
    progress: &mut Progress,
) -> Result<CheckReport> {
    let start = Instant::now();
    let read0 = db.blocks_read();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let total: u64 = slices.iter().map(|s| s.count()).sum();
    let checked = std::sync::atomic::AtomicU64::new(0);
    let results: Vec<Result<u64>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.max(1))
            .map(|_| {
                scope.spawn(|| -> Result<u64> {
                    let mut memo = CaptureCache::new(crate::db::probe::MEMO_SLOTS);
                    let mut n = 0;
                    loop {
                        let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(slice) = slices.get(k) else {
                            return Ok(n);
                        };
                        let solved = SolvedSlice::load(site, *slice)?;
                        let ix = SliceIndex::new(*slice);
                        let mut e = ix.enumerate_from(0);
                        for i in 0..ix.count() {
                            let pos = e.position();
                            let got = db.probe_cached(&pos, &mut memo)?;
                            if got != solved.get(i) {
                                return Err(mismatch(slice, i, &pos, got, solved.get(i)));
                            }
                            e.advance();
                        }
                        n += ix.count();
                        checked.fetch_add(ix.count(), std::sync::atomic::Ordering::Relaxed);
                    }
                })
            })
            .collect();
        while !workers.iter().all(|w| w.is_finished()) {
            std::thread::sleep(std::time::Duration::from_millis(50));
            if progress.due() {
                let d = checked.load(std::sync::atomic::Ordering::Relaxed);
                progress.update(d, total, &checked_line(d, total, start));
            }
        }
        workers
            .into_iter()
            .map(|w| w.join().expect("check thread"))
            .collect()
    });
    let mut report = CheckReport {
        slices: slices.len(),
        ..Default::default()
    };
    for r in results {
        report.positions += r?;
    }
    report.elapsed = start.elapsed();
    report.blocks_read = db.blocks_read() - read0;
    Ok(report)
}

/// The progress line of a check.
fn checked_line(done: u64, total: u64, start: Instant) -> String {
    format!(
        "checked {done} of {total} positions ({:.1}%), {:.2} M/s",
        100.0 * done as f64 / total.max(1) as f64,
        done as f64 / start.elapsed().as_secs_f64().max(1e-9) / 1e6
    )
}

/// Probes `n` random positions of the slices of `pieces` pieces (each position equally
/// likely) one by one, as a game-playing program would, and compares them with `solved/`.
pub fn check_random(
    site: &Site,
    db: &Database,
    pieces: u32,
    n: u64,
    seed: u64,
    progress: &mut Progress,
) -> Result<CheckReport> {
    let slices: Vec<Slice> = site
        .solved_slices()?
        .into_iter()
        .filter(|s| s.pieces() == pieces)
        .collect();
    if slices.is_empty() {
        return Err(solve_err!(
            "no solved slice of {pieces} pieces in {}",
            site.solved_dir().display()
        ));
    }
    let indexers: Vec<SliceIndex> = slices.iter().map(|s| SliceIndex::new(*s)).collect();
    let mut cumulative = Vec::with_capacity(slices.len());
    let mut total = 0;
    for ix in &indexers {
        total += ix.count();
        cumulative.push(total);
    }
    // Drawn first, then probed slice by slice so that each slice's exact values are loaded
    // once; the probes themselves still jump around the database.
    let mut rng = crate::rng::XorShift::new(seed | 1);
    let mut draws: Vec<(usize, u64)> = (0..n)
        .map(|_| {
            let at = rng.below(total);
            let k = cumulative.partition_point(|&c| c <= at);
            (k, at - (cumulative[k] - indexers[k].count()))
        })
        .collect();
    draws.sort_unstable_by_key(|d| d.0);
    let start = Instant::now();
    let read0 = db.blocks_read();
    let mut checked_slices = 0;
    let mut probed = 0;
    for group in draws.chunk_by(|a, b| a.0 == b.0) {
        let k = group[0].0;
        let solved = SolvedSlice::load(site, slices[k])?;
        checked_slices += 1;
        if progress.due() {
            progress.update(probed, n, &checked_line(probed, n, start));
        }
        probed += group.len() as u64;
        for &(_, i) in group {
            let pos = indexers[k].position_unchecked(i);
            let got = db.probe(&pos)?;
            if got != solved.get(i) {
                return Err(mismatch(&slices[k], i, &pos, got, solved.get(i)));
            }
        }
    }
    Ok(CheckReport {
        slices: checked_slices,
        positions: n,
        elapsed: start.elapsed(),
        blocks_read: db.blocks_read() - read0,
    })
}
