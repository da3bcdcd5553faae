//! A brute-force endgame solver, independent of the crate's move generator, indexing and
//! slices, to cross-check the real pipeline position by position.
//!
//! Method: plain repeated forward passes. Piece counts are solved in increasing order (a
//! capture lands in a smaller count, already final). All materials of one piece count form one
//! system (a promotion moves a position to another material of the same count): a first pass
//! evaluates every position, later passes the ones still unresolved, until a pass resolves
//! nothing. A position is a WIN if some move leads to a LOSS for the opponent, a LOSS if every
//! move (possibly none) leads to a WIN for the opponent; what is never resolved is a DRAW.
//! Passes update the table in place (a value read may be one written earlier in the same
//! pass), which only speeds convergence: values only ever go from unknown to final, and the
//! last pass, which changes nothing, sees the final table. Two shortcuts keep the 5-piece
//! solve to a minute or two: an unresolved position is evaluated again only when a part of
//! the table holding its successors has changed since its last evaluation (see
//! `visit_chunk`), and positions are visited in an order that keeps successors in cache (see
//! `solve_count`). Passes run on all cores.
//!
//! Storage: per material (black kings, black men, white kings, white men) a plain mixed-radix
//! index over the four piece groups, each group's square set ranked in the textbook
//! combinatorial number system (colex) over its own squares: 32 for kings, the 28 squares off
//! its crowning row for men. Slots whose groups overlap are simply never used. One byte per
//! slot, in one table for all materials solved (177 MB for all of 2..5 pieces).
//!
//! Materials: `solve` takes every material of up to 5 pieces; `solve_materials` takes a
//! subset up to 7 pieces that is closed under captures and crowning, such as the kings-only
//! materials (`solve_kings_only`: 695 M slots, 695 MB, for 2..7 pieces). Looking up a
//! position of a material not solved panics.
//!
//! Moves come from a small bitboard generator written here on step tables derived from the
//! reference's (row, column) geometry; tests/brute.rs checks it against the reference
//! generator and the values against the reference's moves.

use super::reference::{cell_of, on_board, square_of};
use nowdb::Position;
use std::sync::atomic::{AtomicU8, AtomicU32, Ordering::Relaxed};
use std::sync::{Mutex, OnceLock};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum BruteValue {
    Win,
    Loss,
    Draw,
}

/// A slot of the table: more than `u32` holds once 8-piece materials are solved (the
/// kings-only closure of 8 pieces has 4.6 G slots, used or not).
pub(crate) type Slot = u64;

/// Table bytes. A slot still `UNKNOWN` once its piece count is finished is a draw.
const UNKNOWN: u8 = 0;
const WIN: u8 = 1;
const LOSS: u8 = 2;

/// Pieces of every material `solve` takes: slot ids are `u32` and the table holds one byte
/// per slot.
const MAX_ALL: u32 = 5;

/// Pieces of a material a subset of materials may hold (`solve_materials`).
const MAX_PIECES: u32 = 8;

/// Piece groups in index order, most significant first: black kings, black men, white kings,
/// white men. A group's squares are `first..first + count`: men never stand on their
/// crowning row. With Black's groups leading, the successors of a position (whose Black is
/// the mover's opponent, unchanged by a non-capture) lie close together in the table.
const GROUPS: usize = 4;
const GROUP_FIRST: [u32; GROUPS] = [0, 0, 0, 4];
const GROUP_SQUARES: [u32; GROUPS] = [32, 28, 32, 28];

/// Materials are looked up by `key`: the four group sizes in base `KEY_BASE`.
const KEY_BASE: usize = MAX_PIECES as usize + 1;

/// More than the legal moves of any position of up to `MAX_PIECES` pieces (non-captures:
/// at most 4 per piece; a position with more captures would panic on the bounds check).
const MAX_MOVES: usize = 64;

/// Bitset words (of 64 slots) per unit of parallel work.
const CHUNK_WORDS: usize = 1 << 10;

/// "No square" in the step tables.
const OFF: u8 = 32;

/// Black's moves on bitboards: step and jump tables built from (row, column) geometry.
struct Rules {
    /// `step[s][d]`: the square next to `s` in direction `d`, or `OFF`. Directions 0 and 1
    /// go up (Black men's forward), 2 and 3 down.
    step: [[u8; 4]; 32],
    /// `land[s][d]`: the square two steps away in direction `d`, or `OFF`.
    land: [[u8; 4]; 32],
    /// Row 7, where Black men are crowned.
    crown: u32,
}

