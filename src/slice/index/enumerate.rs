//! In-order enumeration of a slice: each step advances the least significant tuple (white
//! kings) to its next placement and carries into the more significant ones, so consecutive
//! positions differ in one or two pieces and successors of consecutive positions stay close
//! together in their slices' index order (the locality paging relies on).

use super::{SliceIndex, below, select};
use crate::board::Position;

/// The `n` lowest set bits of `mask`.
#[inline]
fn lowest(mask: u32, n: u32) -> u32 {
    if n == 0 {
        0
    } else {
        (mask as u64 & ((2u64 << select(mask, n - 1)) - 1)) as u32
    }
}

/// The next subset of `mask` with as many elements as `x`, in increasing numeric (= colex)
/// order, or `None` after the last one. A masked version of Gosper's hack.
#[inline]
fn next_subset(x: u32, mask: u32) -> Option<u32> {
    if x == 0 {
        return None;
    }
    let t = (x & x.wrapping_neg()) as u64;
    let r = ((x as u64 | !(mask as u64)).wrapping_add(t) & mask as u64) as u32;
    if r == 0 {
        return None;
    }
    Some(r | lowest(mask, x.count_ones() - r.count_ones()))
}

/// The first `k`-subset of `mask` (colex order) whose largest element is at or above square
/// `band`, or `None` when there is none.
#[inline]
fn first_in_band(k: u32, mask: u32, band: u32) -> Option<u32> {
    if k == 0 {
        return Some(0);
    }
    let p = (k - 1).max(below(mask, band));
    if p >= mask.count_ones() {
        return None;
    }
    Some(lowest(mask, k - 1) | (1 << select(mask, p)))
}

/// Walks a slice in index order from a starting index.
pub struct Enumerator<'a> {
    ix: &'a SliceIndex,
    index: u64,
    /// The slice's count, kept here: every step compares against it.
    count: u64,
    bm: u32,
    /// White men in White's numbering (`31 - s`), as the carry advances them.
    wm_rev: u32,
    /// The same white men on the board, and the squares no man stands on (where the kings
    /// go): recomputed only when the men change, because reversing the bits at every step
    /// cost 4 % of `ver` (callgrind).
    wm: u32,
    kmask: u32,
    bk: u32,
    wk: u32,
}

impl<'a> Enumerator<'a> {
    pub(super) fn new(ix: &'a SliceIndex, index: u64) -> Enumerator<'a> {
        let mut e = Enumerator {
            ix,
            index,
            count: ix.count(),
            bm: 0,
            wm_rev: 0,
            wm: 0,
            kmask: !0,
            bk: 0,
            wk: 0,
        };
        if index < ix.count() {
            let p = ix.position_unchecked(index);
            e.bm = p.black_men();
            e.wm_rev = p.white_men().reverse_bits();
            e.bk = p.black_kings();
            e.wk = p.white_kings();
            e.men_changed();
        }
        e
    }

    /// Derives the board's white men and the kings' squares after the men changed.
    #[inline]
    fn men_changed(&mut self) {
        self.wm = self.wm_rev.reverse_bits();
        self.kmask = !(self.bm | self.wm);
    }

    /// Index of the current position.
    #[inline]
    pub fn index(&self) -> u64 {
        self.index
    }

    /// Whether the enumerator stands on a position (false past the end).
    #[inline]
    pub fn valid(&self) -> bool {
        self.index < self.count
    }

    /// The current position.
    #[inline]
    pub fn position(&self) -> Position {
        Position {
            black: self.bm | self.bk,
            white: self.wm | self.wk,
            kings: self.bk | self.wk,
        }
    }

    /// Moves forward to index `target` (at or after this one, below the count): step by
    /// step over a short gap, by unranking over a long one (one unrank costs about as much
    /// as this many steps).
    #[inline]
    pub fn skip_to(&mut self, target: u64) {
        const SEEK_GAP: u64 = 24;
        debug_assert!(target >= self.index && target < self.count);
        if target - self.index > SEEK_GAP {
            *self = Enumerator::new(self.ix, target);
        } else {
            while self.index < target {
                self.advance();
            }
        }
    }

    /// Moves to the next index; returns false once past the end.
    #[inline]
    pub fn advance(&mut self) -> bool {
        self.index += 1;
        if self.index >= self.count {
            self.index = self.count;
            return false;
        }
        let kmask = self.kmask;
        if let Some(wk) = next_subset(self.wk, kmask & !self.bk) {
            self.wk = wk;
            return true;
        }
        self.carry_kings(kmask);
        true
    }

    /// The white kings wrapped: advance the black kings, or the men, and reset what is below.
    #[cold]
    fn carry_kings(&mut self, kmask: u32) {
        let ix = self.ix;
        if let Some(bk) = next_subset(self.bk, kmask) {
            self.bk = bk;
        } else {
            self.carry_men();
            let kmask = self.kmask;
            self.bk = lowest(kmask, ix.nbk);
            self.wk = lowest(kmask & !self.bk, ix.nwk);
            return;
        }
        self.wk = lowest(kmask & !self.bk, ix.nwk);
    }

    /// The kings wrapped: advance the white men, else the black men (resetting white men).
    fn carry_men(&mut self) {
        let ix = self.ix;
        if let Some(wm) = next_subset(self.wm_rev, ix.white_men_band_mask(self.bm)) {
            self.wm_rev = wm;
            self.men_changed();
            return;
        }
        // The index bound guarantees a next black-man placement exists whose white men fit.
        loop {
            let bmask = ((1u64 << ix.bm_top) - 1) as u32;
            self.bm = next_subset(self.bm, bmask).expect("index below count has a successor");
            if let Some(wm) = first_in_band(ix.nwm, ix.white_men_band_mask(self.bm), ix.wm_band) {
                self.wm_rev = wm;
                self.men_changed();
                return;
            }
        }
    }
}

impl Iterator for Enumerator<'_> {
    type Item = (u64, Position);
    fn next(&mut self) -> Option<Self::Item> {
        if !self.valid() {
            return None;
        }
        let item = (self.index, Enumerator::position(self));
        self.advance();
        Some(item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gosper_over_mask() {
        let mask = 0b1101_0110u32;
        let mut x = lowest(mask, 3);
        let mut seen = vec![x];
        while let Some(n) = next_subset(x, mask) {
            assert!(n > x);
            x = n;
            seen.push(x);
        }
        assert_eq!(seen.len(), 10); // C(5, 3)
        assert!(seen.iter().all(|s| s & !mask == 0 && s.count_ones() == 3));
    }
}
