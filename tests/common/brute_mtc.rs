//! Moves-to-conversion (MTC) distances over the brute-force solver's table
//! (tests/common/brute.rs), from its values and its own move generator: like the solver, an
//! independent check of the real pipeline, sharing nothing with the crate but `Position` as a
//! plain bitboard struct.
//!
//! Definition (Black to move, values in plies). A conversion is a capture or a move of a man
//! (a crowning included); a king's non-capturing move is not one. A draw has no MTC. A lost
//! position without a move has MTC 0. A won position has the least, over its winning moves
//! (those to a position lost for the opponent), of 1 for a conversion and 1 + MTC(after) for
//! a king move; a lost position with moves has the greatest of the same over all its moves.
//!
//! Method: plain forward layers over the won and lost positions still without an MTC. Layer
//! `d` (0, 1, 2, ...) gives MTC `d` to each of them that the definition allows to have at most
//! `d` given the MTCs of the layers before: a won one (`d >= 1`) with a winning conversion or
//! a king move to a lost position of MTC below `d`; a lost one all of whose moves (possibly
//! none) are conversions (`d >= 1`) or king moves to positions of MTC below `d`. A position
//! first allowed at layer `d` was not at `d - 1`, so its least (won) or greatest (lost) is
//! exactly `d`. The MTCs given in layer `d` are `d`, which its own reads ignore (they look for
//! MTCs below `d`): whether a read sees one or not changes nothing, and layers run on all
//! cores. Once a layer from 1 on gives nothing, the next would read the same MTCs and give
//! nothing either: every won or lost position must then have its MTC (asserted).
//!
//! A king move keeps the material (with the colours swapped), so the layers need nothing from
//! other materials but the values of the positions conversions lead to, which are final.
//!
//! Two shortcuts. Positions are visited in an order that keeps the targets of their king
//! moves in cache (see `Order`). And from layer 2 on, all that changes from one layer to the
//! next is the positions given MTC `d - 1` in layer `d - 1`, which matter to layer `d` only
//! as the targets of king moves. Layer `d` so evaluates only the open positions marked in
//! layer `d - 1`: those from which a king step leads to a position given MTC `d - 1`, found
//! by stepping one of that position's White kings back to an empty neighbouring square
//! (White having just moved). That finds every such position, and some that cannot play the
//! step (having a capture to make): marking too many only costs time.

use super::brute::{BruteDb, BruteValue, Slot, parallel_sum};
use super::reference::{cell_of, on_board, square_of};
use nowdb::Position;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering::Relaxed};

/// Bitset words (of 64 slots) per unit of parallel work.
const CHUNK_WORDS: usize = 1 << 10;

/// "No square" in `Layers::next`.
const OFF: u32 = 32;

/// MTC per slot of a `BruteDb`.
pub struct BruteMtc {
    /// One byte per slot of the `BruteDb`: 0 for a draw or an unused slot, MTC + 1 otherwise.
    table: Vec<AtomicU8>,
}

impl BruteMtc {
    /// MTC of every position of every material `db` solved (uses db's values).
    pub fn compute(db: &BruteDb) -> BruteMtc {
        let slots = db.slots();
        let words = slots.div_ceil(64) as usize;
        let layers = Layers {
            db,
            order: Order {
                layout: db.layout(),
            },
            table: (0..slots).map(|_| AtomicU8::new(0)).collect(),
            next: std::array::from_fn(|s| {
                let (row, col) = cell_of(s as u32);
                [(1, -1), (1, 1), (-1, -1), (-1, 1)].map(|(dr, dc)| {
                    let cell = (row + dr, col + dc);
                    if on_board(cell) { square_of(cell) } else { OFF }
                })
            }),
            marks: [(); 2].map(|_| (0..words).map(|_| AtomicU64::new(0)).collect()),
        };
        // The won and lost positions still without an MTC, one bit each in visiting order
        // (unused slots are draws).
        let mut open = vec![0u64; words];
        let chunks = open.chunks_mut(CHUNK_WORDS).enumerate().collect();
        parallel_sum(chunks, |(c, words): (usize, &mut [u64])| {
            for (w, word) in words.iter_mut().enumerate() {
                for bit in 0..64 {
                    let at = ((c * CHUNK_WORDS + w) * 64 + bit) as Slot;
                    if at < slots && db.value_at(layers.order.slot(at)) != BruteValue::Draw {
                        *word |= 1 << bit;
                    }
                }
            }
            0
        });
        for d in 0.. {
            assert!(d + 1 < 255, "MTC {d} does not fit in the table's bytes");
            let chunks = open.chunks_mut(CHUNK_WORDS).enumerate().collect();
            let given = parallel_sum(chunks, |(c, words): (usize, &mut [u64])| {
                layers.layer(c * CHUNK_WORDS, words, d)
            });
            if given == 0 && d >= 1 {
                break;
            }
        }
        assert!(
            open.iter().all(|&w| w == 0),
            "won or lost positions without an MTC: the values are not consistent"
        );
        BruteMtc {
            table: layers.table,
        }
    }

