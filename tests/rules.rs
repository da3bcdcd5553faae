//! The rules of English checkers, tested three ways:
//!
//! 1. the crate's move generator against an independent reference generator written on plain
//!    (row, column) coordinates (tests/common/reference.rs), on every 2- and 3-piece position
//!    and on 200,000 random positions, for both colours to move (White through
//!    `Position::reversed`);
//! 2. hand-analysed positions, one or more per rule, with the exact expected move lists;
//! 3. Aart Bik's published perft figures from the opening.
//!
//! Board diagram used in the comments (standard numbering, Black's side at the bottom; Black
//! men move up, towards larger numbers; White men move down):
//!
//! ```text
//! row 7     32  31  30  29        columns 1,3,5,7
//! row 6   28  27  26  25          columns 0,2,4,6
//! row 5     24  23  22  21
//! row 4   20  19  18  17
//! row 3     16  15  14  13
//! row 2   12  11  10   9
//! row 1      8   7   6   5
//! row 0    4   3   2   1
//! ```
//!
//! So 10's neighbours are 14, 15 above and 6, 7 below; jumping from 10 over 15 lands on 19.

use nowdb::board::perft::{perft, perft_paths};
use nowdb::board::{Move, MoveList, generate_moves, has_capture};
use nowdb::notation::{Setup, format_fen, internal_square, parse_fen, standard_square};
use nowdb::{Color, Position};
use std::collections::BTreeSet;

mod common;
use common::reference::{
    Reference, Side, XorShift, for_each_position, random_position, reference_moves,
};

// ---------------------------------------------------------------------------------------------
// Comparing the crate with the reference.
// ---------------------------------------------------------------------------------------------

fn fen(pos: &Position, to_move: Color) -> String {
    format_fen(&Setup {
        board: *pos,
        to_move,
    })
}

/// Checks one side to move: the crate's moves must give exactly the reference's boards, each
/// once, and `has_capture` must agree. `seen_from_black` turns the board after a crate move
/// (on the board the crate was given) back into a board seen from Black's side.
fn compare(pos: &Position, side: Side, to_move: Color) -> Reference {
    let want = reference_moves(pos, side);
    let black_view = match side {
        Side::Black => *pos,
        Side::White => pos.reversed(),
    };
    let seen_from_black = |p: Position| match side {
        Side::Black => p,
        Side::White => p.reversed(),
    };
    let mut list = MoveList::new();
    generate_moves(&black_view, &mut list);
    let got: BTreeSet<Position> = list
        .iter()
        .map(|m| seen_from_black(black_view.play(m)))
        .collect();
    let f = || fen(pos, to_move);
    assert_eq!(got, want.results, "move sets differ in {}", f());
    assert_eq!(list.len(), got.len(), "a board listed twice in {}", f());
    assert_eq!(
        has_capture(&black_view),
        want.capture,
        "has_capture in {}",
        f()
    );
    want
}

/// Coverage counters, so that a test cannot pass by never meeting the hard cases.
#[derive(Default, Debug)]
struct Coverage {
    positions: usize,
    captures: usize,
    circular: usize,
    crowned_by_jump: usize,
    /// Positions where two capture paths gave the same board (listed once by the crate).
    merged: usize,
    max_captured: usize,
}

impl Coverage {
    fn add(&mut self, r: &Reference) {
        self.captures += r.capture as usize;
        self.circular += r.circular as usize;
        self.crowned_by_jump += r.crowned_by_jump as usize;
        self.merged += (r.sequences > r.results.len()) as usize;
        self.max_captured = self.max_captured.max(r.max_captured);
    }
}

/// Compares with Black to move and with White to move.
fn check_both_sides(pos: &Position, cov: &mut Coverage) {
    assert_eq!(pos.validate(), Ok(()), "test generated an illegal position");
    cov.positions += 1;
    cov.add(&compare(pos, Side::Black, Color::Black));
    cov.add(&compare(pos, Side::White, Color::White));
}

#[test]
fn every_two_and_three_piece_position_matches_reference() {
    let mut cov = Coverage::default();
    let mut count = |n| {
        let before = cov.positions;
        for_each_position(0, n, Position::default(), &mut |p| {
            check_both_sides(p, &mut cov)
        });
        cov.positions - before
    };
    // The enumeration itself is checked against the 1994 paper's Table 2: 1v1 = 3,488 and
    // 2v1 = 1v2 = 98,016 positions.
    assert_eq!(count(2), 3_488);
    assert_eq!(count(3), 2 * 98_016);
    assert!(cov.captures > 0 && cov.crowned_by_jump > 0, "{cov:?}");
    assert!(cov.max_captured >= 2, "{cov:?}");
}

