//! Where the build puts the boundary between two runs. The removed positions between the
//! last stored position of one value and the first of the next may belong to either run:
//! the reader never looks at their values. Continuing the run they interrupt is the simple
//! choice; this module moves each boundary to where the two runs' code words are shortest
//! under the code being written, which shortens the 3v3 slices by about 6 %.

use super::code::{CONTEXTS, SYMBOLS, class_start, symbol_of};
use super::format::value_code;
use super::removed::ValueRun;
use crate::value::Value;

/// Tails up to this long are tried at every split; longer ones at both ends and where a
/// run's length enters a new length class.
const SCAN: u64 = 140;

/// The runs' lengths with every boundary placed for `code` (code word lengths per
/// context and symbol), into `out` (cleared first): one pass from the start, each boundary
/// chosen given the one before. A pure function of its arguments, so the file does not
/// depend on how the build was split.
pub fn place_boundaries(
    runs: &[ValueRun],
    code: &[[u8; SYMBOLS]; CONTEXTS],
    out: &mut Vec<(Value, u64)>,
) {
    out.clear();
    out.extend(runs.iter().map(|r| (r.value, r.len)));
    let costs = LengthCosts::new(code);
    // The context of run i is the value before it, and it is a hit when its value is the
    // one before that (as `format::count_symbols` counts them).
    let bits = |i: usize, len: u64| -> u32 {
        if i == 0 {
            return 0; // the first run's code word does not depend on its neighbours' lengths
        }
        let ctx = value_code(runs[i - 1].value) as usize;
        let hit = i >= 2 && runs[i].value == runs[i - 2].value;
        costs.bits(ctx, hit, len)
    };
    for i in 0..runs.len().saturating_sub(1) {
        let tail = runs[i].tail;
        if tail == 0 {
            continue;
        }
        // Run i without its removed tail still holds a stored position, so it stays >= 1.
        let left = out[i].1 - tail;
        let right = out[i + 1].1;
        let cost = |keep: u64| bits(i, left + keep) + bits(i + 1, right + tail - keep);
        let mut best = (cost(tail), tail);
        let mut consider = |keep: u64| {
            let c = cost(keep);
            // Ties keep the longer left run, the simple choice.
            if c < best.0 || (c == best.0 && keep > best.1) {
                best = (c, keep);
            }
        };
        if tail <= SCAN {
            (0..tail).for_each(&mut consider);
        } else {
            (0..SCAN / 2).for_each(&mut consider);
            (tail - SCAN / 2..tail).for_each(&mut consider);
            // A length class starts at class_start(j); every length of a class costs the same
            // (one symbol, j extra bits), so its first length is the one to try.
            for j in 0..40 {
                let start = class_start(j);
                if start > left && start - left <= tail {
                    consider(start - left);
                }
                if start > right && start - right <= tail {
                    consider(tail - (start - right));
                }
            }
        }
        let keep = best.1;
        out[i].1 = left + keep;
        out[i + 1].1 = right + tail - keep;
    }
}

/// Run lengths below this have their cost in [`LengthCosts`]' table: every length a
/// boundary scan of up to [`SCAN`] positions tries from runs of up to a few hundred.
const TABLED: usize = 512;

/// The bits (code word and extra bits) of a run of each length under one code, per
/// context and hit: the boundary scan asks for two at each of up to [`SCAN`] splits, and
/// working each out from its symbol cost a third of placing the boundaries (callgrind,
/// `run build 3300.--`).
struct LengthCosts<'a> {
    code: &'a [[u8; SYMBOLS]; CONTEXTS],
    table: Box<[[[u8; TABLED]; 2]; CONTEXTS]>,
}

impl<'a> LengthCosts<'a> {
    fn new(code: &'a [[u8; SYMBOLS]; CONTEXTS]) -> Self {
        let mut table = Box::new([[[0u8; TABLED]; 2]; CONTEXTS]);
        for (ctx, by_hit) in table.iter_mut().enumerate() {
            for (hit, row) in by_hit.iter_mut().enumerate() {
                for (len, cost) in row.iter_mut().enumerate().skip(1) {
                    *cost = Self::computed(code, ctx, hit == 1, len as u64) as u8;
                }
            }
        }
        LengthCosts { code, table }
    }

