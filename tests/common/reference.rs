//! An independent reference move generator: the rules of English checkers stated on a plain
//! (row, column) grid. It deliberately shares nothing with the crate but the square numbering
//! and `Position` as a plain data struct: no step tables, no bitboard shifts, and captured
//! pieces stay on the board until the move ends (the crate removes them as it goes).
//!
//! Used by tests/rules.rs to check the crate's move generator and by tests/brute.rs to check
//! the brute-force solver's values against the rules.

use nowdb::Position;
use std::collections::BTreeSet;

/// The colour that moves. Black men go up (row + 1) and are crowned on row 7; White men go
/// down and are crowned on row 0.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Side {
    Black,
    White,
}

impl Side {
    pub fn forward(self) -> i32 {
        match self {
            Side::Black => 1,
            Side::White => -1,
        }
    }
    pub fn crown_row(self) -> i32 {
        match self {
            Side::Black => 7,
            Side::White => 0,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Piece {
    pub side: Side,
    pub king: bool,
}

/// `grid[row][col]`; only the dark squares ((row + col) even) are ever occupied.
pub type Grid = [[Option<Piece>; 8]; 8];
pub type Cell = (i32, i32);

/// Row and column of internal square `s`: four squares per row, even rows on columns
/// 0,2,4,6 and odd rows on columns 1,3,5,7.
pub fn cell_of(s: u32) -> Cell {
    let row = (s / 4) as i32;
    (row, 2 * (s % 4) as i32 + row % 2)
}

pub fn square_of((row, col): Cell) -> u32 {
    (row * 4 + col / 2) as u32
}

pub fn on_board((row, col): Cell) -> bool {
    (0..8).contains(&row) && (0..8).contains(&col)
}

pub fn at(grid: &Grid, (row, col): Cell) -> Option<Piece> {
    grid[row as usize][col as usize]
}

pub fn put(grid: &mut Grid, (row, col): Cell, piece: Option<Piece>) {
    grid[row as usize][col as usize] = piece;
}

pub fn to_grid(pos: &Position) -> Grid {
    let mut grid = [[None; 8]; 8];
    for s in 0..32 {
        let bit = 1u32 << s;
        let king = pos.kings & bit != 0;
        let side = match (pos.black & bit != 0, pos.white & bit != 0) {
            (true, _) => Side::Black,
            (_, true) => Side::White,
            _ => continue,
        };
        put(&mut grid, cell_of(s), Some(Piece { side, king }));
    }
    grid
}

pub fn to_position(grid: &Grid) -> Position {
    let mut pos = Position::default();
    for row in 0..8 {
        for col in (row % 2..8).step_by(2) {
            let Some(p) = at(grid, (row, col)) else {
                continue;
            };
            let bit = 1u32 << square_of((row, col));
            match p.side {
                Side::Black => pos.black |= bit,
                Side::White => pos.white |= bit,
            }
            if p.king {
                pos.kings |= bit;
            }
        }
    }
    pos
}

/// The diagonal directions a piece may move or jump in: kings all four, men forward only.
pub fn directions(side: Side, king: bool) -> impl Iterator<Item = Cell> {
    [(1, -1), (1, 1), (-1, -1), (-1, 1)]
        .into_iter()
        .filter(move |&(dr, _)| king || dr == side.forward())
}

/// What the reference found for one side to move.
#[derive(Default)]
pub struct Reference {
    /// Distinct boards after the move, seen from Black's side.
    pub results: BTreeSet<Position>,
    /// Move sequences found, counting separately two paths that give the same board.
    pub sequences: usize,
    pub capture: bool,
    /// Some capture ended on the square it started from.
    pub circular: bool,
    /// Some man was crowned by a jump.
    pub crowned_by_jump: bool,
    pub max_captured: usize,
}

/// A capture sequence in progress: the board with the mover lifted off its start square
/// (so it may return there), and the enemy pieces jumped so far (still on the board).
struct Sequence {
    grid: Grid,
    side: Side,
    king: bool,
    start: Cell,
    jumped: Vec<Cell>,
}

impl Sequence {
    /// Tries every jump from `here`; when none is possible the sequence ends here.
    fn extend(&mut self, here: Cell, out: &mut Reference) {
        let mut continued = false;
        for (dr, dc) in directions(self.side, self.king) {
            let over = (here.0 + dr, here.1 + dc);
            let land = (here.0 + 2 * dr, here.1 + 2 * dc);
            if !on_board(land) || at(&self.grid, land).is_some() {
                continue;
            }
            let enemy = matches!(at(&self.grid, over), Some(p) if p.side != self.side);
            if !enemy || self.jumped.contains(&over) {
                continue; // Nothing to jump, or a piece already jumped once.
            }
            continued = true;
            self.jumped.push(over);
            if !self.king && land.0 == self.side.crown_row() {
                // A man crowned by a jump: the move ends, whatever a king could do next.
                out.crowned_by_jump = true;
                self.finish(land, true, out);
            } else {
                self.extend(land, out);
            }
            self.jumped.pop();
        }
        if !continued && !self.jumped.is_empty() {
            self.finish(here, self.king, out);
        }
    }

    fn finish(&self, end: Cell, king: bool, out: &mut Reference) {
        let mut grid = self.grid;
        for &cell in &self.jumped {
            put(&mut grid, cell, None);
        }
        let side = self.side;
        put(&mut grid, end, Some(Piece { side, king }));
        out.results.insert(to_position(&grid));
        out.sequences += 1;
        out.circular |= end == self.start;
        out.max_captured = out.max_captured.max(self.jumped.len());
    }
}

/// Every legal move of `side` on `pos` (a board seen from Black's side), by the rules alone.
pub fn reference_moves(pos: &Position, side: Side) -> Reference {
    let grid = to_grid(pos);
    let mut out = Reference::default();
    let pieces: Vec<(Cell, bool)> = (0..32)
        .map(cell_of)
        .filter_map(|c| at(&grid, c).filter(|p| p.side == side).map(|p| (c, p.king)))
        .collect();
    for &(start, king) in &pieces {
        let mut lifted = grid;
        put(&mut lifted, start, None);
        let jumped = Vec::new();
        let mut seq = Sequence {
            grid: lifted,
            side,
            king,
            start,
            jumped,
        };
        seq.extend(start, &mut out);
    }
    out.capture = out.sequences > 0;
    if out.capture {
        return out; // Capturing is compulsory.
    }
    for &(start, king) in &pieces {
        for (dr, dc) in directions(side, king) {
            let to = (start.0 + dr, start.1 + dc);
            if !on_board(to) || at(&grid, to).is_some() {
                continue;
            }
            let mut after = grid;
            put(&mut after, start, None);
            let king = king || to.0 == side.crown_row();
            put(&mut after, to, Some(Piece { side, king }));
            out.results.insert(to_position(&after));
            out.sequences += 1;
        }
    }
    out
}

/// The four kinds of piece: (is black, is king).
pub const KINDS: [(bool, bool); 4] = [(true, false), (true, true), (false, false), (false, true)];

/// Calls `f` on every legal position of exactly `left` more pieces placed on squares from
/// `first` on, with at least one piece of each colour. Men never stand on their crowning row.
pub fn for_each_position(first: u32, left: u32, pos: Position, f: &mut dyn FnMut(&Position)) {
    if left == 0 {
        if pos.black != 0 && pos.white != 0 {
            f(&pos);
        }
        return;
    }
    for s in first..32 {
        let bit = 1u32 << s;
        for (black, king) in KINDS {
            let crown_row = if black { 7 } else { 0 };
            if !king && cell_of(s).0 == crown_row {
                continue;
            }
            let mut p = pos;
            *(if black { &mut p.black } else { &mut p.white }) |= bit;
            p.kings |= if king { bit } else { 0 };
            for_each_position(s + 1, left - 1, p, f);
        }
    }
}

/// A fixed-seed generator, so that a failure is reproducible.
pub use nowdb::rng::XorShift;

/// A random legal position of 4..=24 pieces, at most 12 a side. The share of kings is drawn
/// per position (none, some, most, all) so that long king captures, circular ones included,
/// and crowded boards full of men both occur.
pub fn random_position(rng: &mut XorShift) -> Position {
    let pieces = 4 + rng.below(21);
    let king_percent = [0, 30, 70, 100][rng.below(4) as usize];
    let mut pos = Position::default();
    for _ in 0..pieces {
        let black = match (pos.black.count_ones(), pos.white.count_ones()) {
            (12, _) => false,
            (_, 12) => true,
            _ => rng.below(2) == 0,
        };
        let s = loop {
            let s = rng.below(32) as u32;
            if pos.occupied() & (1 << s) == 0 {
                break s;
            }
        };
        let crown_row = if black { 7 } else { 0 };
        // A man drawn on its own crowning row is made a king instead.
        let king = rng.below(100) < king_percent || cell_of(s).0 == crown_row;
        *(if black {
            &mut pos.black
        } else {
            &mut pos.white
        }) |= 1 << s;
        pos.kings |= (king as u32) << s;
    }
    pos
}
