//! The compressed database: probing, `dbprobe`, `ver`, and what happens with damaged files
//! and bad input. One 2..4-piece site is built once and copied where a test damages it.

mod common;

use common::fixture::{self, DBPROBE, JOBRUNNER, text};
use nowdb::db::Database;
use nowdb::solve::Site;
use nowdb::solve::solved::SolvedSlice;
use nowdb::{Setup, Slice, SliceIndex};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

fn base4() -> &'static Path {
    common::site::base4("db")
}

fn copy_of_base(name: &str) -> PathBuf {
    common::site::copy_of_base4("db", name)
}

/// Probing either side to move agrees with the solver's values of the reversed board.
#[test]
fn white_to_move_is_probed_through_reversal() {
    let site = Site::new(base4());
    let db = Database::open(&site.db_dir(), 1 << 20).unwrap();
    let slice: Slice = "1111.23".parse().unwrap();
    let solved = SolvedSlice::load(&site, slice).unwrap();
    let ix = SliceIndex::new(slice);
    for i in (0..ix.count()).step_by(97) {
        let pos = ix.position_unchecked(i);
        let white_view = Setup {
            board: pos.reversed(),
            to_move: nowdb::Color::White,
        };
        assert_eq!(
            db.probe_setup(&white_view).unwrap(),
            solved.get(i),
            "index {i}"
        );
    }
}