impl Rules {
    fn new() -> Rules {
        const DIRECTIONS: [(i32, i32); 4] = [(1, -1), (1, 1), (-1, -1), (-1, 1)];
        let mut rules = Rules {
            step: [[OFF; 4]; 32],
            land: [[OFF; 4]; 32],
            crown: 0,
        };
        let at = |(row, col): (i32, i32)| {
            if on_board((row, col)) {
                square_of((row, col)) as u8
            } else {
                OFF
            }
        };
        for s in 0..32u32 {
            let (row, col) = cell_of(s);
            for (d, (dr, dc)) in DIRECTIONS.into_iter().enumerate() {
                rules.step[s as usize][d] = at((row + dr, col + dc));
                rules.land[s as usize][d] = at((row + 2 * dr, col + 2 * dc));
            }
            if row == 7 {
                rules.crown |= 1 << s;
            }
        }
        rules
    }

    /// Calls `f` with the board after each legal Black move (seen from Black's side, so White
    /// is to move), until `f` returns true. Returns whether it was stopped that way.
    fn for_each_move(&self, pos: &Position, f: &mut impl FnMut(Position) -> bool) -> bool {
        let mut captured = false;
        for s in squares(pos.black) {
            let mover = 1u32 << s;
            let jump = Jump {
                rules: self,
                king: pos.kings & mover != 0,
                others: pos.black & !mover,
            };
            if jump.extend(s, pos.white, pos.kings & !mover, false, &mut captured, f) {
                return true;
            }
        }
        if captured {
            return false; // Capturing is compulsory.
        }
        let empty = !(pos.black | pos.white);
        for s in squares(pos.black) {
            let from = 1u32 << s;
            let king = pos.kings & from != 0;
            for d in 0..if king { 4 } else { 2 } {
                let to = self.step[s as usize][d];
                if to == OFF || empty & (1 << to) == 0 {
                    continue;
                }
                let to = 1u32 << to;
                let crowned = king || self.crown & to != 0;
                let after = Position {
                    black: (pos.black & !from) | to,
                    white: pos.white,
                    kings: (pos.kings & !from) | if crowned { to } else { 0 },
                };
                if f(after) {
                    return true;
                }
            }
        }
        false
    }
}

/// One Black piece capturing: it has been lifted off its start square (so it may come back).
struct Jump<'a> {
    rules: &'a Rules,
    king: bool,
    /// Black's other pieces.
    others: u32,
}

impl Jump<'_> {
    /// Tries every jump from `here` with White's remaining pieces `white` and the remaining
    /// kings `kings` (the mover's excluded); a sequence that cannot go on ends here.
    fn extend(
        &self,
        here: u32,
        white: u32,
        kings: u32,
        jumped: bool,
        captured: &mut bool,
        f: &mut impl FnMut(Position) -> bool,
    ) -> bool {
        let mut continued = false;
        for d in 0..if self.king { 4 } else { 2 } {
            let over = self.rules.step[here as usize][d];
            let land = self.rules.land[here as usize][d];
            // A jumped piece leaves an empty square behind at once; it can never be a landing
            // square later in the sequence (landing squares keep the start's row parity).
            if land == OFF || white & (1 << over) == 0 || (self.others | white) & (1 << land) != 0 {
                continue;
            }
            continued = true;
            let (white, kings) = (white & !(1 << over), kings & !(1 << over));
            let land = land as u32;
            let stop = if !self.king && self.rules.crown & (1 << land) != 0 {
                // A man crowned by a jump: the move ends.
                *captured = true;
                f(self.finish(land, true, white, kings))
            } else {
                self.extend(land, white, kings, true, captured, f)
            };
            if stop {
                return true;
            }
        }
        if !continued && jumped {
            *captured = true;
            return f(self.finish(here, self.king, white, kings));
        }
        false
    }

    fn finish(&self, end: u32, king: bool, white: u32, kings: u32) -> Position {
        let end = 1u32 << end;
        Position {
            black: self.others | end,
            white,
            kings: kings | if king { end } else { 0 },
        }
    }
}

