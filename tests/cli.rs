//! The command-line tools, run as real processes: what a user types and reads.
//!
//! Expected values come from outside the tools where possible (Aart Bik's perft figures,
//! moves worked out by hand on the board diagram in tests/rules.rs, the library for indices),
//! so a test fails when the CLI and the library disagree, not only when the CLI changes.
//! JSON is checked with python3's parser: a hand-built `format!` JSON writer can emit
//! something that merely looks like JSON.

mod common;

use common::fixture::{self, DBPROBE, DBSTATUS, JOBRUNNER};
use nowdb::index::SliceIndex;
use nowdb::{Slice, parse_fen};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Runs (no site) and insists on success with nothing on stderr; returns stdout, which must be
/// UTF-8.
fn ok(bin: &str, args: &[&str]) -> String {
    let o = fixture::run_plain(bin, args);
    assert!(
        o.status.success() && o.stderr.is_empty(),
        "{bin} {args:?}: {:?}\n{}",
        o.status,
        fixture::stderr(&o)
    );
    fixture::utf8(&o.stdout)
}

/// Parses `json` with python3 and prints the value of `expr` (on `d`, the parsed document).
fn python_json(json: &str, expr: &str) -> String {
    let script = format!("import json,sys; d=json.load(sys.stdin); print({expr})");
    let mut child = Command::new("python3")
        .args(["-c", &script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 is needed to validate JSON output");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(json.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(
        o.status.success(),
        "not JSON: {json}\n{}",
        fixture::stderr(&o)
    );
    fixture::utf8(&o.stdout).trim_end().to_string()
}

/// The lines of `text` that start with `prefix`, sorted (move order is the generator's).
fn sorted_lines(text: &str, prefix: &str) -> Vec<String> {
    let mut v: Vec<String> = text
        .lines()
        .filter(|l| l.starts_with(prefix))
        .map(String::from)
        .collect();
    v.sort();
    v
}

/// The slice and index the library gives a FEN, for comparing with what dbprobe prints.
fn library_view(fen: &str) -> (Slice, u64) {
    let pos = parse_fen(fen).unwrap().black_to_move();
    let slice = Slice::of(&pos);
    (slice, SliceIndex::new(slice).index(&pos))
}

// ---------------------------------------------------------------------------------------------
// dbprobe
// ---------------------------------------------------------------------------------------------

#[test]
fn perft_from_the_opening() {
    let want = "1\t7\n2\t49\n3\t302\n4\t1469\n5\t7361\n6\t36768\n";
    assert_eq!(ok(DBPROBE, &["--perft", "6"]), want);
    // The opening with White to move is the same stored position (it is its own reversal).
    assert_eq!(ok(DBPROBE, &["--perft", "6", "W:W21-32:B1-12"]), want);
}

#[test]
fn describes_a_position_black_to_move() {
    let fen = "B:W18,K12:B3,5";
    let out = ok(DBPROBE, &[fen]);
    let (slice, index) = library_view(fen);
    assert_eq!(slice.to_string(), "0121.13");
    assert!(out.starts_with(&format!("fen\t{fen}\nslice\t{slice}\nindex\t{index}\n")));
    // By hand: 3 steps to 7 or 8 on its own rank 1 (in-slice); 5 to 9 passes Black's leading
    // rank (conversion). No capture is available.
    let moves = [
        "move\t3-7\tin-slice\tW:W18,K12:B5,7",
        "move\t3-8\tin-slice\tW:W18,K12:B5,8",
        "move\t5-9\tconversion\tW:W18,K12:B3,9",
    ];
    assert_eq!(sorted_lines(&out, "move\t"), moves);
    assert_eq!(out.lines().count(), 3 + moves.len(), "{out}");

    let json = ok(DBPROBE, &["--json", fen]);
    assert_eq!(json.lines().count(), 1, "one line: {json}");
    assert!(json.contains("\"slice\""), "{json}");
    assert_eq!(
        python_json(&json, "(d['slice'], d['index'], d['fen'])"),
        format!("('{slice}', {index}, '{fen}')")
    );
    assert_eq!(
        python_json(
            &json,
            "sorted((m['move'], m['conversion'], m['fen']) for m in d['moves'])"
        ),
        "[('3-7', False, 'W:W18,K12:B5,7'), ('3-8', False, 'W:W18,K12:B5,8'), \
         ('5-9', True, 'W:W18,K12:B3,9')]"
    );
}

#[test]
fn describes_a_position_white_to_move() {
    // Same board, White to move: moves are printed in the board's own numbering even though
    // they are generated on the reversed position. By hand: White men move down, so 18 goes
    // to 14 or 15 (its only man: conversions); the king on 12 goes to 8 or 16 (in-slice).
    let fen = "W:W18,K12:B3,5";
    let out = ok(DBPROBE, &[fen]);
    let (slice, index) = library_view(fen);
    // Stored reversed, so its slice is the mirror of the Black-to-move one (0121.13).
    assert_eq!(slice.to_string(), "1012.31");
    assert!(
        out.contains(&format!("\nslice\t{slice}\nindex\t{index}\n")),
        "{out}"
    );
    assert_eq!(
        sorted_lines(&out, "move\t"),
        [
            "move\t12-16\tin-slice\tB:W18,K16:B3,5",
            "move\t12-8\tin-slice\tB:W18,K8:B3,5",
            "move\t18-14\tconversion\tB:W14,K12:B3,5",
            "move\t18-15\tconversion\tB:W15,K12:B3,5",
        ]
    );
}

#[test]
fn default_position_is_the_opening_with_the_book_moves() {
    let out = ok(DBPROBE, &[]);
    assert!(
        out.starts_with(
            "fen\tB:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12\n"
        )
    );
    let mut moves: Vec<&str> = out
        .lines()
        .filter_map(|l| l.strip_prefix("move\t")?.split('\t').next())
        .collect();
    moves.sort();
    assert_eq!(
        moves,
        ["10-14", "10-15", "11-15", "11-16", "12-16", "9-13", "9-14"]
    );
}

#[test]
fn a_side_without_pieces_or_moves() {
    // White to move with no pieces has lost; with a side empty there is no index line.
    let out = ok(DBPROBE, &["W:W:B5"]);
    assert!(out.contains("no legal move"), "{out}");
    assert!(!out.contains("index\t"), "{out}");
    assert!(!out.contains("move\t"), "{out}");
    let json = ok(DBPROBE, &["--json", "W:W:B5"]);
    assert_eq!(python_json(&json, "(d['index'], d['moves'])"), "(None, [])");
}

#[test]
fn slice_and_index_round_trip_through_the_cli() {
    let mut cases = vec![("3212.06".to_string(), 12345u64)];
    for name in ["3212.06", "0121.13", "1100.--", "0044.66", "2211.35"] {
        let n = Slice::count(&name.parse().unwrap());
        cases.extend([0, n / 2, n - 1].map(|at| (name.to_string(), at)));
    }
    for (name, at) in cases {
        let at_text = at.to_string();
        let fen = ok(DBPROBE, &["--slice", &name, "--at", &at_text]);
        let fen = fen.strip_suffix('\n').expect("one line");
        assert!(
            !fen.contains('\n') && fen.starts_with("B:"),
            "{name} {at}: {fen:?}"
        );
        let out = ok(DBPROBE, &[fen]);
        assert!(
            out.contains(&format!("\nslice\t{name}\nindex\t{at}\n")),
            "{name} at {at} -> {fen} -> {out}"
        );
    }
}

/// Runs a command that must fail cleanly: non-zero exit, nothing on stdout, a message naming
/// `needle` on stderr, and no panic.
fn fails_cleanly(bin: &str, args: &[&str], needles: &[&str]) {
    let o = fixture::run_plain(bin, args);
    let err = fixture::utf8(&o.stderr);
    assert!(!o.status.success(), "{args:?} succeeded");
    assert!(
        o.stdout.is_empty(),
        "{args:?} printed {:?}",
        fixture::text(&o.stdout)
    );
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    for needle in needles {
        assert!(
            err.contains(needle),
            "{args:?}: stderr {err:?} lacks {needle:?}"
        );
    }
}

#[test]
fn bad_dbprobe_input_fails_cleanly() {
    let count = Slice::count(&"3212.06".parse().unwrap()).to_string();
    let cases: &[(&[&str], &[&str])] = &[
        (&["B:W18:B33"], &["dbprobe:", "B:W18:B33", "square 33"]),
        (&["B:W18,x1:B3"], &["\"x1\""]),
        (&["X:W18:B3"], &["\"X\""]),
        (&["B:W18:B30"], &["square 30", "crowned"]),
        (&["B:W18"], &["3 fields"]),
        (&["--perft", "2", "B:W18:B18"], &["square 18", "twice"]),
        (
            &["--slice", "3113.71", "--at", "0"],
            &["dbprobe:", "3113.71", "rank 7"],
        ),
        (&["--slice", "4400.1-", "--at", "0"], &["4400.1-", "no men"]),
        (
            &["--slice", "0000.--", "--at", "0"],
            &["0000.--", "at least one piece"],
        ),
        (&["--slice", "31x3.01", "--at", "0"], &["31x3.01"]),
        (
            &["--slice", "3212.06", "--at", &count],
            &[&count, "out of range", "3212.06"],
        ),
        (
            &["--slice", "3212.06", "--at", "99999999999999"],
            &["99999999999999"],
        ),
        (&["--slice", "3212.06", "--at", "abc"], &["abc"]),
        (&["--slice", "3212.06"], &["--at"]),
        (&["--perft", "x"], &["'x'"]),
    ];
    for (args, needles) in cases {
        fails_cleanly(DBPROBE, args, needles);
    }
}

/// `nowdb::cli::finish` treats any error whose text contains "Broken pipe" as a closed stdout
/// and exits 0 silently; the FEN error echoes the user's input, so this input "succeeds".
#[test]
fn an_error_message_mentioning_a_broken_pipe_is_still_an_error() {
    fails_cleanly(DBPROBE, &["B:W18:B3 Broken pipe"], &["Broken pipe"]);
}

// ---------------------------------------------------------------------------------------------
// Every binary
// ---------------------------------------------------------------------------------------------

/// The binaries of the crate, from src/bin at test time, so a new tool is covered as soon as it
/// exists. Cargo builds every binary target before running integration tests, next to dbprobe.
fn all_binaries() -> Vec<(String, PathBuf)> {
    let dir = Path::new(DBPROBE).parent().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/bin");
    let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter_map(|p| {
            let name = if p.is_dir() && p.join("main.rs").exists() {
                p.file_name()?.to_str()?.to_string()
            } else if p.extension()? == "rs" {
                p.file_stem()?.to_str()?.to_string()
            } else {
                return None;
            };
            let exe = dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
            Some((name, exe))
        })
        .collect();
    out.sort();
    out
}

#[test]
fn every_binary_has_help() {
    let bins = all_binaries();
    let names: Vec<&str> = bins.iter().map(|(n, _)| n.as_str()).collect();
    assert!(
        names.contains(&"dbprobe") && names.contains(&"dbstatus"),
        "{names:?}"
    );
    // Words from each tool's purpose; a new tool only has to describe itself somehow.
    let purpose = |name: &str| match name {
        "dbprobe" => Some("checkers positions"),
        "dbstatus" => Some("Report on a nowdb build"),
        _ => None,
    };
    for (name, exe) in &bins {
        assert!(exe.exists(), "{name} not built at {}", exe.display());
        let help = ok(exe.to_str().unwrap(), &["--help"]);
        assert!(help.contains(&format!("Usage: {name}")), "{name}: {help}");
        // clap puts the `about` text first; a tool without one starts with "Usage:".
        let first = help.lines().next().unwrap_or("");
        assert!(
            first.split_whitespace().count() >= 3 && !first.starts_with("Usage"),
            "{name} --help does not say what it is for:\n{help}"
        );
        if let Some(words) = purpose(name) {
            assert!(help.contains(words), "{name}: {help}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// dbstatus
// ---------------------------------------------------------------------------------------------

#[test]
fn plan_table_is_consistent_with_its_summary() {
    let out = ok(DBSTATUS, &["plan", "--pieces", "4"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "wave\tpair\tpositions\tdepends_on");
    let summary = lines.last().unwrap();
    let rows: Vec<Vec<&str>> = lines[1..lines.len() - 1]
        .iter()
        .map(|l| l.split('\t').collect())
        .collect();
    assert!(rows.iter().all(|r| r.len() == 4), "{out}");
    let positions: u64 = rows.iter().map(|r| r[2].parse::<u64>().unwrap()).sum();
    let waves = rows
        .iter()
        .map(|r| r[0].parse::<usize>().unwrap())
        .max()
        .unwrap()
        + 1;
    assert_eq!(
        *summary,
        format!(
            "# {} slice pairs, {positions} positions, {waves} waves",
            rows.len()
        )
    );
    // Every dependency is computed in an earlier wave.
    let wave_of: std::collections::HashMap<&str, usize> =
        rows.iter().map(|r| (r[1], r[0].parse().unwrap())).collect();
    for r in &rows {
        for d in r[3].split(',').filter(|d| !d.is_empty()) {
            let w = wave_of
                .get(d)
                .unwrap_or_else(|| panic!("{d} (needed by {}) not planned", r[1]));
            assert!(
                *w < r[0].parse().unwrap(),
                "{} in wave {} needs {d} (wave {w})",
                r[1],
                r[0]
            );
        }
    }
}

#[test]
fn plan_json_matches_the_table() {
    let json = ok(DBSTATUS, &["--json", "plan", "--pieces", "3"]);
    assert_eq!(json.lines().count(), 1, "{json}");
    assert_eq!(python_json(&json, "d['pieces']"), "3");
    let from_json = python_json(
        &json,
        "'\\n'.join(f'{i}\\t{p}' for i, w in enumerate(d['waves']) for p in w)",
    );
    let table = ok(DBSTATUS, &["plan", "--pieces", "3"]);
    let from_table: Vec<String> = table
        .lines()
        .filter(|l| !l.starts_with("wave\t") && !l.starts_with('#'))
        .map(|l| l.split('\t').take(2).collect::<Vec<_>>().join("\t"))
        .collect();
    assert_eq!(from_json, from_table.join("\n"));
    // `--json` is global: it may also follow the subcommand.
    assert_eq!(ok(DBSTATUS, &["plan", "--pieces", "3", "--json"]), json);
}

#[test]
fn plan_rejects_piece_counts_out_of_range() {
    for n in ["11", "1", "0", "x"] {
        fails_cleanly(
            DBSTATUS,
            &["plan", "--pieces", n],
            &[&format!("'{n}'"), "--pieces"],
        );
    }
    fails_cleanly(DBSTATUS, &["plan", "--pieces", "11"], &["2..=10"]);
    fails_cleanly(DBSTATUS, &["plan"], &["--pieces"]);
    fails_cleanly(DBSTATUS, &[], &["Usage"]);
}

/// Every binary prints its man page and its completions for bash, zsh and fish (what
/// `scripts/install-docs` installs); a shell it does not know is a clear error.
#[test]
fn every_binary_has_a_man_page_and_shell_completions() {
    for (name, exe) in fixture::BINARIES {
        let out = fixture::run_plain(exe, &["--man"]);
        let man = String::from_utf8(out.stdout).unwrap();
        assert!(
            out.status.success() && man.contains(&format!(".TH {name} 1")),
            "{name}: {man}"
        );
        assert!(
            man.contains(".SH OPTIONS") || man.contains(".SH SUBCOMMANDS"),
            "{name}"
        );
        for shell in ["bash", "zsh", "fish"] {
            let out = fixture::run_plain(exe, &["--completions", shell]);
            let text = String::from_utf8(out.stdout).unwrap();
            assert!(
                out.status.success() && text.contains(name),
                "{name} {shell}: {text}"
            );
        }
        let out = fixture::run_plain(exe, &["--completions", "nosh"]);
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr).contains("not a shell"));
    }
}

/// Long foreground work draws a bar on a terminal (a real pseudo-terminal from `script`) and
/// writes plain lines, free of terminal escapes, when stderr is a file or a pipe.
#[test]
fn progress_is_a_bar_on_a_terminal_and_plain_lines_elsewhere() {
    let dir = fixture::scratch("cli", "progress");
    let tty_site = dir.join("tty");
    let command = format!(
        "{JOBRUNNER} --site {} build-local --pieces 4 --runners 2",
        tty_site.display()
    );
    let o = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .output()
        .unwrap();
    let tty = fixture::utf8(&o.stdout);
    assert!(o.status.success(), "{tty}");
    assert!(tty.contains("\u{1b}[") && tty.contains("100%"), "{tty}");
    assert!(tty.contains("built 2..4 pieces"), "{tty}");

    let o = fixture::run(
        JOBRUNNER,
        &dir.join("plain"),
        &["build-local", "--pieces", "4", "--progress-secs", "0.05"],
    );
    let plain = fixture::utf8(&o.stderr);
    assert!(o.status.success(), "{plain}");
    assert!(
        !plain.contains('\u{1b}') && plain.contains("] slices "),
        "{plain}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
