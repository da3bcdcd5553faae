//! Self-consistency of finished slices (the paper's `DoVerify`, on the work files): every
//! stored value equals the best value among its moves, each move's value read from the
//! finished slices. It cannot detect an isolated cycle of wrong draws, but any other error
//! shows up as a mismatch.

use super::solved::{SolvedStore, SolvedValues, SolvedWorkFiles};
use super::{Result, Value};
use crate::board::{MoveList, generate_moves};
use crate::index::SliceIndex;
use crate::notation::position_fen;
use crate::slice::Slice;
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
        generate_moves(&pos, &mut moves);
        let mut derived = Value::Loss;
        for m in moves.iter() {
            match solved.value(&pos.successor(m))? {
                Value::Loss => {
                    derived = Value::Win;
                    break;
                }
                Value::Draw => derived = Value::Draw,
                _ => {}
            }
        }
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
