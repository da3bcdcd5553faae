//! A job's child process as its runner sees it: the `jobrunner run` command it starts, the
//! exit statuses of that command, and what an ended child means for the job.

use super::daemon::DaemonOptions;
use crate::files::{FileOp, failed};
use crate::solve::{Job, PhaseStats, Site};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::ExitStatus;
use std::process::{Command, Stdio};

/// `jobrunner run` exits 0 when its job is done.
pub const EXIT_DONE: i32 = 0;
/// `jobrunner run` exits 3 when its job stopped at a checkpoint (SIGTERM or its deadline):
/// the rest of the job is requeued and resumes from there.
pub const EXIT_CHECKPOINTED: i32 = 3;

/// `jobrunner run` exits 4 when it found too little disk space, before writing or while
/// writing (its checkpoint stands): no attempt used; the runner waits for room.
pub const EXIT_NO_SPACE: i32 = crate::cli::EXIT_NO_SPACE as i32;

/// The `jobrunner run --background` command of `job`, its output (stdout and stderr) going
/// to `out`.
pub fn command(
    site: &Site,
    opts: &DaemonOptions,
    job: &Job,
    out: &Path,
) -> std::io::Result<Command> {
    // `out` is in the daemon's job output directory, made again if it went (else every
    // job would fail to start and use up its attempts).
    let f = match std::fs::File::create(out) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            super::daemon::make_job_output_dir()?;
            std::fs::File::create(out)
        }
        f => f,
    }
    .map_err(|e| failed(FileOp::Creating, out, e))?;
    let mut cmd = Command::new(&opts.exe);
    cmd.arg("--site")
        .arg(site.root())
        .arg("--buffers")
        .arg(opts.buffers.to_string())
        .arg("--checkpoint-secs")
        .arg(opts.checkpoint_secs.to_string())
        .arg("--json")
        .arg("run")
        .arg("--background");
    if let Some(length) = opts.dry_run {
        cmd.arg("--dry-run");
        if !length.is_zero() {
            cmd.arg("--dry-run-secs")
                .arg(length.as_secs_f64().to_string());
        }
    }
    cmd.arg(job.to_string())
        .stdin(Stdio::null())
        .stdout(f.try_clone().map_err(|e| failed(FileOp::Opening, out, e))?)
        .stderr(f);
    Ok(cmd)
}

/// How a job process ended, for its runner.
#[derive(Clone, Debug, PartialEq)]
pub enum ChildEnd {
    Done(PhaseStats),
    /// Stopped at a checkpoint, or ended by a stop signal its runner sent: no attempt used.
    Stopped,
    /// Too little disk space (the job's error line, for the operator): no attempt used.
    NoSpace(String),
    /// Any other end: one attempt used; the reason as the operator reads it.
    Failed(String),
}

/// What the supervisor did to a child, which decides how its end is read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Interventions {
    /// The runner passed a stop request on (SIGTERM).
    pub stopped: bool,
    /// The runner killed it after this many seconds without CPU time.
    pub killed_hung: Option<u64>,
}

/// The statistics line `jobrunner run --json` prints last.
#[derive(serde::Deserialize)]
struct RunReport {
    stats: PhaseStats,
}

/// The job's statistics from its output (the last line that parses as its report).
pub fn stats_from_output(output: &str) -> Option<PhaseStats> {
    output
        .lines()
        .rev()
        .filter(|l| l.starts_with('{'))
        .find_map(|l| serde_json::from_str::<RunReport>(l).ok())
        .map(|r| r.stats)
}

fn signal_name(sig: i32) -> String {
    match nix::sys::signal::Signal::try_from(sig) {
        Ok(s) => format!("signal {sig} ({s})"),
        Err(_) => format!("signal {sig}"),
    }
}

/// Reads an ended child's status.
pub fn classify(status: ExitStatus, output: &str, did: Interventions) -> ChildEnd {
    if status.code() == Some(EXIT_CHECKPOINTED) {
        return ChildEnd::Stopped;
    }
    if let Some(secs) = did.killed_hung {
        return ChildEnd::Failed(format!(
            "hung: no CPU time for {secs}s, killed by its runner ({})",
            describe(status)
        ));
    }
    match (status.code(), status.signal()) {
        (Some(EXIT_DONE), _) => ChildEnd::Done(stats_from_output(output).unwrap_or_default()),
        (Some(EXIT_CHECKPOINTED), _) => ChildEnd::Stopped,
        (Some(EXIT_NO_SPACE), _) => ChildEnd::NoSpace(
            output
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("its output file could not be written either")
                .to_string(),
        ),
        // A SIGTERM the runner sent before the job had installed its handler.
        (None, Some(libc::SIGTERM)) if did.stopped => ChildEnd::Stopped,
        _ => ChildEnd::Failed(describe(status)),
    }
}

/// `exit status 1` or `signal 9 (SIGKILL)`.
pub fn describe(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(c), _) => format!("exit status {c}"),
        (None, Some(s)) => signal_name(s),
        _ => status.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exited(code: i32) -> ExitStatus {
        ExitStatus::from_raw(code << 8)
    }

    #[test]
    fn ends_are_read_from_status_and_output() {
        let out = "log line\n{\"job\":\"x\",\"resumed_from\":null,\"stats\":{\"looked\":12,\"win\":3,\"loss\":0,\"draw\":9}}\n";
        let none = Interventions::default();
        let Some(s) = stats_from_output(out) else {
            panic!()
        };
        assert_eq!((s.looked, s.draw), (12, 9));
        assert_eq!(classify(exited(0), out, none), ChildEnd::Done(s));
        assert_eq!(classify(exited(3), "", none), ChildEnd::Stopped);
        let full = "jobrunner: job cap 2300.--: needs 507.9 kB in s/work, 98.3 kB free\n";
        assert_eq!(
            classify(exited(4), full, none),
            ChildEnd::NoSpace(full.trim_end().into())
        );
        assert_eq!(
            classify(exited(1), "", none),
            ChildEnd::Failed("exit status 1".into())
        );
        let killed = ExitStatus::from_raw(libc::SIGKILL);
        assert_eq!(
            classify(killed, "", none),
            ChildEnd::Failed("signal 9 (SIGKILL)".into())
        );
        let term = ExitStatus::from_raw(libc::SIGTERM);
        assert!(matches!(classify(term, "", none), ChildEnd::Failed(_)));
        let stopped = Interventions {
            stopped: true,
            ..none
        };
        assert_eq!(classify(term, "", stopped), ChildEnd::Stopped);
        let hung = Interventions {
            killed_hung: Some(20),
            ..none
        };
        let ChildEnd::Failed(why) = classify(killed, "", hung) else {
            panic!()
        };
        assert!(why.starts_with("hung: no CPU time for 20s"), "{why}");
    }
}
