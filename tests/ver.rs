//! The `ver` phase: both ways it checks a range (from the solver's exact values while the
//! pair's `solved/` files exist, from the compressed database alone once they are gone)
//! agree on every slice of 2..4, and each finds a wrong value wherever it is put: a stored
//! value, a value of the mirror, a value the database stores differently from the solver, a
//! capture or a removed threat, a value of a lower slice it reads.

mod common;

use common::fixture::{self, JOBRUNNER, text};
use nowdb::board::generate_moves;
use nowdb::db::Database;
use nowdb::db::removed::{Kind, classify};
use nowdb::notation::position_fen;
use nowdb::solve::database::ver::verify_range;
use nowdb::solve::database::ver_exact::verify_range_exact;
use nowdb::solve::running::{Outcome, PhaseStats, RunOptions};
use nowdb::solve::solved::{SolvedSlice, SolvedStore, SolvedValues, SolvedWorkFiles};
use nowdb::solve::{Job, Phase, Site, Value};
use nowdb::{Move, MoveList, Position, Slice, SliceIndex};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn base4() -> &'static Path {
    common::site::base4("ver")
}

fn copy_of_base(name: &str) -> PathBuf {
    common::site::copy_of_base4("ver", name)
}

/// Sets position `i` of `slice`'s solved file in the site `d` to `v`.
fn set_solved(d: &Path, slice: Slice, i: u64, v: Value) {
    let path = Site::new(d).solved_file(&slice);
    let mut bytes = std::fs::read(&path).unwrap();
    let at = 8192 + (i / 4) as usize;
    bytes[at] = (bytes[at] & !(3 << (2 * (i % 4)))) | (v as u8) << (2 * (i % 4));
    std::fs::write(&path, &bytes).unwrap();
}