#[test]
fn dbprobe_prints_the_value_and_every_move() {
    let site = base4();
    // Two black men against a man and a king: a draw for Black, with one drawing move and
    // two losing ones.
    let out = fixture::run(DBPROBE, site, &["B:W18,K12:B3,5"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("value\tdraw"), "{s}");
    let moves: Vec<&str> = s.lines().filter(|l| l.starts_with("move\t")).collect();
    assert_eq!(moves.len(), 3, "{s}");
    assert!(moves.iter().any(|l| l.ends_with("\tdraw")), "{s}");
    assert!(moves.iter().all(|l| !l.ends_with("\twin")), "{s}");

    let out = fixture::run(DBPROBE, site, &["--json", "W:W18,K12:B3,5"]);
    let s = text(&out.stdout);
    assert!(
        s.starts_with("{\"fen\":\"W:W18,K12:B3,5\",\"to_move\":\"white\",\"value\":\"win\""),
        "{s}"
    );
    assert!(s.contains("{\"move\":\"12-8\",\"value\":\"loss\"}"), "{s}");
}

#[test]
fn batch_answers_every_line_and_reports_bad_ones() {
    let site = base4();
    let input = "B:W18,K12:B3,5\n\nW:W18,K12:B3,5\nB:W21-32:B1-12\nnonsense\n";
    let out = fixture::run_with_stdin(DBPROBE, site, &["--batch"], input);
    assert!(!out.status.success());
    assert_eq!(
        text(&out.stdout),
        "B:W18,K12:B3,5\tdraw\nW:W18,K12:B3,5\twin\n"
    );
    let err = text(&out.stderr);
    assert!(
        err.contains("stdin line 4") && err.contains("24 pieces; the database in"),
        "{err}"
    );
    assert!(err.contains("holds at most 4"), "{err}");
    assert!(err.contains("stdin line 5: bad FEN \"nonsense\""), "{err}");

    let out = fixture::run_with_stdin(DBPROBE, site, &["--batch", "--json"], "B:W18:B3\n");
    assert!(out.status.success());
    assert_eq!(
        text(&out.stdout),
        "{\"fen\":\"B:W18:B3\",\"value\":\"draw\"}\n"
    );
}

#[test]
fn check_compares_every_position_with_the_solver() {
    let site = base4();
    let out = fixture::run(DBPROBE, site, &["--check", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("\"positions\":6408836,"),
        "{}",
        text(&out.stdout)
    );
    let out = fixture::run(
        DBPROBE,
        site,
        &["--check", "--random", "20000", "--pieces", "4"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).starts_with("checked 20000 positions"),
        "{}",
        text(&out.stdout)
    );
}

/// Lookups that decode whole slices (`ver`'s) give the solver's value of every position,
/// with a budget that holds some slices, evicts others and refuses the largest, and with
/// one that holds everything.
#[test]
fn lookups_decoding_whole_slices_agree_with_the_solver() {
    let site = Site::new(base4());
    let slices = site.solved_slices().unwrap();
    let largest = slices.iter().map(|s| s.count()).max().unwrap();
    for budget in [(largest / 4 / 3) as usize, 1 << 30] {
        let db = Database::open(&site.db_dir(), 1 << 20)
            .unwrap()
            .decoding(budget);
        let report = nowdb::solve::database::check::check_every_position(
            &site,
            &db,
            &slices,
            2,
            &mut nowdb::progress::Progress::lines(&mut std::io::sink(), Duration::MAX),
        )
        .unwrap();
        assert_eq!(report.positions, 6_408_836, "budget {budget}");
    }
}
/// The largest block-holding slice file of the site.
fn largest_db_file(site: &Path) -> PathBuf {
    std::fs::read_dir(site.join("db"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "ndb"))
        .max_by_key(|p| std::fs::metadata(p).unwrap().len())
        .unwrap()
}

/// Flipping one bit of a block: `dbprobe` and `ver` report a CRC error naming the file and
/// the block, and never answer from it.
#[test]
fn a_flipped_bit_is_a_crc_error_naming_the_block() {
    let d = copy_of_base("flip");
    let path = largest_db_file(&d);
    let name = path.file_stem().unwrap().to_string_lossy().into_owned();
    let slice: Slice = name.parse().unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    let blocks = {
        let f = nowdb::db::format::SliceFile::open(&path, &slice).unwrap();
        assert!(f.blocks() >= 3, "{name} has {} blocks", f.blocks());
        f.blocks()
    };
    // A bit in the middle of block 1.
    let at = nowdb::db::format::SliceFile::open(&path, &slice)
        .unwrap()
        .block_offset(1);
    bytes[at as usize + 500] ^= 0x10;
    std::fs::write(&path, &bytes).unwrap();

    let site = d.as_path();
    // ver of the whole slice reads block 1.
    let job = format!("ver {name}");
    let out = fixture::run(JOBRUNNER, site, &["run", &job]);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("CRC error in block 1") && err.contains(&format!("{name}.ndb")),
        "{err}"
    );

    // A position inside block 1, probed: the same error.
    let f = nowdb::db::format::SliceFile::open(&path, &slice).unwrap();
    let ix = SliceIndex::new(slice);
    let db = Database::open(&d.join("db"), 1 << 20).unwrap();
    let inside = (f.block_first(1)..f.block_first(2))
        .find(|&i| {
            nowdb::db::removed::classify(&ix.position_unchecked(i))
                == nowdb::db::removed::Kind::Stored
        })
        .unwrap();
    let fen = nowdb::notation::position_fen(&ix.position_unchecked(inside));
    let out = fixture::run(DBPROBE, site, &[&fen]);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(err.contains("CRC error in block 1"), "{err}");
    let e = db
        .probe(&ix.position_unchecked(inside))
        .unwrap_err()
        .to_string();
    assert!(e.contains("CRC error in block 1"), "{e}");
    assert!(blocks > 2);
}

#[test]
fn damaged_missing_and_foreign_databases_are_clear_errors() {
    let d = copy_of_base("damaged");
    let site = d.as_path();
    let path = largest_db_file(&d);
    let name = path.file_stem().unwrap().to_string_lossy().into_owned();
    let slice: Slice = name.parse().unwrap();
    let fen = nowdb::notation::position_fen(&SliceIndex::new(slice).position_unchecked(0));
    let probe = |fen: &str| {
        let out = fixture::run(DBPROBE, site, &[fen]);
        assert!(!out.status.success(), "{}", text(&out.stdout));
        text(&out.stderr)
    };

    // Truncated.
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 100]).unwrap();
    let err = probe(&fen);
    assert!(
        err.contains(&format!("{name}.ndb")) && err.contains("truncated"),
        "{err}"
    );

    // A header bit flipped.
    let mut bad = bytes.clone();
    bad[33] ^= 1;
    std::fs::write(&path, &bad).unwrap();
    let err = probe(&fen);
    assert!(err.contains(&format!("{name}.ndb")), "{err}");

    // Missing slice file.
    std::fs::remove_file(&path).unwrap();
    let err = probe(&fen);
    assert!(err.contains(&format!("missing slice {name}")), "{err}");

    // Another version.
    std::fs::write(d.join("db/VERSION"), "nowdb-db 7\n").unwrap();
    let err = probe("B:W18:B3");
    assert!(
        err.contains("nowdb-db 7") && err.contains(nowdb::db::probe::VERSION_LINE),
        "{err}"
    );

    // No database at all.
    let err = {
        let out = fixture::run(DBPROBE, Path::new("/nonexistent/site"), &["B:W18:B3"]);
        assert!(!out.status.success());
        text(&out.stderr)
    };
    assert!(
        err.contains("database directory /nonexistent/site/db does not exist"),
        "{err}"
    );

    // A bad FEN.
    let out = fixture::run(DBPROBE, base4(), &["B:W33:B3"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("33"), "{}", text(&out.stderr));
}

