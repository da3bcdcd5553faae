//! Deindexing a rising run of indices: a `que` job's queued mirror positions, read in
//! sorted order. Neighbours in such a run mostly share their men and black kings, which
//! cost most of an unrank, so those are kept from the index before and only the white kings
//! are placed (`que 4300.-- -r 8`: 2.7 M entries, a fifth of the job's instructions in
//! unranking them whole).

use super::SliceIndex;
use super::colex::colex_unrank;
use super::deposit::{ByteTables, Deposit};
use crate::board::Position;

/// What [`SliceIndex::position_near`] keeps of the last index it placed: the index's part
/// above the white kings, and the men and black kings it stands for.
#[derive(Clone, Copy, Debug)]
pub struct NearMemo {
    key: (u64, u64),
    bm: u32,
    wm: u32,
    bk: u32,
}

impl Default for NearMemo {
    fn default() -> Self {
        NearMemo {
            key: (u64::MAX, u64::MAX),
            bm: 0,
            wm: 0,
            bk: 0,
        }
    }
}

impl SliceIndex {
    /// [`SliceIndex::position_unchecked`], reusing the men and black kings of the index
    /// `memo` saw last when this one shares them. `memo` must only ever see this slice's
    /// indexes.
    #[inline]
    pub fn position_near(&self, index: u64, memo: &mut NearMemo) -> Position {
        #[cfg(target_arch = "x86_64")]
        if let Some(pdep) = super::deposit::Pdep::detect() {
            // SAFETY: `detect` returns a `Pdep` only where the processor has BMI2.
            return unsafe { self.position_near_bmi2(index, memo, pdep) };
        }
        self.position_near_with(index, memo, ByteTables)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "bmi2")]
    fn position_near_bmi2(
        &self,
        index: u64,
        memo: &mut NearMemo,
        pdep: super::deposit::Pdep,
    ) -> Position {
        self.position_near_with(index, memo, pdep)
    }

    #[inline(always)]
    fn position_near_with(
        &self,
        index: u64,
        memo: &mut NearMemo,
        squares: impl Deposit,
    ) -> Position {
        let (q, r) = self.king_div.divmod(index);
        let (bkrank, wkrank) = self.wk_div.divmod(r);
        if memo.key != (q, bkrank) {
            let p = self.position_from_ranks(q, bkrank, wkrank, squares);
            *memo = NearMemo {
                key: (q, bkrank),
                bm: p.black_men(),
                wm: p.white_men(),
                bk: p.black_kings(),
            };
            return p;
        }
        let wk = colex_unrank(wkrank, self.nwk, !(memo.bm | memo.wm | memo.bk), squares);
        Position {
            black: memo.bm | memo.bk,
            white: memo.wm | wk,
            kings: memo.bk | wk,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rising runs with short and long gaps, on slices with and without men and kings.
    #[test]
    fn near_positions_are_the_unranked_ones() {
        let mut rng = crate::rng::XorShift::new(0x4EA7);
        for name in [
            "4300.--", "3400.--", "2221.66", "0033.65", "3201.-5", "1144.36", "2200.--",
        ] {
            let ix = SliceIndex::for_name(name).unwrap();
            let mut memo = NearMemo::default();
            let mut i = rng.next() % 1000;
            while i < ix.count() {
                assert_eq!(
                    ix.position_near(i, &mut memo),
                    ix.position_unchecked(i),
                    "{name} {i}"
                );
                i += match rng.next() % 4 {
                    0 => 0,
                    1 => 1 + rng.next() % 40,
                    2 => 1 + rng.next() % 5000,
                    _ => 1 + rng.next() % (ix.count() / 50).max(1),
                };
            }
        }
    }
}
