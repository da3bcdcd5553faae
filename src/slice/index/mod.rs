//! Gapless indexing of a slice, exactly as the 1994 paper's Appendix B.
//!
//! A position is four tuples of squares: black men `bm`, white men `wm`, black kings `bk`,
//! white kings `wk`, ordered from most to least significant. Black men are placed first on
//! squares 0..27 with the leading one on rank `rb`; white men are counted from White's side
//! (square `31 - s`) on the squares black men leave free, with the leading one on rank `rw`;
//! black kings on the squares the men leave; white kings on what is left. Each tuple advances
//! in colexicographic order (the paper's "increment the lowest element that can move").
//!
//! The number of white-man placements depends on the black men (how many of them stand in
//! White's ranks `0..=rw` and `0..rw`), so the black-man part of an index is a *weighted*
//! colex rank: the sum of the white placements of every earlier black placement. It is
//! computed from small tables in O(men) (see `MenRanks`).

mod children;
mod colex;
mod deposit;
mod enumerate;
mod near;
mod predecessors;

pub use children::QuietChildren;
pub use enumerate::Enumerator;
pub use near::NearMemo;

pub use colex::binomial;
use colex::{below, colex_rank, colex_unrank};
use deposit::{ByteTables, Deposit, select};

use super::{Slice, SliceError};
use crate::board::{Position, PositionError};

/// A position or index that does not belong to a slice: each names the slice.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IndexError {
    /// Not a legal position at all.
    #[error("{0}")]
    Position(PositionError),
    #[error("position {fen} is in slice {actual}, not {slice}")]
    OtherSlice {
        fen: String,
        actual: Slice,
        slice: Slice,
    },
    #[error("index {index} is out of range for slice {slice} ({count} positions)")]
    OutOfRange {
        index: u64,
        slice: Slice,
        count: u64,
    },
}

/// Whether deindexing uses the processor's PDEP instruction (BMI2, and not an AMD processor
/// before Zen 3, which runs it in microcode) rather than byte tables. For benchmark reports.
pub fn uses_pdep() -> bool {
    #[cfg(target_arch = "x86_64")]
    return deposit::Pdep::detect().is_some();
    #[cfg(not(target_arch = "x86_64"))]
    return false;
}

/// A divisor with its reciprocal, for exact division of indices (below 2^53) by a multiply:
/// hardware 64-bit division costs more than the rest of a deindex step.
#[derive(Clone, Copy, Debug)]
struct Divisor {
    d: u64,
    inverse: f64,
}

impl Divisor {
    fn new(d: u64) -> Divisor {
        Divisor {
            d,
            inverse: 1.0 / d as f64,
        }
    }

    /// `(n / d, n % d)`. The float quotient is off by at most one for n < 2^53; fix it up.
    #[inline]
    fn divmod(&self, n: u64) -> (u64, u64) {
        // Through i64: x86 converts signed integers in one instruction, unsigned in several.
        let mut q = (n as i64 as f64 * self.inverse) as i64 as u64;
        let mut r = n.wrapping_sub(q.wrapping_mul(self.d)) as i64;
        if r < 0 {
            q -= 1;
            r += self.d as i64;
        } else if r >= self.d as i64 {
            q += 1;
            r -= self.d as i64;
        }
        (q, r as u64)
    }
}

/// Prefix sums of a weight over the colex order of `n`-subsets of squares 0..28 whose largest
/// element lies in `[top_lo, top_hi)`, where the weight of a subset is `f(number of its
/// elements >= threshold)`.
///
/// `table[j][A][c]` is the total weight of the subsets that agree with the current one above
/// element `j`, have element `j` in `[lo_j, c)` and anything below it; `A` is how many of the
/// agreed elements above `j` are `>= threshold`. Only a builder: [`MenRanks`] holds the
/// difference of two of them, which is what ranking reads.
struct WeightedColex {
    n: usize,
    threshold: u32,
    table: Vec<u64>,
}

const CELLS: usize = 29; // c in 0..=28