/// One database shared by several threads (and a tiny block cache, so they evict each
/// other's blocks) gives every thread the solver's values.
#[test]
fn threads_share_one_database() {
    let site = Site::new(base4());
    let db = Database::open(&site.db_dir(), 16 << 10).unwrap();
    let slices: Vec<Slice> = site
        .solved_slices()
        .unwrap()
        .into_iter()
        .filter(|s| s.pieces() == 4)
        .collect();
    std::thread::scope(|scope| {
        for t in 0..4usize {
            let (db, site, slices) = (&db, &site, &slices);
            scope.spawn(move || {
                for s in slices.iter().skip(t).step_by(4).take(40) {
                    let solved = SolvedSlice::load(site, *s).unwrap();
                    let ix = SliceIndex::new(*s);
                    for i in (0..ix.count()).step_by(13) {
                        let v = db.probe(&ix.position_unchecked(i)).unwrap();
                        assert_eq!(v, solved.get(i), "{s} index {i}");
                    }
                }
            });
        }
    });
    assert!(
        db.blocks_read() > 100,
        "the small cache should have missed often"
    );
}

/// Seven `build` jobs of one slice, one per page range, run as seven processes at once:
/// whichever finish together take turns to assemble, and the published file equals the
/// one a single job builds.
#[test]
fn concurrent_build_ranges_publish_one_identical_file() {
    let d = copy_of_base("ranges");
    let slice = "2200.--";
    let path = d.join(format!("db/{slice}.ndb"));
    let reference = std::fs::read(&path).unwrap();
    let count: u64 = slice.parse::<Slice>().unwrap().count();
    let pages = count.div_ceil(32768);
    assert!(pages >= 7);
    for round in 0..4 {
        std::fs::remove_file(&path).unwrap();
        let children: Vec<_> = (0..7u64)
            .map(|k| {
                let first = pages * k / 7 * 32768;
                let last = (pages * (k + 1) / 7 * 32768).min(count);
                fixture::command(JOBRUNNER, &d)
                    .arg("run")
                    .arg(format!("build {slice} {first} {last}"))
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for c in children {
            let out = c.wait_with_output().unwrap();
            assert!(out.status.success(), "round {round}: {}", text(&out.stderr));
        }
        assert!(std::fs::read(&path).unwrap() == reference, "round {round}");
        assert!(!d.join(format!("db/parts/{slice}")).exists());
        assert!(!d.join(format!("db/parts/{slice}.lock")).exists());
    }
}

/// `examples/probe.rs`, the probe embedded as an engine would, gives the values `dbprobe`
/// gives: the position's, and each move's for the side that plays it.
#[test]
fn the_probe_example_agrees_with_dbprobe() {
    // `cargo test` builds the examples (`cargo test --test db` alone does not).
    let exe = std::env::current_exe().unwrap();
    let example = exe
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples/probe");
    assert!(
        example.exists(),
        "{} is missing: run the whole `cargo test --release`, or `cargo build --release --example probe` first",
        example.display()
    );
    let site = base4();
    let db = base4().join("db");
    for fen in ["B:W18,K12:B3,5", "W:W18,K12:B3,5"] {
        let out = fixture::run_plain(example.to_str().unwrap(), &[db.to_str().unwrap(), fen]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let s = text(&out.stdout);
        let probe = fixture::run(DBPROBE, site, &[fen]);
        let p = text(&probe.stdout);
        let value = p.lines().find_map(|l| l.strip_prefix("value\t")).unwrap();
        assert!(s.starts_with(&format!("{fen}: {value}\n")), "{s}\n{p}");
        let mut theirs: Vec<String> = p
            .lines()
            .filter_map(|l| l.strip_prefix("move\t"))
            .map(|l| {
                let f: Vec<&str> = l.split('\t').collect();
                format!("{}\t{}", f[0], f[f.len() - 1])
            })
            .collect();
        let mut ours: Vec<String> = s.lines().skip(1).map(|l| l.trim().to_string()).collect();
        theirs.sort();
        ours.sort();
        assert_eq!(ours, theirs, "{s}\n{p}");
    }
}

/// `dbprobe --site SITE --ship DIR ARGS`: its output.
fn ship(site: &Path, to: &Path, args: &[&str]) -> std::process::Output {
    let mut all = vec!["--ship", to.to_str().unwrap()];
    all.extend_from_slice(args);
    fixture::run(DBPROBE, site, &all)
}

/// Whether a `.partial-` directory of a ship into `to` was left beside it.
fn partial_left(to: &Path) -> bool {
    let prefix = format!("{}.partial-", to.file_name().unwrap().to_string_lossy());
    std::fs::read_dir(to.parent().unwrap()).unwrap().any(|e| {
        e.unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with(&prefix)
    })
}

/// The names of the files in `dir`, sorted.
fn file_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A shipped database holds VERSION, MANIFEST and every slice file of the plan, byte for
/// byte; the MANIFEST's sizes and CRC-32s are the files'; and it answers as the site does.
#[test]
fn ship_copies_the_finished_database_with_a_manifest() {
    let site = base4();
    let to = fixture::scratch_path("db", "shipped");
    let out = ship(site, &to, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let slices: Vec<Slice> = nowdb::slice::plan(4)
        .pairs()
        .flat_map(|p| p.slices())
        .collect();
    let s = text(&out.stdout);
    let head = format!("shipped {} slices of 2..4 pieces to ", slices.len());
    assert!(
        s.starts_with(&head) && s.contains("every CRC checked"),
        "{s}"
    );

    let mut expected: Vec<String> = slices.iter().map(|s| format!("{s}.ndb")).collect();
    expected.extend(["MANIFEST".to_string(), "VERSION".to_string()]);
    expected.sort();
    assert_eq!(file_names(&to), expected);
    for name in expected.iter().filter(|n| *n != "MANIFEST") {
        let (a, b) = (site.join("db").join(name), to.join(name));
        assert!(
            std::fs::read(a).unwrap() == std::fs::read(b).unwrap(),
            "{name}"
        );
    }

    let manifest = std::fs::read_to_string(to.join("MANIFEST")).unwrap();
    let lines: Vec<Vec<&str>> = manifest.lines().map(|l| l.split('\t').collect()).collect();
    let (total, files) = lines.split_last().unwrap();
    assert_eq!(files.len(), expected.len() - 1, "{manifest}");
    let mut sum = 0;
    for f in files {
        let bytes = std::fs::read(to.join(f[0])).unwrap();
        assert_eq!(f[1], bytes.len().to_string(), "{f:?}");
        assert_eq!(
            f[2],
            format!("{:08x}", nowdb::db::crc32::crc32(&bytes)),
            "{f:?}"
        );
        sum += bytes.len();
    }
    let files_word = format!("{} files", files.len());
    assert_eq!(
        total,
        &["total", &sum.to_string(), &files_word],
        "{manifest}"
    );

    let theirs = Database::open(&site.join("db"), 1 << 20).unwrap();
    let ours = Database::open(&to, 1 << 20).unwrap();
    for name in ["1111.23", "0022.00", "2101.-3"] {
        let ix = SliceIndex::new(name.parse().unwrap());
        for i in (0..ix.count()).step_by(53) {
            let pos = ix.position_unchecked(i);
            assert_eq!(ours.probe(&pos).unwrap(), theirs.probe(&pos).unwrap());
        }
    }
}

/// A flipped byte in a block of a source slice file: the ship fails naming the file and the
/// block, and leaves neither DIR nor its partial copy.
#[test]
fn ship_of_a_damaged_database_leaves_nothing() {
    let d = copy_of_base("ship-damaged");
    let path = largest_db_file(&d);
    let name = path.file_stem().unwrap().to_string_lossy().into_owned();
    let slice: Slice = name.parse().unwrap();
    let at = nowdb::db::format::SliceFile::open(&path, &slice)
        .unwrap()
        .block_offset(1);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[at as usize + 300] ^= 0x01;
    std::fs::write(&path, &bytes).unwrap();

    let to = fixture::scratch_path("db", "ship-damaged-out");
    let out = ship(&d, &to, &[]);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("{name}.ndb")) && err.contains("CRC error in block 1"),
        "{err}"
    );
    assert!(!to.exists() && !partial_left(&to), "{err}");
}

/// DIR must be new or empty: a non-empty one is refused and left as it was; an empty one
/// is filled.
#[test]
fn ship_refuses_a_directory_that_is_not_empty() {
    let to = fixture::scratch("db", "ship-full");
    std::fs::write(to.join("mine"), "keep me").unwrap();
    let out = ship(base4(), &to, &[]);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains(&to.display().to_string()) && err.contains("not empty"),
        "{err}"
    );
    assert_eq!(file_names(&to), ["mine"]);
    assert_eq!(std::fs::read_to_string(to.join("mine")).unwrap(), "keep me");
    assert!(!partial_left(&to));

    let empty = fixture::scratch("db", "ship-empty");
    let out = ship(base4(), &empty, &["--pieces", "3"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(file_names(&empty).contains(&"MANIFEST".to_string()));
}

/// `--pieces 5` of a 2..4 site: not finished, refused naming a missing 5-piece slice.
#[test]
fn ship_refuses_a_database_that_is_not_finished() {
    let to = fixture::scratch_path("db", "ship-unfinished");
    let out = ship(base4(), &to, &["--pieces", "5"]);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(err.contains("2..5 pieces is not finished"), "{err}");
    let five: Vec<Slice> = nowdb::slice::plan(5)
        .pairs()
        .flat_map(|p| p.slices())
        .filter(|s| s.pieces() == 5)
        .collect();
    assert!(
        five.iter().any(|s| err.contains(&format!("{s}.ndb"))),
        "{err}"
    );
    assert!(!to.exists() && !partial_left(&to));
}

/// `--ship --json`: one JSON object with the summary's figures.
#[test]
fn ship_json_is_one_object() {
    let to = fixture::scratch_path("db", "ship-json");
    let out = ship(base4(), &to, &["--json", "--pieces", "3"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let three = nowdb::slice::plan(3)
        .pairs()
        .flat_map(|p| p.slices())
        .count();
    assert_eq!(v["slices"], three, "{v}");
    assert_eq!(v["pieces"], 3, "{v}");
    assert_eq!(v["dir"], to.display().to_string(), "{v}");
    let bytes: u64 = file_names(&to)
        .iter()
        .filter(|n| *n != "MANIFEST")
        .map(|n| std::fs::metadata(to.join(n)).unwrap().len())
        .sum();
    assert_eq!(v["bytes"], bytes, "{v}");
    assert!(v["seconds"].as_f64().is_some(), "{v}");
}

/// What an interrupted ship from this host left (its process gone) is removed by the next
/// ship to the same DIR, and said; another host's partial copy, and a live process's, stay.
#[test]
fn ship_removes_what_an_interrupted_ship_left() {
    let to = fixture::scratch_path("db", "ship-leftover");
    let host = nix::unistd::gethostname()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let name = to.file_name().unwrap().to_string_lossy().into_owned();
    let beside = |suffix: &str| to.with_file_name(format!("{name}.partial-{suffix}"));
    // A pid above the kernel's limit is never a live process.
    let dead = beside(&format!("{host}-4194305"));
    let live = beside(&format!("{host}-{}", std::process::id()));
    let other = beside("another-host-4194305");
    for d in [&dead, &live, &other] {
        std::fs::create_dir_all(d).unwrap();
        std::fs::write(d.join("VERSION"), "half a ship").unwrap();
    }
    let out = ship(base4(), &to, &["--json", "--pieces", "3"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["leftovers_removed"],
        serde_json::json!([dead.display().to_string()])
    );
    assert!(!dead.exists(), "the dead ship's copy is still there");
    assert!(
        live.exists() && other.exists(),
        "a live or another host's copy was removed"
    );
    for d in [&live, &other] {
        std::fs::remove_dir_all(d).unwrap();
    }
}