    /// Plies to conversion with Black to move; None for a draw. Panics for a material not
    /// solved.
    pub fn mtc(&self, db: &BruteDb, pos: &Position) -> Option<u32> {
        match self.table[db.slot_of(pos) as usize].load(Relaxed) {
            0 => None,
            byte => Some(byte as u32 - 1),
        }
    }

    /// Calls f for every solved position with exactly `pieces` pieces: value and MTC.
    pub fn for_each(
        &self,
        db: &BruteDb,
        pieces: u32,
        mut f: impl FnMut(&Position, BruteValue, Option<u32>),
    ) {
        db.for_each(pieces, |pos, value| f(pos, value, self.mtc(db, pos)));
    }

    /// The largest MTC among positions of `pieces` pieces, with one such position (the first
    /// found).
    pub fn longest(&self, db: &BruteDb, pieces: u32) -> Option<(u32, Position)> {
        let mut longest: Option<(u32, Position)> = None;
        self.for_each(db, pieces, |pos, _, mtc| {
            if let Some(d) = mtc
                && longest.is_none_or(|(most, _)| d > most)
            {
                longest = Some((d, *pos));
            }
        });
        longest
    }
}

/// The order in which the layers visit the table, as the brute solver's passes do: within a
/// material, the positions with one White (Black's pieces varying) in a row. The king moves
/// of those lead to positions with one Black, that is to one block of consecutive slots,
/// which then stays in cache. The bitsets of `compute` and `Layers` are in this order: bit
/// `offset + white * blocks + black` stands for slot `offset + black * block_len + white`.
struct Order {
    /// `BruteDb::layout`: per material, first slot, slots and block length.
    layout: Vec<(Slot, Slot, u32)>,
}

impl Order {
    /// The first slot, the blocks and the block length of the material holding `at` (a bit
    /// or a slot: a material's bits are its slots, in another order).
    #[inline]
    fn material(&self, at: Slot) -> (Slot, Slot, Slot) {
        let m = self
            .layout
            .partition_point(|&(offset, len, _)| offset + len <= at);
        let (offset, len, block_len) = self.layout[m];
        (offset, len / block_len as Slot, block_len as Slot)
    }

    /// The slot of bit `bit`.
    #[inline]
    fn slot(&self, bit: Slot) -> Slot {
        let (offset, blocks, block_len) = self.material(bit);
        let (white, black) = ((bit - offset) / blocks, (bit - offset) % blocks);
        offset + black * block_len + white
    }

    /// The bit of slot `slot`.
    #[inline]
    fn bit(&self, slot: Slot) -> Slot {
        let (offset, blocks, block_len) = self.material(slot);
        let (black, white) = ((slot - offset) / block_len, (slot - offset) % block_len);
        offset + white * blocks + black
    }
}

/// The state of `BruteMtc::compute`.
struct Layers<'a> {
    db: &'a BruteDb,
    order: Order,
    /// As `BruteMtc::table`.
    table: Vec<AtomicU8>,
    /// `next[s]`: the squares diagonally next to square `s`, `OFF` off the board.
    next: [[u32; 4]; 32],
    /// The positions to evaluate in the next layer from layer 2 on, one bit each in visiting
    /// order: layer `d` reads and clears `marks[d % 2]` and sets bits in the other.
    marks: [Vec<AtomicU64>; 2],
}

