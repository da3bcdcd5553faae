//! The one fixture of the test files: the binaries under test, scratch sites, and running a
//! binary against a site. Every test file takes its binaries and scratch directories from
//! here, so a binary's path, the `--site` convention and the scratch layout live in one
//! place.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub const ADDQ: &str = env!("CARGO_BIN_EXE_addq");
pub const JOBRUNNER: &str = env!("CARGO_BIN_EXE_jobrunner");
pub const DBSTATUS: &str = env!("CARGO_BIN_EXE_dbstatus");
pub const DBPROBE: &str = env!("CARGO_BIN_EXE_dbprobe");
pub const DBSERVE: &str = env!("CARGO_BIN_EXE_dbserve");
pub const DBSTART: &str = env!("CARGO_BIN_EXE_dbstart");
pub const WSMONITOR: &str = env!("CARGO_BIN_EXE_wsmonitor");
pub const WSWATCH: &str = env!("CARGO_BIN_EXE_wswatch");

/// Every binary by name.
pub const BINARIES: [(&str, &str); 8] = [
    ("addq", ADDQ),
    ("dbprobe", DBPROBE),
    ("dbserve", DBSERVE),
    ("dbstart", DBSTART),
    ("dbstatus", DBSTATUS),
    ("jobrunner", JOBRUNNER),
    ("wsmonitor", WSMONITOR),
    ("wswatch", WSWATCH),
];

/// A scratch directory of test suite `suite`, created empty (earlier runs' directories are
/// swept first: [`super::dirs`]).
pub fn scratch(suite: &str, name: &str) -> PathBuf {
    super::dirs::fresh_dir(suite, name)
}

/// The path of a scratch directory of test suite `suite`, nothing there yet: for a site that
/// a build, `cp -a` or a test's own setup creates (earlier runs' directories are swept first,
/// as for [`scratch`]).
pub fn scratch_path(suite: &str, name: &str) -> PathBuf {
    super::dirs::fresh_path(suite, name)
}

/// Copies the directory `from` into `to` (created if need be), recursively.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// `bin --site SITE`, ready for more arguments (no stdin).
pub fn command(bin: &str, site: &Path) -> Command {
    let mut c = Command::new(bin);
    c.arg("--site").arg(site).stdin(Stdio::null());
    c
}

/// Runs `bin --site SITE ARGS` to its end.
pub fn run(bin: &str, site: &Path, args: &[&str]) -> Output {
    let mut c = command(bin, site);
    c.args(args);
    c.output().unwrap_or_else(|e| panic!("{bin} {args:?}: {e}"))
}

/// [`run`] with `input` on its standard input.
pub fn run_with_stdin(bin: &str, site: &Path, args: &[&str], input: &str) -> Output {
    let mut c = command(bin, site);
    c.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap_or_else(|e| panic!("{bin} {args:?}: {e}"));
    let written = child.stdin.take().unwrap().write_all(input.as_bytes());
    // A tool may end without reading all of its input; that is for the test to judge.
    if let Err(e) = written {
        assert_eq!(
            e.kind(),
            std::io::ErrorKind::BrokenPipe,
            "{bin} {args:?}: writing its input: {e}"
        );
    }
    child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("{bin} {args:?}: {e}"))
}

/// [`run`], which must succeed: its standard output.
pub fn ok(bin: &str, site: &Path, args: &[&str]) -> String {
    let o = run(bin, site, args);
    assert!(
        o.status.success(),
        "{bin} {args:?}: {}\n{}",
        o.status,
        stderr(&o)
    );
    text(&o.stdout)
}

/// Runs `bin ARGS` (no site) to its end.
pub fn run_plain(bin: &str, args: &[&str]) -> Output {
    Command::new(bin)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{bin} {args:?}: {e}"))
}

/// Output as text, any bytes that are not UTF-8 replaced.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Output as text, which must be UTF-8 (for tests that insist on it).
pub fn utf8(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).expect("the output is UTF-8")
}

/// A finished process's standard error as text ([`text`]).
pub fn stderr(o: &Output) -> String {
    text(&o.stderr)
}

/// A runner daemon for host `t` on queues p and m with `runners` runners, until the queues
/// are empty (a one-machine build through the queues).
pub fn daemon(site: &Path, runners: usize) -> Command {
    let mut c = command(JOBRUNNER, site);
    c.args([
        "daemon",
        "--host",
        "t",
        "--queues",
        "pm",
        "--poll-secs",
        "0.3",
    ])
    .args(["--runners", &runners.to_string(), "--until-empty"]);
    c
}

/// `jobrunner --site SITE pilot ARGS` with the environment Slurm gives array task `task` of
/// job 100 on node `n<task>`, granted `cpus` CPUs and 300 MB (no stdin): a Slurm pilot
/// without a cluster.
pub fn fake_pilot(site: &Path, task: u64, cpus: u32, args: &[&str]) -> Command {
    let mut c = command(JOBRUNNER, site);
    c.arg("pilot")
        .args(args)
        .env("SLURM_JOB_ID", (100 + task).to_string())
        .env("SLURM_ARRAY_JOB_ID", "100")
        .env("SLURM_ARRAY_TASK_ID", task.to_string())
        .env("SLURMD_NODENAME", format!("n{task}"))
        .env("SLURM_CPUS_PER_TASK", cpus.to_string())
        .env("SLURM_MEM_PER_NODE", "300")
        // No Slurm here: squeue must not find a cluster by accident.
        .env("SLURM_CONF", "/nonexistent/slurm.conf");
    c
}