/// The squares of a bitboard, ascending.
fn squares(mut set: u32) -> impl Iterator<Item = u32> {
    std::iter::from_fn(move || {
        if set == 0 {
            return None;
        }
        let s = set.trailing_zeros();
        set &= set - 1;
        Some(s)
    })
}

/// The boards (seen from Black's side) after each legal move of Black, as the brute solver
/// generates them: for checking that generator against the reference.
pub fn brute_moves(pos: &Position) -> Vec<Position> {
    static RULES: OnceLock<Rules> = OnceLock::new();
    let mut out = Vec::new();
    RULES
        .get_or_init(Rules::new)
        .for_each_move(pos, &mut |after| {
            out.push(after);
            false
        });
    out
}

/// Combinatorial number system: binomials and, per group kind (kings: 32 squares, men: 28)
/// and group size, the square set of each rank.
struct Ranks {
    binom: [[u32; MAX_PIECES as usize + 1]; 33],
    /// `sets[kind][k][rank]` for groups of `k` up to the largest group solved, squares
    /// counted from the group's first square; kind 0 = 32 squares, 1 = 28 squares.
    sets: [Vec<Vec<u32>>; 2],
}

impl Ranks {
    fn new(max_group: u32) -> Ranks {
        let mut binom = [[0u32; MAX_PIECES as usize + 1]; 33];
        for n in 0..33 {
            binom[n][0] = 1;
            for k in 1..=MAX_PIECES as usize {
                binom[n][k] = if n == 0 {
                    0
                } else {
                    binom[n - 1][k - 1] + binom[n - 1][k]
                };
            }
        }
        let mut ranks = Ranks {
            binom,
            sets: [Vec::new(), Vec::new()],
        };
        for (kind, n) in [32u32, 28].into_iter().enumerate() {
            for k in 0..=max_group {
                let mut sets = vec![u32::MAX; ranks.binom[n as usize][k as usize] as usize];
                for_each_subset(n, k, 0, 0, &mut |set| {
                    let r = ranks.rank(set) as usize;
                    assert_eq!(sets[r], u32::MAX, "two sets with rank {r}");
                    sets[r] = set;
                });
                assert!(sets.iter().all(|&s| s != u32::MAX), "ranks are not onto");
                ranks.sets[kind].push(sets);
            }
        }
        ranks
    }

    /// Colex rank of a square set: the sum of C(s_i, i) over its squares s_1 < s_2 < ...
    #[inline]
    fn rank(&self, set: u32) -> u32 {
        squares(set)
            .enumerate()
            .map(|(i, s)| self.binom[s as usize][i + 1])
            .sum()
    }
}

/// Calls `f` on every set of `k` squares among `first..n`, added to `set`.
fn for_each_subset(n: u32, k: u32, first: u32, set: u32, f: &mut dyn FnMut(u32)) {
    if k == 0 {
        f(set);
        return;
    }
    for s in first..n {
        for_each_subset(n, k - 1, s + 1, set | 1 << s, f);
    }
}

/// The four piece groups of a position, in index order.
#[inline]
fn groups(pos: &Position) -> [u32; GROUPS] {
    let men = !pos.kings;
    [
        pos.black & pos.kings,
        pos.black & men,
        pos.white & pos.kings,
        pos.white & men,
    ]
}

fn key(counts: [u32; GROUPS]) -> usize {
    counts.iter().fold(0, |key, &c| key * KEY_BASE + c as usize)
}

struct Material {
    /// Pieces per group.
    counts: [u32; GROUPS],
    /// Ranks per group: C(squares, count).
    radix: [u32; GROUPS],
    /// First slot in the table.
    offset: Slot,
    /// Slots (including unused ones with overlapping groups).
    len: Slot,
    /// First block in `BruteDb::stamps`. A block is the slots sharing Black's groups: as
    /// many as the ranks of White's two groups.
    first_block: u32,
}

impl Material {
    fn pieces(&self) -> u32 {
        self.counts.iter().sum()
    }

    fn block_len(&self) -> u32 {
        self.radix[2] * self.radix[3]
    }
}

