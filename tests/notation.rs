//! PDN FEN notation, square numbering and reversal.
//!
//! 1. Round trips on random legal setups: canonical printing is parsed back exactly, and every
//!    other spelling of the same FEN the parser promises to accept (colours swapped, extra
//!    spaces, ranges, tokens in any order, `[FEN "..."]` wrapper, trailing '.') means the same.
//! 2. Reversal (rotate 180 degrees, swap colours) on random positions: an involution that keeps
//!    legality and maps each slice to its mirror.
//! 3. The standard/internal square mapping, pinned by facts about the real board rather than by
//!    restating the formula (single corners, Black's seven opening moves).
//! 4. Robustness: arbitrary strings never panic the parser, and bad FENs are rejected with a
//!    message naming the bad token (checked on `FenError::message`, not on `Display`, because
//!    `Display` echoes the whole input and would contain any token trivially).

use nowdb::board::{MoveList, column_of, generate_moves, rank_of};
use nowdb::notation::{
    Setup, format_fen, internal_square, parse_fen, position_fen, standard_square,
};
use nowdb::{Color, Position, Slice};
use proptest::prelude::*;

// ---------------------------------------------------------------------------------------------
// Strategies
// ---------------------------------------------------------------------------------------------

/// A random legal position: 0..=12 pieces a side on distinct squares, random kings, and every
/// piece standing on its own crowning rank made a king (men are never there).
fn arb_position() -> impl Strategy<Value = Position> {
    // King density varies: none, about half, about a quarter, so men-only and king-heavy
    // positions both occur often.
    let quarter = (any::<u32>(), any::<u32>()).prop_map(|(a, b)| a & b);
    let kings = prop_oneof![Just(0u32), any::<u32>(), quarter];
    let squares = Just((0u32..32).collect::<Vec<u32>>()).prop_shuffle();
    (squares, 0usize..=12, 0usize..=12, kings).prop_map(|(squares, nb, nw, king_bits)| {
        let set = |s: &[u32]| s.iter().fold(0u32, |a, &q| a | 1 << q);
        let black = set(&squares[..nb]);
        let white = set(&squares[nb..nb + nw]);
        // Black is crowned on internal 28..31, White on 0..3.
        let forced = (black & 0xF000_0000) | (white & 0x0000_000F);
        let kings = (king_bits & (black | white)) | forced;
        Position {
            black,
            white,
            kings,
        }
    })
}

fn arb_setup() -> impl Strategy<Value = Setup> {
    (arb_position(), any::<bool>()).prop_map(|(board, white)| Setup {
        board,
        to_move: if white { Color::White } else { Color::Black },
    })
}

/// How to spell a setup in a non-canonical but valid way (all false/0: canonical).
#[derive(Clone, Copy, Debug, Default)]
struct Spelling {
    black_first: bool,
    spaces: bool,
    ranges: bool,
    wrapper: bool,
    trailing_dot: bool,
    /// Seed for shuffling the tokens within each colour (0 = keep the order).
    shuffle: u64,
}

fn arb_spelling() -> impl Strategy<Value = Spelling> {
    let seed = prop_oneof![Just(0u64), any::<u64>()];
    (any::<[bool; 5]>(), seed).prop_map(|([a, b, c, d, e], shuffle)| Spelling {
        black_first: a,
        spaces: b,
        ranges: c,
        wrapper: d,
        trailing_dot: e,
        shuffle,
    })
}

/// Standard squares (ascending) of an internal-square bitboard.
fn squares_of(set: u32) -> Vec<u32> {
    let mut v: Vec<u32> = (0..32)
        .filter(|s| set & 1 << s != 0)
        .map(standard_square)
        .collect();
    v.sort_unstable();
    v
}

/// Tokens for one kind of piece: single squares, or `a-b` for runs of consecutive numbers.
fn tokens(prefix: &str, squares: &[u32], ranges: bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < squares.len() {
        let mut j = i;
        while ranges && j + 1 < squares.len() && squares[j + 1] == squares[j] + 1 {
            j += 1;
        }
        out.push(if j > i {
            format!("{prefix}{}-{}", squares[i], squares[j])
        } else {
            format!("{prefix}{}", squares[i])
        });
        i = j + 1;
    }
    out
}

