//! The egdb C library (`egdb/`) as engines use it: tests/c/probe_test.c, written against
//! egdb/include/egdb.h, compiled with the system's compilers and linked with libegdb,
//! probes a finished 2..5 site and must agree with `dbprobe` on a million positions drawn
//! over every slice; and the Python module's pytest suite runs against the same site.

mod common;

use common::fixture::{self, DBPROBE, text};
use common::parts::{Part, require};
use nowdb::notation::{format_fen, standard_square};
use nowdb::rng::XorShift;
use nowdb::{Color, Setup, SliceIndex};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, OnceLock};

const SAMPLES: u64 = 1_000_000;

/// The finished 2..5 site every test here probes.
fn site5() -> &'static Path {
    static SITE: OnceLock<PathBuf> = OnceLock::new();
    SITE.get_or_init(|| {
        let d = fixture::scratch_path("egdb", "site5");
        common::site::build(&d, 5, |o| o.mtc = true);
        d
    })
}

fn db5() -> PathBuf {
    site5().join("db")
}

/// Standard-numbering bitboard (bit n-1 for square n) of a board of nowdb's squares.
fn normal(set: u32) -> u32 {
    nowdb::notation::bits(set).fold(0, |acc, s| acc | 1 << (standard_square(s) - 1))
}

/// The sample: `SAMPLES` positions, each of a slice drawn evenly from every slice of the
/// database and an index drawn evenly in it, with either side to move; lines
/// `FEN black white king color` (KingsRow's layout), and the FENs alone for dbprobe.
fn sample() -> &'static (PathBuf, PathBuf) {
    static SAMPLE: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    SAMPLE.get_or_init(|| {
        let slices = nowdb::db::probe::list_slices(&db5()).unwrap();
        let indexes: Vec<SliceIndex> = slices.iter().map(|s| SliceIndex::new(*s)).collect();
        let mut rng = XorShift::new(0x5eed_e6db);
        let (lines, fens) = (site5().join("sample.txt"), site5().join("sample.fens"));
        let mut l = std::io::BufWriter::new(std::fs::File::create(&lines).unwrap());
        let mut f = std::io::BufWriter::new(std::fs::File::create(&fens).unwrap());
        for _ in 0..SAMPLES {
            let ix = &indexes[rng.below(indexes.len() as u64) as usize];
            let pos = ix.position_unchecked(rng.below(ix.count()));
            let setup = if rng.below(2) == 0 {
                Setup {
                    board: pos,
                    to_move: Color::Black,
                }
            } else {
                Setup {
                    board: pos.reversed(),
                    to_move: Color::White,
                }
            };
            let b = setup.board;
            let fen = format_fen(&setup);
            writeln!(
                l,
                "{fen} {:x} {:x} {:x} {}",
                normal(b.black),
                normal(b.white),
                normal(b.kings),
                (setup.to_move == Color::White) as u8
            )
            .unwrap();
            writeln!(f, "{fen}").unwrap();
        }
        l.flush().unwrap();
        f.flush().unwrap();
        (lines, fens)
    })
}

/// dbprobe's value of every sampled position, in order.
fn dbprobe_values() -> &'static Vec<String> {
    static VALUES: OnceLock<Vec<String>> = OnceLock::new();
    VALUES.get_or_init(|| {
        let (_, fens) = sample();
        let o = Command::new(DBPROBE)
            .arg("--site")
            .arg(site5())
            .arg("--batch")
            .stdin(std::fs::File::open(fens).unwrap())
            .output()
            .unwrap();
        assert!(o.status.success(), "dbprobe --batch: {}", text(&o.stderr));
        let values: Vec<String> = text(&o.stdout)
            .lines()
            .map(|l| l.rsplit('\t').next().unwrap().to_string())
            .collect();
        assert_eq!(values.len() as u64, SAMPLES);
        values
    })
}

/// Where cargo put libegdb.so and libegdb.a for this run: `deps/` beside the binaries
/// (`cargo test` builds the egdb member there, for its own tests, and copies them up to
/// the binaries' directory only on `cargo build`).
fn lib_dir() -> PathBuf {
    let d = Path::new(DBPROBE).parent().unwrap().join("deps");
    for lib in ["libegdb.so", "libegdb.a"] {
        assert!(
            d.join(lib).is_file(),
            "{} is missing: `cargo test --release` builds it with the egdb workspace member \
             (not with `-p nowdb` alone)",
            d.join(lib).display()
        );
    }
    d
}

