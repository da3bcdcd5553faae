//! The dependency graph between slices and the order they can be computed in (1994 paper,
//! sections 3.1 and 5): a slice is solved together with its mirror, after every slice its
//! conversion moves (captures, crownings, advances past the leading rank) reach.

use super::{Material, Slice};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

fn slice(bk: u8, wk: u8, bm: u8, wm: u8, rb: Option<u8>, rw: Option<u8>) -> Option<Slice> {
    let m = Material::new(bk, wk, bm, wm).ok()?;
    Slice::new(m, rb, rw).ok()
}

/// Every rank a side's leading man may have after some of its men left or were taken: any
/// rank up to `max`, or none when no men remain.
fn ranks_up_to(men: u8, max: u8) -> Vec<Option<u8>> {
    if men == 0 {
        vec![None]
    } else {
        (0..=max).map(Some).collect()
    }
}

/// The slices (Black to move) whose values Black's conversion moves from `s` look up: each
/// conversion leads to a position with White to move, stored reversed in the mirror of the
/// slice it lands in. Positions where White has no piece left are decided by the rules and
/// need no slice. The set is a sound superset: every conversion of every position of `s`
/// lands in it (a test checks this position by position).
pub fn successor_slices(s: &Slice) -> BTreeSet<Slice> {
    let Material { bk, wk, bm, wm } = s.material;
    let mut landed: Vec<Option<Slice>> = Vec::new();
    // Non-capture conversions: the leading man steps to the next rank, or is crowned.
    if let Some(r) = s.rb {
        if r < 6 {
            landed.push(slice(bk, wk, bm, wm, Some(r + 1), s.rw));
        } else {
            for rb in ranks_up_to(bm - 1, 6) {
                landed.push(slice(bk + 1, wk, bm - 1, wm, rb, s.rw));
            }
        }
    }
    // Captures of `a` white men and `b` white kings (White keeps at least one piece).
    for a in 0..=wm {
        for b in 0..=wk {
            let jumps = a + b;
            if jumps == 0 || jumps == wm + wk {
                continue;
            }
            let white_ranks: Vec<Option<u8>> = match s.rw {
                Some(rw) if a > 0 => ranks_up_to(wm - a, rw),
                rw => vec![rw],
            };
            for &rw in &white_ranks {
                if bk > 0 {
                    landed.push(slice(bk, wk - b, bm, wm - a, s.rb, rw));
                }
                let Some(r) = s.rb else { continue };
                // A man starting on rank r0 <= r ends on rank r0 + 2 * jumps (men jump forward).
                for r0 in 0..=r {
                    let end = r0 + 2 * jumps;
                    if end == 7 {
                        for rb in ranks_up_to(bm - 1, r) {
                            landed.push(slice(bk + 1, wk - b, bm - 1, wm - a, rb, rw));
                        }
                    } else if end < 7 {
                        landed.push(slice(bk, wk - b, bm, wm - a, Some(r.max(end)), rw));
                    }
                }
            }
        }
    }
    landed.into_iter().flatten().map(|x| x.mirror()).collect()
}

/// A slice solved together with its mirror, named by the smaller of the two.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct SlicePair(pub Slice);

impl SlicePair {
    pub fn of(s: Slice) -> SlicePair {
        SlicePair(s.min(s.mirror()))
    }
    pub fn slices(&self) -> Vec<Slice> {
        if self.0.is_own_mirror() {
            vec![self.0]
        } else {
            vec![self.0, self.0.mirror()]
        }
    }
    /// Positions in the pair (what the computation must hold).
    pub fn count(&self) -> u64 {
        self.slices().iter().map(|s| s.count()).sum()
    }
    /// The pairs whose slices must be finished before this one can start.
    pub fn dependencies(&self) -> BTreeSet<SlicePair> {
        self.slices()
            .iter()
            .flat_map(successor_slices)
            .map(SlicePair::of)
            .filter(|p| p != self)
            .collect()
    }
}

impl fmt::Display for SlicePair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_own_mirror() {
            write!(f, "{}", self.0)
        } else {
            write!(f, "{}/{}", self.0, self.0.mirror())
        }
    }
}

/// What an operator names with `--only`: a slice (`2221.66`), a node (`2221`: every slice
/// of it), or a split by piece count (`4v4`: every node with four black and four white
/// pieces, as the papers speak of the 1994 "4x4 subset"). Each slice is built with its mirror,
/// so `5v3` builds `3v5` too.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection(pub Vec<Slice>);

