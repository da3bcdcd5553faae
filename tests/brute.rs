//! The brute-force solver of tests/common/brute.rs, checked on its own before it is used to
//! check the real pipeline:
//!
//! - its bitboard move generator against the reference generator (tests/common/reference.rs);
//! - every value up to 4 pieces against the values of the successors the reference generator
//!   finds: a WIN has a move to a LOSS, a LOSS has only moves to WINs, a DRAW neither;
//! - the number of positions per piece count against the published totals;
//! - symmetries of king-only positions, which the solver knows nothing about;
//! - hand-analysed positions;
//! - the kings-only solve (`solve_kings_only`, used up to 7 pieces by the ignored test of
//!   tests/pipeline_vs_brute.rs) against the full one, and its guards;
//! - the moves-to-conversion distances of tests/common/brute_mtc.rs: every one up to 4 pieces
//!   against the values and MTCs of the successors the reference generator finds, and
//!   hand-analysed positions.
//!
//! The solver covers 2..=4 pieces here (about 3 s in release on 2 cores, the MTCs 1 s more);
//! the 5-piece solve is left to the cross-check of the real pipeline (and to the ignored
//! tests at the end).

mod common;

use common::brute::{BruteDb, BruteValue, brute_moves};
use common::brute_mtc::BruteMtc;
use common::reference::{
    Cell, Side, XorShift, cell_of, for_each_position, random_position, reference_moves, square_of,
};
use nowdb::Position;
use nowdb::notation::position_fen;
use std::collections::BTreeSet;
use std::sync::OnceLock;
use std::time::Instant;

use BruteValue::{Draw, Loss, Win};

/// 2..=4 pieces, solved once and shared by the tests.
fn db() -> &'static BruteDb {
    static DB: OnceLock<BruteDb> = OnceLock::new();
    DB.get_or_init(|| BruteDb::solve(4))
}

/// The boards after each move of `side`, seen from Black's side, by the brute generator
/// (White's moves through reversal).
fn brute_results(pos: &Position, side: Side) -> BTreeSet<Position> {
    match side {
        Side::Black => brute_moves(pos).into_iter().collect(),
        Side::White => (brute_moves(&pos.reversed()).iter())
            .map(Position::reversed)
            .collect(),
    }
}

fn check_moves(pos: &Position) {
    for side in [Side::Black, Side::White] {
        let want = reference_moves(pos, side).results;
        assert_eq!(
            brute_results(pos, side),
            want,
            "{side:?} to move in {pos:?}"
        );
    }
}

#[test]
fn brute_moves_match_reference() {
    // Every 2- and 3-piece position, every seventh 4-piece one, and random crowded ones (long
    // and circular king captures, men crowned by a jump).
    for pieces in 2..=3 {
        for_each_position(0, pieces, Position::default(), &mut |p| check_moves(p));
    }
    let mut i = 0u64;
    for_each_position(0, 4, Position::default(), &mut |p| {
        i += 1;
        if i.is_multiple_of(7) {
            check_moves(p);
        }
    });
    let mut rng = XorShift::new(0x2545_F491_4F6C_DD1D);
    for _ in 0..50_000 {
        check_moves(&random_position(&mut rng));
    }
}

/// Positions of `pieces` pieces with both sides having pieces, by counting: published
/// totals minus the one-sided positions, `2 * sum over m of C(28, m) * C(32 - m, n - m)`
/// (m men off their crowning row, then the kings on the squares left).
fn two_sided_total(pieces: u64) -> u64 {
    let binom = |n: u64, k: u64| (0..k).fold(1, |c, i| c * (n - i) / (i + 1));
    // 1994 paper, Table 1.
    let published = [0, 120, 6_972, 261_224, 7_092_774, 148_688_232][pieces as usize];
    let one_side: u64 = (0..=pieces)
        .map(|m| binom(28, m) * binom(32 - m, pieces - m))
        .sum();
    published - 2 * one_side
}