#[test]
fn random_positions_match_reference() {
    let mut rng = XorShift::new(0x9E37_79B9_7F4A_7C15);
    let mut cov = Coverage::default();
    for _ in 0..200_000 {
        check_both_sides(&random_position(&mut rng), &mut cov);
    }
    // The sample must reach the cases the rules single out.
    assert!(cov.circular > 0, "no circular king capture: {cov:?}");
    assert!(cov.merged > 0, "no two paths to the same board: {cov:?}");
    assert!(cov.crowned_by_jump > 0, "no man crowned by a jump: {cov:?}");
    assert!(cov.max_captured >= 5, "no long multi-jump: {cov:?}");
}

// ---------------------------------------------------------------------------------------------
// Hand-analysed positions. Moves are written in standard numbering as the side to move sees
// them: "9-14" for a step, "10x19(15)" for a capture with the captured squares in brackets,
// and "=K" when a man is crowned.
// ---------------------------------------------------------------------------------------------

fn describe(m: &Move) -> String {
    let sq = |s: u8| standard_square(s as u32);
    let mut text = if m.captures == 0 {
        format!("{}-{}", sq(m.from), sq(m.to))
    } else {
        let mut taken: Vec<u32> = (0..32u8)
            .filter(|&s| m.captures & (1 << s) != 0)
            .map(sq)
            .collect();
        taken.sort_unstable();
        let taken: Vec<String> = taken.iter().map(u32::to_string).collect();
        format!("{}x{}({})", sq(m.from), sq(m.to), taken.join(","))
    };
    if m.crowns {
        text.push_str("=K");
    }
    text
}

