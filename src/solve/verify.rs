//! Self-consistency of finished slices (the paper's `DoVerify`, on the work files): every
//! stored value equals the best value among its moves, each move's value read from the
//! finished slices. It cannot detect an isolated cycle of wrong draws, but any other error
//! shows up as a mismatch.

use super::Result;
use super::solved::{SolvedStore, SolvedValues, SolvedWorkFiles, best_move_value};
use crate::board::MoveList;
use crate::notation::position_fen;
use crate::slice::Slice;
use crate::slice::index::SliceIndex;
use crate::solve_err;
use std::sync::Arc;

/// Checks positions `[first, last)` of the finished slice `slice`; returns how many.
pub fn verify_range(slice: &Slice, first: u64, last: u64, store: &Arc<SolvedStore>) -> Result<u64> {
    let ix = SliceIndex::new(*slice);
    let mut solved = SolvedWorkFiles::new(store.clone());
    let mut moves = MoveList::new();
    let mut e = ix.enumerate_from(first);
    while e.valid() && e.index() < last {
        let pos = e.position();
        let stored = solved.value(&pos)?;
        let derived = best_move_value(&mut solved, &pos, &mut moves)?;
        if stored != derived {
            return Err(solve_err!(
                "verify {slice}: position {} ({}) is stored as {stored} but its moves give {derived}",
                e.index(),
                position_fen(&pos)
            ));
        }
        e.advance();
    }
    Ok(last.min(ix.count()) - first)
}

/// Checks every solved slice of the site with `threads` threads, in chunks of about 4 M
/// positions; returns the number of positions checked. Stops at the first mismatch.
pub fn verify_site(
    site: &super::Site,
    threads: usize,
    progress: &mut crate::progress::Progress,
) -> Result<u64> {
    use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
    let slices = site.solved_slices()?;
    let store = SolvedStore::new(site, SolvedStore::BUDGET);
    let step = 4u64 << 20;
    let mut chunks = Vec::new();
    for s in &slices {
        let n = s.count();
        chunks.extend((0..n.div_ceil(step)).map(|k| (*s, k * step, ((k + 1) * step).min(n))));
    }
    let total: u64 = slices.iter().map(|s| s.count()).sum();
    let next = AtomicUsize::new(0);
    let done = AtomicU64::new(0);
    let failed: std::sync::Mutex<Option<super::SolveError>> = std::sync::Mutex::new(None);
    let t0 = std::time::Instant::now();
    let stopped = || failed.lock().expect("lock").is_some();
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| {
                loop {
                    let k = next.fetch_add(1, Relaxed);
                    if k >= chunks.len() || stopped() {
                        break;
                    }
                    let (s, a, b) = chunks[k];
                    match verify_range(&s, a, b, &store) {
                        Ok(n) => {
                            done.fetch_add(n, Relaxed);
                        }
                        Err(e) => {
                            *failed.lock().expect("lock") = Some(e);
                            break;
                        }
                    }
                }
            });
        }
        while next.load(Relaxed) < chunks.len() && !stopped() {
            std::thread::sleep(std::time::Duration::from_millis(50));
            if progress.due() {
                let d = done.load(Relaxed);
                let text = format!(
                    "verified {d} of {total} positions ({:.1}%), {:.2} M/s",
                    100.0 * d as f64 / total.max(1) as f64,
                    d as f64 / t0.elapsed().as_secs_f64() / 1e6
                );
                progress.update(d, total, &text);
            }
        }
    });
    if let Some(e) = failed.into_inner().expect("lock") {
        return Err(e);
    }
    Ok(done.into_inner())
}