/// The 1994 paper's target beyond 7 pieces, "the 4x4 subset of the 8-piece endgames": 111.4
/// billion positions (its Figure 2). The slices `--only 4v4` names hold exactly the positions
/// counted here by placing men and kings directly, with Black to move: a black man never on
/// White's back rank (squares 28..31), a white man never on Black's (0..3).
#[test]
fn four_against_four_is_the_1994_papers_111_4_billion() {
    let binom = |n: u64, k: u64| (0..k).fold(1u64, |c, i| c * (n - i) / (i + 1));
    let mut counted = 0;
    for bk in 0..=4u64 {
        for wk in 0..=4u64 {
            let (bm, wm) = (4 - bk, 4 - wk);
            // i black men on 0..3, the rest on the 24 squares both colours' men may use.
            let men: u64 = (0..=bm)
                .map(|i| {
                    let shared_free = 24 - (bm - i);
                    binom(4, i)
                        * binom(24, bm - i)
                        * (0..=wm)
                            .map(|j| binom(4, j) * binom(shared_free, wm - j))
                            .sum::<u64>()
                })
                .sum();
            let free = 32 - bm - wm;
            counted += men * binom(free, bk) * binom(free - bk, wk);
        }
    }
    let split: nowdb::Selection = "4v4".parse().unwrap();
    let indexed: u64 = split.0.iter().map(|s| s.count()).sum();
    assert_eq!(indexed, counted);
    assert_eq!(indexed, 111_378_534_401);
    assert_eq!((indexed as f64 / 1e8).round() / 10.0, 111.4);
}

#[test]
fn position_counts_match_published_totals() {
    assert_eq!(two_sided_total(1), 0);
    assert_eq!(two_sided_total(2), 3_488); // 1994 paper, Table 2: 1v1.
    assert_eq!(two_sided_total(3), 2 * 98_016);
    for pieces in 2..=4 {
        let mut seen = 0;
        db().for_each(pieces, |p, v| {
            assert_eq!(p.validate(), Ok(()));
            assert_eq!(p.piece_count(), pieces);
            assert_eq!(db().value(p), v, "for_each and value disagree on {p:?}");
            seen += 1;
        });
        assert_eq!(seen, two_sided_total(pieces as u64), "{pieces} pieces");
        // The reference's own enumeration reaches the same positions (value would panic on
        // a material the solver lacks).
        let mut enumerated = 0;
        for_each_position(0, pieces, Position::default(), &mut |p| {
            db().value(p);
            enumerated += 1;
        });
        assert_eq!(enumerated, seen, "{pieces} pieces");
    }
}

/// The value the rules give `pos`, from the values of the positions the reference
/// generator's moves lead to.
fn value_by_rules(db: &BruteDb, pos: &Position) -> BruteValue {
    let mut all_win = true;
    for after in reference_moves(pos, Side::Black).results {
        let next = after.reversed();
        let v = if next.black == 0 {
            Loss // No piece left.
        } else {
            db.value(&next)
        };
        if v == Loss {
            return Win;
        }
        all_win &= v == Win;
    }
    if all_win { Loss } else { Draw }
}

/// Checks `value_by_rules` on every `stride`-th position of `pieces` pieces, on all cores.
fn check_values(db: &BruteDb, pieces: u32, stride: usize) {
    let mut positions = Vec::new();
    let mut i = 0;
    db.for_each(pieces, |p, v| {
        if i % stride == 0 {
            positions.push((*p, v));
        }
        i += 1;
    });
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|s| {
        for chunk in positions.chunks(positions.len().div_ceil(threads)) {
            s.spawn(move || {
                for (p, v) in chunk {
                    assert_eq!(value_by_rules(db, p), *v, "{p:?}");
                }
            });
        }
    });
}

#[test]
fn every_value_agrees_with_its_successors() {
    for pieces in 2..=4 {
        check_values(db(), pieces, 1);
    }
}

#[test]
fn smaller_solves_agree() {
    // Solving fewer piece counts lays the table out differently: the values must not change.
    let small = BruteDb::solve(3);
    for pieces in 2..=3 {
        small.for_each(pieces, |p, v| assert_eq!(db().value(p), v, "{p:?}"));
    }
}

#[test]
fn kings_only_solve_agrees_with_the_full_solve() {
    // The kings-only materials, solved alone (as the 7-piece cross-check of the pipeline
    // does), lay the table out differently: every kings-only value must stay the same.
    let kings = BruteDb::solve_kings_only(4);
    let mut checked = 0;
    for pieces in 2..=4 {
        kings.for_each(pieces, |p, v| {
            assert_eq!(p.kings, p.black | p.white, "{p:?}");
            assert_eq!(db().value(p), v, "{p:?}");
            checked += 1;
        });
        db().for_each(pieces, |p, v| {
            if p.kings == p.black | p.white {
                assert_eq!(kings.value(p), v, "{p:?}");
                checked += 1;
            }
        });
    }
    // Kings-only slots whose kings do not overlap, both ways: 32 * 31 + 2 * C(32, 2) * 30 +
    // C(32, 2) * C(30, 2) + 2 * C(32, 3) * 29.
    assert_eq!(checked, 2 * (992 + 29_760 + 215_760 + 287_680));
}