/// Writes a FEN by hand from the bitboards (not through `format_fen`), in the given spelling.
fn spell(setup: &Setup, how: Spelling) -> String {
    let b = &setup.board;
    let colour = |letter: char, men: u32, kings: u32, salt: u64| {
        let mut t = tokens("", &squares_of(men), how.ranges);
        t.extend(tokens("K", &squares_of(kings), how.ranges));
        if how.shuffle != 0 {
            // Fisher-Yates driven by a xorshift generator: deterministic for a given seed.
            let mut rng = nowdb::rng::XorShift::new(how.shuffle ^ salt | 1);
            for i in (1..t.len()).rev() {
                t.swap(i, rng.below(i as u64 + 1) as usize);
            }
        }
        let sep = if how.spaces { " ,  " } else { "," };
        format!("{letter}{}", t.join(sep))
    };
    let white = colour('W', b.white & !b.kings, b.white & b.kings, 1);
    let black = colour('B', b.black & !b.kings, b.black & b.kings, 2);
    let side = ["B", "W"][(setup.to_move == Color::White) as usize];
    let (first, second) = if how.black_first {
        (black, white)
    } else {
        (white, black)
    };
    let colon = if how.spaces { " : " } else { ":" };
    let mut fen = format!("{side}{colon}{first}{colon}{second}");
    if how.trailing_dot {
        fen.push('.');
    }
    if how.wrapper {
        fen = format!("[FEN \"{fen}\"]");
    }
    fen
}

// ---------------------------------------------------------------------------------------------
// Round trips
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn canonical_fen_round_trips(s in arb_setup()) {
        let fen = format_fen(&s);
        prop_assert_eq!(parse_fen(&fen), Ok(s), "{}", fen);
        prop_assert_eq!(format_fen(&parse_fen(&fen).unwrap()), fen.clone());
        // The Display/FromStr pair is the same thing under another name.
        prop_assert_eq!(s.to_string(), fen.clone());
        prop_assert_eq!(fen.parse::<Setup>(), Ok(s));
        // The canonical form is also what a hand-written canonical spelling produces.
        prop_assert_eq!(spell(&s, Spelling::default()), fen);
    }

    #[test]
    fn every_accepted_spelling_means_the_same(s in arb_setup(), how in arb_spelling()) {
        let fen = spell(&s, how);
        prop_assert_eq!(parse_fen(&fen), Ok(s), "{}", fen);
    }

    #[test]
    fn position_fen_is_black_to_move(p in arb_position()) {
        let fen = position_fen(&p);
        prop_assert!(fen.starts_with("B:"), "{}", fen);
        prop_assert_eq!(parse_fen(&fen).map(|s| s.black_to_move()), Ok(p));
    }
}