/// Builds `slice`'s database file again from its solved file (`build` trusts the solved
/// values).
fn rebuild(d: &Path, slice: Slice) {
    std::fs::remove_file(d.join(format!("db/{slice}.ndb"))).unwrap();
    let out = fixture::run(JOBRUNNER, d, &["run", &format!("build {slice}")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// Sets position `i` of `slice` to `v` in both its solved file and its database file.
fn rebuild_with_value(d: &Path, slice: Slice, i: u64, v: Value) {
    set_solved(d, slice, i, v);
    rebuild(d, slice);
}

/// `jobrunner run ver SLICE` on the site `d` twice: as the build runs it (the pair's solved
/// files there) and from the database alone (the pair's solved files moved aside, then
/// back); the error output of each, `None` for a success.
fn ver_both_ways(d: &Path, slice: Slice) -> (Option<String>, Option<String>) {
    let run = || {
        let out = fixture::run(JOBRUNNER, d, &["run", &format!("ver {slice}")]);
        (!out.status.success()).then(|| text(&out.stderr))
    };
    let exact = run();
    let site = Site::new(d);
    let files: Vec<PathBuf> = [slice, slice.mirror()]
        .iter()
        .map(|s| site.solved_file(s))
        .collect();
    for f in &files {
        if f.exists() {
            std::fs::rename(f, f.with_extension("aside")).unwrap();
        }
    }
    let from_db = run();
    for f in &files {
        if f.with_extension("aside").exists() {
            std::fs::rename(f.with_extension("aside"), f).unwrap();
        }
    }
    (exact, from_db)
}

fn other(v: Value) -> Value {
    if v == Value::Win {
        Value::Loss
    } else {
        Value::Win
    }
}

/// A stored won position of `slice` whose one losing move `m` satisfies `wanted`: its
/// index and the position after that move.
fn win_by_one_move(
    site: &Site,
    slice: Slice,
    wanted: impl Fn(&Position, &Move, &Position) -> bool,
) -> (u64, Position) {
    let ix = SliceIndex::new(slice);
    let own = SolvedSlice::load(site, slice).unwrap();
    let mut values = SolvedWorkFiles::new(SolvedStore::new(site, 1 << 30));
    let mut moves = MoveList::new();
    (0..ix.count())
        .find_map(|i| {
            let pos = ix.position_unchecked(i);
            if own.get(i) != Value::Win || classify(&pos) != Kind::Stored {
                return None;
            }
            generate_moves(&pos, &mut moves);
            let losing: Vec<_> = moves
                .iter()
                .filter(|m| values.value(&pos.successor(m)).unwrap() == Value::Loss)
                .collect();
            let [m] = losing[..] else { return None };
            let child = pos.successor(m);
            wanted(&pos, m, &child).then_some((i, child))
        })
        .unwrap_or_else(|| panic!("{slice}: no win by one move of the kind wanted"))
}

/// In a copy of the base site: a stored won position of `slice` whose one losing move
/// (`wanted`) leads to a stored position; that position made a draw in its solved file and
/// its slice's file built again; `ver` of `slice` fails naming the won position, either way.
/// The position changed.
fn a_win_by_one_move_fails_either_way(
    name: &str,
    slice: Slice,
    wanted: impl Fn(&Position, &Move) -> bool,
) -> Position {
    let d = copy_of_base(name);
    let (i, child) = win_by_one_move(&Site::new(&d), slice, |pos, m, child| {
        wanted(pos, m) && classify(child) == Kind::Stored
    });
    let target = Slice::of(&child);
    rebuild_with_value(
        &d,
        target,
        SliceIndex::new(target).index(&child),
        Value::Draw,
    );
    let fen = position_fen(&SliceIndex::new(slice).position_unchecked(i));
    let (exact, from_db) = ver_both_ways(&d, slice);
    assert_names(&exact, &fen, "stored as win", "exact");
    assert_names(&from_db, &fen, "stored as win", "from the database");
    child
}

/// The first position of `slice`, in the order of `indices`, whose value the database
/// stores.
fn stored_position(slice: Slice, mut indices: impl Iterator<Item = u64>) -> u64 {
    let ix = SliceIndex::new(slice);
    indices
        .find(|&i| classify(&ix.position_unchecked(i)) == Kind::Stored)
        .unwrap()
}

fn assert_names(err: &Option<String>, fen: &str, what: &str, how: &str) {
    let err = err
        .as_deref()
        .unwrap_or_else(|| panic!("{how}: ver passed"));
    assert!(err.contains(fen) && err.contains(what), "{how}: {err}");
}

/// Both ways check the same slices with the same values: from the exact values every
/// position of the slice (captures and removed threats too) with the solver's counts, from
/// the database its stored positions.
#[test]
fn ver_from_the_exact_values_and_from_the_database_agree() {
    let site = Site::new(base4());
    let db = Arc::new(
        Database::open(&site.db_dir(), 1 << 20)
            .unwrap()
            .decoding(64 << 20),
    );
    let opts = RunOptions::default();
    let (mut stored, mut all) = (0, 0);
    for slice in site.solved_slices().unwrap() {
        let job = Job::whole(Phase::Ver, slice, 0);
        let (Some(Outcome::Done(exact)), Outcome::Done(from_db)) = (
            verify_range_exact(&site, &db, &job, &opts).unwrap(),
            verify_range(&db, &job, &opts).unwrap(),
        ) else {
            panic!("{slice}: a ver job stopped");
        };
        let c = SolvedSlice::load(&site, slice).unwrap().counts();
        let want = PhaseStats {
            looked: c.positions,
            win: c.win,
            loss: c.loss,
            draw: c.draw,
        };
        assert_eq!(exact, want, "{slice}");
        // From the database: the positions its file stores.
        let ix = SliceIndex::new(slice);
        let keeps_threats = !db.slice(&slice).unwrap().file.removal.removes(Kind::Threat);
        let n = (0..ix.count())
            .filter(|&i| match classify(&ix.position_unchecked(i)) {
                Kind::Stored => true,
                Kind::Threat => keeps_threats,
                Kind::Capture => false,
            })
            .count() as u64;
        assert_eq!(from_db.looked, n, "{slice}");
        stored += from_db.looked;
        all += exact.looked;
    }
    assert!(stored > 1_000_000 && all > stored, "{stored} {all}");
}

/// A wrong stored value (the solved file and the database built from it agree on it) is
/// found either way, with the position's FEN and both values.
#[test]
fn ver_reports_a_wrong_value_with_its_fen() {
    let d = copy_of_base("wrong");
    let site = Site::new(&d);
    let slice: Slice = "1111.23".parse().unwrap();
    let ix = SliceIndex::new(slice);
    let solved = SolvedSlice::load(&site, slice).unwrap();
    let i = stored_position(slice, 0..ix.count());
    let new = other(solved.get(i));
    rebuild_with_value(&d, slice, i, new);
    let fen = position_fen(&ix.position_unchecked(i));
    let (exact, from_db) = ver_both_ways(&d, slice);
    let what = format!("stored as {new}");
    assert_names(&exact, &fen, &what, "exact");
    assert_names(&from_db, &fen, &what, "from the database");
}

/// A lost and a drawn stored position made wins: no plain move of either leads to a lost
/// child, so the check's shortcut for won positions (the first losing plain child) finds
/// none and the full reading names the position.
#[test]
fn ver_finds_a_loss_or_a_draw_stored_as_a_win() {
    let slice: Slice = "1111.23".parse().unwrap();
    let ix = SliceIndex::new(slice);
    let solved = SolvedSlice::load(&Site::new(base4()), slice).unwrap();
    for (name, was) in [("loss-as-win", Value::Loss), ("draw-as-win", Value::Draw)] {
        let d = copy_of_base(name);
        let i = stored_position(slice, (0..ix.count()).filter(|&i| solved.get(i) == was));
        rebuild_with_value(&d, slice, i, Value::Win);
        let fen = position_fen(&ix.position_unchecked(i));
        let (exact, from_db) = ver_both_ways(&d, slice);
        assert_names(&exact, &fen, "stored as win", "exact");
        assert_names(&from_db, &fen, "stored as win", "from the database");
    }
}

/// A lost or drawn stored position made a win right after a won one whose every losing move
/// is a move here too: both ways try the move that won the position before first (whichever
/// of those it was), find its child not lost, and then read the moves in order; the full
/// reading names the position.
#[test]
fn ver_finds_a_win_that_the_move_winning_the_position_before_does_not_make() {
    let slice: Slice = "1111.23".parse().unwrap();
    let ix = SliceIndex::new(slice);
    let site = Site::new(base4());
    let solved = SolvedSlice::load(&site, slice).unwrap();
    let mut values = SolvedWorkFiles::new(SolvedStore::new(&site, 1 << 30));
    let mut moves = MoveList::new();
    let stored = |i: u64| classify(&ix.position_unchecked(i)) == Kind::Stored;
    let mut found = [None, None];
    for j in 1..ix.count() {
        let was = solved.get(j);
        let k = match was {
            Value::Loss => 0,
            Value::Draw => 1,
            _ => continue,
        };
        if found[k].is_some() || !stored(j) || solved.get(j - 1) != Value::Win || !stored(j - 1) {
            continue;
        }
        let (before, here) = (ix.position_unchecked(j - 1), ix.position_unchecked(j));
        generate_moves(&before, &mut moves);
        let losing: Vec<Move> = moves
            .iter()
            .filter(|m| values.value(&before.successor(m)).unwrap() == Value::Loss)
            .copied()
            .collect();
        generate_moves(&here, &mut moves);
        if losing.iter().all(|m| moves.iter().any(|h| h == m)) {
            found[k] = Some((j, was));
        }
    }
    for (j, was) in found.map(|f| f.expect("a lost and a drawn position after a won one")) {
        let d = copy_of_base(&format!("witness-{was}"));
        rebuild_with_value(&d, slice, j, Value::Win);
        let fen = position_fen(&ix.position_unchecked(j));
        let (exact, from_db) = ver_both_ways(&d, slice);
        assert_names(&exact, &fen, "stored as win", "exact");
        assert_names(&from_db, &fen, "stored as win", "from the database");
    }
}

/// A database value that differs from the solver's (the file built from a wrong value, the
/// solved file right): the exact check names it by what each holds; the database alone
/// finds it against its moves.
#[test]
fn ver_finds_a_database_value_that_is_not_the_solvers() {
    let d = copy_of_base("db-differs");
    let site = Site::new(&d);
    let slice: Slice = "2101.-0".parse().unwrap();
    let ix = SliceIndex::new(slice);
    let solved = SolvedSlice::load(&site, slice).unwrap();
    let i = stored_position(slice, (0..ix.count()).rev());
    let (old, new) = (solved.get(i), other(solved.get(i)));
    rebuild_with_value(&d, slice, i, new);
    set_solved(&d, slice, i, old);
    let fen = position_fen(&ix.position_unchecked(i));
    let (exact, from_db) = ver_both_ways(&d, slice);
    let what = format!("stored in the database as {new} but solved as {old}");
    assert_names(&exact, &fen, &what, "exact");
    assert_names(
        &from_db,
        &fen,
        &format!("stored as {new}"),
        "from the database",
    );
}

/// A wrong value in the mirror: the position whose only losing move leads to it (a quiet
/// position the mirror stores) no longer derives its win, either way.
#[test]
fn ver_finds_a_wrong_value_in_the_mirror() {
    let slice: Slice = "1111.23".parse().unwrap();
    let child = a_win_by_one_move_fails_either_way("mirror-wrong", slice, |pos, m| {
        !nowdb::slice::is_conversion(pos, m)
    });
    assert_eq!(Slice::of(&child), slice.mirror());
}

/// A wrong value of a lower slice the range reads (stored there, reached by a crowning or a
/// man passing the leading rank): the won position whose only winning move leads there is
/// found, either way.
#[test]
fn ver_finds_a_wrong_value_in_a_lower_slice_it_reads() {
    let slice: Slice = "1111.23".parse().unwrap();
    let child = a_win_by_one_move_fails_either_way("lower-wrong", slice, |pos, m| {
        nowdb::slice::is_conversion(pos, m)
    });
    let lower = Slice::of(&child);
    assert!(lower != slice && lower != slice.mirror(), "{lower}");
}

/// The values the database does not store (a capture, a removed threat) are checked by
/// the job whose range holds them, against their moves: the exact check that reads them as
/// plain values elsewhere finds a wrong one there. The database is still right (it never
/// held the value), so the check from the database passes.
#[test]
fn ver_finds_a_wrong_capture_or_removed_threat_value() {
    let site_base = Site::new(base4());
    let db = Database::open(&site_base.db_dir(), 1 << 20).unwrap();
    for kind in [Kind::Capture, Kind::Threat] {
        // A slice whose file removes threats, and its first position of the kind.
        let (slice, i) = site_base
            .solved_slices()
            .unwrap()
            .into_iter()
            .filter(|s| s.pieces() == 4 && db.slice(s).unwrap().file.removal.removes(Kind::Threat))
            .find_map(|s| {
                let ix = SliceIndex::new(s);
                (0..ix.count())
                    .find(|&i| classify(&ix.position_unchecked(i)) == kind)
                    .map(|i| (s, i))
            })
            .unwrap();
        let d = copy_of_base(&format!("{kind:?}-wrong"));
        let site = Site::new(&d);
        let old = SolvedSlice::load(&site, slice).unwrap().get(i);
        set_solved(&d, slice, i, other(old));
        let fen = position_fen(&SliceIndex::new(slice).position_unchecked(i));
        let (exact, from_db) = ver_both_ways(&d, slice);
        let what = format!("stored as {} but its moves give {old}", other(old));
        assert_names(&exact, &fen, &what, &format!("{kind:?}"));
        assert_eq!(from_db, None, "{kind:?}");
    }
}

/// Where `ver` walks the mirror back (a slice of mostly lost positions whose mirror is mostly
/// won), a lost position reads only its conversions and a drawn one its children until the
/// first drawn: a won position made a loss, or a drawn one made a loss, whose every
/// conversion is won is found by the walk, from the mirror's lost or drawn child, and named
/// with its FEN; the check from the database finds it against its moves.
#[test]
fn ver_walking_the_mirror_back_finds_a_win_or_a_draw_stored_as_a_loss() {
    let site = Site::new(base4());
    let store = SolvedStore::new(&site, 1 << 30);
    let walking: Vec<Slice> = site
        .solved_slices()
        .unwrap()
        .into_iter()
        .filter(|s| {
            let (own, mirror) = (store.get(*s).unwrap(), store.get(s.mirror()).unwrap());
            nowdb::solve::database::ver_reverse::walks_the_mirror(&own, &mirror)
        })
        .collect();
    assert!(walking.len() >= 10, "{walking:?}");
    let quiet = |pos: &Position| {
        nowdb::slice::QuietConversions::of(pos)
            .as_slice()
            .is_empty()
    };
    for (name, was) in [("win-as-loss", Value::Win), ("draw-as-loss", Value::Draw)] {
        // The first walking slice with a stored position of the kind, without a capture or a
        // conversion, whose children in the mirror hold a lost one (a win) or a drawn one.
        let (slice, i) = walking
            .iter()
            .find_map(|&s| {
                let ix = SliceIndex::new(s);
                let own = store.get(s).unwrap();
                (0..ix.count())
                    .find(|&i| {
                        let pos = ix.position_unchecked(i);
                        own.get(i) == was
                            && classify(&pos) == Kind::Stored
                            && !nowdb::board::has_capture(&pos)
                            && quiet(&pos)
                            && has_moves_of(&pos)
                    })
                    .map(|i| (s, i))
            })
            .unwrap_or_else(|| panic!("{name}: no such position in {walking:?}"));
        let d = copy_of_base(name);
        rebuild_with_value(&d, slice, i, Value::Loss);
        let fen = position_fen(&SliceIndex::new(slice).position_unchecked(i));
        let (exact, from_db) = ver_both_ways(&d, slice);
        assert_names(
            &exact,
            &fen,
            "is solved as loss but its move into the mirror",
            name,
        );
        assert_names(&from_db, &fen, "stored as loss", name);
    }
}

/// Whether `pos` has a move.
fn has_moves_of(pos: &Position) -> bool {
    let mut moves = MoveList::new();
    generate_moves(pos, &mut moves);
    !moves.is_empty()
}
