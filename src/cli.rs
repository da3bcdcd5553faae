//! What every binary shares at its edge: turning a result into an exit code and a message.

use std::process::ExitCode;

/// Prints `tool: error` on failure and exits non-zero. A closed stdout (`| head`) is not a
/// failure: the reader has what it wanted.
pub fn finish(tool: &str, result: Result<(), String>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.contains("Broken pipe") => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{tool}: {e}");
            ExitCode::FAILURE
        }
    }
}

/// An I/O error while writing a report, as a message.
pub fn output_error(e: std::io::Error) -> String {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        "Broken pipe".to_string()
    } else {
        format!("writing output: {e}")
    }
}
