//! Material nodes and slices (DESIGN.md section 2, paper section 3.1).
//!
//! A *node* is a material `bk wk bm wm`; a *slice* cuts a node by the rank of each side's
//! leading (most advanced) man, each counted from its own side, 0..6. `3113.01` is node 3113
//! with Black's leading man on rank 0 and White's on rank 1; a side without men has no rank
//! (`-`). The *mirror* of a slice swaps the colours: positions of a slice with White to move
//! are stored, reversed, in its mirror.

mod deps;
pub mod index;
pub mod key;

pub use deps::{Plan, Selection, SlicePair, plan, successor_slices, with_dependencies};

use crate::board::{Move, Position};
use index::SliceIndex;
use std::fmt;
use std::str::FromStr;

/// A slice or material name that cannot be used; the message names the input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SliceError {
    pub input: String,
    pub message: String,
}

impl fmt::Display for SliceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bad slice {:?}: {}", self.input, self.message)
    }
}

impl std::error::Error for SliceError {}

fn slice_error(input: &str, message: impl Into<String>) -> SliceError {
    SliceError {
        input: input.to_string(),
        message: message.into(),
    }
}

/// A material node: black kings, white kings, black men, white men.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord, Default)]
pub struct Material {
    pub bk: u8,
    pub wk: u8,
    pub bm: u8,
    pub wm: u8,
}

impl Material {
    /// Checked constructor: at most 12 pieces a side.
    pub fn new(bk: u8, wk: u8, bm: u8, wm: u8) -> Result<Material, SliceError> {
        let m = Material { bk, wk, bm, wm };
        for (side, n) in [("black", bk + bm), ("white", wk + wm)] {
            if n > 12 {
                return Err(slice_error(
                    &m.to_string(),
                    format!("{side} has {n} pieces; a side has at most 12"),
                ));
            }
        }
        Ok(m)
    }

    pub fn of(pos: &Position) -> Material {
        Material {
            bk: pos.black_kings().count_ones() as u8,
            wk: pos.white_kings().count_ones() as u8,
            bm: pos.black_men().count_ones() as u8,
            wm: pos.white_men().count_ones() as u8,
        }
    }

    pub fn pieces(&self) -> u32 {
        (self.bk + self.wk + self.bm + self.wm) as u32
    }
    pub fn black(&self) -> u32 {
        (self.bk + self.bm) as u32
    }
    pub fn white(&self) -> u32 {
        (self.wk + self.wm) as u32
    }

    /// The colour-reversed node: mirror of 4112 is 1421.
    pub fn mirror(&self) -> Material {
        Material {
            bk: self.wk,
            wk: self.bk,
            bm: self.wm,
            wm: self.bm,
        }
    }

    /// Every slice of this node (only those that hold positions), highest ranks first.
    pub fn slices(&self) -> Vec<Slice> {
        let ranks = |men: u8| -> Vec<Option<u8>> {
            if men == 0 {
                vec![None]
            } else {
                (0..=6).rev().map(Some).collect()
            }
        };
        let mut out = Vec::new();
        for rb in ranks(self.bm) {
            for rw in ranks(self.wm) {
                if let Ok(s) = Slice::new(*self, rb, rw) {
                    out.push(s);
                }
            }
        }
        out
    }

    /// Every material with exactly `pieces` pieces, including those where a side has none.
    pub fn all_with_pieces(pieces: u32) -> Vec<Material> {
        let mut out = Vec::new();
        for black in 0..=pieces.min(12) {
            let white = pieces - black;
            if white > 12 {
                continue;
            }
            for bk in 0..=black {
                for wk in 0..=white {
                    out.push(Material {
                        bk: bk as u8,
                        wk: wk as u8,
                        bm: (black - bk) as u8,
                        wm: (white - wk) as u8,
                    });
                }
            }
        }
        out
    }
}

impl fmt::Display for Material {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Counts above 9 (only possible past 9 pieces a side) are written in hex so that a
        // name keeps one character per count.
        write!(f, "{:X}{:X}{:X}{:X}", self.bk, self.wk, self.bm, self.wm)
    }
}

