//! The documentation's commands run as written: every ```` ```sh ```` block of `README.md` and
//! `docs/OPERATING.md` is run with bash, in the order of the document, from the repository's
//! root with the binaries under test first on `PATH`, and must succeed.
//!
//! The convention (docs/TESTING.md): a block whose info string says `no-run` (```` ```sh
//! no-run ````) is not run; nor are the blocks of the sections listed in [`SKIPPED`] (which
//! must exist). Relative site directories (`--site NAME`, and paths `NAME/...`) are moved to a
//! scratch directory, so the checkout stays clean.
//!
//! The blocks meet the binaries as a newcomer on a fresh clone does: `./target/release/` and
//! the `PATH` the documents ask for (`target/release`) are a scratch target directory
//! (`CARGO_TARGET_DIR`), empty until a block builds into it, so a block that uses a tool no
//! earlier block built fails. `cargo build` (which `scripts/build-local` also runs) is a
//! stand-in that puts there the binaries under test it is asked for (`--bin NAME`, else all
//! of them and the egdb library): cargo has just built them, and a nested build with other
//! features would rebuild the crate for minutes.

mod common;

use common::fixture;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The documents whose commands are run.
const DOCUMENTS: [&str; 2] = ["README.md", "docs/OPERATING.md"];

/// Sections whose blocks are not run: (document, heading, why).
const SKIPPED: &[(&str, &str, &str)] = &[(
    "docs/OPERATING.md",
    "On a Slurm cluster",
    "needs a Slurm cluster (tests/slurm.rs runs a real one)",
)];

/// The longest a block may run.
const BLOCK_TIMEOUT: Duration = Duration::from_secs(240);

/// One fenced block of a Markdown document.
#[derive(Debug)]
struct Block {
    /// The line of the opening fence (1-based).
    line: usize,
    /// The info string after the fence (`sh`, `sh no-run`, `toml`, ...).
    info: String,
    /// The heading of the section it is in.
    heading: String,
    text: String,
}

impl Block {
    fn language(&self) -> &str {
        self.info.split_whitespace().next().unwrap_or("")
    }

    fn is_shell(&self) -> bool {
        self.language() == "sh"
    }

    fn marked_no_run(&self) -> bool {
        self.info.split_whitespace().any(|w| w == "no-run")
    }
}

/// The fenced blocks of a Markdown text, with the heading each is under.
fn blocks(markdown: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut heading = String::new();
    let mut open: Option<(usize, String, String)> = None;
    for (i, line) in markdown.lines().enumerate() {
        let fence = line.trim_start().starts_with("```");
        match &mut open {
            None if fence => {
                let info = line.trim_start().trim_start_matches('`').trim().to_string();
                open = Some((i + 1, info, String::new()));
            }
            None => {
                if let Some(h) = line.strip_prefix('#') {
                    heading = h.trim_start_matches('#').trim().to_string();
                }
            }
            Some(_) if fence => {
                let (line, info, text) = open.take().unwrap();
                out.push(Block {
                    line,
                    info,
                    heading: heading.clone(),
                    text,
                });
            }
            Some((_, _, text)) => {
                text.push_str(line);
                text.push('\n');
            }
        }
    }
    assert!(open.is_none(), "a fenced block is not closed");
    out
}