#[test]
#[should_panic(expected = "not solved")]
fn a_material_outside_the_kings_only_solve_panics() {
    let kings = BruteDb::solve_kings_only(3);
    kings.value(&board(&[((0, 2), KING)], &[((5, 3), MAN)]));
}

#[test]
#[should_panic(expected = "materials not closed")]
fn a_subset_of_materials_not_closed_under_captures_panics() {
    // Four pieces but not the three-piece materials their captures lead to.
    BruteDb::solve_materials(4, |[bk, bm, wk, wm]| bk + bm + wk + wm == 4);
}

/// A board from (row, column) cells, rows counted from Black's side (Black men move up).
fn board(black: &[(Cell, bool)], white: &[(Cell, bool)]) -> Position {
    let mut pos = Position::default();
    for (pieces, side) in [(black, &mut pos.black), (white, &mut pos.white)] {
        for &(cell, king) in pieces {
            let bit = 1 << square_of(cell);
            *side |= bit;
            pos.kings |= if king { bit } else { 0 };
        }
    }
    pos
}

const KING: bool = true;
const MAN: bool = false;

/// The value of `pos` with White to move.
fn white_to_move(pos: &Position) -> BruteValue {
    db().value(&pos.reversed())
}

#[test]
fn two_kings_against_one() {
    // Black kings on the back row, the White king far away: the two kings win.
    let pos = board(&[((0, 2), KING), ((0, 4), KING)], &[((7, 5), KING)]);
    assert_eq!(db().value(&pos), Win);
    assert_eq!(white_to_move(&pos), Loss);
    // A fork: the White king between the two Black kings, each jumpable (squares (1, 1) and
    // (5, 5) are empty) and neither able to jump it (the other king stands behind it).
    // Whichever king Black moves, White takes the other, leaving king against king.
    let pos = board(&[((2, 2), KING), ((4, 4), KING)], &[((3, 3), KING)]);
    assert_eq!(db().value(&pos), Draw);
    // Over all positions with no capture for the side to move: the two kings win but for a
    // handful of forks and corner tangles.
    let (mut two_to_move, mut two_win, mut one_to_move, mut one_loses) = (0, 0, 0, 0);
    db().for_each(3, |p, v| {
        if p.kings != p.black | p.white || reference_moves(p, Side::Black).capture {
            return;
        }
        if p.black.count_ones() == 2 {
            two_to_move += 1;
            two_win += (v == Win) as u32;
        } else {
            one_to_move += 1;
            one_loses += (v == Loss) as u32;
        }
    });
    assert!(two_to_move > 10_000 && one_to_move > 10_000);
    assert!(
        two_win > two_to_move * 99 / 100,
        "{two_win} of {two_to_move}"
    );
    assert!(
        one_loses > one_to_move * 99 / 100,
        "{one_loses} of {one_to_move}"
    );
}

#[test]
fn one_king_against_one() {
    // Each king in a double corner ((0, 6) with (1, 7); (7, 1) with (6, 0)): a draw.
    let pos = board(&[((0, 6), KING)], &[((7, 1), KING)]);
    assert_eq!(db().value(&pos), Draw);
    assert_eq!(white_to_move(&pos), Draw);
    // Adjacent kings with room behind both: the side to move takes the last piece.
    let pos = board(&[((3, 3), KING)], &[((4, 4), KING)]);
    assert_eq!(db().value(&pos), Win);
    assert_eq!(white_to_move(&pos), Win);
    // The Black king on the edge: Black can jump; White cannot (no square behind Black's
    // king) but steps to (3, 5), from where it jumps the Black king on either of its two
    // squares, (4, 6) and (2, 6).
    let pos = board(&[((3, 7), KING)], &[((4, 6), KING)]);
    assert_eq!(db().value(&pos), Win);
    assert_eq!(white_to_move(&pos), Win);
    // A king in the corner (0, 0) has one square to go to, (1, 1); with the other king on
    // (2, 2) it is jumped there at once.
    let pos = board(&[((0, 0), KING)], &[((2, 2), KING)]);
    assert_eq!(db().value(&pos), Loss);
    // Over all king-against-king positions: a capture always wins, and traps like the two
    // above make up the other decided ones (a lone king away from the double corners can be
    // hunted down), so that draws are the majority but far from all.
    let mut c = [0; 3];
    db().for_each(2, |p, v| {
        if p.kings == p.black | p.white {
            if reference_moves(p, Side::Black).capture {
                assert_eq!(v, Win, "{p:?}");
            }
            c[v as usize] += 1;
        }
    });
    assert_eq!(c.iter().sum::<u32>(), 32 * 31);
    assert!(c[0] > 72 && c[1] > 0 && c[2] > 32 * 31 / 2, "{c:?}");
}