impl FromStr for Material {
    type Err = SliceError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let digits: Vec<u8> = s
            .chars()
            .map(|c| c.to_digit(16).map(|d| d as u8))
            .collect::<Option<_>>()
            .ok_or_else(|| slice_error(s, "a node is four digits: bk wk bm wm, e.g. 3113"))?;
        if digits.len() != 4 {
            return Err(slice_error(
                s,
                "a node is four digits: bk wk bm wm, e.g. 3113",
            ));
        }
        Material::new(digits[0], digits[1], digits[2], digits[3])
            .map_err(|e| slice_error(s, e.message))
    }
}

/// A slice: a node and the leading rank of each side's men (`None` for a side without men).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct Slice {
    pub material: Material,
    pub rb: Option<u8>,
    pub rw: Option<u8>,
}

impl Slice {
    /// Checked constructor: ranks exactly for the sides with men, each 0..6, and the slice
    /// must hold at least one position.
    pub fn new(material: Material, rb: Option<u8>, rw: Option<u8>) -> Result<Slice, SliceError> {
        let s = Slice { material, rb, rw };
        // Named only on error: slices are made by the thousand (file names, plans).
        let name = || s.to_string();
        Material::new(material.bk, material.wk, material.bm, material.wm)?;
        for (side, men, rank) in [("black", material.bm, rb), ("white", material.wm, rw)] {
            match (men, rank) {
                (0, Some(_)) => {
                    return Err(slice_error(
                        &name(),
                        format!("{side} has no men, so its rank must be '-'"),
                    ));
                }
                (m, None) if m > 0 => {
                    return Err(slice_error(
                        &name(),
                        format!("{side} has men, so its leading rank (0..6) must be given"),
                    ));
                }
                (_, Some(r)) if r > 6 => {
                    return Err(slice_error(
                        &name(),
                        format!("a {side} man on rank {r} would have been crowned; ranks are 0..6"),
                    ));
                }
                (m, Some(r)) if m as u32 > 4 * (r as u32 + 1) => {
                    return Err(slice_error(
                        &name(),
                        format!("{m} {side} men do not fit on ranks 0..{r}"),
                    ));
                }
                _ => {}
            }
        }
        if material.pieces() == 0 {
            return Err(slice_error(&name(), "a slice needs at least one piece"));
        }
        if SliceIndex::new(s).count() == 0 {
            return Err(slice_error(&name(), "no position has these leading ranks"));
        }
        Ok(s)
    }

    /// The slice a position (Black to move) belongs to.
    pub fn of(pos: &Position) -> Slice {
        let (rb, rw) = leading_ranks(pos);
        Slice {
            material: Material::of(pos),
            rb,
            rw,
        }
    }

    /// The colour-reversed slice: mirror of 3212.53 is 2321.35.
    pub fn mirror(&self) -> Slice {
        Slice {
            material: self.material.mirror(),
            rb: self.rw,
            rw: self.rb,
        }
    }

    pub fn is_own_mirror(&self) -> bool {
        *self == self.mirror()
    }

    pub fn pieces(&self) -> u32 {
        self.material.pieces()
    }

    /// Number of positions (Black to move) in the slice. Remembered per thread: building
    /// the index tables costs microseconds, and queue files check every line's range.
    pub fn count(&self) -> u64 {
        thread_local! {
            static COUNTS: std::cell::RefCell<std::collections::HashMap<Slice, u64>> =
                Default::default();
        }
        COUNTS.with(|c| {
            *c.borrow_mut()
                .entry(*self)
                .or_insert_with(|| SliceIndex::new(*self).count())
        })
    }
}

impl fmt::Display for Slice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = |x: Option<u8>| x.map_or('-', |r| (b'0' + r) as char);
        write!(f, "{}.{}{}", self.material, r(self.rb), r(self.rw))
    }
}

