//! PDN FEN: `B:W18,K12:B3,5` (side to move, then each colour's squares, `K` for kings,
//! ranges such as `B:B1-12:W21-32`), in standard numbering 1..32 where Black starts on 1..12.
//!
//! Parsing is strict: every error names the offending part. Printing is canonical (White's
//! list then Black's, men before kings, each ascending, no ranges), so that
//! `print(parse(s)) == s` for canonical `s` and `parse(print(p)) == p` always.

use crate::board::{Color, Position};
use std::fmt;

/// A board together with the side to move, as written in a FEN.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Setup {
    /// The pieces as they stand, seen from Black's side (not reversed).
    pub board: Position,
    pub to_move: Color,
}

impl Setup {
    /// The equivalent position with Black to move (reversed when White is to move).
    pub fn black_to_move(&self) -> Position {
        match self.to_move {
            Color::Black => self.board,
            Color::White => self.board.reversed(),
        }
    }

    /// The standard opening position, Black to move.
    pub fn opening() -> Setup {
        Setup {
            board: Position::OPENING,
            to_move: Color::Black,
        }
    }
}

/// A FEN that could not be read; the message names the bad token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FenError {
    pub fen: String,
    pub message: String,
}

impl fmt::Display for FenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bad FEN {:?}: {}", self.fen, self.message)
    }
}

impl std::error::Error for FenError {}

/// Internal square (0..31) of a standard square number (1..32).
#[inline]
pub fn internal_square(standard: u32) -> u32 {
    let r = (standard - 1) / 4;
    4 * r + 3 - (standard - 1) % 4
}

/// Standard square number (1..32) of an internal square (0..31). The mapping is its own
/// inverse shape: it only mirrors the order inside each rank.
#[inline]
pub fn standard_square(internal: u32) -> u32 {
    let r = internal / 4;
    4 * r + 3 - internal % 4 + 1
}

/// Parses a PDN FEN. Surrounding whitespace, a trailing `.` and a `[FEN "..."]` tag wrapper
/// are accepted; anything else unexpected is an error naming it.
pub fn parse_fen(text: &str) -> Result<Setup, FenError> {
    let err = |message: String| FenError {
        fen: text.to_string(),
        message,
    };
    let mut s = text.trim();
    if let Some(inner) = s.strip_prefix("[FEN").and_then(|r| r.strip_suffix(']')) {
        s = inner.trim();
        s = s
            .strip_prefix('"')
            .and_then(|r| r.strip_suffix('"'))
            .ok_or_else(|| err("FEN tag value must be in double quotes".into()))?;
    }
    let s = s.strip_suffix('.').unwrap_or(s);
    let fields: Vec<&str> = s.split(':').collect();
    if fields.len() != 3 {
        return Err(err(format!(
            "expected 3 fields separated by ':' (side to move, then each colour), found {}",
            fields.len()
        )));
    }
    let to_move = match fields[0].trim() {
        "B" => Color::Black,
        "W" => Color::White,
        other => {
            return Err(err(format!(
                "side to move {other:?} is neither 'B' nor 'W'"
            )));
        }
    };
    let mut men = [0u32; 2];
    let mut kings = [0u32; 2];
    let mut seen = [false; 2];
    for field in &fields[1..] {
        let field = field.trim();
        let (color, list) = match field.chars().next() {
            Some('B') => (0, &field[1..]),
            Some('W') => (1, &field[1..]),
            _ => {
                return Err(err(format!(
                    "colour field {field:?} must start with 'B' or 'W'"
                )));
            }
        };
        if seen[color] {
            return Err(err(format!(
                "colour {} appears twice",
                if color == 0 { 'B' } else { 'W' }
            )));
        }
        seen[color] = true;
        if list.trim().is_empty() {
            continue; // A side without pieces.
        }
        for token in list.split(',') {
            let token = token.trim();
            let (king, squares) = match token.strip_prefix('K') {
                Some(rest) => (true, rest),
                None => (false, token),
            };
            let (lo, hi) = match squares.split_once('-') {
                Some((a, b)) => (parse_square(text, a, token), parse_square(text, b, token)),
                None => (
                    parse_square(text, squares, token),
                    parse_square(text, squares, token),
                ),
            };
            let (lo, hi) = (lo?, hi?);
            if lo > hi {
                return Err(err(format!("range {token:?} runs backwards")));
            }
            for sq in lo..=hi {
                let bit = 1u32 << internal_square(sq);
                if (men[0] | men[1] | kings[0] | kings[1]) & bit != 0 {
                    return Err(err(format!("square {sq} (in {token:?}) is given twice")));
                }
                if king {
                    kings[color] |= bit;
                } else {
                    men[color] |= bit;
                }
            }
        }
    }
    let board = Position::from_pieces(men[0], men[1], kings[0], kings[1]).map_err(|e| {
        use crate::board::PositionError as E;
        err(match e {
            E::BlackManOnCrownRank(s) => format!(
                "black man on square {} would have been crowned (write it as K{})",
                standard_square(s),
                standard_square(s)
            ),
            E::WhiteManOnCrownRank(s) => format!(
                "white man on square {} would have been crowned (write it as K{})",
                standard_square(s),
                standard_square(s)
            ),
            other => other.to_string(),
        })
    })?;
    Ok(Setup { board, to_move })
}