impl WeightedColex {
    fn new(n: usize, threshold: u32, top_lo: u32, f: impl Fn(u32) -> u64) -> WeightedColex {
        let mut table = vec![0u64; n * (n + 1) * CELLS];
        for j in 0..n {
            // Weight of all subsets with element j = v and the j lower elements free below v.
            let q = |v: u32, a: u32| -> u64 {
                let low = v.min(threshold) as i32;
                let high = v.saturating_sub(threshold) as i32;
                (0..=j as u32)
                    .map(|y| binomial(low, j as u32 - y) * binomial(high, y) * f(a + y))
                    .sum()
            };
            let lo = if j + 1 == n { top_lo } else { j as u32 };
            for a in 0..=n {
                let row = (j * (n + 1) + a) * CELLS;
                let mut acc = 0;
                for c in 0..CELLS as u32 {
                    table[row + c as usize] = acc;
                    if c >= lo && c < 28 {
                        acc += q(c, a as u32 + (c >= threshold) as u32);
                    }
                }
            }
        }
        WeightedColex {
            n,
            threshold,
            table,
        }
    }

    #[inline]
    fn row(&self, j: usize, a: u32) -> &[u64] {
        let start = (j * (self.n + 1) + a as usize) * CELLS;
        &self.table[start..start + CELLS]
    }
}

/// One row of [`MenRanks`]: prefix weights by square, padded to whole cache lines with
/// entries no rank reaches.
#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
struct PrefixRow([u64; 32]);

impl PrefixRow {
    /// The largest square `c` below `hi` (the square of the man above, or the top of the
    /// band) with `self.0[c] <= rank`. The squares below the row's lowest allowed one hold 0
    /// and a valid rank is below the entry at `hi`, so the entries below `hi` that are
    /// `<= rank` are exactly squares `0..=c`. (Entries from `hi` on count placements that
    /// overlap the men above and mean nothing.) Counting them reads the row's cache lines
    /// side by side, where a binary search waits for one dependent load per halving, and
    /// random slices find their tables in L3 at best.
    #[inline]
    fn last_at_most(&self, rank: u64, hi: usize) -> usize {
        let r = rank as i64;
        let mut fits = 0u32;
        for (c, &v) in self.0[..28].iter().enumerate() {
            fits |= ((v as i64 <= r) as u32) << c;
        }
        (fits & ((1u32 << hi) - 1)).count_ones() as usize - 1
    }

    /// [`PrefixRow::last_at_most`] for the leading man, which stands on one of the four
    /// squares `band..band + 4` of its rank.
    #[inline]
    fn last_in_band(&self, rank: u64, band: usize) -> usize {
        let r = rank as i64;
        let fits = |c: usize| (self.0[c] as i64 <= r) as usize;
        band + fits(band + 1) + fits(band + 2) + fits(band + 3)
    }
}

/// The weighted colex rank of black-man placements (see the module comment): `row(j, a, b)`
/// is `f`'s prefix row minus `g`'s, where `a` and `b` count the black men above element `j`
/// that stand in White's ranks `0..=rw` and `0..rw`. One table instead of two halves the
/// loads of ranking and unranking.
#[derive(Clone, Copy, Debug)]
struct MenRanks {
    n: usize,
    /// Black men on squares `>= f_threshold` (`>= g_threshold`) count towards `a` (`b`).
    f_threshold: u32,
    g_threshold: u32,
    /// Shared by every slice with the same men and leading ranks (see [`men_tables`]).
    rows: &'static [PrefixRow],
}

impl MenRanks {
    fn new(f: &WeightedColex, g: &WeightedColex) -> MenRanks {
        let n = f.n;
        let mut rows = vec![PrefixRow([u64::MAX; 32]); n * (n + 1) * (n + 1)];
        for j in 0..n {
            for a in 0..=n as u32 {
                for b in 0..=n as u32 {
                    let row = &mut rows[(j * (n + 1) + a as usize) * (n + 1) + b as usize];
                    for (c, (fv, gv)) in f.row(j, a).iter().zip(g.row(j, b)).enumerate() {
                        // Wraps only where the row means nothing (see `last_at_most`).
                        row.0[c] = fv.wrapping_sub(*gv);
                    }
                }
            }
        }
        SHARED_TABLE_BYTES.fetch_add(
            rows.len() * std::mem::size_of::<PrefixRow>(),
            std::sync::atomic::Ordering::Relaxed,
        );
        MenRanks {
            n,
            f_threshold: f.threshold,
            g_threshold: g.threshold,
            rows: rows.leak(),
        }
    }

