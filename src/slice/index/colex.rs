//! Colex ranks of sets of squares among the squares a mask leaves free (the paper's order
//! of each tuple), their inverse, and the binomial tables both read.

use super::deposit::Deposit;

/// Binomial coefficients C(n, k) for n, k in 0..=32.
const fn build_binomials() -> [[u64; 33]; 33] {
    let mut c = [[0u64; 33]; 33];
    let mut n = 0;
    while n <= 32 {
        c[n][0] = 1;
        let mut k = 1;
        while k <= n {
            c[n][k] = c[n - 1][k - 1] + if k < n { c[n - 1][k] } else { 0 };
            k += 1;
        }
        n += 1;
    }
    c
}

pub(super) static BINOMIAL: [[u64; 33]; 33] = build_binomials();

/// C(n, k), zero when k > n or n < 0.
#[inline]
pub fn binomial(n: i32, k: u32) -> u64 {
    if n < 0 || k as i32 > n {
        0
    } else {
        BINOMIAL[n as usize][k as usize]
    }
}

/// Positions of the set bits of `mask` below square `s`.
#[inline]
pub(super) fn below(mask: u32, s: u32) -> u32 {
    (mask & ((1u32 << s) - 1)).count_ones()
}

/// Largest `x` in `[lo, hi)` with `value(x) <= target`, for a non-decreasing `value` with
/// `value(lo) <= target`. Branch-free halving: random ranks would mispredict every branch.
#[inline]
pub(super) fn last_at_most(
    lo: usize,
    hi: usize,
    target: u64,
    value: impl Fn(usize) -> u64,
) -> usize {
    let mut base = lo;
    let mut len = hi - lo;
    while len > 1 {
        let half = len / 2;
        let mid = base + half;
        base = if value(mid) <= target { mid } else { base };
        len -= half;
    }
    base
}

/// `BINOMIAL_BY_K[k][n]` = C(n, k): rows contiguous in `n` for the searches of unranking.
const fn transpose(c: &[[u64; 33]; 33]) -> [[u64; 33]; 33] {
    let mut t = [[0u64; 33]; 33];
    let mut n = 0;
    while n <= 32 {
        let mut k = 0;
        while k <= 32 {
            t[k][n] = c[n][k];
            k += 1;
        }
        n += 1;
    }
    t
}

static BINOMIAL_BY_K: [[u64; 33]; 33] = transpose(&build_binomials());

/// Colex rank of the set bits of `set`, each renumbered by its position among `mask`'s bits.
#[inline]
pub(super) fn colex_rank(set: u32, mask: u32) -> u64 {
    let mut rank = 0;
    let mut rest = set;
    let mut i = 1;
    while rest != 0 {
        let s = rest.trailing_zeros();
        rest &= rest - 1;
        rank += BINOMIAL[below(mask, s) as usize][i];
        i += 1;
    }
    rank
}

/// `UNRANK_TOP_K[r]` for `r < C(32, K)`: the largest `x` with `C(x, K) <= r`, which is the top
/// element of the `K`-tuple of colex rank `r`. A valid rank is below `C(hi, K)`, so the answer
/// is below `hi` without being told `hi`. Tables for K = 2..4 take 41 KB and replace a search
/// of dependent loads by one load.
const fn build_unrank_top<const LEN: usize>(k: usize) -> [u8; LEN] {
    let c = build_binomials();
    let mut t = [0u8; LEN];
    let mut x = k - 1;
    while x < 32 {
        let mut r = c[x][k] as usize;
        while r < c[x + 1][k] as usize && r < LEN {
            t[r] = x as u8;
            r += 1;
        }
        x += 1;
    }
    t
}

static UNRANK_TOP_2: [u8; 496] = build_unrank_top::<496>(2);
static UNRANK_TOP_3: [u8; 4960] = build_unrank_top::<4960>(3);
static UNRANK_TOP_4: [u8; 35960] = build_unrank_top::<35960>(4);

/// The top element of the `i`-tuple of colex rank `rank` among `hi` elements.
#[inline(always)]
fn colex_top(rank: u64, i: usize, hi: usize) -> usize {
    match i {
        2 => UNRANK_TOP_2[rank as usize] as usize,
        3 => UNRANK_TOP_3[rank as usize] as usize,
        4 => UNRANK_TOP_4[rank as usize] as usize,
        // C(i-1, i) = 0, so the search always has a candidate.
        _ => last_at_most(i - 1, hi, rank, |x| BINOMIAL_BY_K[i][x]),
    }
}

/// Inverse of [`colex_rank`]: the `k` squares of `mask` whose colex rank is `rank`.
#[inline(always)]
pub(super) fn colex_unrank(mut rank: u64, k: u32, mask: u32, squares: impl Deposit) -> u32 {
    let mut ranks = 0; // positions among mask's set bits
    let mut hi = mask.count_ones() as usize; // exclusive bound on the next compressed position
    for i in (2..=k as usize).rev() {
        let x = colex_top(rank, i, hi);
        rank -= BINOMIAL_BY_K[i][x];
        ranks |= 1 << x;
        hi = x;
    }
    if k >= 1 {
        // C(x, 1) = x: the last element is the rank itself.
        ranks |= 1 << rank;
    }
    squares.deposit(ranks, mask)
}

#[cfg(test)]
mod tests {
    use super::super::deposit::ByteTables;
    use super::*;

    #[test]
    fn colex_rank_and_unrank_are_inverse() {
        let mask = 0b1011_0110_1110_0001_0000_1111_0110_1101u32;
        for k in 0..6 {
            let total = binomial(mask.count_ones() as i32, k);
            for r in 0..total {
                let set = colex_unrank(r, k, mask, ByteTables);
                assert_eq!(set & !mask, 0);
                assert_eq!(set.count_ones(), k);
                assert_eq!(colex_rank(set, mask), r);
            }
        }
    }

    #[test]
    fn unrank_tables_agree_with_the_search() {
        for (i, row) in BINOMIAL_BY_K.iter().enumerate().take(5).skip(2) {
            for rank in 0..binomial(32, i as u32) {
                let searched = last_at_most(i - 1, 32, rank, |x| row[x]);
                assert_eq!(
                    colex_top(rank, i, 32),
                    searched,
                    "rank {rank} of {i}-tuples"
                );
            }
        }
    }
}