impl FromStr for Slice {
    type Err = SliceError;
    /// Accepts `3113.01`, `4310.6-`, `4400.--`, and a bare node (`4400`) when no side has men.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (node, ranks) = match text.split_once('.') {
            Some((n, r)) => (n, Some(r)),
            None => (text, None),
        };
        let material: Material = node
            .parse()
            .map_err(|e: SliceError| slice_error(text, e.message))?;
        let (rb, rw) = match ranks {
            None if material.bm == 0 && material.wm == 0 => (None, None),
            None => {
                return Err(slice_error(
                    text,
                    "a node with men needs leading ranks, e.g. 3113.01 (use '-' for a side without men)",
                ));
            }
            Some(r) => {
                let chars: Vec<char> = r.chars().collect();
                if chars.len() != 2 {
                    return Err(slice_error(
                        text,
                        "ranks are two characters, black's then white's, each 0..6 or '-'",
                    ));
                }
                let rank = |c: char| -> Result<Option<u8>, SliceError> {
                    match c {
                        '-' => Ok(None),
                        '0'..='9' => Ok(Some(c as u8 - b'0')),
                        _ => Err(slice_error(text, format!("rank {c:?} is not 0..6 or '-'"))),
                    }
                };
                (rank(chars[0])?, rank(chars[1])?)
            }
        };
        Slice::new(material, rb, rw).map_err(|e| slice_error(text, e.message))
    }
}

/// The leading ranks of Black's and White's men (each from its own side), `None` without men.
#[inline]
pub fn leading_ranks(pos: &Position) -> (Option<u8>, Option<u8>) {
    let (rb, rw) = leading_rank_codes(pos);
    let r = |code: u32| (code != NO_MEN).then_some(code as u8);
    (r(rb), r(rw))
}

/// [`leading_ranks`] with [`NO_MEN`] for a side without men: branch-free enough for the
/// solver's per-child slice keys.
#[inline(always)]
pub fn leading_rank_codes(pos: &Position) -> (u32, u32) {
    let (bm, wm) = (pos.black_men(), pos.white_men());
    let rb = if bm == 0 {
        NO_MEN
    } else {
        (31 - bm.leading_zeros()) / 4
    };
    let rw = if wm == 0 {
        NO_MEN
    } else {
        7 - wm.trailing_zeros() / 4
    };
    (rb, rw)
}

/// The leading-rank code of a side without men.
pub const NO_MEN: u32 = 8;

/// Whether Black's move `m` leaves the slice of `pos`: a capture, a crowning, or a man
/// stepping past the leading rank. Other moves stay in the slice pair (slice and mirror).
#[inline]
pub fn is_conversion(pos: &Position, m: &Move) -> bool {
    if m.captures != 0 || m.crowns {
        return true;
    }
    let from = 1u32 << m.from;
    if pos.kings & from != 0 {
        return false;
    }
    let lead = 31 - pos.black_men().leading_zeros();
    m.to as u32 / 4 > lead / 4
}

/// Black's moves in a position without captures as [`is_conversion`] sorts them, from the
/// bitboards (`lookup` asks this of every unknown position and needs no other move): the
/// conversions, which are then the steps of the men on Black's leading rank (up a rank, or
/// onto the crowning rank); [`QuietConversions::others`] says whether any other move exists.
#[derive(Clone, Copy, Debug)]
pub struct QuietConversions {
    /// The first `len` entries are written; the rest are left uninitialised, because
    /// `lookup` and `ver` ask this of every position, and zeroing 96 bytes each time cost
    /// 1.3 % of `ver 2301.-6` (callgrind).
    moves: [std::mem::MaybeUninit<Move>; 8],
    len: usize,
}

impl QuietConversions {
    pub fn of(pos: &Position) -> QuietConversions {
        use crate::board::step;
        debug_assert!(!crate::board::has_capture(pos));
        let empty = pos.empty();
        let mut c = QuietConversions {
            moves: [std::mem::MaybeUninit::uninit(); 8],
            len: 0,
        };
        let mut rest = Self::leading_men(pos);
        while rest != 0 {
            let from = rest.trailing_zeros();
            rest &= rest - 1;
            for dir in 0..2 {
                let to = step(1 << from, dir) & empty;
                if to != 0 {
                    let to = to.trailing_zeros() as u8;
                    c.moves[c.len] = std::mem::MaybeUninit::new(Move {
                        from: from as u8,
                        to,
                        captures: 0,
                        crowns: to >= 28,
                    });
                    c.len += 1;
                }
            }
        }
        c
    }