    #[inline]
    fn row(&self, j: usize, a: u32, b: u32) -> &PrefixRow {
        &self.rows[(j * (self.n + 1) + a as usize) * (self.n + 1) + b as usize]
    }
}

/// The bytes of the men's rank tables made so far ([`men_tables`]).
static SHARED_TABLE_BYTES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The memory the indexes of all slices built so far share (the men's rank tables, kept for
/// the life of the process), in bytes: an engine's memory budget counts them.
pub fn shared_table_bytes() -> usize {
    SHARED_TABLE_BYTES.load(std::sync::atomic::Ordering::Relaxed)
}

/// The men's rank table and placement count of slices with `(black men, white men, leading
/// ranks)` = `key`, made by `make` the first time. Slices differing only in their kings
/// share them, so code jumping between slices (probes, random deindexing) finds them in the
/// processor's cache more often, and building a slice's index again is a lookup. Never
/// freed: one table per key, and a database has a few thousand keys at most.
fn men_tables(
    key: (u32, u32, u32, u32),
    make: impl FnOnce() -> (MenRanks, u64),
) -> (MenRanks, u64) {
    type Tables = std::collections::HashMap<(u32, u32, u32, u32), (MenRanks, u64)>;
    static TABLES: std::sync::OnceLock<std::sync::Mutex<Tables>> = std::sync::OnceLock::new();
    let mut tables = TABLES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    *tables.entry(key).or_insert_with(make)
}

/// Everything needed to index one slice: its counts and weight tables.
#[derive(Clone, Debug)]
pub struct SliceIndex {
    slice: Slice,
    nbm: u32,
    nwm: u32,
    nbk: u32,
    nwk: u32,
    /// Black men lie below square `bm_top`, the leading one on the four squares below it.
    bm_top: u32,
    /// White men (in White's own numbering, `31 - s`) lie below `wm_top`, the leading one
    /// on `wm_band..wm_top`.
    wm_band: u32,
    wm_top: u32,
    /// Weighted colex of black men: white placements on ranks 0..=rw (`f`) minus those on
    /// 0..rw (`g`).
    men: MenRanks,
    /// Placements of black kings times white kings, and of white kings alone (the place
    /// values of the king tuples in an index).
    king_div: Divisor,
    wk_div: Divisor,
    count: u64,
}

impl SliceIndex {
    /// Builds the index tables of a slice (microseconds; cache it per slice).
    pub fn new(slice: Slice) -> SliceIndex {
        let m = slice.material;
        let (nbm, nwm, nbk, nwk) = (m.bm as u32, m.wm as u32, m.bk as u32, m.wk as u32);
        let rb = slice.rb.unwrap_or(6) as u32;
        let rw = slice.rw.unwrap_or(6) as u32;
        let bm_band = 4 * rb;
        let bm_top = 4 * rb + 4;
        let wm_band = 4 * rw;
        let wm_top = 4 * rw + 4;
        // White men lie on squares >= wm_floor (White's ranks 0..=rw seen from Black).
        let wm_floor = 32 - wm_top;
        // White placements with the leading man in its band, given how many black men take
        // squares in White's ranks 0..=rw (a) or 0..rw (b).
        // Without white men there is exactly one (empty) white placement.
        let f = move |a: u32| match nwm {
            0 => 1,
            n => binomial(wm_top as i32 - a as i32, n),
        };
        let g = move |b: u32| match nwm {
            0 => 0,
            n => binomial(wm_band as i32 - b as i32, n),
        };
        let (men, men_total) = men_tables((nbm, nwm, rb, rw), || {
            let total = f(0) - g(0); // the one empty black placement's weight
            let f = WeightedColex::new(nbm as usize, wm_floor, bm_band, f);
            let g = WeightedColex::new(nbm as usize, wm_floor + 4, bm_band, g);
            let men = MenRanks::new(&f, &g);
            match nbm {
                0 => (men, total),
                n => (men, men.row(n as usize - 1, 0, 0).0[bm_top as usize]),
            }
        });
        let free = 32 - nbm as i32 - nwm as i32;
        let wk_block = binomial(free - nbk as i32, nwk);
        let king_block = binomial(free, nbk) * wk_block;
        SliceIndex {
            slice,
            nbm,
            nwm,
            nbk,
            nwk,
            bm_top,
            wm_band,
            wm_top,
            men,
            king_div: Divisor::new(king_block),
            wk_div: Divisor::new(wk_block),
            count: men_total * king_block,
        }
    }

    /// Builds the tables of a slice given by name.
    pub fn for_name(name: &str) -> Result<SliceIndex, SliceError> {
        Ok(SliceIndex::new(name.parse()?))
    }

    pub fn slice(&self) -> Slice {
        self.slice
    }

    /// Number of positions in the slice (Appendix B's NumPos).
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Weighted rank of a black-man placement: white placements of all earlier ones.
    #[inline]
    fn black_men_rank(&self, black_men: u32) -> u64 {
        let mut rank = 0;
        let (mut a, mut b) = (0, 0);
        let mut rest = black_men;
        let mut j = self.nbm as usize;
        while rest != 0 {
            let c = 31 - rest.leading_zeros();
            rest &= !(1 << c);
            j -= 1;
            rank += self.men.row(j, a, b).0[c as usize];
            a += (c >= self.men.f_threshold) as u32;
            b += (c >= self.men.g_threshold) as u32;
        }
        rank
    }

    /// Colex rank of the first white-man placement with the leading man in its band: the
    /// placements that stay behind the band come before it.
    #[inline]
    fn white_offset(&self, wmask: u32) -> u64 {
        if self.nwm == 0 {
            0
        } else {
            binomial(below(wmask, self.wm_band) as i32, self.nwm)
        }
    }

    /// Squares white men may use given the black men, in White's numbering (`31 - s`).
    #[inline]
    fn white_men_mask(black_men: u32) -> u32 {
        !black_men.reverse_bits() & 0x0FFF_FFFF
    }

    /// Squares white men may use in this slice (behind or on White's leading rank), in
    /// White's numbering.
    #[inline]
    fn white_men_band_mask(&self, black_men: u32) -> u32 {
        Self::white_men_mask(black_men) & ((1u32 << self.wm_top) - 1)
    }

    /// Index of a position of this slice. The position must belong to the slice (checked in
    /// debug builds; use [`SliceIndex::index_checked`] for untrusted input).
    #[inline]
    pub fn index(&self, pos: &Position) -> u64 {
        debug_assert_eq!(Slice::of(pos), self.slice, "position not in slice");
        self.index_from_white_kings(self.index_without_white_kings(pos), pos.white_kings())
    }

    /// The part of [`SliceIndex::index`] that does not depend on White's kings, and the
    /// squares White's kings are ranked on. Positions that differ only in where one white
    /// king stands (the children of one position's king moves, reversed) share it, so the
    /// solver ranks just the kings for each of them ([`SliceIndex::index_from_white_kings`]).
    #[inline]
    pub fn index_without_white_kings(&self, pos: &Position) -> (u64, u32) {
        self.index_from_black_men(self.black_men_base(pos.black_men()), pos)
    }

    /// The part of an index fixed by the black men alone (their weighted rank, less the
    /// white placements that stay behind the band), and the squares white men may use.
    /// The quiet children of one position (reversed) all have the same black men.
    #[inline]
    pub fn black_men_base(&self, black_men: u32) -> (u64, u32) {
        let wmask = Self::white_men_mask(black_men);
        (
            self.black_men_rank(black_men)
                .wrapping_sub(self.white_offset(wmask)),
            wmask,
        )
    }

    /// [`SliceIndex::index_without_white_kings`] of `pos`, whose black men gave `base`.
    #[inline]
    pub fn index_from_black_men(&self, base: (u64, u32), pos: &Position) -> (u64, u32) {
        self.index_from_black_men_part(self.men_part(base, pos), pos.black_kings())
    }

    /// The part of the index of `pos` fixed by all its men (`pos`'s black men gave `base`),
    /// and the squares left to the kings: the predecessors of one position by king moves
    /// share them.
    #[inline]
    pub fn men_part(&self, base: (u64, u32), pos: &Position) -> (u64, u32) {
        let wm = pos.white_men();
        let men = base.0.wrapping_add(colex_rank(wm.reverse_bits(), base.1));
        (men * self.king_div.d, !(pos.black_men() | wm))
    }

    /// The index of `pos`, whose men gave `men` ([`SliceIndex::men_part`]).
    #[inline]
    pub fn index_from_men_part(&self, men: (u64, u32), pos: &Position) -> u64 {
        self.index_from_white_kings(
            self.index_from_black_men_part(men, pos.black_kings()),
            pos.white_kings(),
        )
    }

    #[inline]
    fn index_from_black_men_part(&self, men: (u64, u32), black_kings: u32) -> (u64, u32) {
        (
            men.0 + colex_rank(black_kings, men.1) * self.wk_div.d,
            men.1 & !black_kings,
        )
    }

    /// The index of the position with White's kings `white_kings` and everything else as in
    /// the position `base` came from.
    #[inline]
    pub fn index_from_white_kings(&self, base: (u64, u32), white_kings: u32) -> u64 {
        base.0 + colex_rank(white_kings, base.1)
    }

    /// Index of a position, or an error naming the position's slice when it is not this one.
    pub fn index_checked(&self, pos: &Position) -> Result<u64, IndexError> {
        pos.validate().map_err(IndexError::Position)?;
        let s = Slice::of(pos);
        if s != self.slice {
            return Err(IndexError::OtherSlice {
                fen: crate::notation::position_fen(pos),
                actual: s,
                slice: self.slice,
            });
        }
        Ok(self.index(pos))
    }

    /// The position with the given index, or an error when the index is out of range.
    pub fn position(&self, index: u64) -> Result<Position, IndexError> {
        if index >= self.count {
            return Err(IndexError::OutOfRange {
                index,
                slice: self.slice,
                count: self.count,
            });
        }
        Ok(self.position_unchecked(index))
    }

    /// Deindexing; `index` must be below [`SliceIndex::count`].
    #[inline]
    pub fn position_unchecked(&self, index: u64) -> Position {
        #[cfg(target_arch = "x86_64")]
        if let Some(pdep) = deposit::Pdep::detect() {
            // SAFETY: `detect` returns a `Pdep` only where the processor has BMI2.
            return unsafe { self.position_with_bmi2(index, pdep) };
        }
        self.position_with(index, ByteTables)
    }

    /// [`SliceIndex::position_with`] compiled for processors with BMI2 (PDEP).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "bmi2")]
    fn position_with_bmi2(&self, index: u64, pdep: deposit::Pdep) -> Position {
        self.position_with(index, pdep)
    }

    /// Deindexing with the given way of turning ranks among free squares into squares.
    #[inline(always)]
    fn position_with(&self, index: u64, squares: impl Deposit) -> Position {
        let (q, r) = self.king_div.divmod(index);
        let (bkrank, wkrank) = self.wk_div.divmod(r);
        self.position_from_ranks(q, bkrank, wkrank, squares)
    }

    /// [`SliceIndex::position_with`] from the index's parts: `q` for the men, then the black
    /// and the white kings' ranks (`position_near` has divided the index already).
    #[inline(always)]
    fn position_from_ranks(
        &self,
        mut q: u64,
        bkrank: u64,
        wkrank: u64,
        squares: impl Deposit,
    ) -> Position {
        // Black men: at each element pick the largest square whose prefix weight fits.
        let mut bm = 0u32;
        let (mut a, mut b) = (0, 0);
        let mut hi = self.bm_top as usize;
        for j in (0..self.nbm as usize).rev() {
            let row = self.men.row(j, a, b);
            let c = if j + 1 == self.nbm as usize {
                // The leading man: four squares to choose from, not 28.
                row.last_in_band(q, hi - 4)
            } else {
                row.last_at_most(q, hi)
            };
            q -= row.0[c];
            bm |= 1 << c;
            hi = c;
            a += (c as u32 >= self.men.f_threshold) as u32;
            b += (c as u32 >= self.men.g_threshold) as u32;
        }
        let wmask = Self::white_men_mask(bm);
        let wrank = q + self.white_offset(wmask);
        let wm = colex_unrank(wrank, self.nwm, wmask, squares).reverse_bits();
        let kmask = !(bm | wm);
        let bk = colex_unrank(bkrank, self.nbk, kmask, squares);
        let wk = colex_unrank(wkrank, self.nwk, kmask & !bk, squares);
        Position {
            black: bm | bk,
            white: wm | wk,
            kings: bk | wk,
        }
    }

    /// An enumerator positioned at `index` that walks the slice in index order.
    pub fn enumerate_from(&self, index: u64) -> Enumerator<'_> {
        Enumerator::new(self, index)
    }
}

