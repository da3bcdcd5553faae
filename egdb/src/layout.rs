//! The two bitboard layouts of the egdb interface, turned into nowdb's position with Black
//! to move.
//!
//! nowdb numbers the squares of each row from the other end (its square 3 is standard
//! square 1): that is Cake's layout (`EGDB_ROW_REVERSED`), taken as it is. KingsRow's
//! (`EGDB_NORMAL`, bit n-1 for square n) needs the four bits of each row reversed: two
//! swaps of bit groups, a few instructions.

use crate::{Bitboard, EGDB_BLACK, EGDB_WHITE};
use nowdb::Position;
use nowdb::board::{BLACK_CROWN_RANK, WHITE_CROWN_RANK};

/// `EGDB_BITBOARD_TYPE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    Normal,
    RowReversed,
}

impl Layout {
    pub fn from_c(t: i32) -> Option<Layout> {
        match t {
            0 => Some(Layout::Normal),
            1 => Some(Layout::RowReversed),
            _ => None,
        }
    }
}

/// Reverses the order of the four bits in every nibble (standard numbering <-> nowdb's).
#[inline(always)]
pub fn reverse_rows(x: u32) -> u32 {
    let x = (x >> 1 & 0x5555_5555) | (x & 0x5555_5555) << 1;
    (x >> 2 & 0x3333_3333) | (x & 0x3333_3333) << 2
}

/// The position an engine gave, as nowdb's board with Black to move (reversed when White is
/// to move); `None` when it is not a position: a square of both colours, a man on the row
/// where it would have been crowned, or a colour other than `EGDB_BLACK`/`EGDB_WHITE`.
#[inline]
pub fn internal_position(layout: Layout, b: &Bitboard, color: i32) -> Option<Position> {
    let (black, white, kings) = match layout {
        Layout::Normal => {
            // SAFETY: every field of the union is plain integers; the caller chose this one.
            let n = unsafe { b.normal };
            (
                reverse_rows(n.black),
                reverse_rows(n.white),
                reverse_rows(n.king),
            )
        }
        Layout::RowReversed => {
            // SAFETY: as above.
            let r = unsafe { b.row_reversed };
            if r.black_man & r.black_king != 0 || r.white_man & r.white_king != 0 {
                return None;
            }
            (
                r.black_man | r.black_king,
                r.white_man | r.white_king,
                r.black_king | r.white_king,
            )
        }
    };
    let kings = kings & (black | white);
    if black & white != 0
        || black & !kings & BLACK_CROWN_RANK != 0
        || white & !kings & WHITE_CROWN_RANK != 0
    {
        return None;
    }
    let board = Position {
        black,
        white,
        kings,
    };
    match color {
        EGDB_BLACK => Some(board),
        EGDB_WHITE => Some(board.reversed()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{NormalBitboard, RowReversedBitboard};
    use nowdb::notation::internal_square;

    #[test]
    fn normal_bit_of_square_n_is_nowdbs_square() {
        for n in 1..=32 {
            assert_eq!(
                reverse_rows(1 << (n - 1)),
                1 << internal_square(n),
                "square {n}"
            );
        }
    }

    #[test]
    fn both_layouts_give_the_same_position() {
        // Black man on 10, white man on 21 (standard numbering); black king on 1.
        let sq = |n: u32| 1u32 << (n - 1);
        let normal = Bitboard {
            normal: NormalBitboard {
                black: sq(10) | sq(1),
                white: sq(21),
                king: sq(1),
            },
        };
        let isq = |n: u32| 1u32 << internal_square(n);
        let rr = Bitboard {
            row_reversed: RowReversedBitboard {
                black_man: isq(10),
                black_king: isq(1),
                white_man: isq(21),
                white_king: 0,
            },
        };
        for color in [EGDB_BLACK, EGDB_WHITE] {
            assert_eq!(
                internal_position(Layout::Normal, &normal, color),
                internal_position(Layout::RowReversed, &rr, color)
            );
        }
        let p = internal_position(Layout::Normal, &normal, EGDB_BLACK).unwrap();
        assert_eq!(p.black, isq(10) | isq(1));
        assert_eq!(p.kings, isq(1));
    }

    #[test]
    fn what_is_not_a_position_is_refused() {
        let sq = |n: u32| 1u32 << (n - 1);
        let bad = |black, white, king, color| {
            let b = Bitboard {
                normal: NormalBitboard { black, white, king },
            };
            internal_position(Layout::Normal, &b, color).is_none()
        };
        assert!(bad(sq(5), sq(5), 0, EGDB_BLACK), "a square of both colours");
        assert!(
            bad(sq(30), sq(5), 0, EGDB_BLACK),
            "a black man on White's back row"
        );
        assert!(
            bad(sq(10), sq(2), 0, EGDB_BLACK),
            "a white man on Black's back row"
        );
        assert!(
            !bad(sq(30), sq(2), sq(30) | sq(2), EGDB_BLACK),
            "kings may stand there"
        );
        assert!(bad(sq(10), sq(20), 0, 2), "colour 2");
    }
}
