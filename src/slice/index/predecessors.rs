//! Indices of the quiet predecessors of one position: the boards of a slice from which a
//! plain step (no capture, no crowning) leads to a position of its mirror. `winmove` and
//! the position queue, `ver`'s walk of the mirror and `mtc` all find predecessors here.
//! Those by a king move keep every man where it is, so they are in the slice if any is, and
//! share the men's part of their index, which is ranked once.

use super::SliceIndex;
use crate::board::{Position, for_each_unmove};
use crate::slice::Slice;

impl SliceIndex {
    /// Calls `f(index, q)` for every board `q` of this index's slice from which Black's
    /// plain step leads to `child`, a position of the mirror (its side to move is the one
    /// that did not step). Boards with a capture are included: a capture was compulsory
    /// there, so callers that need the step to be legal drop them.
    #[inline(always)]
    pub fn for_each_quiet_predecessor(&self, child: &Position, mut f: impl FnMut(u64, Position)) {
        let board = child.reversed();
        let men = board.black_men();
        let kings_here = Slice::of(&board) == self.slice;
        let mut king_part = None;
        for_each_unmove(&board, |q| {
            let i = if q.black_men() == men {
                if !kings_here {
                    return;
                }
                let part =
                    *king_part.get_or_insert_with(|| self.men_part(self.black_men_base(men), &q));
                self.index_from_men_part(part, &q)
            } else {
                if Slice::of(&q) != self.slice {
                    return;
                }
                self.index(&q)
            };
            debug_assert_eq!(i, self.index(&q));
            f(i, q);
        });
    }

    /// [`SliceIndex::for_each_quiet_predecessor`] restricted to the boards whose step is a
    /// king's: `mtc` walks back only moves that are not conversions.
    #[inline(always)]
    pub fn for_each_king_predecessor(&self, child: &Position, mut f: impl FnMut(u64, Position)) {
        let board = child.reversed();
        if Slice::of(&board) != self.slice {
            return;
        }
        let men = board.black_men();
        let part = self.men_part(self.black_men_base(men), &board);
        for_each_unmove(&board, |q| {
            if q.black_men() == men {
                let i = self.index_from_men_part(part, &q);
                debug_assert_eq!(i, self.index(&q));
                f(i, q);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::{MoveList, generate_moves, has_capture};
    use crate::slice::is_conversion;

    /// Every position of a slice is found back from each of its quiet children, with its
    /// index, and by the king walk exactly when a king stepped; every board found without a
    /// capture steps into the child.
    #[test]
    fn predecessors_are_exactly_the_boards_that_step_into_the_child() {
        let mut rng = crate::rng::XorShift::new(0x9E3D);
        let mut moves = MoveList::new();
        let mut checked = 0;
        for name in [
            "2211.43", "3201.-5", "1122.06", "2301.-6", "0033.65", "2212.66",
        ] {
            let ix = SliceIndex::for_name(name).unwrap();
            for _ in 0..3_000 {
                let i = rng.next() % ix.count();
                let p = ix.position_unchecked(i);
                if has_capture(&p) {
                    continue;
                }
                generate_moves(&p, &mut moves);
                for m in moves.iter().filter(|m| !is_conversion(&p, m)) {
                    let child = p.successor(m);
                    let king = p.kings & (1 << m.from) != 0;
                    let (mut found, mut by_king) = (false, false);
                    ix.for_each_quiet_predecessor(&child, |j, q| {
                        assert_eq!(j, ix.index(&q), "{name}");
                        found |= (j, q) == (i, p);
                        if !has_capture(&q) {
                            let mut list = MoveList::new();
                            generate_moves(&q, &mut list);
                            let step = list.iter().any(|n| !n.crowns && q.successor(n) == child);
                            assert!(step, "{name}: {q:?} does not step into {child:?}");
                        }
                    });
                    ix.for_each_king_predecessor(&child, |j, q| {
                        assert_eq!(j, ix.index(&q), "{name}");
                        by_king |= (j, q) == (i, p);
                    });
                    assert!(
                        found,
                        "{name}: {p:?} not found back from its child by {m:?}"
                    );
                    assert_eq!(by_king, king, "{name}: {p:?} by {m:?}");
                    checked += 1;
                }
            }
        }
        assert!(checked > 20_000, "{checked}");
    }
}