/// Number of positions with exactly `pieces` pieces, Black to move, both colours counted and
/// including positions where one side has no pieces (the papers' totals).
pub fn total_positions(pieces: u32) -> u64 {
    super::Material::all_with_pieces(pieces)
        .iter()
        .flat_map(|m| m.slices())
        .map(|s| s.count())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deindexing_is_the_same_with_and_without_pdep() {
        let mut rng = crate::rng::XorShift::new(11);
        for name in [
            "3300.--", "0033.65", "2211.43", "1122.06", "3201.-5", "0055.66", "5500.--", "1144.36",
            "0062.16",
        ] {
            let ix = SliceIndex::for_name(name).unwrap();
            for _ in 0..20_000 {
                let i = rng.next() % ix.count();
                let p = ix.position_with(i, ByteTables);
                assert_eq!(ix.position_unchecked(i), p, "{name} index {i}");
                assert_eq!(ix.index(&p), i, "{name} index {i}");
            }
        }
    }

    #[test]
    fn skipping_reaches_the_same_positions_as_stepping() {
        let mut rng = crate::rng::XorShift::new(0x5C1F);
        for name in ["2211.65", "2200.--", "1103.-6", "4300.--"] {
            let ix = SliceIndex::for_name(name).unwrap();
            let mut e = ix.enumerate_from(0);
            let mut stepped = ix.enumerate_from(0);
            while e.valid() {
                let gap = match rng.below(3) {
                    0 => 1,
                    1 => rng.below(30),
                    _ => rng.below(5000),
                };
                let target = e.index() + gap;
                if target >= ix.count() {
                    break;
                }
                e.skip_to(target);
                while stepped.index() < target {
                    stepped.advance();
                }
                assert_eq!(e.index(), target);
                assert_eq!(e.position(), stepped.position(), "{name} at {target}");
                assert_eq!(ix.index(&e.position()), target);
            }
        }
    }

    #[test]
    fn divisor_is_exact() {
        for d in [
            1u64,
            2,
            3,
            7,
            496,
            29_760,
            1_187_550,
            201_376 * 80_730,
            (1 << 40) + 1,
        ] {
            let div = Divisor::new(d);
            for n in [
                0u64,
                1,
                d - 1,
                d,
                d + 1,
                5 * d - 1,
                (1 << 53) - 1,
                (1 << 52) + 12_345,
            ] {
                assert_eq!(div.divmod(n), (n / d, n % d), "{n} / {d}");
            }
        }
    }

    #[test]
    fn node_3212_corner_slices() {
        // 1994 paper, Table 3.
        assert_eq!(SliceIndex::for_name("3212.00").unwrap().count(), 28_501_200);
        assert_eq!(
            SliceIndex::for_name("3212.66").unwrap().count(),
            465_519_600
        );
        assert_eq!(
            SliceIndex::for_name("3212.06").unwrap().count(),
            484_520_400
        );
    }
}