#[derive(Clone, Copy, Debug)]
enum Link {
    Shared,
    Static,
}

/// probe_test.c compiled by `compiler` (`cc`, `c++`, `clang`, `clang++`) and linked with
/// libegdb as `link` says; built once per combination.
fn probe_test(compiler: &str, link: Link) -> PathBuf {
    static BUILT: Mutex<Vec<(String, PathBuf)>> = Mutex::new(Vec::new());
    let key = format!("{compiler}-{link:?}");
    let mut built = BUILT.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, p)) = built.iter().find(|(k, _)| *k == key) {
        return p.clone();
    }
    let out = fixture::scratch("egdb", &format!("bin-{key}")).join("probe_test");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let libs = lib_dir();
    let mut c = Command::new(compiler);
    let cpp = compiler.ends_with("++");
    if cpp {
        c.args(["-x", "c++", "-std=c++11"]);
    } else {
        c.arg("-std=c99");
    }
    c.args(["-O2", "-Wall", "-Wextra", "-Werror", "-pthread", "-o"])
        .arg(&out)
        .arg("-I")
        .arg(root.join("egdb/include"))
        .arg(root.join("tests/c/probe_test.c"));
    if cpp {
        // Back to C for the libraries that follow.
        c.args(["-x", "none"]);
    }
    match link {
        Link::Shared => {
            c.arg("-L")
                .arg(&libs)
                .arg("-legdb")
                .arg(format!("-Wl,-rpath,{}", libs.display()));
        }
        Link::Static => {
            // What `cargo rustc -- --print native-static-libs` names for this crate.
            c.arg(libs.join("libegdb.a")).args([
                "-lgcc_s",
                "-lutil",
                "-lrt",
                "-lpthread",
                "-lm",
                "-ldl",
                "-lc",
            ]);
        }
    }
    let o = c.output().unwrap();
    assert!(
        o.status.success(),
        "{compiler} could not build probe_test.c ({link:?}):\n{}",
        text(&o.stderr)
    );
    built.push((key, out.clone()));
    out
}

