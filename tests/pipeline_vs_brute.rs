//! The real pipeline (slices, paging, Appendix-B indexing, the phases, the local build)
//! against the independent brute-force solver of tests/common/brute.rs (plain forward passes
//! per material, its own move generator and storage): position by position for every slice
//! of 2..4 pieces, and win/loss/draw counts per slice for 5 pieces. Ignored tests compare
//! every position of a split (a set of materials closed under captures and crowning),
//! beyond where published figures exist (issues 23 and 45): the kings-only slices of 2..7
//! and of 2..8, those of 2..7 with at most one man and at most two pieces on one side, and
//! those of 2..8 with at most one man and a single piece on one side.
//!
//! Moves to conversion (issue 34) likewise: every distance of 2..5 pieces equals the brute
//! force's (tests/common/brute_mtc.rs), and every one equals what its moves give
//! (`mtc::verify`, the invariants of docs/FORMAT.md); the kings-only split of 2..7 in its
//! ignored test.

mod common;

use common::brute::{BruteDb, BruteValue};
use common::brute_mtc::BruteMtc;
use nowdb::solve::Site;
use nowdb::solve::Value;
use nowdb::solve::local::{BuildOptions, build_local};
use nowdb::solve::solved::SolvedSlice;
use nowdb::{Material, Position, Slice, SliceIndex};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Solved 2..5 pieces from both sides, with moves to conversion, computed once for the
/// tests of this file.
struct Both {
    site: Site,
    brute: BruteDb,
    distances: BruteMtc,
}

fn both() -> &'static Both {
    static BOTH: OnceLock<Both> = OnceLock::new();
    BOTH.get_or_init(|| {
        let dir = common::fixture::scratch_path("vs-brute", "site");
        let site = Site::new(PathBuf::from(&dir));
        // The pipeline and the brute force run side by side, one core each.
        let pipeline = std::thread::spawn(move || {
            let opts = BuildOptions {
                pieces: 5,
                runners: 1,
                mtc: true,
                progress_every: Duration::from_secs(3600),
                ..BuildOptions::default()
            };
            build_local(
                &Site::new(&dir),
                &opts,
                &mut nowdb::progress::Progress::lines(
                    &mut std::io::sink(),
                    std::time::Duration::MAX,
                ),
            )
            .unwrap_or_else(|e| panic!("pipeline build failed: {e}"));
        });
        let brute = BruteDb::solve(5);
        let distances = BruteMtc::compute(&brute);
        pipeline.join().expect("pipeline thread");
        Both {
            site,
            brute,
            distances,
        }
    })
}

fn same(v: Value, b: BruteValue) -> bool {
    matches!(
        (v, b),
        (Value::Win, BruteValue::Win)
            | (Value::Loss, BruteValue::Loss)
            | (Value::Draw, BruteValue::Draw)
    )
}

#[test]
fn every_position_of_2_to_4_pieces_agrees() {
    let b = both();
    let mut checked = 0u64;
    for slice in b.site.solved_slices().unwrap() {
        if slice.pieces() > 4 {
            continue;
        }
        let solved = SolvedSlice::load(&b.site, slice).unwrap();
        let ix = SliceIndex::new(slice);
        for (i, pos) in ix.enumerate_from(0) {
            let v = solved.get(i);
            let want = b.brute.value(&pos);
            assert!(
                same(v, want),
                "{slice} index {i} ({}): pipeline {v}, brute force {want:?}",
                nowdb::notation::position_fen(&pos)
            );
            checked += 1;
        }
    }
    // Every position with both sides present: 3,488 + 196,032 + 6,209,316.
    assert_eq!(checked, 6_408_836);
}

/// The slice name of a position, computed here from the bitboards (leading rank of each
/// side's men, from its own side; '-' without men).
fn slice_name(p: &Position) -> String {
    let bm = p.black & !p.kings;
    let wm = p.white & !p.kings;
    let count = |b: u32| b.count_ones();
    let rb = if bm == 0 {
        '-'
    } else {
        char::from(b'0' + ((31 - bm.leading_zeros()) / 4) as u8)
    };
    let rw = if wm == 0 {
        '-'
    } else {
        char::from(b'0' + (7 - wm.trailing_zeros() / 4) as u8)
    };
    format!(
        "{}{}{}{}.{rb}{rw}",
        count(p.black & p.kings),
        count(p.white & p.kings),
        count(bm),
        count(wm)
    )
}

