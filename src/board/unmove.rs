//! Reverse move generation (1994 paper section 3.2): the boards from which a plain step of
//! Black leads to a given board. Used by `winmove` and the position queue to find the
//! predecessors of a resolved position.

use super::{Position, step};

/// Calls `f` with every board `q` (Black to move) from which Black steps one piece without
/// capturing or crowning and reaches `after` (the board right after Black's move, still seen
/// from Black's side, so White is to move). Kings step back in all four directions, men only
/// downwards. The caller keeps the `q` in the slice it wants and drops those with a capture
/// (a capture would have been compulsory there).
#[inline]
pub fn for_each_unmove(after: &Position, mut f: impl FnMut(Position)) {
    let empty = after.empty();
    let mut pieces = after.black;
    while pieces != 0 {
        let at = pieces & pieces.wrapping_neg();
        pieces &= pieces - 1;
        let king = after.kings & at != 0;
        let dirs: &[usize] = if king { &[0, 1, 2, 3] } else { &[2, 3] };
        for &d in dirs {
            let from = step(at, d) & empty;
            if from != 0 {
                let moved = at | from;
                f(Position {
                    black: after.black ^ moved,
                    white: after.white,
                    kings: if king {
                        after.kings ^ moved
                    } else {
                        after.kings
                    },
                });
            }
        }
    }
}