fn run(exe: &Path, args: &[&str]) -> Output {
    Command::new(exe)
        .args(args)
        // cargo's LD_LIBRARY_PATH names target/release first, where an older libegdb.so from
        // `cargo build` may lie: the program takes the one its rpath names.
        .env_remove("LD_LIBRARY_PATH")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn ok(exe: &Path, args: &[&str]) -> String {
    let o = run(exe, args);
    assert!(
        o.status.success(),
        "{} {args:?}: {}\n{}",
        exe.display(),
        o.status,
        text(&o.stderr)
    );
    text(&o.stdout)
}

/// The first `n` lines of the sample, in a file of their own.
fn sample_head(n: usize) -> PathBuf {
    let (lines, _) = sample();
    let all = std::fs::read_to_string(lines).unwrap();
    let head = fixture::scratch("egdb", &format!("sample-{n}")).join("sample.txt");
    std::fs::write(
        &head,
        all.lines().take(n).collect::<Vec<_>>().join("\n") + "\n",
    )
    .unwrap();
    head
}

/// `probe_test sample DB FILE THREADS CACHE_MB`: each position's value, a line each.
fn sample_values(exe: &Path, db: &Path, file: &Path, threads: u32, cache_mb: u32) -> String {
    ok(
        exe,
        &[
            "sample",
            db.to_str().unwrap(),
            file.to_str().unwrap(),
            &threads.to_string(),
            &cache_mb.to_string(),
        ],
    )
}

/// `values` (of the first `n` sampled positions) are dbprobe's, line for line.
fn assert_agrees_with_dbprobe(values: &str, n: usize, what: &str) {
    assert_eq!(values.lines().count(), n, "{what}");
    let (lines, _) = sample();
    let fens = std::fs::read_to_string(lines).unwrap();
    let diff: Vec<String> = values
        .lines()
        .zip(dbprobe_values())
        .zip(fens.lines())
        .filter(|((c, d), _)| c != d)
        .take(10)
        .map(|((c, d), l)| format!("{l}: C {c}, dbprobe {d}"))
        .collect();
    assert!(
        diff.is_empty(),
        "{what}: C and dbprobe differ:\n{}",
        diff.join("\n")
    );
}

/// Every one of a million positions over all slices, both colours, both layouts, one
/// thread and then eight sharing handles whose cache is a quarter of the database.
#[test]
fn c_program_agrees_with_dbprobe_on_a_million_positions() {
    require(&[Part::Gcc]);
    let exe = probe_test("cc", Link::Shared);
    let (lines, _) = sample();
    let out = sample_values(&exe, &db5(), lines, 8, 2);
    assert_agrees_with_dbprobe(&out, SAMPLES as usize, "cc, 8 threads");
}

/// The header compiles unchanged as C and C++ with gcc and clang, shared and static.
#[test]
fn header_and_library_work_from_c_and_cpp_with_gcc_and_clang() {
    require(&[Part::Gcc, Part::Clang]);
    let short = sample_head(20_000);
    for (compiler, link) in [
        ("c++", Link::Shared),
        ("clang", Link::Shared),
        ("clang++", Link::Shared),
        ("cc", Link::Static),
        ("clang++", Link::Static),
    ] {
        let exe = probe_test(compiler, link);
        let out = sample_values(&exe, &db5(), &short, 4, 16);
        assert_agrees_with_dbprobe(&out, 20_000, &format!("{compiler} {link:?}"));
    }
}

/// `cl = 1` answers only from memory: EGDB_NOT_IN_CACHE on a cold handle, the value once
/// the blocks are loaded.
#[test]
fn conditional_lookup_answers_from_memory_only() {
    require(&[Part::Gcc]);
    let exe = probe_test("cc", Link::Shared);
    let (lines, _) = sample();
    let out = ok(
        &exe,
        &["cl", db5().to_str().unwrap(), lines.to_str().unwrap()],
    );
    assert!(out.starts_with("cl: 2000 positions"), "{out}");
}

/// Positions with more pieces than opened (or than the database has) are
/// EGDB_SUBDB_UNAVAILABLE; the others are answered.
#[test]
fn more_pieces_than_opened_are_unavailable() {
    require(&[Part::Gcc]);
    let exe = probe_test("cc", Link::Shared);
    let (lines, _) = sample();
    let out = ok(
        &exe,
        &["pieces", db5().to_str().unwrap(), lines.to_str().unwrap()],
    );
    assert!(out.contains("opened 4:"), "{out}");
    let (answered, unavailable) = {
        let w: Vec<u64> = out
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|t| t.parse().ok())
            .collect();
        (w[w.len() - 2], w[w.len() - 1])
    };
    assert!(answered > 0 && unavailable > 0, "{out}");
}

/// A slice the directory lacks is EGDB_SUBDB_UNAVAILABLE, for its own stored positions and
/// for those whose search needs it; every other position keeps its value.
#[test]
fn a_missing_slice_is_unavailable() {
    require(&[Part::Gcc]);
    let exe = probe_test("cc", Link::Shared);
    let (lines, _) = sample();
    let copy = fixture::scratch_path("egdb", "missing-slice");
    fixture::copy_dir(&db5(), &copy);
    let gone: nowdb::Slice = "2111.56".parse().unwrap();
    std::fs::remove_file(copy.join(format!("{gone}.ndb"))).unwrap();
    let all = std::fs::read_to_string(lines).unwrap();
    let out = sample_values(&exe, &copy, &sample_head(50_000), 2, 16);
    let (mut own, mut others_unavailable, mut others_equal) = (0, 0, 0);
    for ((got, want), line) in out.lines().zip(dbprobe_values()).zip(all.lines()) {
        let pos = line
            .split(' ')
            .next()
            .unwrap()
            .parse::<Setup>()
            .unwrap()
            .black_to_move();
        // A capture position is not stored in its slice: its value comes from smaller ones.
        if nowdb::Slice::of(&pos) == gone && !nowdb::board::has_capture(&pos) {
            assert_eq!(got, "-2", "{line}: a position of the missing slice");
            own += 1;
        } else if got == "-2" {
            others_unavailable += 1;
        } else {
            assert_eq!(got, want, "{line}");
            others_equal += 1;
        }
    }
    assert!(own > 0, "the sample has no position of {gone}");
    assert!(
        others_unavailable < others_equal / 100,
        "{others_unavailable} positions of other slices unavailable, {others_equal} answered"
    );
}

