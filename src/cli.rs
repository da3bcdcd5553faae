//! What every binary shares at its edge: turning a result into an exit code and a message.

use std::process::ExitCode;

/// Why a command stopped early.
#[derive(Debug)]
pub enum CliError {
    /// A failure to report on stderr with a non-zero exit.
    Failed(String),
    /// Stdout was closed by its reader (`| head`): the reader has what it wanted.
    ClosedOutput,
}

impl From<String> for CliError {
    fn from(message: String) -> Self {
        CliError::Failed(message)
    }
}

/// An I/O error while writing a report.
pub fn output_error(e: std::io::Error) -> CliError {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        CliError::ClosedOutput
    } else {
        CliError::Failed(format!("writing output: {e}"))
    }
}

/// Prints `tool: error` on failure and exits non-zero; a closed stdout is not a failure.
pub fn finish(tool: &str, result: Result<(), CliError>) -> ExitCode {
    match result {
        Ok(()) | Err(CliError::ClosedOutput) => ExitCode::SUCCESS,
        Err(CliError::Failed(e)) => {
            eprintln!("{tool}: {e}");
            ExitCode::FAILURE
        }
    }
}