/// Every distance of 2..5 pieces equals the brute force's, and the longest of each piece
/// count is the one docs/FORMAT.md gives.
#[test]
fn every_distance_of_2_to_5_pieces_equals_the_brute_force() {
    let b = both();
    let (mut checked, mut longest) = (0u64, BTreeMap::new());
    for slice in b.site.solved_slices().unwrap() {
        let m = nowdb::solve::mtc::MtcSlice::load(&b.site, slice).unwrap();
        for (i, pos) in SliceIndex::new(slice).enumerate_from(0) {
            let (got, want) = (m.get(i), b.distances.mtc(&b.brute, &pos));
            assert_eq!(
                got,
                want,
                "{slice} index {i} ({}): pipeline {got:?} plies, brute force {want:?}",
                nowdb::notation::position_fen(&pos)
            );
            if let Some(d) = got {
                let e = longest.entry(slice.pieces()).or_insert(0);
                *e = d.max(*e);
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 145_859_644);
    for (pieces, d) in &longest {
        let brute = b.distances.longest(&b.brute, *pieces).map(|l| l.0);
        assert_eq!(brute, Some(*d), "longest of {pieces} pieces");
    }
    assert_eq!(longest[&2], 11);
    assert_eq!(longest[&3], 34);
}

/// Every distance of 2..5 pieces equals what its moves give: a won position's shortest
/// winning conversion or king move to a lost position one ply nearer, a lost one's longest
/// (docs/FORMAT.md), checked by `mtc::verify` with the solver's move generator on two
/// threads.
#[test]
fn every_distance_of_2_to_5_pieces_equals_what_its_moves_give() {
    let b = both();
    let slices = b.site.solved_slices().unwrap();
    let store = nowdb::solve::solved::SolvedStore::new(&b.site, 1 << 30);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let checked: u64 = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..2)
            .map(|_| {
                scope.spawn(|| {
                    let mut n = 0;
                    loop {
                        let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(s) = slices.get(k) else { return n };
                        let sum = nowdb::solve::mtc::verify::check_range(
                            &b.site,
                            s,
                            0,
                            s.count(),
                            &store,
                        )
                        .unwrap_or_else(|e| panic!("{e}"));
                        n += sum.positions;
                    }
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).sum()
    });
    assert_eq!(checked, 145_859_644);
}

/// The compressed distances of 2..5 (`db/<slice>.mtc`, built and checked by the build's
/// `build` and `ver` jobs): every won or lost position reads back as the brute force's
/// distance, "short" below the threshold; and the exact distance `dbprobe --play` derives
/// for short ones by searching equals the brute force's on every 1009th valued position.
#[test]
fn every_compressed_distance_of_2_to_5_pieces_equals_the_brute_force() {
    use nowdb::db::mtc::{MtcFile, Stored, THRESHOLD, mtc_path};
    let b = both();
    let db = nowdb::db::Database::open(&b.site.db_dir(), 64 << 20).unwrap();
    let mut exact = nowdb::db::mtc_probe::ExactDistances::new();
    let (mut checked, mut searched, mut bytes) = (0u64, 0u64, 0u64);
    for slice in b.site.solved_slices().unwrap() {
        assert!(
            nowdb::solve::stage::is_verified(&b.site, &slice),
            "{slice}: not verified"
        );
        let path = mtc_path(&b.site.db_dir(), &slice);
        bytes += std::fs::metadata(&path).unwrap().len();
        let file = MtcFile::open(&path, &slice).unwrap();
        let ix = SliceIndex::new(slice);
        let mut e = ix.enumerate_from(0);
        file.for_each_run::<nowdb::db::DbError>(0, slice.count(), |stored, first, last| {
            for i in first..last {
                let pos = e.position();
                assert_eq!(e.index(), i);
                e.advance();
                let Some(want) = b.distances.mtc(&b.brute, &pos) else {
                    continue;
                };
                let want_stored = match want < THRESHOLD {
                    true => Stored::Short,
                    false => Stored::Plies(want),
                };
                assert_eq!(
                    stored,
                    want_stored,
                    "{slice} index {i} ({}): brute force {want} plies",
                    nowdb::notation::position_fen(&pos)
                );
                checked += 1;
                if checked % 1009 == 0 {
                    let value = db.probe(&pos).unwrap();
                    let got = exact.plies(&db, &pos, value).unwrap();
                    assert_eq!(got, Some(want), "{}", nowdb::notation::position_fen(&pos));
                    searched += 1;
                }
            }
            Ok(())
        })
        .unwrap();
    }
    // Won and lost positions of 2..5 (of 145,859,644).
    assert!(checked > 100_000_000, "{checked}");
    assert!(searched > 100_000, "{searched}");
    let positions = 145_859_644f64;
    eprintln!(
        "2..5: {bytes} bytes of distances, {:.1} positions a byte; {searched} exact distances searched ({} positions)",
        positions / bytes as f64,
        exact.searched
    );
}

#[test]
fn win_loss_draw_counts_of_every_5_piece_slice_agree() {
    let b = both();
    let mut brute: BTreeMap<String, [u64; 3]> = BTreeMap::new();
    b.brute.for_each(5, |pos, v| {
        let e = brute.entry(slice_name(pos)).or_default();
        e[v as usize] += 1;
    });
    let mut pipeline: BTreeMap<String, [u64; 3]> = BTreeMap::new();
    for (slice, c) in nowdb::status::solved_counts(&b.site).unwrap() {
        if slice.pieces() == 5 {
            let name = slice.to_string();
            let mut row = [0u64; 3];
            row[BruteValue::Win as usize] = c.win;
            row[BruteValue::Loss as usize] = c.loss;
            row[BruteValue::Draw as usize] = c.draw;
            pipeline.insert(name, row);
        }
    }
    assert_eq!(pipeline.len(), brute.len(), "number of 5-piece slices");
    for (name, counts) in &brute {
        assert_eq!(
            pipeline.get(name),
            Some(counts),
            "slice {name}: win/loss/draw"
        );
    }
    let total: u64 = brute.values().flatten().sum();
    assert_eq!(total, 139_450_808);
}

/// Every 2..5-piece position probed through the compressed database (captures and threats
/// searched, the rest decoded) equals the solver's value, which the tests above tie to the
/// brute force.
#[test]
fn every_2_to_5_piece_position_probed_in_the_database_equals_its_solved_value() {
    let b = both();
    let db = nowdb::db::Database::open(&b.site.db_dir(), 64 << 20).unwrap();
    let slices = b.site.solved_slices().unwrap();
    assert_eq!(nowdb::db::probe::list_slices(&b.site.db_dir()).unwrap(), {
        let mut s = slices.clone();
        s.sort();
        s
    });
    let report = nowdb::solve::database::check::check_every_position(
        &b.site,
        &db,
        &slices,
        2,
        &mut nowdb::progress::Progress::lines(&mut std::io::sink(), std::time::Duration::MAX),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let total: u64 = slices.iter().map(|s| s.count()).sum();
    assert_eq!(report.positions, total);
    assert_eq!(total, 145_859_644);

    // Both removal rules occur, so the positions checked include threats whose values are
    // stored (decoded, not searched) as well as searched ones.
    use nowdb::db::removed::{Kind, Removal, classify};
    let (mut by_rule, mut stored_threats) = ([0usize; 2], 0usize);
    for s in &slices {
        let path = nowdb::db::probe::slice_path(&b.site.db_dir(), s);
        let removal = nowdb::db::format::SliceFile::open(&path, s)
            .unwrap()
            .removal;
        by_rule[(removal == Removal::Captures) as usize] += 1;
        if removal == Removal::Captures {
            let ix = SliceIndex::new(*s);
            stored_threats += (0..ix.count())
                .step_by(31)
                .filter(|&i| classify(&ix.position_unchecked(i)) == Kind::Threat)
                .count();
        }
    }
    assert!(by_rule[0] > 0 && by_rule[1] > 0, "{by_rule:?}");
    assert!(stored_threats > 1000, "{stored_threats}");
}

/// Group sizes in the brute force's order: black kings, black men, white kings, white men.
type Groups = [u32; 4];

/// Every slice of 2..=`most` pieces (both sides present) whose material `keep` accepts.
fn split_slices(most: u32, keep: fn(Groups) -> bool) -> Vec<Slice> {
    let mut out = Vec::new();
    for pieces in 2..=most {
        for m in Material::all_with_pieces(pieces) {
            let groups = [m.bk, m.bm, m.wk, m.wm].map(u32::from);
            if m.black() > 0 && m.white() > 0 && keep(groups) {
                out.extend(m.slices());
            }
        }
    }
    out.sort();
    out
}

/// Kings only: closed under captures, and there is no man to crown.
fn kings_only(g: Groups) -> bool {
    g[1] + g[3] == 0
}

/// One man at most on the board, and at most two pieces on one side: closed under captures
/// (a side only loses pieces, so the smaller side stays at most two), crowning (the man
/// becomes a king) and the exchange of sides that the brute force's values with White to
/// move go through (the condition is the same for both sides). At 7 pieces: 2v5, 1v6 and
/// their mirrors, kings only or with the man on either side (`2401.-3`, `1510.4-`,
/// `4210.2-`, `5101.-0`, ..).
fn one_man_two_against_many(g: Groups) -> bool {
    let [bk, bm, wk, wm] = g;
    bm + wm <= 1 && (bk + bm).min(wk + wm) <= 2
}

/// Compares every position of the slices of a split of 2..`most` pieces (the materials
/// `keep` accepts, a set closed under captures, crowning and the exchange of sides; `name`
/// in messages) with the brute force restricted to the same materials. The pipeline's side
/// is built here, `--only` the split's slices of `most` pieces, side by side with the brute
/// force on one core each; or, with
/// `NOWDB_VS_BRUTE_SITE` set, it is the `solved/` of that site, which must hold every slice
/// of the split (say, a whole 2..7 build). With `distances`, the moves to conversion too
/// (built with `--mtc`, or the given site's `solved/*.mtc`). Returns the number of positions
/// compared.
fn compare_split_with_brute(
    name: &str,
    most: u32,
    keep: fn(Groups) -> bool,
    distances: bool,
) -> u64 {
    let start = Instant::now();
    let want = split_slices(most, keep);
    let largest: Vec<Slice> = want
        .iter()
        .copied()
        .filter(|s| s.pieces() == most)
        .collect();
    assert!(!largest.is_empty(), "{name}: no {most}-piece slice");
    let given = std::env::var_os("NOWDB_VS_BRUTE_SITE").map(PathBuf::from);
    let dir = given
        .clone()
        .unwrap_or_else(|| common::fixture::scratch_path("vs-brute", name));
    let site = Site::new(&dir);
    let pipeline = given.is_none().then(|| {
        let (only, dir) = (largest.clone(), dir.clone());
        std::thread::spawn(move || {
            let opts = BuildOptions {
                pieces: most,
                runners: 1,
                only,
                database: false,
                mtc: distances,
                progress_every: Duration::from_secs(3600),
                ..BuildOptions::default()
            };
            let mut sink = std::io::sink();
            let log = &mut nowdb::progress::Progress::lines(&mut sink, Duration::MAX);
            build_local(&Site::new(&dir), &opts, log)
                .unwrap_or_else(|e| panic!("pipeline build failed: {e}"));
            start.elapsed()
        })
    });
    let brute = BruteDb::solve_materials(most, keep);
    let brute_mtc = distances.then(|| BruteMtc::compute(&brute));
    eprintln!("brute force, {name}: {:.0?}", start.elapsed());
    if let Some(pipeline) = pipeline {
        let built = pipeline.join().expect("pipeline thread");
        eprintln!("pipeline, {name}: {built:.0?}");
    }

    // What the site holds of the split: built here, exactly what the 7-piece slices need
    // (every slice the pipeline solved must be of the split, so that it can be compared);
    // given, all of it.
    let solved = site.solved_slices().unwrap();
    let compare: Vec<Slice> = if given.is_some() {
        let missing: Vec<String> = (want.iter())
            .filter(|s| !solved.contains(s))
            .map(|s| s.to_string())
            .collect();
        assert!(missing.is_empty(), "{dir:?} lacks {}", missing.join(" "));
        want.clone()
    } else {
        let outside: Vec<String> = (solved.iter())
            .filter(|s| !want.contains(s))
            .map(|s| s.to_string())
            .collect();
        assert!(
            outside.is_empty(),
            "built outside {name}: {}",
            outside.join(" ")
        );
        for s in &largest {
            assert!(solved.contains(s), "{s} was not built");
        }
        let mut c = solved;
        c.sort();
        c
    };

    let (mut compared, mut mismatches, mut first) = (0u64, 0u64, Vec::new());
    for &slice in &compare {
        let values = SolvedSlice::load(&site, slice).unwrap();
        let mtc = brute_mtc
            .as_ref()
            .map(|_| nowdb::solve::mtc::MtcSlice::load(&site, slice).unwrap());
        let mut wld = [0u64; 3];
        for (i, pos) in SliceIndex::new(slice).enumerate_from(0) {
            let (v, b) = (values.get(i), brute.value(&pos));
            let far =
                |m: &nowdb::solve::mtc::MtcSlice, bm: &BruteMtc| (m.get(i), bm.mtc(&brute, &pos));
            let plies = mtc
                .as_ref()
                .zip(brute_mtc.as_ref())
                .map(|(m, bm)| far(m, bm));
            if !same(v, b) || plies.is_some_and(|(got, want)| got != want) {
                mismatches += 1;
                if first.len() < 20 {
                    let fen = nowdb::notation::position_fen(&pos);
                    first.push(format!(
                        "{slice} index {i} ({fen}): pipeline {v}, brute {b:?}; plies \
                         (pipeline, brute) {plies:?}"
                    ));
                }
            }
            wld[b as usize] += 1;
        }
        let n: u64 = wld.iter().sum();
        assert_eq!(n, slice.count(), "{slice}: positions enumerated");
        compared += n;
        if slice.pieces() == most {
            eprintln!(
                "{slice}: {n} positions, win {} loss {} draw {}",
                wld[0], wld[1], wld[2]
            );
        }
    }
    eprintln!(
        "{name}: {} slices, {compared} positions compared, {mismatches} mismatches, {:.0?} in all",
        compare.len(),
        start.elapsed()
    );
    assert!(
        mismatches == 0,
        "{mismatches} positions differ; the first:\n{}",
        first.join("\n")
    );
    if compare == want {
        // The brute force enumerates the split's positions its own way.
        let mut total = 0u64;
        for pieces in 2..=most {
            brute.for_each(pieces, |_, _| total += 1);
        }
        assert_eq!(
            compared, total,
            "positions of {name}, pipeline against brute force"
        );
    }
    compared
}

/// The kings-only slices of 2..7 pieces (487 M positions), which depend on nothing else:
/// values and moves to conversion.
#[test]
#[ignore = "about 7 minutes on 2 cores; run with --ignored kings_only --nocapture"]
fn kings_only_2_to_7_equal_the_brute_force_solver() {
    let compared = compare_split_with_brute("kings-only", 7, kings_only, true);
    // Kings only, both sides present: 992 + 29,760 + 503,440 + 6,041,280 + 56,183,904 +
    // 424,097,856.
    assert_eq!(compared, 486_857_232);
}

/// A man, its crowning and captures of and by it at 7 pieces: every slice of
/// `one_man_two_against_many` (2,399 M table slots for the brute force).
#[test]
#[ignore = "about 9 minutes on 2 cores; run with --ignored one_man --nocapture"]
fn one_man_two_against_many_equal_the_brute_force_solver() {
    let compared = compare_split_with_brute("one-man", 7, one_man_two_against_many, false);
    // 270 slices of 2..7 pieces (2v5, 1v6 and mirrors at 7); every one of them is compared.
    assert_eq!(compared, 1_615_699_912);
}

/// The kings-only closure of 8 pieces (the slices of `scripts/build-local --pieces 8 --only
/// 4400 --only 5300 --only 6200 --only 7100`, 3.16 G positions): values. The brute force's
/// table has 4.6 G one-byte slots. Give a site that holds the closure (say, one built by
/// that script) with `NOWDB_VS_BRUTE_SITE` to skip building it here.
#[test]
#[ignore = "about 35 minutes on 2 cores and 6 GB with NOWDB_VS_BRUTE_SITE; run with --ignored kings_only_2_to_8 --nocapture"]
fn kings_only_2_to_8_equal_the_brute_force_solver() {
    let compared = compare_split_with_brute("kings-only-8", 8, kings_only, false);
    // 2..7 as above, then 4400 736,281,000, 5300 and 3500 589,024,800 each, 6200 and 2600
    // 294,512,400 each, 7100 and 1700 84,146,400 each.
    assert_eq!(compared, 486_857_232 + 2_671_648_200);
}

/// Men at 8 pieces: one man at most and a single piece on one side, so every 8-piece
/// position is 1 against 7 (`7100.--`, `6110.-0`, `0170.--`, .. and their mirrors): a man's
/// moves, crowning, captures of it and by it, beside the kings' play.
#[test]
#[ignore = "about 20 minutes on 2 cores; run with --ignored one_against_seven --nocapture"]
fn one_against_seven_with_a_man_equal_the_brute_force_solver() {
    let compared =
        compare_split_with_brute("one-against-seven", 8, one_man_one_against_many, false);
    // At 8 pieces 1,346,342,400: twice 1 king against 7 (84,146,400), 1 man against 7 kings
    // (73,628,100) and 1 king against 6 kings and a man (28 x 31 x C(30, 6) = 515,396,700).
    // Below 8, the 145 slices the 8-piece ones lead to, not every slice of the split: a man
    // alone against kings climbs two rows with each capture, so it meets two kings at 3
    // pieces only from its third row on (9,300 of 1 man against 2 kings' 13,020 positions).
    assert_eq!(compared, 1_747_198_192);
}

/// One man at most on the board, and one side a single piece: closed under captures (the
/// single piece's capture ends the game), crowning and the exchange of sides.
fn one_man_one_against_many(g: Groups) -> bool {
    let [bk, bm, wk, wm] = g;
    bm + wm <= 1 && (bk + bm).min(wk + wm) <= 1
}
