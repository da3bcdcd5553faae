//! Legal move generation for Black (the side to move in every [`Position`]).
//!
//! Captures are compulsory, any capture sequence may be chosen, a jumping piece continues while
//! it can, men move and jump forward only, a man reaching rank 7 is crowned and the move ends.
//! Captured pieces are taken off as they are jumped: that is how "never jumped twice" is
//! enforced, and it cannot open a landing square because landing squares and jumped squares lie
//! on different sub-lattices of the diagonal grid.

use super::{Position, step};
use std::mem::MaybeUninit;

/// Squares adjacent to `s` in each direction (`NONE` when off the board).
const NONE: u8 = 0xFF;

const fn build_neighbours() -> [[u8; 32]; 4] {
    let mut t = [[NONE; 32]; 4];
    let mut dir = 0;
    while dir < 4 {
        let mut s = 0;
        while s < 32 {
            let n = step(1 << s, dir);
            if n != 0 {
                t[dir][s] = n.trailing_zeros() as u8;
            }
            s += 1;
        }
        dir += 1;
    }
    t
}

const NEIGHBOUR: [[u8; 32]; 4] = build_neighbours();

/// `ADJACENT[s]`: the squares diagonally next to `s`. A jump from `a` to `b` takes the one
/// square adjacent to both.
const fn build_adjacent() -> [u32; 32] {
    let mut t = [0u32; 32];
    let mut s = 0;
    while s < 32 {
        let b = 1u32 << s;
        t[s] = step(b, 0) | step(b, 1) | step(b, 2) | step(b, 3);
        s += 1;
    }
    t
}

const ADJACENT: [u32; 32] = build_adjacent();

/// `JUMP[at][dir]`: the square a jump from `at` in direction `dir` passes over and the one
/// it lands on, as bits (both 0 when the landing is off the board). A capture sequence looks
/// at one square at a time, where two table reads cost less than stepping a whole bitboard
/// twice.
const fn build_jumps() -> [[(u32, u32); 4]; 32] {
    let mut t = [[(0u32, 0u32); 4]; 32];
    let mut s = 0;
    while s < 32 {
        let mut dir = 0;
        while dir < 4 {
            let over = step(1 << s, dir);
            let land = step(over, dir);
            if land != 0 {
                t[s][dir] = (over, land);
            }
            dir += 1;
        }
        s += 1;
    }
    t
}

const JUMP: [[(u32, u32); 4]; 32] = build_jumps();

/// A move by Black: what later phases need to apply and classify it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, PartialOrd, Ord)]
pub struct Move {
    /// Square the piece leaves.
    pub from: u8,
    /// Square the piece ends on (may equal `from` after a king's circular capture).
    pub to: u8,
    /// Bitboard of the captured White pieces (0 for a plain move).
    pub captures: u32,
    /// A man reaches rank 7 and becomes a king.
    pub crowns: bool,
}

impl Move {
    #[inline]
    pub fn is_capture(&self) -> bool {
        self.captures != 0
    }

    /// The same move seen on the reversed board (White's move as Black's, or back).
    #[inline]
    pub fn reversed(&self) -> Move {
        Move {
            from: 31 - self.from,
            to: 31 - self.to,
            captures: self.captures.reverse_bits(),
            crowns: self.crowns,
        }
    }
}

/// Capacity of a [`MoveList`]. Plain moves are at most 4 per piece (48); distinct capture
/// sequences in a legal position stay far below this.
pub const MAX_MOVES: usize = 128;

/// A fixed-capacity list of moves, so that generation never allocates. The entries are
/// not initialised until pushed: a new list costs nothing (a probe's search makes several
/// per position, and zeroing 1.5 KB each was a tenth of its instructions).
pub struct MoveList {
    /// The first `len` entries are initialised.
    moves: [MaybeUninit<Move>; MAX_MOVES],
    len: usize,
}

impl Default for MoveList {
    fn default() -> Self {
        MoveList {
            moves: [const { MaybeUninit::uninit() }; MAX_MOVES],
            len: 0,
        }
    }
}

impl Clone for MoveList {
    fn clone(&self) -> Self {
        let mut list = MoveList::new();
        for &m in self {
            list.push(m);
        }
        list
    }
}