#[test]
fn a_side_without_a_move_loses() {
    // A Black man in the corner (0, 0): its only forward square (1, 1) is held by White and
    // the square behind it, (2, 2), too.
    let pos = board(&[((0, 0), MAN)], &[((1, 1), MAN), ((2, 2), MAN)]);
    assert!(reference_moves(&pos, Side::Black).results.is_empty());
    assert_eq!(db().value(&pos), Loss);
    // A king there has the same single neighbour.
    let pos = board(&[((0, 0), KING)], &[((1, 1), MAN), ((2, 2), MAN)]);
    assert_eq!(db().value(&pos), Loss);
}

#[test]
fn a_forced_capture_can_lose() {
    // The Black king on (2, 2) must jump (3, 3) and land on (4, 4); it cannot go on over
    // (5, 5), since (6, 6) is held. White's (5, 5) then jumps it back to (3, 3): Black has
    // nothing left.
    let pos = board(
        &[((2, 2), KING)],
        &[((3, 3), KING), ((5, 5), KING), ((6, 6), KING)],
    );
    assert_eq!(db().value(&pos), Loss);
    // Without the blocker on (6, 6) the king takes both and wins.
    let pos = board(&[((2, 2), KING)], &[((3, 3), KING), ((5, 5), KING)]);
    assert_eq!(db().value(&pos), Win);
}

#[test]
fn a_man_crowned_by_a_jump_stops() {
    // The Black man on (5, 3) must jump (6, 4) and is crowned on (7, 5). As a king it could
    // go on over (6, 6) to (5, 7), taking White's last piece and winning, but the move ends
    // on crowning. Then White's king steps from (6, 6) to (5, 5), from where it jumps the new
    // king on either of its two squares, (6, 4) and (6, 6): Black loses.
    let pos = board(&[((5, 3), MAN)], &[((6, 4), MAN), ((6, 6), KING)]);
    assert_eq!(db().value(&pos), Loss);
}

/// Squares under a symmetry of the board that keeps the dark squares dark.
fn map(pos: &Position, f: impl Fn(Cell) -> Cell) -> Position {
    let image = |set: u32| {
        (0..32)
            .filter(|s| set & (1 << s) != 0)
            .map(|s| 1 << square_of(f(cell_of(s))))
            .fold(0, |a, b| a | b)
    };
    Position {
        black: image(pos.black),
        white: image(pos.white),
        kings: image(pos.kings),
    }
}

/// The symmetries of the board that keep dark squares dark: the two diagonal reflections and
/// the half turn.
const SYMMETRIES: [fn(Cell) -> Cell; 3] = [
    |(r, c)| (c, r),
    |(r, c)| (7 - c, 7 - r),
    |(r, c)| (7 - r, 7 - c),
];

#[test]
fn king_positions_are_symmetric() {
    // Kings move alike in all four directions, so a king-only position has the value of its
    // images under the board's symmetries that keep dark squares dark: the two diagonal
    // reflections and the half turn (the colours stay, Black still moves).
    let mut checked = 0;
    for pieces in 2..=4 {
        db().for_each(pieces, |p, v| {
            if p.kings != p.black | p.white {
                return;
            }
            for f in SYMMETRIES {
                assert_eq!(db().value(&map(p, f)), v, "{p:?}");
            }
            checked += 1;
        });
    }
    // 2 kings: 32 * 31; 3: 2 * C(32, 2) * 30; 4: C(32, 2) * C(30, 2) + 2 * C(32, 3) * 29.
    assert_eq!(checked, 992 + 29_760 + 215_760 + 287_680);
}

/// Win, loss and draw counts per piece count.
fn counts(db: &BruteDb, pieces: u32) -> [u64; 3] {
    let mut c = [0; 3];
    db.for_each(pieces, |_, v| c[v as usize] += 1);
    c
}

#[test]
fn counts_up_to_4_pieces() {
    // What this solver finds, recorded so that a change to it shows.
    let want: [[u64; 3]; 3] = [
        [716, 402, 2_370],
        [100_250, 87_305, 8_477],
        [2_574_304, 1_917_090, 1_717_922],
    ];
    for pieces in 2..=4 {
        assert_eq!(counts(db(), pieces), want[pieces as usize - 2], "{pieces}");
    }
}