pub struct BruteDb {
    max_pieces: u32,
    rules: Rules,
    ranks: Ranks,
    /// Ordered by piece count, then by number of men (so that within one pass the materials
    /// that promotions lead to come first).
    materials: Vec<Material>,
    /// `key` -> index in `materials`, or `usize::MAX`.
    by_key: Vec<usize>,
    values: Vec<AtomicU8>,
    /// Per block, the last pass (of the piece count being solved) that resolved a position of
    /// the block; 0 if none.
    stamps: Vec<AtomicU32>,
}

impl BruteDb {
    /// Solves every material of 2..=`max_pieces` pieces with both sides having pieces.
    pub fn solve(max_pieces: u32) -> BruteDb {
        assert!(
            (1..=MAX_ALL).contains(&max_pieces),
            "the brute-force solver handles all materials of at most {MAX_ALL} pieces \
             (solve_materials: subsets of up to {MAX_PIECES})"
        );
        BruteDb::solve_materials(max_pieces, |_| true)
    }

    /// Solves the materials of 2..=`max_pieces` pieces with only kings on the board.
    pub fn solve_kings_only(max_pieces: u32) -> BruteDb {
        BruteDb::solve_materials(max_pieces, |[_, bm, _, wm]| bm + wm == 0)
    }

    /// Solves the materials of 2..=`max_pieces` pieces with both sides having pieces that
    /// `keep` accepts, given as group sizes (black kings, black men, white kings, white men).
    /// Panics unless every material such a position can move to is kept too.
    pub fn solve_materials(max_pieces: u32, keep: impl Fn([u32; GROUPS]) -> bool) -> BruteDb {
        assert!(
            (1..=MAX_PIECES).contains(&max_pieces),
            "the brute-force solver handles subsets of materials of at most {MAX_PIECES} pieces"
        );
        let mut all = Vec::new();
        for_each_counts(max_pieces, &mut |counts| {
            let [bk, bm, wk, wm] = counts;
            if bk + bm > 0 && wk + wm > 0 && keep(counts) {
                all.push(counts);
            }
        });
        for &counts in &all {
            for next in successor_materials(counts) {
                assert!(
                    all.contains(&next),
                    "materials not closed: {counts:?} moves to {next:?}, which is not solved"
                );
            }
        }
        let ranks = Ranks::new(all.iter().flatten().copied().max().unwrap_or(0));
        all.sort_by_key(|&[bk, bm, wk, wm]| (bk + bm + wk + wm, bm + wm, [bk, bm, wk, wm]));
        let mut materials = Vec::new();
        let mut by_key = vec![usize::MAX; KEY_BASE.pow(GROUPS as u32)];
        let (mut offset, mut blocks) = (0u64, 0u64);
        for counts in all {
            let radix: [u32; GROUPS] =
                std::array::from_fn(|g| ranks.binom[GROUP_SQUARES[g] as usize][counts[g] as usize]);
            let len = radix.iter().map(|&r| r as Slot).product::<Slot>();
            // Slots within a material, and blocks, are reckoned in u32 (`evaluate`,
            // `visit_chunk`); only the table's slot ids need more.
            assert!(
                len <= u32::MAX as Slot,
                "material {counts:?} has {len} slots, more than u32 holds"
            );
            by_key[key(counts)] = materials.len();
            materials.push(Material {
                counts,
                radix,
                offset,
                len,
                first_block: blocks as u32,
            });
            offset += len;
            blocks += (radix[0] * radix[1]) as u64;
        }
        assert!(blocks <= u32::MAX as u64, "block ids must fit in u32");
        let db = BruteDb {
            max_pieces,
            rules: Rules::new(),
            ranks,
            materials,
            by_key,
            values: (0..offset).map(|_| AtomicU8::new(UNKNOWN)).collect(),
            stamps: (0..blocks).map(|_| AtomicU32::new(0)).collect(),
        };
        for pieces in 2..=max_pieces {
            db.solve_count(pieces);
        }
        db
    }

    /// Value with Black to move. Panics if the position's material is not solved.
    pub fn value(&self, pos: &Position) -> BruteValue {
        self.value_at(self.slot_of(pos))
    }