    /// Whether `pos` (without a capture) has a move besides its conversions. Asked apart,
    /// only where a lost conversion would otherwise settle a loss: `ver` never needs it,
    /// and computing it with the conversions cost 3 % of a 7-piece `ver` job (callgrind).
    pub fn others(pos: &Position) -> bool {
        use crate::board::step;
        let empty = pos.empty();
        let kings = pos.black_kings();
        let ahead = |b: u32| (step(b, 0) | step(b, 1)) & empty != 0;
        ahead(pos.black_men() & !Self::leading_men(pos))
            || ahead(kings)
            || (step(kings, 2) | step(kings, 3)) & empty != 0
    }

    /// Black's men on its leading rank.
    #[inline(always)]
    fn leading_men(pos: &Position) -> u32 {
        match pos.black_men() {
            0 => 0,
            men => men & (0xF << (4 * ((31 - men.leading_zeros()) / 4))),
        }
    }

    pub fn as_slice(&self) -> &[Move] {
        // SAFETY: the first `len` entries were written in `of`, and `MaybeUninit<Move>` has
        // the layout of `Move`.
        unsafe { std::slice::from_raw_parts(self.moves.as_ptr().cast::<Move>(), self.len) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against the move generator, on random boards without captures.
    #[test]
    fn quiet_conversions_are_the_generated_conversions() {
        use crate::board::{MoveList, generate_moves, has_capture};
        let mut rng = crate::rng::XorShift::new(0x100C);
        let mut moves = MoveList::new();
        let mut seen = [0u64; 4];
        for round in 0..300_000 {
            let mut draw = || {
                let r = rng.next() as u32 & rng.next() as u32;
                if round % 2 == 0 {
                    r & rng.next() as u32
                } else {
                    r
                }
            };
            let black = draw();
            let white = draw() & !black;
            let kings = draw() & (black | white) | (black & 0xF000_0000) | (white & 0xF);
            let pos = Position {
                black,
                white,
                kings,
            };
            if has_capture(&pos) {
                continue;
            }
            generate_moves(&pos, &mut moves);
            let key = |m: &Move| (m.from, m.to, m.captures, m.crowns);
            let mut want: Vec<_> = moves
                .iter()
                .filter(|m| is_conversion(&pos, m))
                .map(key)
                .collect();
            let others = moves.iter().any(|m| !is_conversion(&pos, m));
            let c = QuietConversions::of(&pos);
            let mut got: Vec<_> = c.as_slice().iter().map(key).collect();
            want.sort();
            got.sort();
            assert_eq!(
                (got, QuietConversions::others(&pos)),
                (want.clone(), others),
                "{pos:?}"
            );
            seen[(!want.is_empty()) as usize * 2 + others as usize] += 1;
        }
        assert!(seen.iter().all(|&n| n > 1000), "{seen:?}");
    }

    #[test]
    fn names_round_trip() {
        for name in [
            "3113.01", "4310.6-", "4400.--", "0044.66", "2222.66", "1001.-3",
        ] {
            let s: Slice = name.parse().unwrap();
            assert_eq!(s.to_string(), name);
        }
        assert_eq!("4400".parse::<Slice>().unwrap().to_string(), "4400.--");
    }

    #[test]
    fn mirror_swaps_colours() {
        let s: Slice = "3212.53".parse().unwrap();
        assert_eq!(s.mirror().to_string(), "2321.35");
        assert!("2222.66".parse::<Slice>().unwrap().is_own_mirror());
    }

    #[test]
    fn bad_names_are_clear() {
        for (name, needle) in [
            ("3113", "needs leading ranks"),
            ("3113.71", "rank 7 would have been crowned"),
            ("3113.17", "white man on rank 7"),
            ("4400.1-", "black has no men"),
            ("4310.--", "black has men"),
            ("D100.--", "at most 12"),
            ("31x3.01", "four digits"),
            ("3113.0", "two characters"),
            ("3113.0x", "rank 'x'"),
            ("0050.0-", "do not fit"),
            ("0000.--", "at least one piece"),
        ] {
            let e = name.parse::<Slice>().unwrap_err().to_string();
            assert!(e.contains(needle), "{name}: {e}");
            assert!(e.contains(name), "{name}: {e}");
        }
    }
}
