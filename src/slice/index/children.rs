//! Indices of the quiet children of one position: the positions after its non-conversion
//! moves, reversed so that the opponent moves, all in the parent's mirror slice. They share
//! the black men (the opponent's men, which a quiet move leaves alone), so that part of the
//! index is ranked once; the children of king moves share everything but the moved king.
//! `noio` and `ver` rank every successor this way.

use super::SliceIndex;
use crate::board::{MAX_MOVES, Move, Position};
use crate::slice::is_conversion;

/// The index parts shared by the quiet children of one position, found at the first child
/// that needs them.
#[derive(Clone, Copy, Debug, Default)]
pub struct QuietChildren {
    men: Option<(u64, u32)>,
    kings: Option<(u64, u32)>,
}

impl QuietChildren {
    /// The index in `ix` (the mirror's) of `child`, a quiet child of this position;
    /// `king_move` when the piece that moved is a king.
    #[inline(always)]
    pub fn index(&mut self, ix: &SliceIndex, child: &Position, king_move: bool) -> u64 {
        // The shared parts are found out of line, one call for a king move's child
        // (`get_or_insert_with` made two; inlining them into the callers' loops cost `noio`
        // 2 %, callgrind).
        let index = if king_move {
            let base = match self.kings {
                Some(base) => base,
                None => self.king_base(ix, child),
            };
            ix.index_from_white_kings(base, child.white_kings())
        } else {
            let men = match self.men {
                Some(men) => men,
                None => self.men_base(ix, child),
            };
            ix.index_from_white_kings(ix.index_from_black_men(men, child), child.white_kings())
        };
        debug_assert_eq!(index, ix.index(child));
        index
    }

    /// The part of the index fixed by `child`'s black men, kept for its siblings.
    #[inline(never)]
    fn men_base(&mut self, ix: &SliceIndex, child: &Position) -> (u64, u32) {
        *self.men.insert(ix.black_men_base(child.black_men()))
    }

    /// The part of the index fixed by all but White's kings, kept for the siblings by king
    /// moves (and the men's part with it).
    #[inline(never)]
    fn king_base(&mut self, ix: &SliceIndex, child: &Position) -> (u64, u32) {
        let men = match self.men {
            Some(men) => men,
            None => *self.men.insert(ix.black_men_base(child.black_men())),
        };
        *self.kings.insert(ix.index_from_black_men(men, child))
    }

    /// [`QuietChildren::index`] of `child`, the quiet child of `pos` by `m` (a king move
    /// when the piece on its square is a king).
    #[inline(always)]
    pub fn of_move(&mut self, ix: &SliceIndex, pos: &Position, m: &Move, child: &Position) -> u64 {
        self.index(ix, child, pos.kings & (1 << m.from) != 0)
    }

    /// The indexes in `ix` (the mirror's) of the quiet children of `pos` by `moves` (its
    /// moves), in move order into `out`, and `u64::MAX` for a conversion, whose child is in a
    /// lower slice. Each index goes to `found` as soon as it is known, so that its value can
    /// be asked of memory before the first is read (the mirror is larger than the cache at 8
    /// pieces).
    #[inline(always)]
    pub fn indexes(
        ix: &SliceIndex,
        pos: &Position,
        moves: &[Move],
        out: &mut [u64; MAX_MOVES],
        mut found: impl FnMut(u64),
    ) {
        let mut children = QuietChildren::default();
        for (k, m) in moves.iter().enumerate() {
            out[k] = match is_conversion(pos, m) {
                true => u64::MAX,
                false => {
                    let i = children.of_move(ix, pos, m, &pos.successor(m));
                    found(i);
                    i
                }
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::{MoveList, generate_moves, has_capture};

    /// Every quiet child's index, taken in move order as the solver and `ver` take them,
    /// equals its index ranked from scratch: kings moving past each other, onto and off the
    /// edges, and many king moves a position.
    #[test]
    fn quiet_children_are_ranked_as_from_scratch() {
        let mut rng = crate::rng::XorShift::new(0xC41D);
        let mut moves = MoveList::new();
        let mut kings_moved = 0;
        for name in [
            "4300.--", "3400.--", "2221.66", "2311.66", "5200.--", "1310.5-", "0033.65",
        ] {
            let ix = SliceIndex::for_name(name).unwrap();
            let mirror = SliceIndex::for_name(&ix.slice().mirror().to_string()).unwrap();
            for _ in 0..3_000 {
                let pos = ix.position_unchecked(rng.next() % ix.count());
                if has_capture(&pos) {
                    continue;
                }
                generate_moves(&pos, &mut moves);
                let mut children = QuietChildren::default();
                for m in moves.iter().filter(|m| !is_conversion(&pos, m)) {
                    let child = pos.successor(m);
                    assert_eq!(
                        children.of_move(&mirror, &pos, m, &child),
                        mirror.index(&child),
                        "{name} {pos:?} {m:?}"
                    );
                    kings_moved += (pos.kings & (1 << m.from) != 0) as u32;
                }
            }
        }
        assert!(kings_moved > 50_000, "{kings_moved}");
    }
}
