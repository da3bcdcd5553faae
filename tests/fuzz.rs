//! Mutation fuzzing that runs in every test pass: the database decoder fed damaged files,
//! and the FEN parser fed random text. Neither may panic, and a damaged database may fail
//! but never answer wrongly.

mod common;

use nowdb::db::format::SliceFile;
use nowdb::db::removed::{Kind, classify};
use nowdb::rng::XorShift;
use nowdb::solve::Site;
use nowdb::solve::solved::SolvedSlice;
use nowdb::{MoveList, Setup, Slice, SliceIndex};

#[test]
fn damaged_database_files_fail_cleanly_and_never_answer_wrongly() {
    let dir = common::fixture::scratch_path("fuzz", "db");
    let site = Site::new(&dir);
    common::site::build(&dir, 4, |o| o.only = vec!["2101.-5".parse().unwrap()]);
    let slice: Slice = "2101.-5".parse().unwrap();
    let ix = SliceIndex::new(slice);
    let solved = SolvedSlice::load(&site, slice).unwrap();
    let mut moves = MoveList::new();
    let stored: Vec<u64> = (0..ix.count())
        .filter(|&i| classify(&ix.position_unchecked(i), &mut moves) == Kind::Stored)
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

#[test]
fn random_text_never_panics_the_fen_parser() {
    let alphabet = b"BWK:,-.x0123456789 12-32\t";
    let mut rng = XorShift::new(0x2545_F491_4F6C_DD1D);
    let seeds = [
        "B:W18,K12:B3,5",
        "W:W21-32:B1-12",
        "B:WK1,K2:BK32",
        "W:W9:B",
    ];
    let mut parsed = 0;
    for round in 0..200_000u64 {
        let pick = |rng: &mut XorShift| alphabet[rng.below(alphabet.len() as u64) as usize];
        // Random text, or a valid FEN with a few characters replaced, inserted or removed.
        let mut bytes: Vec<u8> = if round % 2 == 0 {
            (0..rng.below(24)).map(|_| pick(&mut rng)).collect()
        } else {
            seeds[(round / 2 % 4) as usize].as_bytes().to_vec()
        };
        if round % 2 == 1 {
            for _ in 0..1 + rng.below(3) {
                let at = rng.below(bytes.len() as u64 + 1) as usize;
                match rng.below(3) {
                    0 if at < bytes.len() => bytes[at] = pick(&mut rng),
                    1 => bytes.insert(at, pick(&mut rng)),
                    _ if at < bytes.len() => {
                        bytes.remove(at);
                    }
                    _ => {}
                }
            }
        }
        let text = String::from_utf8(bytes).unwrap();
        if let Ok(setup) = text.parse::<Setup>() {
            parsed += 1;
            let again: Setup = nowdb::notation::format_fen(&setup).parse().unwrap();
            assert_eq!(again, setup, "{text:?}");
        }
    }
    assert!(parsed > 0);
}