fn document(name: &str) -> String {
    std::fs::read_to_string(Path::new(ROOT).join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Why a block of `doc` is not run, if it is not.
fn skipped(doc: &str, b: &Block) -> Option<&'static str> {
    if !b.is_shell() {
        return Some("not a shell block");
    }
    if b.marked_no_run() {
        return Some("marked no-run");
    }
    SKIPPED
        .iter()
        .find(|(d, h, _)| *d == doc && *h == b.heading)
        .map(|(_, _, why)| *why)
}

/// The site directories a script names (`--site NAME` or `--site=NAME`).
fn site_names(script: &str) -> Vec<String> {
    let words: Vec<&str> = script.split_whitespace().collect();
    let mut names = Vec::new();
    for (i, w) in words.iter().enumerate() {
        let name = match w.strip_prefix("--site=") {
            Some(n) => Some(n),
            None if *w == "--site" => words.get(i + 1).copied(),
            None => None,
        };
        if let Some(n) = name
            && !names.iter().any(|m| m == n)
        {
            names.push(n.to_string());
        }
    }
    names
}

/// `script` with every relative site directory moved under `scratch` and
/// `./target/release/` pointing at the binaries under test.
fn rewrite(script: &str, scratch: &Path, bin_dir: &Path) -> Result<String, String> {
    let mut out = script.replace("./target/release/", &format!("{}/", bin_dir.display()));
    for name in site_names(script) {
        if name.starts_with('/') || name.starts_with('$') || name.starts_with('~') {
            return Err(format!(
                "--site {name}: runnable blocks name sites by relative paths (the test moves them \
                 to a scratch directory); mark the block no-run or use a relative name"
            ));
        }
        out = replace_word(&out, &name, &scratch.join(&name).display().to_string());
    }
    Ok(out)
}

/// `text` with `word` replaced where it starts a word (after the start, white space, `=`
/// or a quote) and ends one or continues as a path (before the end, white space, `/` or a
/// quote).
fn replace_word(text: &str, word: &str, by: &str) -> String {
    let boundary_before =
        |c: Option<char>| c.is_none_or(|c| c.is_whitespace() || "='\"".contains(c));
    let boundary_after =
        |c: Option<char>| c.is_none_or(|c| c.is_whitespace() || "/'\"".contains(c));
    let mut out = String::new();
    let mut rest = text;
    let mut before: Option<char> = None;
    while let Some(i) = rest.find(word) {
        let prev = rest[..i].chars().last().or(before);
        let next = rest[i + word.len()..].chars().next();
        out.push_str(&rest[..i]);
        if boundary_before(prev) && boundary_after(next) {
            out.push_str(by);
        } else {
            out.push_str(word);
        }
        before = word.chars().last();
        rest = &rest[i + word.len()..];
    }
    out.push_str(rest);
    out
}

/// Runs the runnable blocks of `doc` in order; the first that fails ends the test.
fn run_document(doc: &str) {
    let text = document(doc);
    let suite = doc.replace(['/', '.'], "-");
    let scratch = fixture::scratch("docs", &suite);
    let built = Path::new(fixture::ADDQ).parent().unwrap().to_path_buf();
    let target = scratch.join("target");
    let bin_dir = target.join("release");
    std::fs::create_dir_all(&bin_dir).unwrap();
    let stand_in = cargo_stand_in(&scratch, &built);
    let path = format!(
        "{}:{}:{}",
        stand_in.display(),
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let started = Instant::now();
    let mut ran = 0;
    for (k, b) in blocks(&text).iter().enumerate() {
        if skipped(doc, b).is_some() {
            continue;
        }
        let script = rewrite(&b.text, &scratch, &bin_dir)
            .unwrap_or_else(|e| panic!("{doc}:{}: {e}", b.line));
        let t = Instant::now();
        let (ok, output) = run_block(&script, &path, &target, &scratch.join(format!("block-{k}")));
        eprintln!(
            "{doc}:{}: {:.1} s{}",
            b.line,
            t.elapsed().as_secs_f64(),
            if ok { "" } else { " FAILED" }
        );
        assert!(
            ok,
            "{doc}:{}: a documented command failed.\n--- the block ---\n{}--- as run ---\n{}--- its output ---\n{}",
            b.line, b.text, script, output
        );
        ran += 1;
    }
    assert!(ran > 0, "{doc}: no runnable block");
    eprintln!(
        "{doc}: {ran} blocks in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(&scratch);
}

/// A directory holding a `cargo` whose `cargo build` copies the binaries under test (from
/// `built`) that it is asked for into `$CARGO_TARGET_DIR/<profile>/`: the ones named by
/// `--bin`, else every binary and the egdb library. It refuses anything else: a block that
/// runs other cargo commands (tests, benches, examples) takes too long here and must be
/// marked no-run.
fn cargo_stand_in(scratch: &Path, built: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch.join("cargo-stand-in");
    std::fs::create_dir_all(&dir).unwrap();
    let cargo = dir.join("cargo");
    let all: Vec<&str> = fixture::BINARIES.iter().map(|(name, _)| *name).collect();
    std::fs::write(
        &cargo,
        format!(
            r#"#!/bin/sh
# tests/docs.rs: cargo has built the binaries under test; this puts those asked for where
# `cargo build` would.
if [ "$1" != build ]; then
    echo "tests/docs.rs: cargo $*: only cargo build runs in a documentation block (mark the block no-run)" >&2
    exit 1
fi
shift
profile=debug bins=
while [ $# -gt 0 ]; do
    case "$1" in
        --release) profile=release ;;
        --bin) bins="$bins $2"; shift ;;
        --bin=*) bins="$bins ${{1#--bin=}}" ;;
        --manifest-path|-p|--package|--features|-j|--jobs) shift ;;
    esac
    shift
done
out="${{CARGO_TARGET_DIR:?tests/docs.rs sets it}}/$profile"
mkdir -p "$out"
if [ -z "$bins" ]; then
    bins="{all}"
    for lib in libegdb.so libegdb.a; do
        [ ! -e "{built}/$lib" ] || cp "{built}/$lib" "$out/$lib"
    done
fi
for b in $bins; do
    cp "{built}/$b" "$out/$b" || exit 101
done
"#,
            all = all.join(" "),
            built = built.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// Runs `script` with bash (`-e -o pipefail`) from the repository's root in its own process
/// group, cargo's target directory `target`, its output in `out`; whether it succeeded
/// within [`BLOCK_TIMEOUT`], and its output.
fn run_block(script: &str, path: &str, target: &Path, out: &PathBuf) -> (bool, String) {
    use std::os::unix::process::CommandExt;
    let log = std::fs::File::create(out).unwrap();
    let mut child = Command::new("bash")
        .args(["-e", "-o", "pipefail", "-c", script])
        .current_dir(ROOT)
        .env("PATH", path)
        .env("CARGO_TARGET_DIR", target)
        .env_remove("NOWDB_FAULT")
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .process_group(0)
        .spawn()
        .expect("bash");
    let deadline = Instant::now() + BLOCK_TIMEOUT;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if Instant::now() > deadline {
            let pgid = nix::unistd::Pid::from_raw(child.id() as i32);
            let _ = nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGKILL);
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut output = std::fs::read_to_string(out).unwrap_or_default();
    match status {
        Some(s) if s.success() => (true, output),
        Some(s) => {
            output += &format!("(bash ended: {s})\n");
            (false, output)
        }
        None => {
            output += &format!("(killed after {} s)\n", BLOCK_TIMEOUT.as_secs());
            (false, output)
        }
    }
}

#[test]
fn the_readme_commands_run_as_written() {
    run_document("README.md");
}

#[test]
fn the_operating_guide_commands_run_as_written() {
    run_document("docs/OPERATING.md");
}

/// The convention holds: shell blocks say `sh` (a `bash` or `console` block would escape
/// the test), `no-run` is only said of shell blocks, every skipped section exists, and each
/// document has blocks it runs and blocks it does not.
#[test]
fn the_documents_follow_the_convention() {
    for doc in DOCUMENTS {
        let bs = blocks(&document(doc));
        for b in &bs {
            assert!(
                !["bash", "shell", "console", "shell-session", "zsh"].contains(&b.language()),
                "{doc}:{}: a shell block must say `sh` (or `sh no-run`), not {:?}",
                b.line,
                b.info
            );
            assert!(
                b.is_shell() || !b.marked_no_run(),
                "{doc}:{}: no-run on a block that is not sh",
                b.line
            );
        }
        assert!(bs.iter().any(|b| skipped(doc, b).is_none()), "{doc}");
    }
    for (doc, heading, _) in SKIPPED {
        let bs = blocks(&document(doc));
        assert!(
            bs.iter().any(|b| b.heading == *heading && b.is_shell()),
            "{doc}: the skipped section {heading:?} is gone or has no sh block: update SKIPPED"
        );
    }
}

#[test]
fn sites_are_moved_to_the_scratch_directory() {
    let scratch = Path::new("/s");
    let bin = Path::new("/b");
    let script = "scripts/build-local --site site --pieces 4\n\
                  ./target/release/dbprobe --site site 'B:W18' # the site\n\
                  scripts/phase-seconds site/logs/local.log\n\
                  mkdir -p drill && cp hosts.toml drill/hosts.toml --site drill\n\
                  echo website sites site_x\n";
    let out = rewrite(script, scratch, bin).unwrap();
    assert_eq!(
        out,
        "scripts/build-local --site /s/site --pieces 4\n\
         /b/dbprobe --site /s/site 'B:W18' # the /s/site\n\
         scripts/phase-seconds /s/site/logs/local.log\n\
         mkdir -p /s/drill && cp hosts.toml /s/drill/hosts.toml --site /s/drill\n\
         echo website sites site_x\n"
    );
    assert!(rewrite("addq --site /shared/s p stop", scratch, bin).is_err());
}

/// A block fails when any of its commands fails, in a pipeline too, and when it runs past
/// its time.
#[test]
fn a_failing_command_fails_its_block() {
    let scratch = fixture::scratch("docs", "failing");
    let path = std::env::var("PATH").unwrap_or_default();
    let out = scratch.join("out");
    let target = scratch.join("target");
    assert!(run_block("true\necho here\n", &path, &target, &out).0);
    assert!(!run_block("true\nfalse\ntrue\n", &path, &target, &out).0);
    assert!(!run_block("false | cat\n", &path, &target, &out).0);
    let (ok, output) = run_block("echo said; exit 3\n", &path, &target, &out);
    assert!(!ok && output.contains("said"), "{output}");
    let _ = std::fs::remove_dir_all(&scratch);
}

/// The blocks see only the tools that earlier blocks built, as on a fresh clone: none at
/// first, those named by `cargo build --bin`, then every one after a plain `cargo build`.
#[test]
fn a_block_finds_only_the_tools_earlier_blocks_built() {
    let scratch = fixture::scratch("docs", "newcomer");
    let built = Path::new(fixture::ADDQ).parent().unwrap();
    let target = scratch.join("target");
    let bin_dir = target.join("release");
    std::fs::create_dir_all(&bin_dir).unwrap();
    let path = format!(
        "{}:{}:{}",
        cargo_stand_in(&scratch, built).display(),
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = scratch.join("out");
    let runs = |script: &str| run_block(script, &path, &target, &out).0;
    assert!(!runs("addq --help\n"), "a tool nobody built ran");
    assert!(runs(
        "cargo build --release --quiet --bin addq --bin jobrunner\n"
    ));
    assert!(runs(
        "addq --help >/dev/null\njobrunner --help >/dev/null\n"
    ));
    assert!(
        !runs("dbprobe --help\n"),
        "a tool cargo was not asked for ran"
    );
    assert!(!runs("cargo test\n"), "only cargo build runs");
    assert!(runs("cargo build --release\n"));
    for (name, _) in fixture::BINARIES {
        assert!(runs(&format!("{name} --help >/dev/null\n")), "{name}");
    }
    let _ = std::fs::remove_dir_all(&scratch);
}