impl MoveList {
    pub fn new() -> Self {
        Self::default()
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
    }
    #[inline]
    pub fn as_slice(&self) -> &[Move] {
        // SAFETY: the first `len` entries were written by `push`, and `MaybeUninit<Move>`
        // has the layout of `Move`.
        unsafe { std::slice::from_raw_parts(self.moves.as_ptr().cast::<Move>(), self.len) }
    }
    pub fn iter(&self) -> std::slice::Iter<'_, Move> {
        self.as_slice().iter()
    }
    #[inline]
    fn push(&mut self, m: Move) {
        self.moves[self.len] = MaybeUninit::new(m);
        self.len += 1;
    }
}

impl<'a> IntoIterator for &'a MoveList {
    type Item = &'a Move;
    type IntoIter = std::slice::Iter<'a, Move>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// Black pieces that can capture right now (bitboard-parallel; no allocation).
#[inline]
fn capturers(pos: &Position) -> u32 {
    // A piece can jump in `dir` when the square beyond it in `dir` holds a white piece and
    // the one beyond that is empty: two steps back from the empty squares, no branch.
    // Written out per direction so every shift is a constant (a loop over the directions
    // gets vectorised into variable shifts, which is slower).
    let empty = pos.empty();
    let jumps = |dir: usize| step(step(empty, 3 - dir) & pos.white, 3 - dir);
    (jumps(0) | jumps(1)) & pos.black | (jumps(2) | jumps(3)) & pos.black_kings()
}

/// Whether Black has a capture (and so must capture).
#[inline]
pub fn has_capture(pos: &Position) -> bool {
    capturers(pos) != 0
}

/// Whether Black has any move; a position without one is lost. The plain steps are one mask
/// each way (the targets [`find_plain_move`] walks), so the capture sequences are never
/// generated: `mtc` asks it of every child a won position's king moves reach, and nearly all
/// of them can step.
#[inline]
pub fn has_moves(pos: &Position) -> bool {
    let empty = pos.empty();
    let kings = pos.black_kings();
    (step(pos.black, 0) | step(pos.black, 1) | step(kings, 2) | step(kings, 3)) & empty != 0
        || has_capture(pos)
}

/// Whether White would have a capture if it were its turn: `has_capture(&pos.reversed())`
/// without reversing the board (three bit reversals, the dearer part of a probe's tests).
#[inline]
pub fn white_has_capture(pos: &Position) -> bool {
    let empty = pos.empty();
    // White men move down the board (directions 2 and 3); kings every way.
    let jumps = |dir: usize| step(step(empty, 3 - dir) & pos.black, 3 - dir);
    ((jumps(2) | jumps(3)) & pos.white | (jumps(0) | jumps(1)) & pos.white_kings()) != 0
}

/// Generates every legal move for Black into `list` (cleared first). Capture sequences that
/// end on the same square having taken the same pieces lead to the same position and are
/// listed once.
pub fn generate_moves(pos: &Position, list: &mut MoveList) {
    generate::<true>(pos, list);
}

/// Like [`generate_moves`], but a king capture reaching the same square with the same pieces
/// by two paths is listed once per path. Only for comparing with published perft figures that
/// count paths (Aart Bik's); databases and search use [`generate_moves`].
pub fn generate_move_paths(pos: &Position, list: &mut MoveList) {
    generate::<false>(pos, list);
}

fn generate<const MERGE: bool>(pos: &Position, list: &mut MoveList) {
    list.clear();
    let jumpers = capturers(pos);
    if jumpers != 0 {
        let mut rest = jumpers;
        while rest != 0 {
            let from = rest.trailing_zeros();
            rest &= rest - 1;
            let king = pos.kings & (1 << from) != 0;
            // The mover's own square is free for the rest of the sequence (circular captures).
            let piece = Jumper {
                from: from as u8,
                king,
                empty: pos.empty() | (1 << from),
            };
            let lands = landings(piece.from, king, pos.white, piece.empty);
            extend_capture::<MERGE>(piece, piece.from, lands, 0, pos.white, list);
        }
        return;
    }
    find_plain_move(pos, |m| {
        list.push(m);
        false
    });
}

/// Hands Black's plain (non-capture) moves of `pos` to `f` in [`generate_moves`]' order until
/// `f` returns true; whether it did. For a position without a capture these are all its
/// moves: a caller that wants only the first move of some kind (`ver`'s losing child of a
/// won position) stops there without generating the rest.
#[inline(always)]
pub fn find_plain_move(pos: &Position, mut f: impl FnMut(Move) -> bool) -> bool {
    // Bitboard-parallel. The targets of two directions share one 64-bit word (bit 32 * k +
    // to), so a single loop walks them: a loop per direction costs a mispredicted exit
    // each, more than the moves themselves.
    let empty = pos.empty();
    let forward = (step(pos.black, 0) & empty) as u64 | ((step(pos.black, 1) & empty) as u64) << 32;
    if find_in_targets(forward, &FROM_FORWARD, pos.kings, &mut f) {
        return true;
    }
    let kings = pos.black_kings();
    if kings == 0 {
        return false;
    }
    let backward = (step(kings, 2) & empty) as u64 | ((step(kings, 3) & empty) as u64) << 32;
    find_in_targets(backward, &FROM_BACKWARD, u32::MAX, &mut f)
}

/// Black's plain move from `from` to `to` in `pos`, when there is one: a piece of Black's on
/// `from`, `to` empty and next to it in a direction that piece moves (forward only for a man,
/// which is crowned on rank 7). Whether `pos` has a capture, which would forbid it, is the
/// caller's to know. `ver` tries the move that won the position before it this way, before
/// generating any (neighbouring positions of a slice are mostly won by the same move).
#[inline]
pub fn plain_move(pos: &Position, from: u8, to: u8) -> Option<Move> {
    let (f, t) = (1u32 << from, 1u32 << to);
    if pos.black & f == 0 || pos.empty() & t == 0 {
        return None;
    }
    let king = pos.kings & f != 0;
    let reach = match king {
        true => ADJACENT[from as usize],
        false => step(f, 0) | step(f, 1),
    };
    (reach & t != 0).then_some(Move {
        from,
        to,
        captures: 0,
        crowns: to >= 28 && !king,
    })
}

/// `FROM_FORWARD[32 * k + to]`: the square a piece moving in direction `k` (0 or 1) to `to`
/// came from; `FROM_BACKWARD` the same for directions 2 and 3.
const fn build_from(first_dir: usize) -> [u8; 64] {
    let mut t = [NONE; 64];
    let mut i = 0;
    while i < 64 {
        t[i] = NEIGHBOUR[3 - (first_dir + i / 32)][i % 32];
        i += 1;
    }
    t
}

const FROM_FORWARD: [u8; 64] = build_from(0);
const FROM_BACKWARD: [u8; 64] = build_from(2);

/// Hands the plain moves whose targets are the bits of `targets` (see [`FROM_FORWARD`]) to
/// `f` until it returns true; a man (a mover not in `kings`) reaching rank 7 is crowned.
#[inline(always)]
fn find_in_targets(
    mut targets: u64,
    from_table: &[u8; 64],
    kings: u32,
    f: &mut impl FnMut(Move) -> bool,
) -> bool {
    while targets != 0 {
        let bit = targets.trailing_zeros() as usize;
        targets &= targets - 1;
        let to = (bit % 32) as u8;
        let from = from_table[bit];
        let m = Move {
            from,
            to,
            captures: 0,
            crowns: to >= 28 && kings & (1 << from) == 0,
        };
        if f(m) {
            return true;
        }
    }
    false
}

/// Where a piece on `at` can land by one jump over a piece of `white`, all directions in
/// one bitboard (backwards only for a king). Most sequences end after one jump, and this
/// tells so without a branch per direction.
#[inline(always)]
fn landings(at: u8, king: bool, white: u32, empty: u32) -> u32 {
    let jumps = &JUMP[at as usize];
    let landing = |dir: usize| {
        let (over, land) = jumps[dir];
        if white & over != 0 { land & empty } else { 0 }
    };
    let mut lands = landing(0) | landing(1);
    if king {
        lands |= landing(2) | landing(3);
    }
    lands
}

/// What stays fixed through one piece's capture sequences: the square it started from,
/// whether it is a king, and the squares it may land on (its own start is one of them).
#[derive(Clone, Copy)]
struct Jumper {
    from: u8,
    king: bool,
    empty: u32,
}

/// Continues a capture sequence of `piece`, which now stands on `at` having taken `captured`
/// and can land on `lands` (not empty) over the pieces of `white` still on the board. Each
/// landing's own landings are looked at before going deeper, so a sequence that ends there
/// (most do) is listed without a call.
fn extend_capture<const MERGE: bool>(
    piece: Jumper,
    at: u8,
    mut lands: u32,
    captured: u32,
    white: u32,
    list: &mut MoveList,
) {
    debug_assert_ne!(lands, 0);
    let Jumper { from, king, empty } = piece;
    while lands != 0 {
        let land = lands.trailing_zeros() as u8;
        lands &= lands - 1;
        // The jumped piece is the square next to both ends.
        let over = ADJACENT[at as usize] & ADJACENT[land as usize] & white;
        let taken = captured | over;
        if !king && land >= 28 {
            // Crowned mid-jump: the move ends here.
            list.push(Move {
                from,
                to: land,
                captures: taken,
                crowns: true,
            });
            continue;
        }
        let left = white & !over;
        let next = landings(land, king, left, empty);
        if next != 0 {
            extend_capture::<MERGE>(piece, land, next, taken, left, list);
            continue;
        }
        let m = Move {
            from,
            to: land,
            captures: taken,
            crowns: false,
        };
        // Only a king can reach the same square with the same pieces by two paths.
        if !(MERGE && king && list.iter().any(|x| *x == m)) {
            list.push(m);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A random board with about a quarter of the squares black and a quarter white, a
    /// random half of the pieces kings: captures and plain moves both occur often.
    fn sparse_board(rng: &mut crate::rng::XorShift) -> Position {
        let black = (rng.next() & rng.next()) as u32;
        let white = (rng.next() & rng.next()) as u32 & !black;
        let kings = rng.next() as u32 & (black | white);
        Position {
            black,
            white,
            kings,
        }
    }

    #[test]
    fn white_captures_are_blacks_on_the_reversed_board() {
        let mut rng = crate::rng::XorShift::new(0xC0FFEE);
        let mut seen = [0; 2];
        for _ in 0..200_000 {
            let pos = sparse_board(&mut rng);
            let want = has_capture(&pos.reversed());
            assert_eq!(white_has_capture(&pos), want, "{pos:?}");
            seen[want as usize] += 1;
        }
        assert!(seen[0] > 10_000 && seen[1] > 10_000, "{seen:?}");
    }

    #[test]
    fn has_moves_is_whether_any_move_is_generated() {
        let mut rng = crate::rng::XorShift::new(0xB10C);
        let mut list = MoveList::new();
        let mut seen = [0; 2];
        for _ in 0..200_000 {
            // Few black pieces among many white ones, so that blocked positions occur often.
            let black = (rng.next() & rng.next() & rng.next()) as u32;
            let white = (rng.next() | rng.next()) as u32 & !black;
            let kings = (rng.next() & rng.next()) as u32 & (black | white);
            let pos = Position {
                black,
                white,
                kings,
            };
            generate_moves(&pos, &mut list);
            let want = !list.is_empty();
            assert_eq!(has_moves(&pos), want, "{pos:?}");
            seen[want as usize] += 1;
        }
        assert!(seen[0] > 5_000 && seen[1] > 5_000, "{seen:?}");
    }

    #[test]
    fn plain_move_is_a_move_find_plain_move_hands_out_and_nothing_else() {
        let mut rng = crate::rng::XorShift::new(0x5EED);
        let (mut found, mut refused) = (0u64, 0u64);
        for _ in 0..20_000 {
            let pos = sparse_board(&mut rng);
            let mut want = Vec::new();
            find_plain_move(&pos, |m| {
                want.push(m);
                false
            });
            for from in 0..32u8 {
                for to in 0..32u8 {
                    let expected = want.iter().find(|m| m.from == from && m.to == to).copied();
                    assert_eq!(plain_move(&pos, from, to), expected, "{pos:?} {from}-{to}");
                    match expected {
                        Some(_) => found += 1,
                        None => refused += 1,
                    }
                }
            }
        }
        assert!(found > 50_000 && refused > 50_000, "{found} {refused}");
    }

    #[test]
    fn opening_has_seven_moves() {
        let mut list = MoveList::new();
        generate_moves(&Position::OPENING, &mut list);
        assert_eq!(list.len(), 7);
        assert!(list.iter().all(|m| !m.is_capture() && !m.crowns));
    }
}
