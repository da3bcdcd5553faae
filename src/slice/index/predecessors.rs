//! Indices of the quiet predecessors of one position: the boards of a slice from which a
//! plain step (no capture, no crowning) leads to a position of its mirror. `winmove` and
//! the position queue, `ver`'s walk of the mirror and `mtc` all find predecessors here.
//! Those by a king move keep every man where it is, so they are in the slice if any is, and
//! share the men's part of their index, which is ranked once.

use super::SliceIndex;
use super::colex::{BINOMIAL, below};
use crate::board::{Position, for_each_unmove, for_each_unmove_of, has_capture};
use crate::slice::Slice;
use std::ops::Range;

impl SliceIndex {
    /// Calls `f(index, q)` for every board `q` of this index's slice from which Black's
    /// plain step leads to `child`, a position of the mirror (its side to move is the one
    /// that did not step), and is legal: boards with a capture, where the capture was
    /// compulsory, are dropped before they are ranked (`winmove 2221.66`: 11.4 -> 9.0 G
    /// instructions; ranking them cost more than the test). No range is tested here: the
    /// range tests of [`SliceIndex::for_each_quiet_predecessor_in`] made a whole-slice
    /// `winmove` job a sixth more instructions.
    #[inline(always)]
    pub fn for_each_quiet_predecessor(&self, child: &Position, mut f: impl FnMut(u64, Position)) {
        let board = child.reversed();
        let men = board.black_men();
        // King steps stay in the child's slice, so they matter only when it is this one.
        let king_part = (board.black_kings() != 0 && Slice::of(&board) == self.slice)
            .then(|| self.men_part(self.black_men_base(men), &board));
        let pieces = match king_part {
            Some(_) => board.black,
            None => men,
        };
        for_each_unmove_of(&board, pieces, |q| {
            if has_capture(&q) {
                return;
            }
            let i = match king_part {
                Some(part) if q.black_men() == men => self.index_from_men_part(part, &q),
                _ => {
                    if Slice::of(&q) != self.slice {
                        return;
                    }
                    self.index(&q)
                }
            };
            debug_assert_eq!(i, self.index(&q));
            f(i, q);
        });
    }

    /// [`SliceIndex::for_each_quiet_predecessor`] for the boards whose index is in `range`
    /// (a `que` job's part of the slice), in the same order, but with the boards that have a
    /// capture too when `range` is not the whole slice: `que` drops those by their value,
    /// which it reads anyway, cheaper than testing each board. The boards of king steps share
    /// their men, so their indexes lie in one block of the index: when it misses `range`
    /// they are not generated; inside it, a board whose black kings already place it
    /// outside is not ranked further. A round's jobs each read the whole queue, so without
    /// this every job ranked every predecessor (`que 4300.-- -r 8`, a third of the slice:
    /// 40 % of its instructions in ranking boards it dropped).
    #[inline(always)]
    pub fn for_each_quiet_predecessor_in(
        &self,
        child: &Position,
        range: Range<u64>,
        mut f: impl FnMut(u64, Position),
    ) {
        if range.start == 0 && range.end >= self.count {
            return self.for_each_quiet_predecessor(child, f);
        }
        let board = child.reversed();
        let men = board.black_men();
        let wk_block = self.wk_div.d;
        let nbk = self.nbk as usize;
        // Where black kings whose top one's place among the free squares lies in
        // `[lo, hi]` put a board: from part + C(lo, k) blocks up to part + C(hi + 1, k).
        let misses = |part: (u64, u32), lo: u32, hi: u32| {
            let first = part.0 + BINOMIAL[lo as usize][nbk] * wk_block;
            let end = part.0 + BINOMIAL[hi as usize + 1][nbk] * wk_block;
            first >= range.end || end <= range.start
        };
        // The men's part of the king steps' boards, when some of them can be in `range`:
        // one step moves the top king at most five squares down, or another king at most
        // five squares above it.
        let king_part = (Slice::of(&board) == self.slice)
            .then(|| self.men_part(self.black_men_base(men), &board))
            .filter(|part| part.0 < range.end && part.0 + self.king_div.d > range.start)
            .filter(|&part| {
                let kings = board.black_kings();
                let top = 31 - kings.leading_zeros().min(31);
                let (lo, hi) = (top.saturating_sub(5), (top + 5).min(31));
                kings != 0 && !misses(part, below(part.1, lo), below(part.1, hi))
            });
        let pieces = match king_part {
            Some(_) => board.black,
            None => men,
        };
        for_each_unmove_of(&board, pieces, |q| {
            let i = match king_part {
                Some(part) if q.black_men() == men => {
                    let bk = q.black_kings();
                    // The black kings' colex rank lies in [C(t, k), C(t + 1, k)), `t` the
                    // top one's place among the free squares: most boards outside `range`
                    // are dropped by that alone.
                    let t = below(part.1, 31 - bk.leading_zeros());
                    if misses(part, t, t) {
                        return;
                    }
                    let (hi, wmask) = self.index_from_black_men_part(part, bk);
                    if hi >= range.end || hi + wk_block <= range.start {
                        return;
                    }
                    self.index_from_white_kings((hi, wmask), q.white_kings())
                }
                _ => {
                    if Slice::of(&q) != self.slice {
                        return;
                    }
                    self.index(&q)
                }
            };
            debug_assert_eq!(i, self.index(&q));
            if range.contains(&i) {
                f(i, q);
            }
        });
    }