// ---------------------------------------------------------------------------------------------
// Reversal
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn reversal_is_a_legal_involution_that_mirrors_slices(p in arb_position()) {
        prop_assert_eq!(p.validate(), Ok(()));
        let r = p.reversed();
        prop_assert_eq!(r.reversed(), p);
        prop_assert_eq!(r.validate(), Ok(()), "{:?}", r);
        prop_assert_eq!(r.black.count_ones(), p.white.count_ones());
        prop_assert_eq!(r.white.count_ones(), p.black.count_ones());
        prop_assert_eq!(r.black_kings().count_ones(), p.white_kings().count_ones());
        prop_assert_eq!(r.white_kings().count_ones(), p.black_kings().count_ones());
        // Holds even when a side has no pieces (its rank is '-' on both sides of the mirror).
        prop_assert_eq!(Slice::of(&r), Slice::of(&p).mirror());
        // White to move is stored as the reversed board with Black to move.
        let white = Setup { board: p, to_move: Color::White };
        prop_assert_eq!(white.black_to_move(), r);
        prop_assert_eq!(Setup { board: p, to_move: Color::Black }.black_to_move(), p);
        // In standard numbers the rotation is `s -> 33 - s`: a white piece on `s` becomes a
        // black piece of the same kind on `33 - s`, and vice versa.
        for (after, before) in [(r.black_men(), p.white_men()), (r.black_kings(), p.white_kings()),
                                (r.white_men(), p.black_men()), (r.white_kings(), p.black_kings())] {
            let mut rotated: Vec<u32> = squares_of(before).iter().map(|s| 33 - s).collect();
            rotated.sort_unstable();
            prop_assert_eq!(squares_of(after), rotated);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Square numbering
// ---------------------------------------------------------------------------------------------

#[test]
fn square_mapping_is_a_bijection() {
    let mut seen = [false; 32];
    for s in 1..=32 {
        let i = internal_square(s);
        assert!(i < 32, "standard {s} -> internal {i}");
        assert!(!seen[i as usize], "internal {i} hit twice");
        seen[i as usize] = true;
        assert_eq!(standard_square(i), s);
        // Standard numbers go four to a rank, rank 0 (1..4) on Black's side.
        assert_eq!(rank_of(i), (s - 1) / 4, "standard {s}");
    }
    for i in 0..32 {
        assert_eq!(internal_square(standard_square(i)), i);
    }
}

#[test]
fn square_mapping_matches_the_real_board() {
    // The single corners (the board's two corner squares) are 4 and 29; the double corners
    // are the diagonally adjacent pairs 1-5 and 28-32.
    let at = |s: u32| (rank_of(internal_square(s)), column_of(internal_square(s)));
    assert_eq!(at(4), (0, 0));
    assert_eq!(at(29), (7, 7));
    for (a, b) in [(1, 5), (28, 32)] {
        let ((ra, ca), (rb, cb)) = (at(a), at(b));
        assert_eq!((ra.abs_diff(rb), ca.abs_diff(cb)), (1, 1), "{a}-{b}");
        assert!(
            [ca, cb].contains(&0) || [ca, cb].contains(&7),
            "{a}-{b} on an edge"
        );
    }
    // Black's seven opening moves, as every checkers book writes them.
    let mut list = MoveList::new();
    generate_moves(&Position::OPENING, &mut list);
    let mut moves: Vec<(u32, u32)> = list
        .iter()
        .map(|m| (standard_square(m.from as u32), standard_square(m.to as u32)))
        .collect();
    moves.sort_unstable();
    let book = [
        (9, 13),
        (9, 14),
        (10, 14),
        (10, 15),
        (11, 15),
        (11, 16),
        (12, 16),
    ];
    assert_eq!(moves, book);
}

#[test]
fn opening_position() {
    let s = parse_fen("B:B1-12:W21-32").unwrap();
    assert_eq!(s, Setup::opening());
    assert_eq!(s.board, Position::OPENING);
    assert_eq!(s.board.black, 0x0000_0FFF, "black on internal 0..11");
    assert_eq!(s.board.white, 0xFFF0_0000, "white on internal 20..31");
    assert_eq!(s.board.kings, 0);
    assert_eq!(
        format_fen(&s),
        "B:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12"
    );
    // The opening is its own reversal, so White to move there is the same stored position.
    let w = parse_fen("W:W21-32:B1-12").unwrap();
    assert_eq!(w.black_to_move(), Position::OPENING);
}

#[test]
fn documented_leniencies_are_accepted() {
    let want = parse_fen("B:W18,K12:B3,5").unwrap();
    for fen in [
        "B:W18,K12:B3,5",
        "B:B3,5:W18,K12",
        "B:WK12,18:B5,3",
        "  B : W 18 , K12 : B 3,5  ",
        "B:W18,K12:B3,5.",
        "[FEN \"B:W18,K12:B3,5\"]",
        "[FEN \"B:W18,K12:B3,5.\"]",
        "\tB:W18,K12:B3-3,5\n",
    ] {
        assert_eq!(parse_fen(fen), Ok(want), "{fen:?}");
    }
    assert_eq!(want.board.white_kings(), 1 << internal_square(12));
    // A side may have no pieces: an empty colour list, for either colour or both.
    let lone = parse_fen("B:W:BK1").unwrap();
    let (white, black) = (lone.board.white, lone.board.black);
    assert_eq!((white, black), (0, 1 << internal_square(1)));
    assert_eq!(format_fen(&lone), "B:W:BK1");
    assert_eq!(parse_fen("W:WK32:B").unwrap().board.black, 0);
    assert_eq!(parse_fen("B:W:B").unwrap().board, Position::default());
    // Kings may be given as a range.
    let kings = parse_fen("W:WK1-3:BK29-32").unwrap().board.kings;
    assert_eq!(kings.count_ones(), 7);
}

// ---------------------------------------------------------------------------------------------
// Robustness and error messages
// ---------------------------------------------------------------------------------------------

/// Whatever the parser accepts must be a legal setup that survives a canonical round trip.
fn check_no_panic(text: &str) -> Result<(), TestCaseError> {
    if let Ok(s) = parse_fen(text) {
        prop_assert_eq!(s.board.validate(), Ok(()), "{:?}", text);
        prop_assert_eq!(parse_fen(&format_fen(&s)), Ok(s), "{:?}", text);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn arbitrary_strings_never_panic(text in any::<String>()) {
        check_no_panic(&text)?;
    }

    /// Garbage from the FEN alphabet reaches much deeper into the parser than random Unicode.
    #[test]
    fn fen_alphabet_garbage_never_panics(text in "[BWK0-9,:. \\-\\[\\]\"FEN+é]{0,40}") {
        check_no_panic(&text)?;
    }

    /// A valid FEN with one character deleted, replaced or inserted.
    #[test]
    fn mutated_fens_never_panic(
        s in arb_setup(),
        pos in any::<prop::sample::Index>(),
        op in 0..3u8,
        c in prop::sample::select(vec!['B', 'W', 'K', ':', ',', '-', '0', '3', '9', ' ', 'é']),
    ) {
        let mut chars: Vec<char> = format_fen(&s).chars().collect();
        let i = pos.index(chars.len());
        match op {
            0 => { chars.remove(i); }
            1 => chars[i] = c,
            _ => chars.insert(i, c),
        }
        check_no_panic(&chars.into_iter().collect::<String>())?;
    }
}

#[test]
fn bad_fens_name_the_offending_token() {
    let mut cases: Vec<(String, Vec<String>)> = Vec::new();
    let mut case = |fen: &str, needles: &[&str]| {
        cases.push((fen.into(), needles.iter().map(|n| n.to_string()).collect()));
    };
    case("X:W18:B3", &["\"X\"", "side to move"]);
    case("b:W18:B3", &["\"b\""]);
    case("B:W18", &["3 fields", "found 2"]);
    case("B:W18:B3:W4", &["3 fields", "found 4"]);
    case("B:W18:B3:", &["found 4"]);
    case("", &["found 1"]);
    case("B:W18,0:B3", &["square 0", "\"0\"", "1..32"]);
    case("B:W18,33:B3", &["square 33", "\"33\"", "1..32"]);
    case("B:W18:BK33", &["square 33", "\"K33\""]);
    case("B:W18,x1:B3", &["\"x1\""]);
    case("B:W18:B3,5a", &["\"5a\""]);
    case("B:W18:B3 5", &["\"3 5\""]);
    case("B:W18:B1-x", &["\"1-x\""]);
    case("B:W18:BK", &["\"K\""]);
    case("B:W18:B18", &["square 18", "twice"]);
    case("B:W18:B3,3", &["square 3", "twice"]);
    case("B:W18:B3,K3", &["square 3", "\"K3\"", "twice"]);
    case("B:W18:B1-4,3", &["square 3", "twice"]);
    case("B:W20-32:B1", &["White", "13 pieces", "at most 12"]);
    case("B:W32:B1-13", &["Black", "13 pieces", "at most 12"]);
    case("B:W:B12-9", &["\"12-9\"", "backwards"]);
    case("B:W18:W3", &["W appears twice"]);
    case("B:B18:B3", &["B appears twice"]);
    case("B:Q18:B3", &["\"Q18\""]);
    case("B:W18:3", &["\"3\"", "'B' or 'W'"]);
    case("[FEN B:W18:B3]", &["double quotes"]);
    // Men on their crowning rank: the message names the square and says how to write it.
    for (s, fen, who) in (29..=32)
        .map(|s| (s, format!("B:W18:B{s}"), "black"))
        .chain((1..=4).map(|s| (s, format!("W:W{s}:B18"), "white")))
    {
        case(
            &fen,
            &[&format!("{who} man on square {s}"), &format!("K{s}")],
        );
    }
    for (fen, needles) in &cases {
        let e = match parse_fen(fen) {
            Ok(s) => panic!("{fen:?} was accepted as {s}"),
            Err(e) => e,
        };
        assert_eq!(&e.fen, fen, "the error keeps the input");
        for needle in needles {
            assert!(
                e.message.contains(needle.as_str()),
                "{fen:?}: message {:?} lacks {needle:?}",
                e.message
            );
        }
        // Display shows the input and the reason, for a one-line CLI error.
        let shown = e.to_string();
        assert_eq!(shown, format!("bad FEN {fen:?}: {}", e.message));
    }
}