/// An MTC handle (egdb_open on `db/mtc`) answers KingsRow's MTC values: on 20,000 sampled
/// positions (either side to move, captures included) the C program's lookup equals the
/// library's distance mapped as the header says (0 for a draw, 1 below the threshold,
/// else the plies rounded down to even), and some of each kind occur.
#[test]
fn mtc_handle_answers_kingsrows_values() {
    use nowdb::db::mtc::Stored;
    require(&[Part::Gcc]);
    let exe = probe_test("cc", Link::Shared);
    let n = 20_000;
    let head = sample_head(n);
    let got = ok(
        &exe,
        &[
            "values",
            db5().join("mtc").to_str().unwrap(),
            head.to_str().unwrap(),
        ],
    );
    let db = nowdb::db::Database::open(&db5(), 16 << 20).unwrap();
    let lines = std::fs::read_to_string(&head).unwrap();
    let mut kinds = [0usize; 3];
    for (line, got) in lines.lines().zip(got.lines()) {
        let setup: Setup = line.split(' ').next().unwrap().parse().unwrap();
        let (value, stored) = db.probe_mtc(&setup.black_to_move()).unwrap();
        let want = match (value, stored) {
            (nowdb::solve::Value::Draw, _) => 0,
            (_, Some(Stored::Short)) => 1,
            (_, Some(Stored::Plies(d))) => (d & !1) as i32,
            (v, None) => panic!("{line}: {v} without a distance"),
        };
        kinds[want.min(2) as usize] += 1;
        assert_eq!(got, want.to_string(), "{line}");
    }
    assert_eq!(got.lines().count(), n);
    assert!(kinds.iter().all(|&k| k > 0), "{kinds:?}");
}

/// egdb_identify reports the type and the most pieces; nothing found is non-zero.
#[test]
fn identify_names_type_and_pieces() {
    require(&[Part::Gcc]);
    let exe = probe_test("cc", Link::Shared);
    assert_eq!(ok(&exe, &["identify", db5().to_str().unwrap()]), "0 4 5\n");
    let mtc = db5().join("mtc");
    assert_eq!(ok(&exe, &["identify", mtc.to_str().unwrap()]), "0 5 5\n");
    let none = fixture::scratch("egdb", "empty");
    assert_eq!(
        ok(&exe, &["identify", none.to_str().unwrap()]),
        "1 2 -1\n",
        "nothing found: non-zero, the outputs left as they were"
    );
}

/// A missing directory, one that is not a database, and a damaged file header: egdb_open
/// returns NULL and says why, naming the directory or file.
#[test]
fn open_fails_with_a_message_on_missing_or_corrupt_directories() {
    require(&[Part::Gcc]);
    let exe = probe_test("cc", Link::Shared);
    let missing = site5().join("no-such-db");
    let not_db = fixture::scratch("egdb", "not-a-db");
    std::fs::write(not_db.join("notes.txt"), "hello").unwrap();
    let damaged = fixture::scratch_path("egdb", "damaged-header");
    fixture::copy_dir(&db5(), &damaged);
    let victim = damaged.join("1111.23.ndb");
    let mut bytes = std::fs::read(&victim).unwrap();
    bytes[20] ^= 0x10;
    std::fs::write(&victim, bytes).unwrap();
    for (dir, says) in [
        (&missing, "does not exist".to_string()),
        (&not_db, "is not a nowdb database".to_string()),
        (&damaged, victim.display().to_string()),
    ] {
        let o = run(&exe, &["open", dir.to_str().unwrap()]);
        let err = text(&o.stderr);
        assert_eq!(
            o.status.code(),
            Some(3),
            "egdb_open({}) opened: {err}",
            dir.display()
        );
        assert!(
            err.contains(&dir.display().to_string()) && err.contains(&says),
            "egdb_open({}) said: {err}",
            dir.display()
        );
    }
}