/// The square number `text` of the entry `token` of the FEN `fen`.
fn parse_square(fen: &str, text: &str, token: &str) -> Result<u32, FenError> {
    let err = |message: String| FenError {
        fen: fen.to_string(),
        message,
    };
    let digits = text.trim();
    if token.is_empty() {
        return Err(err(
            "empty entry in a square list (stray comma?)".to_string()
        ));
    }
    // Digits only: Rust's integer parser would also take a sign ("+18").
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(err(format!(
            "{token:?} is not a square number, 'K' + square, or a range"
        )));
    }
    let n: u32 = digits.parse().unwrap_or(u32::MAX);
    if !(1..=32).contains(&n) {
        return Err(err(format!(
            "square {digits} (in {token:?}) is outside 1..32"
        )));
    }
    Ok(n)
}

/// Canonical FEN of a setup.
pub fn format_fen(setup: &Setup) -> String {
    let b = &setup.board;
    let mut out = String::with_capacity(64);
    out.push(match setup.to_move {
        Color::Black => 'B',
        Color::White => 'W',
    });
    for (letter, men, kings) in [
        ('W', b.white_men(), b.white_kings()),
        ('B', b.black_men(), b.black_kings()),
    ] {
        out.push(':');
        out.push(letter);
        let mut first = true;
        for (prefix, set) in [("", men), ("K", kings)] {
            let mut squares: Vec<u32> = bits(set).map(standard_square).collect();
            squares.sort_unstable();
            for sq in squares {
                if !first {
                    out.push(',');
                }
                first = false;
                out.push_str(prefix);
                out.push_str(&sq.to_string());
            }
        }
    }
    out
}

/// FEN of a Black-to-move position.
pub fn position_fen(pos: &Position) -> String {
    format_fen(&Setup {
        board: *pos,
        to_move: Color::Black,
    })
}

/// The set squares of a bitboard, ascending.
pub fn bits(mut set: u32) -> impl Iterator<Item = u32> {
    std::iter::from_fn(move || {
        if set == 0 {
            None
        } else {
            let s = set.trailing_zeros();
            set &= set - 1;
            Some(s)
        }
    })
}

impl std::str::FromStr for Setup {
    type Err = FenError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_fen(s)
    }
}

impl fmt::Display for Setup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_fen(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn square_mapping() {
        assert_eq!(internal_square(1), 3);
        assert_eq!(internal_square(4), 0);
        assert_eq!(internal_square(5), 7);
        assert_eq!(internal_square(32), 28);
        for s in 1..=32 {
            assert_eq!(standard_square(internal_square(s)), s);
        }
    }

    #[test]
    fn opening_fen() {
        let s = parse_fen("B:B1-12:W21-32").unwrap();
        assert_eq!(s, Setup::opening());
        assert_eq!(
            format_fen(&s),
            "B:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12"
        );
    }

    #[test]
    fn example_from_design() {
        let s = parse_fen("B:W18,K12:B3,5").unwrap();
        assert_eq!(format_fen(&s), "B:W18,K12:B3,5");
        assert_eq!(s.to_move, Color::Black);
        assert_eq!(s.board.white_kings(), 1 << internal_square(12));
    }

    #[test]
    fn errors_name_the_token() {
        for (fen, needle) in [
            ("X:W18:B3", "\"X\""),
            ("B:W18:B3:W4", "3 fields"),
            ("B:W18,33:B3", "33"),
            ("B:W18,x1:B3", "\"x1\""),
            ("B:W18:B18", "square 18"),
            ("B:W18:B30", "square 30 would have been crowned"),
            ("B:W2:B3", "white man on square 2"),
            ("B:W18-12:B3", "backwards"),
            ("B:W18:W3", "appears twice"),
            ("B:Q18:B3", "\"Q18\""),
            ("", "3 fields"),
            ("B:W+18:B3", "\"+18\""),
            ("B:W18,:B3", "stray comma"),
            ("B:W:B4294967296", "square 4294967296"),
        ] {
            let e = parse_fen(fen).unwrap_err().to_string();
            assert!(e.contains(needle), "{fen}: {e}");
        }
    }
}