    fn computed(code: &[[u8; SYMBOLS]; CONTEXTS], ctx: usize, hit: bool, len: u64) -> u32 {
        let (sym, extra, _) = symbol_of(hit, len);
        code[ctx][sym as usize] as u32 + extra
    }

    #[inline(always)]
    fn bits(&self, ctx: usize, hit: bool, len: u64) -> u32 {
        match self.table[ctx][hit as usize].get(len as usize) {
            Some(&c) => c as u32,
            None => Self::computed(self.code, ctx, hit, len),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Value::*;

    #[test]
    fn the_tabled_costs_are_the_symbols_costs() {
        for k in 0..super::super::format::CODES {
            let code = super::super::format::builtin_code(k);
            let costs = LengthCosts::new(&code);
            for (ctx, lengths) in code.iter().enumerate() {
                for hit in [false, true] {
                    for len in (1..2 * TABLED as u64).chain([1 << 20, 1 << 40]) {
                        let (sym, extra, _) = symbol_of(hit, len);
                        let want = lengths[sym as usize] as u32 + extra;
                        assert_eq!(costs.bits(ctx, hit, len), want, "code {k} length {len}");
                    }
                }
            }
        }
    }

    #[test]
    fn boundaries_move_only_within_removed_tails() {
        let code = super::super::format::builtin_code(0);
        let runs = vec![
            ValueRun::new(Win, 70, 69),
            ValueRun::new(Loss, 3, 0),
            ValueRun::new(Draw, 500, 300),
            ValueRun::new(Win, 2, 1),
            ValueRun::new(Loss, 9, 9 - 1),
        ];
        let mut placed = Vec::new();
        place_boundaries(&runs, &code, &mut placed);
        assert_eq!(
            placed.iter().map(|r| r.1).sum::<u64>(),
            70 + 3 + 500 + 2 + 9
        );
        // Every stored position stays in its run: a placed run starts at or before the
        // first stored position of its run (where the simple choice starts it) and ends at
        // or after its last one.
        let (mut simple_start, mut placed_start) = (0, 0);
        for (r, p) in runs.iter().zip(&placed) {
            assert_eq!(r.value, p.0);
            assert!(placed_start <= simple_start, "{runs:?} -> {placed:?}");
            assert!(placed_start + p.1 >= simple_start + r.len - r.tail);
            simple_start += r.len;
            placed_start += p.1;
        }
    }

    #[test]
    fn placing_is_never_worse_than_continuing_the_run() {
        let code = super::super::format::builtin_code(1);
        let mut rng = crate::rng::XorShift::new(5);
        let values = [Win, Loss, Draw];
        let mut runs = Vec::new();
        let mut v = 0;
        for _ in 0..2_000 {
            v = (v + 1 + rng.below(2) as usize) % 3;
            let stored = 1 + rng.below(80);
            let tail = rng.below(200);
            runs.push(ValueRun::new(values[v], stored + tail, tail));
        }
        let simple: Vec<(Value, u64)> = runs.iter().map(|r| (r.value, r.len)).collect();
        let mut placed = Vec::new();
        place_boundaries(&runs, &code, &mut placed);
        // Code words and extra bits, contexts and hits as `place_boundaries` counts them.
        let bits = |rs: &[(Value, u64)]| -> u64 {
            (1..rs.len())
                .map(|i| {
                    let hit = i >= 2 && rs[i].0 == rs[i - 2].0;
                    let (sym, extra, _) = symbol_of(hit, rs[i].1);
                    (code[rs[i - 1].0 as usize - 1][sym as usize] as u32 + extra) as u64
                })
                .sum()
        };
        assert!(
            bits(&placed) < bits(&simple),
            "{} vs {}",
            bits(&placed),
            bits(&simple)
        );
    }
}