impl std::str::FromStr for Selection {
    type Err = super::SliceError;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let error = |message: &str| super::slice_error(text, message);
        if let Some((b, w)) = text.split_once(['v', 'V']) {
            let count = |n: &str| n.parse::<u32>().ok().filter(|n| (1..=12).contains(n));
            let (Some(black), Some(white)) = (count(b), count(w)) else {
                return Err(error(
                    "a split is BLACKvWHITE piece counts, each 1..12, e.g. 4v4 or 5v3",
                ));
            };
            let slices = Material::all_with_pieces(black + white)
                .into_iter()
                .filter(|m| m.black() == black && m.white() == white)
                .flat_map(|m| m.slices())
                .collect();
            return Ok(Selection(slices));
        }
        let both_sides = |m: Material| m.black() > 0 && m.white() > 0;
        let one_side = "a database needs pieces on both sides";
        if let Ok(s) = text.parse::<Slice>() {
            return match both_sides(s.material) {
                true => Ok(Selection(vec![s])),
                false => Err(error(one_side)),
            };
        }
        match text.parse::<Material>() {
            Ok(m) if both_sides(m) => Ok(Selection(m.slices())),
            Ok(_) => Err(error(one_side)),
            Err(_) => Err(error(
                "expected a slice (2221.66), a node (2221) or a split by piece count (4v4)",
            )),
        }
    }
}

/// The pairs of `slices` and every pair they depend on, directly or not (`--only`). Each
/// slice must have both sides and at most `max_pieces` pieces.
pub fn with_dependencies(
    slices: &[Slice],
    max_pieces: u32,
) -> Result<BTreeSet<SlicePair>, super::SliceError> {
    let mut wanted = BTreeSet::new();
    let mut todo = Vec::new();
    for s in slices {
        if s.pieces() > max_pieces || s.material.black() == 0 || s.material.white() == 0 {
            return Err(super::SliceError {
                input: s.to_string(),
                message: format!(
                    "--only takes slices of 2..{max_pieces} pieces with both sides present"
                ),
            });
        }
        todo.push(SlicePair::of(*s));
    }
    while let Some(p) = todo.pop() {
        if wanted.insert(p) {
            todo.extend(p.dependencies());
        }
    }
    Ok(wanted)
}

/// An order for all slices of `min..=max` pieces (both sides with pieces): waves of slice
/// pairs; every pair depends only on pairs of earlier waves, so the pairs of one wave may run
/// side by side (the paper's three kinds of database parallelism at once: material splits,
/// nodes of one level, and the diagonals of leading ranks).
#[derive(Clone, Debug)]
pub struct Plan {
    pub waves: Vec<Vec<SlicePair>>,
}

impl Plan {
    pub fn pairs(&self) -> impl Iterator<Item = &SlicePair> {
        self.waves.iter().flatten()
    }
}

/// Builds the [`Plan`] of every slice with `2..=max_pieces` pieces.
pub fn plan(max_pieces: u32) -> Plan {
    let mut pairs = BTreeSet::new();
    for n in 2..=max_pieces {
        for m in Material::all_with_pieces(n) {
            if m.black() == 0 || m.white() == 0 {
                continue;
            }
            for s in m.slices() {
                pairs.insert(SlicePair::of(s));
            }
        }
    }
    // Dependencies only go to fewer pieces, more kings or more advanced leading men, so a
    // pass in order of (pieces, kings, ranks) sees every dependency's wave before it needs
    // it; sorting makes that order explicit and the wave numbering a simple longest path.
    let mut order: Vec<SlicePair> = pairs.iter().copied().collect();
    order.sort_by_key(|p| {
        let m = p.0.material;
        let ranks = p.0.rb.map_or(7, |r| r as u32) + p.0.rw.map_or(7, |r| r as u32);
        (
            m.pieces(),
            std::cmp::Reverse(m.bk + m.wk),
            std::cmp::Reverse(ranks),
        )
    });
    let mut wave: BTreeMap<SlicePair, usize> = BTreeMap::new();
    let mut pending = order;
    while !pending.is_empty() {
        let mut next = Vec::new();
        let before = wave.len();
        for p in pending {
            let deps = p.dependencies();
            if deps.iter().all(|d| wave.contains_key(d)) {
                let w = deps.iter().map(|d| wave[d] + 1).max().unwrap_or(0);
                wave.insert(p, w);
            } else {
                next.push(p);
            }
        }
        assert!(wave.len() > before, "slice dependency graph has a cycle");
        pending = next;
    }
    let depth = wave.values().max().map_or(0, |w| w + 1);
    let mut waves = vec![Vec::new(); depth];
    for (p, w) in wave {
        waves[w].push(p);
    }
    Plan { waves }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_split_names_every_node_of_its_piece_counts() {
        let four: Selection = "4v4".parse().unwrap();
        let nodes: BTreeSet<Material> = four.0.iter().map(|s| s.material).collect();
        // Kings 0..=4 a side, the rest men: 5 x 5 nodes.
        assert_eq!(nodes.len(), 25);
        assert!(nodes.iter().all(|m| m.black() == 4 && m.white() == 4));
        let whole: usize = nodes.iter().map(|m| m.slices().len()).sum();
        assert_eq!(four.0.len(), whole);
        let five: Selection = "5v3".parse().unwrap();
        assert!(five.0.iter().all(|s| s.material.black() == 5));
        assert_eq!("2221".parse::<Selection>().unwrap().0.len(), 7 * 7);
        assert_eq!("2221.66".parse::<Selection>().unwrap().0.len(), 1);
        for bad in ["4v0", "v4", "4v", "13v1", "4x4", "0400"] {
            let e = bad.parse::<Selection>().unwrap_err();
            assert_eq!(e.input, bad, "{e}");
        }
    }
}