    /// The slot of `pos` (Black to move). Panics if the position's material is not solved.
    pub(crate) fn slot_of(&self, pos: &Position) -> Slot {
        assert!(
            pos.black & pos.white == 0
                && pos.kings & !(pos.black | pos.white) == 0
                && pos.black & !pos.kings & self.rules.crown == 0
                && pos.white & !pos.kings & self.rules.crown.reverse_bits() == 0,
            "not a legal position: {pos:?}"
        );
        let m = self.material_of(pos);
        assert!(
            m != usize::MAX,
            "material {:?} (black kings, men, white kings, men) not solved: {pos:?}",
            groups(pos).map(u32::count_ones)
        );
        self.slot(m, pos)
    }

    // Accessors for tests/common/brute_mtc.rs, which walks the same table.

    /// Slots in the table, used or not.
    pub(crate) fn slots(&self) -> Slot {
        self.values.len() as Slot
    }

    /// The value in `slot` (a draw for an unused slot).
    pub(crate) fn value_at(&self, slot: Slot) -> BruteValue {
        value_of(self.values[slot as usize].load(Relaxed))
    }

    /// Per material: its first slot, its number of slots and the length of its blocks (runs
    /// of slots sharing Black's pieces).
    pub(crate) fn layout(&self) -> Vec<(Slot, Slot, u32)> {
        let layout = self
            .materials
            .iter()
            .map(|m| (m.offset, m.len, m.block_len()));
        layout.collect()
    }

    /// The position in `slot`, or None for an unused slot.
    pub(crate) fn position_at(&self, slot: Slot) -> Option<Position> {
        self.position(self.material_at(slot), slot)
    }

    /// As `Rules::for_each_move`: the boards after each Black move until `f` returns true.
    pub(crate) fn for_each_move(
        &self,
        pos: &Position,
        mut f: impl FnMut(Position) -> bool,
    ) -> bool {
        self.rules.for_each_move(pos, &mut f)
    }

    /// Calls f for every solved position with exactly `pieces` pieces (both sides having
    /// pieces).
    pub fn for_each(&self, pieces: u32, mut f: impl FnMut(&Position, BruteValue)) {
        for (m, material) in self.materials.iter().enumerate() {
            if material.pieces() != pieces {
                continue;
            }
            for slot in material.offset..material.offset + material.len {
                if let Some(pos) = self.position(m, slot) {
                    f(&pos, value_of(self.values[slot as usize].load(Relaxed)));
                }
            }
        }
    }

    /// Index in `materials` of the position's material, or `usize::MAX`.
    #[inline]
    fn material_of(&self, pos: &Position) -> usize {
        let counts = groups(pos).map(u32::count_ones);
        if counts.iter().any(|&c| c > self.max_pieces) {
            return usize::MAX;
        }
        self.by_key[key(counts)]
    }

    #[inline]
    fn slot(&self, m: usize, pos: &Position) -> Slot {
        let material = &self.materials[m];
        let mut local: Slot = 0;
        for (g, set) in groups(pos).into_iter().enumerate() {
            local =
                local * material.radix[g] as Slot + self.ranks.rank(set >> GROUP_FIRST[g]) as Slot;
        }
        material.offset + local
    }

    /// The position in `slot` of material `m`, or None for an unused slot.
    #[inline]
    fn position(&self, m: usize, slot: Slot) -> Option<Position> {
        let material = &self.materials[m];
        let mut rest = slot - material.offset;
        let mut sets = [0u32; GROUPS];
        for g in (0..GROUPS).rev() {
            let kind = (GROUP_SQUARES[g] == 28) as usize;
            let r = rest % material.radix[g] as Slot;
            rest /= material.radix[g] as Slot;
            sets[g] =
                self.ranks.sets[kind][material.counts[g] as usize][r as usize] << GROUP_FIRST[g];
        }
        let [bk, bm, wk, wm] = sets;
        let all = bk | wk | bm | wm;
        (all.count_ones() == material.pieces()).then_some(Position {
            black: bk | bm,
            white: wk | wm,
            kings: bk | wk,
        })
    }