impl Layers<'_> {
    /// Gives MTC `d` to the open positions whose bits are in `words` (the first being word
    /// `first` of the bitsets) that may have it, clearing their bits; returns how many.
    fn layer(&self, first: usize, words: &mut [u64], d: u32) -> usize {
        let mut given = 0;
        for (w, word) in words.iter_mut().enumerate() {
            let marked = self.marks[d as usize % 2][first + w].swap(0, Relaxed);
            let mut bits = if d >= 2 { *word & marked } else { *word };
            while bits != 0 {
                let bit = bits.trailing_zeros();
                bits &= bits - 1;
                let slot = self.order.slot(((first + w) * 64) as Slot + bit as Slot);
                let value = self.db.value_at(slot);
                if value == BruteValue::Win && d == 0 {
                    continue; // A win has a move: its MTC is at least 1.
                }
                let pos = self
                    .db
                    .position_at(slot)
                    .expect("a won or lost slot holds a position");
                let at_most_d = match value {
                    BruteValue::Win => self.won_within(&pos, d),
                    BruteValue::Loss => self.lost_within(&pos, d),
                    BruteValue::Draw => unreachable!("draws are never open"),
                };
                if at_most_d {
                    self.table[slot as usize].store(d as u8 + 1, Relaxed);
                    *word &= !(1 << bit);
                    given += 1;
                    self.mark_king_steps_to(&pos, &self.marks[(d as usize + 1) % 2]);
                }
            }
        }
        given
    }

    /// Whether the won position `pos` has a winning conversion or a king move to a lost
    /// position of MTC below `d`, for `d >= 1`.
    fn won_within(&self, pos: &Position, d: u32) -> bool {
        let db = self.db;
        db.for_each_move(pos, |after| {
            let next = after.reversed();
            if converts(pos, &after) {
                next.black == 0 || db.value(&next) == BruteValue::Loss
            } else {
                let slot = db.slot_of(&next);
                self.below(slot, d) && db.value_at(slot) == BruteValue::Loss
            }
        })
    }

    /// Whether every move of the lost position `pos` is a conversion (if `d >= 1`) or a king
    /// move to a position of MTC below `d`.
    fn lost_within(&self, pos: &Position, d: u32) -> bool {
        let beyond = self.db.for_each_move(pos, |after| {
            if converts(pos, &after) {
                d == 0
            } else {
                !self.below(self.db.slot_of(&after.reversed()), d)
            }
        });
        !beyond
    }

    /// Whether `slot` has an MTC below `d` (given in an earlier layer).
    #[inline]
    fn below(&self, slot: Slot, d: u32) -> bool {
        let byte = self.table[slot as usize].load(Relaxed) as u32;
        byte != 0 && byte <= d
    }

    /// Sets in `marks` the bits of the positions (Black to move) from which a king step might
    /// lead to `pos`: `pos` with one of White's kings stepped back to an empty neighbouring
    /// square, reversed.
    fn mark_king_steps_to(&self, pos: &Position, marks: &[AtomicU64]) {
        let empty = !(pos.black | pos.white);
        let mut kings = pos.white & pos.kings;
        while kings != 0 {
            let to = kings.trailing_zeros();
            kings &= kings - 1;
            for from in self.next[to as usize] {
                if from == OFF || empty & (1 << from) == 0 {
                    continue;
                }
                let moved = (1u32 << to) | (1 << from);
                let before = Position {
                    black: pos.black,
                    white: pos.white ^ moved,
                    kings: pos.kings ^ moved,
                };
                let bit = self.order.bit(self.db.slot_of(&before.reversed())) as usize;
                marks[bit / 64].fetch_or(1 << (bit % 64), Relaxed);
            }
        }
    }
}

/// Whether Black's move from `before` to `after` (boards seen from Black's side) is a
/// conversion: a capture (White lost a piece) or a man's move (Black's men changed; a
/// crowning removes one). A king's step changes Black's kings only.
fn converts(before: &Position, after: &Position) -> bool {
    let men = |p: &Position| p.black & !p.kings;
    after.white != before.white || men(after) != men(before)
}
