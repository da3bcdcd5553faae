//! What every binary shares at its edge: turning a result into an exit code and a message.

use std::process::ExitCode;

/// The options every site tool takes (flattened into each binary's arguments).
#[derive(clap::Args, Debug)]
pub struct SiteArgs {
    /// The site directory (work files, solved slices, queues).
    #[arg(long, global = true, default_value = ".")]
    pub site: std::path::PathBuf,
    /// Machine-readable output.
    #[arg(long, global = true)]
    pub json: bool,
}

/// Parses the command line of binary `name`, or answers what `scripts/install-docs` asks
/// every binary and exits: `--completions SHELL` (bash, zsh, fish, elvish, powershell) prints
/// its shell completions, `--man` its man page (roff).
pub fn parse<T: clap::Parser>(name: &'static str) -> T {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut out = std::io::stdout().lock();
    let done = match words.as_slice() {
        ["--completions", shell] => match shell.parse::<clap_complete::Shell>() {
            Ok(shell) => {
                clap_complete::generate(shell, &mut T::command(), name, &mut out);
                Ok(())
            }
            Err(_) => Err(format!(
                "--completions {shell:?}: not a shell (bash, zsh, fish, elvish, powershell)"
            )),
        },
        ["--man"] => clap_mangen::Man::new(T::command().name(name))
            .render(&mut out)
            .or_else(|e| match e.kind() {
                // `| head`: the reader has what it wanted.
                std::io::ErrorKind::BrokenPipe => Ok(()),
                _ => Err(format!("writing the man page: {e}")),
            }),
        _ => return T::parse(),
    };
    std::process::exit(match done {
        Ok(()) => 0,
        Err(e) => {
            stderr_line(&format!("{name}: {e}"));
            2
        }
    })
}

/// Why a command stopped early.
#[derive(Debug)]
pub enum CliError {
    /// A failure to report on stderr with a non-zero exit.
    Failed(String),
    /// Stdout was closed by its reader (`| head`): the reader has what it wanted.
    ClosedOutput,
    /// Too little disk space (see [`crate::error::Error::NoSpace`]): reported like a
    /// failure, with its own exit status [`EXIT_NO_SPACE`].
    NoSpace(String),
}

/// The exit status of a command that found too little disk space: a runner requeues such a
/// job without charging it an attempt, and waits for room.
pub const EXIT_NO_SPACE: u8 = 4;

impl From<crate::error::Error> for CliError {
    fn from(e: crate::error::Error) -> Self {
        match e {
            crate::error::Error::NoSpace(m) => CliError::NoSpace(m),
            crate::error::Error::Failed(m) => CliError::Failed(m),
        }
    }
}

impl From<String> for CliError {
    /// A message carrying ENOSPC or EDQUOT is [`CliError::NoSpace`].
    fn from(message: String) -> Self {
        crate::error::Error::from_message(message).into()
    }
}

/// A JSON value as one line of output (every `--json` goes through serde_json, so names and
/// messages with quotes, backslashes or newlines stay valid JSON).
pub fn json_line(value: &serde_json::Value) -> String {
    let mut text = value.to_string();
    text.push('\n');
    text
}

/// Seconds rounded to milliseconds, as the reports print them.
pub fn millis(secs: f64) -> f64 {
    (secs * 1000.0).round() / 1000.0
}

/// An I/O error while writing a report.
pub fn output_error(e: std::io::Error) -> CliError {
    match e.kind() {
        std::io::ErrorKind::BrokenPipe => CliError::ClosedOutput,
        // A job's output is a file on the site: its disk may be full.
        std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded => {
            CliError::NoSpace(format!("writing output: {e}"))
        }
        _ => CliError::Failed(format!("writing output: {e}")),
    }
}

/// Prints `tool: error` on failure and exits non-zero; a closed stdout is not a failure.
pub fn finish(tool: &str, result: Result<(), CliError>) -> ExitCode {
    match result {
        Ok(()) | Err(CliError::ClosedOutput) => ExitCode::SUCCESS,
        Err(CliError::Failed(e)) => {
            stderr_line(&format!("{tool}: {e}"));
            ExitCode::FAILURE
        }
        Err(CliError::NoSpace(e)) => {
            stderr_line(&format!("{tool}: {e}"));
            ExitCode::from(EXIT_NO_SPACE)
        }
    }
}

/// Writes one line to stderr, ignoring failure: `eprintln!` panics when stderr cannot be
/// written (a job's output file on a full disk), which would turn a clear exit status into
/// a panic's.
pub fn stderr_line(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

/// Set by SIGTERM or SIGINT once [`stop_on_signals`] is installed: long work checkpoints and
/// stops when it sees it.
pub static STOP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

extern "C" fn request_stop(_: nix::libc::c_int) {
    // Only an atomic store: async-signal-safe.
    STOP.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Turns SIGTERM and SIGINT into a checkpoint-and-stop request ([`STOP`]).
pub fn stop_on_signals() -> Result<(), CliError> {
    use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};
    let action = SigAction::new(
        SigHandler::Handler(request_stop),
        SaFlags::SA_RESTART,
        SigSet::empty(),
    );
    for sig in [Signal::SIGTERM, Signal::SIGINT] {
        // SAFETY: the handler only stores to an atomic.
        unsafe { sigaction(sig, &action) }
            .map_err(|e| CliError::Failed(format!("installing the {sig} handler: {e}")))?;
    }
    Ok(())
}

pub use crate::procfs::peak_rss_bytes;