    /// WIN, LOSS or (not yet decided) UNKNOWN for `pos` of material `m`, from the values in
    /// the table now.
    #[inline]
    fn evaluate(&self, m: usize, pos: &Position) -> u8 {
        let [plain, promoted] = self.successor_blocks(m, pos);
        let black_kings = self.materials[m].counts[0];
        // Successor slots first, values after: the table reads can then overlap.
        let mut slots: [Slot; MAX_MOVES] = [0; MAX_MOVES];
        let mut n = 0;
        let took_last = self.rules.for_each_move(pos, &mut |after| {
            slots[n] = if after.white == pos.white {
                // A non-capture: only White's part of the successor's slot is left to find.
                let kings = after.black & after.kings;
                let (material, black) = if kings.count_ones() > black_kings {
                    promoted
                } else {
                    plain
                };
                let material = &self.materials[material];
                let kings = self.ranks.rank(kings.reverse_bits());
                let men = self
                    .ranks
                    .rank((after.black & !after.kings).reverse_bits() >> 4);
                material.offset
                    + (black * material.block_len() + kings * material.radix[3] + men) as Slot
            } else {
                let next = after.reversed();
                if next.black == 0 {
                    return true; // The opponent has no piece left.
                }
                self.slot(self.material_of(&next), &next)
            };
            n += 1;
            false
        });
        if took_last {
            return WIN;
        }
        let mut all_win = true;
        for &slot in &slots[..n] {
            let v = self.values[slot as usize].load(Relaxed);
            if v == LOSS {
                return WIN;
            }
            all_win &= v == WIN;
        }
        if all_win { LOSS } else { UNKNOWN }
    }

    /// The material and Black part (the mixed-radix rank of Black's two groups) of the
    /// successors of `pos` (of material `m`) after a non-capture, without and with a
    /// promotion. Their Black is this position's White reversed, whatever Black moves; their
    /// material is this one with the colours swapped, or that with one more White king and
    /// one man fewer. Without Black men, the second is a copy of the first.
    #[inline]
    fn successor_blocks(&self, m: usize, pos: &Position) -> [(usize, u32); 2] {
        let [bk, bm, wk, wm] = self.materials[m].counts;
        let kings = self.ranks.rank((pos.white & pos.kings).reverse_bits());
        let men = self.ranks.rank((pos.white & !pos.kings).reverse_bits());
        let block = |counts| {
            let m = self.by_key[key(counts)];
            (m, kings * self.materials[m].radix[1] + men)
        };
        let plain = block([wk, wm, bk, bm]);
        [
            plain,
            if bm > 0 {
                block([wk, wm, bk + 1, bm - 1])
            } else {
                plain
            },
        ]
    }

    /// Whether a block holding a same-count successor of `pos` (of material `m`) changed in
    /// pass `since` or later. An unresolved position has no capture, so those are all its
    /// successors but the ones it might reach by capturing.
    fn successors_changed(&self, m: usize, pos: &Position, since: u32) -> bool {
        self.successor_blocks(m, pos).into_iter().any(|(m, black)| {
            let block = self.materials[m].first_block + black;
            self.stamps[block as usize].load(Relaxed) >= since
        })
    }

    /// Index in `materials` of the material holding `slot`.
    fn material_at(&self, slot: Slot) -> usize {
        self.materials.partition_point(|m| m.offset + m.len <= slot)
    }

    /// Solves all materials with `pieces` pieces together, fewer pieces being solved.
    ///
    /// The positions still open are kept as one bit each, in White-major order: within a
    /// material, bit `offset + white * blocks + black` stands for slot
    /// `offset + black * block_len + white`, where `black` and `white` are the mixed-radix
    /// ranks of Black's and of White's two groups. A pass so visits the positions of one
    /// White in a row, and their same-count successors all lie in the one or two blocks of
    /// that White reversed: those stay in cache, and whether they changed is checked once.
    fn solve_count(&self, pieces: u32) {
        // Materials are ordered by piece count: this count's slots are one range.
        let mine = self.materials.iter().filter(|m| m.pieces() == pieces);
        let Some(start) = mine.clone().map(|m| m.offset).min() else {
            return; // No material of this count is solved.
        };
        let end = mine.map(|m| m.offset + m.len).max().unwrap();
        // The first pass visits every slot (and drops the unused ones).
        let mut open = vec![!0u64; (end - start).div_ceil(64) as usize];
        for pass in 1.. {
            let chunks = open.chunks_mut(CHUNK_WORDS).enumerate().collect();
            let resolved = parallel_sum(chunks, |(c, words): (usize, &mut [u64])| {
                let first = start + (c * CHUNK_WORDS * 64) as Slot;
                self.visit_chunk(first, end, words, pass)
            });
            if resolved == 0 {
                break;
            }
        }
    }

