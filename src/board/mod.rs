//! Board, rules and reversal (DESIGN.md section 3).
//!
//! Squares are numbered 0..31 from Black's side (1994 paper, Appendix B, Figure 9): square `s`
//! is on rank `s / 4`; even ranks use columns 0,2,4,6 and odd ranks columns 1,3,5,7. Black men
//! move up (towards larger squares) and are crowned on rank 7; White men move down and are
//! crowned on rank 0.
//!
//! A [`Position`] is always a board with Black to move. White to move is handled by
//! [`Position::reversed`]: rotate the board 180 degrees and swap the colours.

mod movegen;
pub mod perft;
mod unmove;

pub use movegen::{
    MAX_MOVES, Move, MoveList, find_plain_move, generate_move_paths, generate_moves, has_capture,
    has_moves, plain_move, white_has_capture,
};
pub use unmove::{for_each_unmove, for_each_unmove_of};

use std::fmt;

/// Squares of even ranks (0, 2, 4, 6).
pub const EVEN_RANKS: u32 = 0x0F0F_0F0F;
/// Squares of odd ranks (1, 3, 5, 7).
pub const ODD_RANKS: u32 = 0xF0F0_F0F0;
/// Rank 7, where Black men are crowned and never stand.
pub const BLACK_CROWN_RANK: u32 = 0xF000_0000;
/// Rank 0, where White men are crowned and never stand.
pub const WHITE_CROWN_RANK: u32 = 0x0000_000F;

/// The rank (0..7, from Black's side) of an internal square.
#[inline]
pub const fn rank_of(square: u32) -> u32 {
    square / 4
}

/// The column (0..7, from Black's left) of an internal square.
#[inline]
pub const fn column_of(square: u32) -> u32 {
    2 * (square % 4) + (square / 4) % 2
}

/// A board with Black to move: three bitboards over the internal squares.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, PartialOrd, Ord)]
pub struct Position {
    pub black: u32,
    pub white: u32,
    pub kings: u32,
}

/// The side to move, for notation and perft; stored positions always have Black to move.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Color {
    Black,
    White,
}

impl Color {
    pub fn opponent(self) -> Color {
        match self {
            Color::Black => Color::White,
            Color::White => Color::Black,
        }
    }
}

/// Why a set of bitboards is not a legal checkers position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PositionError {
    Overlap(u32),
    KingWithoutPiece(u32),
    BlackManOnCrownRank(u32),
    WhiteManOnCrownRank(u32),
    TooManyPieces { color: Color, count: u32 },
}

impl fmt::Display for PositionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PositionError::Overlap(s) => write!(f, "internal square {s} holds both colours"),
            PositionError::KingWithoutPiece(s) => {
                write!(f, "internal square {s} is marked king but is empty")
            }
            PositionError::BlackManOnCrownRank(s) => write!(
                f,
                "a black man on internal square {s} (rank 7) would have been crowned"
            ),
            PositionError::WhiteManOnCrownRank(s) => write!(
                f,
                "a white man on internal square {s} (rank 0) would have been crowned"
            ),
            PositionError::TooManyPieces { color, count } => {
                write!(f, "{color:?} has {count} pieces; a side has at most 12")
            }
        }
    }
}

impl std::error::Error for PositionError {}

impl Position {
    /// The standard opening position (Black on 1..12, White on 21..32), Black to move.
    pub const OPENING: Position = Position {
        black: 0x0000_0FFF,
        white: 0xFFF0_0000,
        kings: 0,
    };

    /// Builds a position from the four piece sets, checking it is legal.
    pub fn from_pieces(
        black_men: u32,
        white_men: u32,
        black_kings: u32,
        white_kings: u32,
    ) -> Result<Position, PositionError> {
        let sets = [black_men, white_men, black_kings, white_kings];
        for (i, a) in sets.iter().enumerate() {
            for b in &sets[i + 1..] {
                if a & b != 0 {
                    return Err(PositionError::Overlap((a & b).trailing_zeros()));
                }
            }
        }
        let p = Position {
            black: black_men | black_kings,
            white: white_men | white_kings,
            kings: black_kings | white_kings,
        };
        p.validate()?;
        Ok(p)
    }

    /// Checks the invariants every stored position satisfies.
    pub fn validate(&self) -> Result<(), PositionError> {
        if self.black & self.white != 0 {
            return Err(PositionError::Overlap(
                (self.black & self.white).trailing_zeros(),
            ));
        }
        let stray = self.kings & !(self.black | self.white);
        if stray != 0 {
            return Err(PositionError::KingWithoutPiece(stray.trailing_zeros()));
        }
        let bm = self.black_men() & BLACK_CROWN_RANK;
        if bm != 0 {
            return Err(PositionError::BlackManOnCrownRank(bm.trailing_zeros()));
        }
        let wm = self.white_men() & WHITE_CROWN_RANK;
        if wm != 0 {
            return Err(PositionError::WhiteManOnCrownRank(wm.trailing_zeros()));
        }
        for (color, set) in [(Color::Black, self.black), (Color::White, self.white)] {
            if set.count_ones() > 12 {
                return Err(PositionError::TooManyPieces {
                    color,
                    count: set.count_ones(),
                });
            }
        }
        Ok(())
    }