#[test]
#[ignore = "about 2 minutes on 2 cores; run with --ignored --nocapture"]
fn five_pieces() {
    let start = Instant::now();
    let db = BruteDb::solve(5);
    eprintln!("solve(5): {:.1?}", start.elapsed());
    for pieces in 2..=5 {
        let c = counts(&db, pieces);
        eprintln!("{pieces} pieces: win {} loss {} draw {}", c[0], c[1], c[2]);
        assert_eq!(c.iter().sum::<u64>(), two_sided_total(pieces as u64));
    }
    check_values(&db, 5, 97);
}

/// The MTCs of `db()`, computed once and shared by the tests.
fn mtc() -> &'static BruteMtc {
    static MTC: OnceLock<BruteMtc> = OnceLock::new();
    MTC.get_or_init(|| {
        let start = Instant::now();
        let mtc = BruteMtc::compute(db());
        eprintln!("BruteMtc::compute, 2..=4 pieces: {:.1?}", start.elapsed());
        mtc
    })
}

/// The MTC the definition gives `pos` (Black to move) from its value and the values and MTCs
/// of the positions the reference generator's moves lead to. A move is a conversion if it
/// captures (the reference says whether the moves are captures) or if the piece that left
/// its square was a man.
fn mtc_by_rules(db: &BruteDb, mtc: &BruteMtc, pos: &Position) -> Option<u32> {
    let moves = reference_moves(pos, Side::Black);
    // The moves' terms (None for a king move to a draw) and whether they win.
    let terms = moves.results.iter().map(|after| {
        let next = after.reversed();
        let from = pos.black & !after.black;
        let conversion = moves.capture || pos.kings & from == 0;
        let (value, distance) = if next.black == 0 {
            (Loss, Some(0)) // No piece left.
        } else {
            (db.value(&next), mtc.mtc(db, &next))
        };
        let term = if conversion {
            Some(1)
        } else {
            distance.map(|d| 1 + d)
        };
        (term, value == Loss)
    });
    match db.value(pos) {
        Win => terms
            .filter(|&(_, wins)| wins)
            .map(|(t, _)| t.expect("a lost position has an MTC"))
            .min(),
        Loss => terms
            .map(|(t, _)| t.expect("a lost position's king moves lead to wins"))
            .max()
            .or(Some(0)), // No move.
        Draw => None,
    }
}

#[test]
fn every_mtc_agrees_with_its_successors() {
    let (db, mtc) = (db(), mtc());
    for pieces in 2..=4 {
        let mut positions = Vec::new();
        mtc.for_each(db, pieces, |p, v, d| positions.push((*p, v, d)));
        assert_eq!(positions.len() as u64, two_sided_total(pieces as u64));
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        std::thread::scope(|s| {
            for chunk in positions.chunks(positions.len().div_ceil(threads)) {
                s.spawn(move || {
                    for (p, v, d) in chunk {
                        assert_eq!(d.is_some(), *v != Draw, "{v:?} {d:?} {p:?}");
                        assert_eq!(mtc.mtc(db, p), *d, "for_each and mtc disagree on {p:?}");
                        assert_eq!(mtc_by_rules(db, mtc, p), *d, "{v:?} {p:?}");
                    }
                });
            }
        });
    }
}