    /// Visits in pass `pass` the open positions whose bits are in `words`, the first standing
    /// for bit `first`; bits from `end` on are not positions. Clears the bits of the positions
    /// it resolves (and of unused slots) and returns how many it resolved.
    ///
    /// After the first pass, a position is evaluated again only if a block holding one of its
    /// successors changed since its previous evaluation, that is during or after the previous
    /// pass (blocks are stamped with the pass that resolved one of their positions). A
    /// position skipped in pass `p` was evaluated in the pass after its blocks last changed;
    /// when a pass resolves nothing, nothing changed during it and every position evaluated
    /// in it saw the final table.
    fn visit_chunk(&self, first: Slot, end: Slot, words: &mut [u64], pass: u32) -> usize {
        let mut m = self.material_at(first);
        // The White of the last position visited, and whether its successors' blocks changed.
        let mut run = (usize::MAX, u32::MAX, true);
        let mut resolved = 0;
        for (w, word) in words.iter_mut().enumerate() {
            let mut bits = *word;
            while bits != 0 {
                let bit = bits.trailing_zeros();
                bits &= bits - 1;
                let at = first + 64 * w as Slot + bit as Slot;
                if at >= end {
                    *word &= !(1 << bit);
                    continue;
                }
                while at >= self.materials[m].offset + self.materials[m].len {
                    m += 1;
                }
                let material = &self.materials[m];
                let blocks = material.len / material.block_len() as Slot;
                let (white, black) = (
                    ((at - material.offset) / blocks) as u32,
                    ((at - material.offset) % blocks) as u32,
                );
                let slot =
                    material.offset + black as Slot * material.block_len() as Slot + white as Slot;
                let Some(pos) = self.position(m, slot) else {
                    *word &= !(1 << bit);
                    continue;
                };
                if pass > 1 {
                    if (run.0, run.1) != (m, white) {
                        run = (m, white, self.successors_changed(m, &pos, pass - 1));
                    }
                    if !run.2 {
                        continue;
                    }
                }
                let v = self.evaluate(m, &pos);
                if v != UNKNOWN {
                    self.values[slot as usize].store(v, Relaxed);
                    let block = material.first_block + black;
                    self.stamps[block as usize].store(pass, Relaxed);
                    *word &= !(1 << bit);
                    resolved += 1;
                }
            }
        }
        resolved
    }
}

/// The value of a table byte once its piece count is solved.
fn value_of(byte: u8) -> BruteValue {
    match byte {
        WIN => BruteValue::Win,
        LOSS => BruteValue::Loss,
        _ => BruteValue::Draw,
    }
}

/// The materials (group sizes) that a position of material `counts` with Black to move may
/// move to, seen from the side then to move (a superset): colours swapped, any of White's
/// pieces captured (but not all: that ends the game), a Black man crowned or not.
fn successor_materials([bk, bm, wk, wm]: [u32; GROUPS]) -> Vec<[u32; GROUPS]> {
    let mut out = Vec::new();
    for crowned in 0..=bm.min(1) {
        for kings in 0..=wk {
            for men in (0..=wm).filter(|&men| kings + men > 0) {
                out.push([kings, men, bk + crowned, bm - crowned]);
            }
        }
    }
    out
}

/// Calls `f` on every group size vector with 1..=`max` pieces.
fn for_each_counts(max: u32, f: &mut dyn FnMut([u32; GROUPS])) {
    for a in 0..=max {
        for b in 0..=max - a {
            for c in 0..=max - a - b {
                for d in 0..=max - a - b - c {
                    if a + b + c + d > 0 {
                        f([a, b, c, d]);
                    }
                }
            }
        }
    }
}

/// Runs `work` on every job, taken in order by one thread per core, and sums the results.
/// Returning joins the threads: what they wrote is then visible to the caller.
pub(crate) fn parallel_sum<J: Send>(jobs: Vec<J>, work: impl Fn(J) -> usize + Sync) -> usize {
    let queue = Mutex::new(jobs.into_iter());
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut sum = 0;
                    loop {
                        // The lock is released at the end of this statement, before the work.
                        let Some(job) = queue.lock().unwrap().next() else {
                            return sum;
                        };
                        sum += work(job);
                    }
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).sum()
    })
}