    /// The boards of [`SliceIndex::for_each_quiet_predecessor`] whose step is a king's, and
    /// those with a capture besides (the caller drops them): `mtc` walks back only moves
    /// that are not conversions.
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
    use crate::board::{MoveList, generate_moves};
    use crate::slice::is_conversion;

    /// Every position of a slice is found back from each of its quiet children, with its
    /// index, and by the king walk exactly when a king stepped; every board found has no
    /// capture and steps into the child.
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
                        assert!(!has_capture(&q), "{name}: {q:?} has a capture");
                        let mut list = MoveList::new();
                        generate_moves(&q, &mut list);
                        let step = list.iter().any(|n| !n.crowns && q.successor(n) == child);
                        assert!(step, "{name}: {q:?} does not step into {child:?}");
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

    /// A job's part of the slice sees exactly the predecessors inside it, in the same order,
    /// and the boards with a capture besides: the block and top-king tests drop nothing they
    /// should keep, and the whole walk none it should not.
    #[test]
    fn predecessors_in_a_range_are_the_ones_inside_it() {
        let mut rng = crate::rng::XorShift::new(0x7A9E);
        let mut kept = 0;
        for name in [
            "4300.--", "3400.--", "2221.66", "2212.66", "3201.-5", "0033.65", "1310.5-",
        ] {
            let ix = SliceIndex::for_name(name).unwrap();
            let mirror = SliceIndex::for_name(&ix.slice().mirror().to_string()).unwrap();
            for _ in 0..400 {
                let parts = 1 + rng.next() % 6;
                let k = rng.next() % parts;
                let range = k * ix.count() / parts..(k + 1) * ix.count() / parts;
                let child = mirror.position_unchecked(rng.next() % mirror.count());
                let mut all = Vec::new();
                ix.for_each_quiet_predecessor(&child, |i, q| {
                    if range.contains(&i) {
                        all.push((i, q));
                    }
                });
                let mut inside = Vec::new();
                ix.for_each_quiet_predecessor_in(&child, range.clone(), |i, q| {
                    if range.end - range.start == ix.count() || !has_capture(&q) {
                        inside.push((i, q));
                    }
                });
                assert_eq!(inside, all, "{name} {range:?} {child:?}");
                kept += inside.len();
            }
        }
        assert!(kept > 2_000, "{kept}");
    }
}