#[test]
fn mtc_of_hand_analysed_positions() {
    let (db, mtc) = (db(), mtc());
    let check = |pos: &Position, value, distance| {
        assert_eq!(db.value(pos), value, "{}", position_fen(pos));
        assert_eq!(mtc.mtc(db, pos), distance, "{}", position_fen(pos));
    };
    // Black takes White's last piece: one ply.
    check(&board(&[((3, 3), KING)], &[((4, 4), KING)]), Win, Some(1));
    // A Black man without a move: lost at once.
    let pos = board(&[((0, 0), MAN)], &[((1, 1), MAN), ((2, 2), MAN)]);
    check(&pos, Loss, Some(0));
    // A forced capture that loses (see a_forced_capture_can_lose): every move converts.
    let pos = board(
        &[((2, 2), KING)],
        &[((3, 3), KING), ((5, 5), KING), ((6, 6), KING)],
    );
    check(&pos, Loss, Some(1));
    // Each king in a double corner: a draw, no MTC.
    check(&board(&[((0, 6), KING)], &[((7, 1), KING)]), Draw, None);
    // Two kings against one in the single corner (7, 7), whose one neighbour is (6, 6).
    // With Black kings on (6, 6) and (5, 5) the White king can neither step nor jump: White
    // to move has lost, MTC 0.
    let trapped = board(&[((6, 6), KING), ((5, 5), KING)], &[((7, 7), KING)]);
    check(&trapped.reversed(), Loss, Some(0));
    // One king step before, (5, 7) to (6, 6): Black wins in one ply (no move is shorter).
    let pos = board(&[((5, 7), KING), ((5, 5), KING)], &[((7, 7), KING)]);
    check(&pos, Win, Some(1));
    // Black kings on (4, 4) and (5, 7), White to move: the White king's one move is to (6, 6),
    // where (5, 7) jumps it (landing on (7, 5)). White has lost: 1 + 1 = 2 plies.
    let forced = board(&[((4, 4), KING), ((5, 7), KING)], &[((7, 7), KING)]);
    check(&forced.reversed(), Loss, Some(2));
    // One step before, (4, 6) to (5, 7): 3 plies, and none shorter. A position lost for White
    // in 1 ply needs all of White's moves to convert, here its king jumping a Black king on
    // (6, 6) (no king of (4, 4) and (4, 6) gets there in one step); in 0 plies, the trap
    // above (Black on both (6, 6) and (5, 5): two steps away).
    let pos = board(&[((4, 4), KING), ((4, 6), KING)], &[((7, 7), KING)]);
    check(&pos, Win, Some(3));
}

#[test]
fn longest_mtc_up_to_4_pieces() {
    let (db, mtc) = (db(), mtc());
    for pieces in 2..=4 {
        let (d, pos) = mtc.longest(db, pieces).expect("some position is decided");
        eprintln!(
            "{pieces} pieces: longest MTC {d} plies ({:?}), {}",
            db.value(&pos),
            position_fen(&pos)
        );
        assert_eq!(mtc.mtc(db, &pos), Some(d));
        let mut most = 0;
        mtc.for_each(db, pieces, |_, _, d| most = most.max(d.unwrap_or(0)));
        assert_eq!(most, d);
        // What this computation finds, recorded so that a change to it shows.
        assert_eq!(d, [11, 34, 38][pieces as usize - 2], "{pieces} pieces");
    }
}

#[test]
fn mtc_of_kings_is_symmetric_and_independent_of_the_layout() {
    // A king-only position has the MTC of its images under the symmetries (kings move alike
    // in all four directions; see king_positions_are_symmetric). And the kings-only
    // materials solved alone, in another table layout and visiting order, give the same MTCs
    // (their moves never lead to a material with men).
    let (db, mtc) = (db(), mtc());
    let kings = BruteDb::solve_kings_only(4);
    let kings_mtc = BruteMtc::compute(&kings);
    let mut checked = 0;
    for pieces in 2..=4 {
        kings_mtc.for_each(&kings, pieces, |p, v, d| {
            assert_eq!(d.is_some(), v != Draw, "{p:?}");
            assert_eq!(mtc.mtc(db, p), d, "{p:?}");
            for f in SYMMETRIES {
                assert_eq!(mtc.mtc(db, &map(p, f)), d, "{p:?}");
            }
            checked += 1;
        });
    }
    assert_eq!(checked, 992 + 29_760 + 215_760 + 287_680);
}

#[test]
#[ignore = "about 3 minutes on 2 cores; run with --ignored mtc_five --nocapture"]
fn mtc_five_pieces() {
    let start = Instant::now();
    let db = BruteDb::solve(5);
    eprintln!("solve(5): {:.1?}", start.elapsed());
    let start = Instant::now();
    let mtc = BruteMtc::compute(&db);
    eprintln!("BruteMtc::compute, 2..=5 pieces: {:.1?}", start.elapsed());
    for pieces in 2..=5 {
        let (d, pos) = mtc.longest(&db, pieces).expect("some position is decided");
        eprintln!(
            "{pieces} pieces: longest MTC {d} plies ({:?}), {}",
            db.value(&pos),
            position_fen(&pos)
        );
        assert_eq!(d, [11, 34, 38, 60][pieces as usize - 2], "{pieces} pieces");
    }
    // The definition on every 97th 5-piece position.
    let mut i = 0u64;
    db.for_each(5, |p, _| {
        i += 1;
        if i.is_multiple_of(97) {
            assert_eq!(mtc_by_rules(&db, &mtc, p), mtc.mtc(&db, p), "{p:?}");
        }
    });
}
