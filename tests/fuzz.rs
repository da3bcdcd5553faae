//! Mutation fuzzing that runs in every test pass: the database decoder fed damaged files,
//! the FEN parser fed random text, and the explorer's API (`dbserve`) fed random query
//! strings. None may panic, and a damaged database may fail but never answer wrongly.

mod common;

use nowdb::db::format::SliceFile;
use nowdb::db::removed::{Kind, classify};
use nowdb::rng::XorShift;
use nowdb::solve::Site;
use nowdb::solve::solved::SolvedSlice;
use nowdb::{Setup, Slice, SliceIndex};

#[test]
fn damaged_database_files_fail_cleanly_and_never_answer_wrongly() {
    let dir = common::fixture::scratch_path("fuzz", "db");
    let site = Site::new(&dir);
    common::site::build(&dir, 4, |o| o.only = vec!["2101.-5".parse().unwrap()]);
    let slice: Slice = "2101.-5".parse().unwrap();
    let ix = SliceIndex::new(slice);
    let solved = SolvedSlice::load(&site, slice).unwrap();
    let stored: Vec<u64> = (0..ix.count())
        .filter(|&i| classify(&ix.position_unchecked(i)) == Kind::Stored)
        .collect();
    let original = std::fs::read(site.db_dir().join(format!("{slice}.ndb"))).unwrap();
    assert!(original.len() > 2048, "want a file of several blocks");
    // The name the mutants go by in errors.
    let path = dir.join("mutant.ndb");
    let mut rng = XorShift::new(0x9E37_79B9_7F4A_7C15);
    let (mut refused, mut answered) = (0, 0);
    for round in 0..400 {
        let mut bytes = original.clone();
        match round % 4 {
            // A few random bytes anywhere.
            0 | 1 => {
                for _ in 0..1 + rng.below(4) {
                    let at = rng.below(bytes.len() as u64) as usize;
                    bytes[at] ^= 1 + rng.below(255) as u8;
                }
            }
            // One bit.
            2 => {
                let at = rng.below(bytes.len() as u64) as usize;
                bytes[at] ^= 1 << rng.below(8);
            }
            // Truncated or extended.
            _ => {
                let len = rng.below(bytes.len() as u64 + 64) as usize;
                bytes.resize(len, 0);
            }
        }
        // Read from memory: no temporary file per mutant.
        let Ok(f) = SliceFile::from_bytes(&path, &slice, bytes) else {
            refused += 1;
            continue;
        };
        for &i in stored.iter().step_by(7) {
            let b = f.block_of(i);
            let Ok(block) = f.read_block(b) else {
                refused += 1;
                continue;
            };
            if let Ok((v, _, _)) = f.run_in_block(&block, b, i) {
                answered += 1;
                assert_eq!(
                    v,
                    solved.get(i),
                    "round {round}: position {i} answered wrongly"
                );
            }
        }
    }
    assert!(
        refused > 100 && answered > 1000,
        "refused {refused}, answered {answered}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Round `round`'s text: random characters of `alphabet` (even rounds), or one of `seeds`
/// with up to three characters replaced, inserted or removed (odd rounds).
fn mutant(round: u64, rng: &mut XorShift, alphabet: &[u8], seeds: &[&str]) -> String {
    let pick = |rng: &mut XorShift| alphabet[rng.below(alphabet.len() as u64) as usize];
    let mut bytes: Vec<u8> = if round.is_multiple_of(2) {
        (0..rng.below(24)).map(|_| pick(rng)).collect()
    } else {
        seeds[(round / 2 % seeds.len() as u64) as usize]
            .as_bytes()
            .to_vec()
    };
    if round % 2 == 1 {
        for _ in 0..1 + rng.below(3) {
            let at = rng.below(bytes.len() as u64 + 1) as usize;
            match rng.below(3) {
                0 if at < bytes.len() => bytes[at] = pick(rng),
                1 => bytes.insert(at, pick(rng)),
                _ if at < bytes.len() => {
                    bytes.remove(at);
                }
                _ => {}
            }
        }
    }
    String::from_utf8(bytes).unwrap()
}

const FEN_ALPHABET: &[u8] = b"BWK:,-.x0123456789 12-32\t";

#[test]
fn random_text_never_panics_the_fen_parser() {
    let mut rng = XorShift::new(0x2545_F491_4F6C_DD1D);
    let seeds = [
        "B:W18,K12:B3,5",
        "W:W21-32:B1-12",
        "B:WK1,K2:BK32",
        "W:W9:B",
    ];
    let mut parsed = 0;
    for round in 0..200_000u64 {
        let text = mutant(round, &mut rng, FEN_ALPHABET, &seeds);
        if let Ok(setup) = text.parse::<Setup>() {
            parsed += 1;
            let again: Setup = nowdb::notation::format_fen(&setup).parse().unwrap();
            assert_eq!(again, setup, "{text:?}");
        }
    }
    assert!(parsed > 0);
}

/// What the explorer's API accepts, fuzzed: query strings decoded as `dbserve` decodes them,
/// then asked of a 2..4 database with distances. Nothing panics; an answer is the
/// database's value, and each refusal is the one its input calls for.
#[test]
fn random_requests_never_panic_the_explorer_api() {
    use nowdb::explorer::{Explorer, ExplorerError};
    use nowdb::http::query_param;
    let dir = common::fixture::scratch("fuzz", "explorer");
    common::site::build(&dir, 4, |o| o.mtc = true);
    let explorer = Explorer::open(&Site::new(&dir), None, 16).unwrap();
    let mut rng = XorShift::new(0x0DB5_E12E);
    let seeds = [
        "fen=B%3AW18%2CK12%3AB3%2C5",
        "fen=W:W21-32:B1-12",
        "fen=B:WK1,K2:BK32",
        "fen=W:W9:B",
        "fen=B:W18:B14&x=%FF",
        "fen=W%3AWK30%3ABK1%2CK10",
    ];
    let alphabet = b"BWK:,-.x0123456789 %2C3A+&=fenFFE";
    let (mut answered, mut refused) = (0, 0);
    for round in 0..60_000u64 {
        let query = mutant(round, &mut rng, alphabet, &seeds);
        let Ok(fen) = query_param(Some(&query), "fen") else {
            refused += 1;
            continue;
        };
        let asked = if round % 3 == 0 {
            explorer.mainline(&fen).map(|m| m.value)
        } else {
            explorer.position(&fen).map(|p| p.value)
        };
        match (asked, fen.parse::<Setup>()) {
            (Ok(value), Ok(setup)) => {
                answered += 1;
                assert_eq!(
                    value,
                    explorer.db.probe_setup(&setup).unwrap().name(),
                    "{fen}"
                );
            }
            (Ok(_), Err(e)) => panic!("{fen:?} answered though it does not parse: {e}"),
            (Err(ExplorerError::BadFen(_)), Err(_)) => refused += 1,
            (Err(ExplorerError::BadFen(m)), Ok(_)) => assert!(fen.len() > 256, "{fen}: {m}"),
            (Err(ExplorerError::GameOver(_)), Ok(s)) => {
                assert!(s.board.black == 0 || s.board.white == 0, "{fen}");
                refused += 1;
            }
            (Err(ExplorerError::NotHeld(_)), Ok(s)) => {
                assert!((s.board.black | s.board.white).count_ones() > 4, "{fen}");
                refused += 1;
            }
            (Err(e), _) => panic!("{fen:?}: {e}"),
        }
        let _ = explorer.batch(&[fen]);
    }
    assert!(
        answered > 1000 && refused > 1000,
        "answered {answered}, refused {refused}"
    );
}