/// The crate's moves for the side to move in `text`, on the real board (White's moves are
/// generated on the reversed board and mapped back with `Move::reversed`). Also checks the
/// position against the reference generator, and that no move is listed twice.
fn moves(text: &str) -> BTreeSet<String> {
    let setup = parse_fen(text).unwrap();
    let side = match setup.to_move {
        Color::Black => Side::Black,
        Color::White => Side::White,
    };
    compare(&setup.board, side, setup.to_move);
    let mut list = MoveList::new();
    generate_moves(&setup.black_to_move(), &mut list);
    let listed: Vec<String> = list
        .iter()
        .map(|m| match setup.to_move {
            Color::Black => describe(m),
            Color::White => describe(&m.reversed()),
        })
        .collect();
    let set: BTreeSet<String> = listed.iter().cloned().collect();
    assert_eq!(set.len(), listed.len(), "duplicates in {text}: {listed:?}");
    set
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// The only move of the side to move in `text` (Black), with the board it leads to.
fn only_move(text: &str) -> (Move, Position) {
    let pos = parse_fen(text).unwrap().black_to_move();
    let mut list = MoveList::new();
    generate_moves(&pos, &mut list);
    assert_eq!(list.len(), 1, "{text}: {:?}", list.as_slice());
    (list.as_slice()[0], pos.play(&list.as_slice()[0]))
}

fn bit(standard: u32) -> u32 {
    1 << internal_square(standard)
}

#[test]
fn capture_is_compulsory() {
    // Black man 10 can jump 15 (landing on 19). The steps 10-14 and 1-5, 1-6 are then illegal.
    assert_eq!(moves("B:W15:B1,10"), set(&["10x19(15)"]));
    // The same for White, moving down: 22 jumps 18 and lands on 15; 30-25, 30-26 are illegal.
    assert_eq!(moves("W:W22,30:B18"), set(&["22x15(18)"]));
}

#[test]
fn any_capture_may_be_chosen_even_the_shorter() {
    // Black man 10; White on 14, 15 and 22.
    //   10x19 takes 15 and stops (19's forward squares 23, 24 hold nothing to jump);
    //   10x17 takes 14 and must go on over 22 to 26: 10x26 takes two.
    // Both are legal: English checkers has no majority rule.
    assert_eq!(
        moves("B:W14,15,22:B10"),
        set(&["10x19(15)", "10x26(14,22)"])
    );
}

#[test]
fn man_multi_jump_continues_to_the_end() {
    // Black man 1; White on 6, 14, 15, 23.
    //   1x10 over 6, then from 10 either over 15 to 19 and on over 23 to 26 (three pieces),
    //   or over 14 to 17, where it stops (21, 22 are empty).
    // Stopping early on 10 or 19 is not allowed.
    assert_eq!(
        moves("B:W6,14,15,23:B1"),
        set(&["1x26(6,15,23)", "1x17(6,14)"])
    );
}

#[test]
fn man_crowned_by_a_jump_stops() {
    // Black man 23 jumps 26 and lands on 30, on the last row. As a king on 30 it could go on
    // over 25 to 21, but a man crowned during a capture ends the move there.
    let text = "B:W25,26:B23";
    assert_eq!(moves(text), set(&["23x30(26)=K"]));
    let (_, after) = only_move(text);
    assert_eq!(after.black_kings(), bit(30));
    assert_eq!(after.white, bit(25), "25 must survive");
}

#[test]
fn king_circular_capture_is_listed_once() {
    // Black king 10 inside a ring of White pieces on 14, 22, 23, 15:
    //   10 x14 -> 17 x22 -> 26 x23 -> 19 x15 -> 10   (and the same ring the other way round).
    // Both directions take the same four pieces and end on 10: one move, from == to.
    let text = "B:W14,15,22,23:BK10";
    assert_eq!(moves(text), set(&["10x10(14,15,22,23)"]));
    let (m, after) = only_move(text);
    assert_eq!((m.from, m.captures.count_ones()), (m.to, 4));
    assert_eq!((after.white, after.black_kings()), (0, bit(10)));
    // The reference does find the two paths: the crate has merged them.
    let pos = parse_fen(text).unwrap().board;
    let r = reference_moves(&pos, Side::Black);
    assert_eq!((r.sequences, r.results.len()), (2, 1));
}

#[test]
fn king_jumps_backwards_and_man_does_not() {
    // A Black king on 19 jumps down over 15 to 10.
    assert_eq!(moves("B:W15:BK19"), set(&["19x10(15)"]));
    // A Black man on 19 cannot: it only steps up, to 23 or 24.
    assert_eq!(moves("B:W15:B19"), set(&["19-23", "19-24"]));
    // A White man on 15 cannot jump up over Black's 19 either: it steps down to 10 or 11.
    assert_eq!(moves("W:W15:B19"), set(&["15-10", "15-11"]));
    // A White king can.
    assert_eq!(moves("W:WK15:B19"), set(&["15x24(19)"]));
}

#[test]
fn blocked_side_has_no_move() {
    // Black on 4 (the corner) has a single neighbour, 8, held by White; the landing square 11
    // is held by White too. Neither a man nor a king there can move.
    for text in ["B:W8,11:B4", "B:W8,11:BK4"] {
        assert_eq!(moves(text), set(&[]), "{text}");
        let pos = parse_fen(text).unwrap().board;
        assert!(!has_capture(&pos));
    }
}

#[test]
fn man_crowned_by_a_step() {
    // Black man 27 steps to 31 or 32 on the last row and is crowned.
    let text = "B:W5:B27";
    assert_eq!(moves(text), set(&["27-31=K", "27-32=K"]));
    let pos = parse_fen(text).unwrap().board;
    let mut list = MoveList::new();
    generate_moves(&pos, &mut list);
    for m in &list {
        assert!(m.crowns);
        let after = pos.play(m);
        assert_eq!(after.black_kings(), 1 << m.to);
        assert_eq!(after.black_men(), 0);
    }
    // A White man on 5 steps down to 1 and is crowned there.
    assert_eq!(moves("W:W5:B12"), set(&["5-1=K"]));
    // A king reaching the last row again is not "crowned".
    assert_eq!(
        moves("B:W5:BK27"),
        set(&["27-23", "27-24", "27-31", "27-32"])
    );
}

// ---------------------------------------------------------------------------------------------
// Perft.
// ---------------------------------------------------------------------------------------------

#[test]
fn perft_from_the_opening_matches_published_figures() {
    // Aart Bik's published perft for English checkers, depths 1..=11.
    let published: [u64; 11] = [
        7, 49, 302, 1_469, 7_361, 36_768, 179_740, 845_931, 3_963_680, 18_391_564, 85_242_128,
    ];
    for (d, &want) in published.iter().enumerate() {
        let depth = d as u32 + 1;
        assert_eq!(perft(&Position::OPENING, depth), want, "depth {depth}");
    }
}

#[test]
fn perft_12_differs_from_bik_exactly_by_merged_king_paths() {
    // Bik's depth-12 figure, 388,623,673, counts every capture path ("the move generator does
    // not eliminate duplicate captures"). Counting paths reproduces it exactly; merging king
    // captures that reach the same position by two paths, as nowdb must, gives 5,674 fewer.
    let pos = Position::OPENING;
    assert_eq!(perft_paths(&pos, 12), 388_623_673);
    assert_eq!(perft(&pos, 12), 388_617_999);
}

#[test]
fn perft_with_white_to_move() {
    // White to move from the opening is the opening itself once reversed.
    let pos = parse_fen("W:W21-32:B1-12").unwrap().black_to_move();
    assert_eq!(pos, Position::OPENING);
    assert_eq!(perft(&pos, 1), 7);
    assert_eq!(perft(&pos, 4), 1_469);
}