    #[inline]
    pub fn black_men(&self) -> u32 {
        self.black & !self.kings
    }
    #[inline]
    pub fn white_men(&self) -> u32 {
        self.white & !self.kings
    }
    #[inline]
    pub fn black_kings(&self) -> u32 {
        self.black & self.kings
    }
    #[inline]
    pub fn white_kings(&self) -> u32 {
        self.white & self.kings
    }
    #[inline]
    pub fn occupied(&self) -> u32 {
        self.black | self.white
    }
    #[inline]
    pub fn empty(&self) -> u32 {
        !(self.black | self.white)
    }
    #[inline]
    pub fn piece_count(&self) -> u32 {
        self.occupied().count_ones()
    }

    /// Rotates the board 180 degrees (`s -> 31 - s`) and swaps the colours: the value of this
    /// board with White to move is the value of the reversed board with Black to move.
    #[inline]
    pub fn reversed(&self) -> Position {
        Position {
            black: self.white.reverse_bits(),
            white: self.black.reverse_bits(),
            kings: self.kings.reverse_bits(),
        }
    }

    /// The board after Black plays `m`, still seen from Black's side (so White is to move).
    #[inline]
    pub fn play(&self, m: &Move) -> Position {
        let from = 1u32 << m.from;
        let to = 1u32 << m.to;
        let was_king = self.kings & from != 0;
        let mut kings = self.kings & !from & !m.captures;
        if was_king || m.crowns {
            kings |= to;
        }
        Position {
            black: (self.black & !from) | to,
            white: self.white & !m.captures,
            kings,
        }
    }

    /// The position after Black plays `m`, reversed so that it is again Black to move.
    #[inline]
    pub fn successor(&self, m: &Move) -> Position {
        self.play(m).reversed()
    }
}

/// One diagonal step of every piece in `b` in the given direction; pieces leaving the board
/// vanish. Direction 0 = up-left, 1 = up-right (towards rank 7), 2 = down-left, 3 = down-right.
#[inline]
pub const fn step(b: u32, dir: usize) -> u32 {
    match dir {
        0 => ((b & EVEN_RANKS & 0x0E0E_0E0E) << 3) | ((b & ODD_RANKS) << 4),
        1 => ((b & EVEN_RANKS) << 4) | ((b & ODD_RANKS & 0x7070_7070) << 5),
        2 => ((b & EVEN_RANKS & 0x0E0E_0E0E) >> 5) | ((b & ODD_RANKS) >> 4),
        _ => ((b & EVEN_RANKS) >> 4) | ((b & ODD_RANKS & 0x7070_7070) >> 3),
    }
}

impl fmt::Display for Position {
    /// An ASCII diagram from Black's side: `b`/`w` men, `B`/`W` kings, `.` empty.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for rank in (0..8).rev() {
            for col in 0..8 {
                if (rank + col) % 2 == 1 {
                    write!(f, "  ")?;
                    continue;
                }
                let s = rank * 4 + col / 2;
                let bit = 1u32 << s;
                let c = match (self.black & bit != 0, self.white & bit != 0) {
                    (true, _) if self.kings & bit != 0 => 'B',
                    (true, _) => 'b',
                    (_, true) if self.kings & bit != 0 => 'W',
                    (_, true) => 'w',
                    _ => '.',
                };
                write!(f, "{c} ")?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometry_matches_figure_9() {
        // Square 0 is column 0 of rank 0; square 4 is column 1 of rank 1.
        assert_eq!((rank_of(0), column_of(0)), (0, 0));
        assert_eq!((rank_of(4), column_of(4)), (1, 1));
        assert_eq!((rank_of(31), column_of(31)), (7, 7));
        // Every step moves exactly one rank and one column.
        for dir in 0..4 {
            for s in 0..32u32 {
                let t = step(1 << s, dir);
                if t == 0 {
                    continue;
                }
                let t = t.trailing_zeros();
                let dr = rank_of(t) as i32 - rank_of(s) as i32;
                let dc = column_of(t) as i32 - column_of(s) as i32;
                assert_eq!(dr, if dir < 2 { 1 } else { -1 }, "dir {dir} from {s}");
                assert_eq!(dc, if dir % 2 == 0 { -1 } else { 1 }, "dir {dir} from {s}");
            }
        }
    }

    #[test]
    fn reversal_is_rotation() {
        for s in 0..32u32 {
            let r = 31 - s;
            assert_eq!(rank_of(r), 7 - rank_of(s));
            assert_eq!(column_of(r), 7 - column_of(s));
        }
        assert_eq!(Position::OPENING.reversed(), Position::OPENING);
    }
}