/// verify() passes on the built database and fails, naming the slice, once one byte of a
/// block is flipped.
#[test]
fn verify_finds_a_flipped_byte() {
    require(&[Part::Gcc]);
    let exe = probe_test("cc", Link::Shared);
    let copy = fixture::scratch_path("egdb", "flip");
    fixture::copy_dir(&db5(), &copy);
    let o = run(&exe, &["verify", copy.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    // The largest file, a byte near its end: inside its last block, past the header.
    let victim = std::fs::read_dir(&copy)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ndb"))
        .max_by_key(|p| std::fs::metadata(p).unwrap().len())
        .unwrap();
    let mut bytes = std::fs::read(&victim).unwrap();
    let at = bytes.len() - 100;
    bytes[at] ^= 0x01;
    std::fs::write(&victim, bytes).unwrap();
    let o = run(&exe, &["verify", copy.to_str().unwrap()]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "verify did not fail: {err}");
    let slice = victim.file_stem().unwrap().to_str().unwrap();
    assert!(
        err.contains(&format!("slice {slice} is damaged")),
        "verify named no damaged slice: {err}"
    );
}

/// Opening and probing every block of the database (twice, through a cache smaller than it)
/// grows the process's heap by no more than cache_mb, indexes included.
#[test]
fn memory_stays_within_cache_mb() {
    require(&[Part::Gcc]);
    let exe = probe_test("cc", Link::Shared);
    let (lines, _) = sample();
    for cache_mb in [8u64, 12] {
        let kib: u64 = ok(
            &exe,
            &[
                "memory",
                db5().to_str().unwrap(),
                lines.to_str().unwrap(),
                &cache_mb.to_string(),
            ],
        )
        .trim()
        .parse()
        .unwrap();
        assert!(
            kib <= cache_mb * 1024,
            "cache_mb {cache_mb}: the process's heap grew by {kib} KiB"
        );
    }
}

/// The Python module's pytest suite (python/tests) against the same site.
#[test]
fn python_module_pytest_suite() {
    require(&[Part::PythonModule]);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let o = Command::new("python3")
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(root.join("python/tests"))
        .env("NOWDB_TEST_DB", db5())
        .env("NOWDB_DBPROBE", DBPROBE)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "pytest failed:\n{}\n{}",
        text(&o.stdout),
        text(&o.stderr)
    );
}

/// docs/PROBING.md's first fenced block in `language`.
fn probing_block(language: &str) -> String {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/PROBING.md"))
            .unwrap();
    let open = format!("```{language}\n");
    let start = doc
        .find(&open)
        .unwrap_or_else(|| panic!("docs/PROBING.md has no {language} block"))
        + open.len();
    let len = doc[start..].find("```").unwrap();
    doc[start..start + len].to_string()
}

/// docs/PROBING.md's C example compiles as written (with the flags its first line gives) and
/// prints the value of its position; its Python example runs.
#[test]
fn probing_examples_run() {
    require(&[Part::Gcc, Part::PythonModule]);
    let dir = fixture::scratch("egdb", "readme");
    let c = probing_block("c");
    std::fs::write(dir.join("probe.c"), &c).unwrap();
    let libs = lib_dir();
    let o = Command::new("cc")
        .current_dir(&dir)
        .args(["-Wall", "-Werror", "probe.c", "-o", "probe", "-I"])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("egdb/include"))
        .arg("-L")
        .arg(&libs)
        .arg("-legdb")
        .arg(format!("-Wl,-rpath,{}", libs.display()))
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "docs/PROBING.md's C example: {}",
        text(&o.stderr)
    );
    assert_eq!(ok(&dir.join("probe"), &[db5().to_str().unwrap()]), "win\n");

    std::fs::write(dir.join("example.py"), probing_block("python")).unwrap();
    let o = Command::new("python3")
        .arg(dir.join("example.py"))
        .arg(db5())
        .output()
        .unwrap();
    let out = text(&o.stdout);
    assert!(
        o.status.success(),
        "docs/PROBING.md's Python example: {}",
        text(&o.stderr)
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[..2], ["win", "['draw', 'draw']"], "{out}");
    assert!(lines.len() > 2, "no moves printed: {out}");
}
