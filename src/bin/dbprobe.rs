//! dbprobe: look at positions, slices and indices (and, with a database, their values).

use clap::Parser;
use nowdb::cli::{CliError, output_error};
use nowdb::{Setup, Slice, inspect};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    version,
    about = "Inspect checkers positions: perft, slice and index, legal moves.",
    long_about = "Inspect checkers positions. With a FEN (PDN, e.g. 'B:W18,K12:B3,5'; default: \
                  the opening position) prints its slice, its index in the slice and every \
                  legal move. --perft counts move paths; --slice with --at turns an index back \
                  into a position."
)]
struct Args {
    /// Position as PDN FEN, e.g. "B:W18,K12:B3,5" or "W:B1-12:W21-32".
    fen: Option<String>,
    /// Print depth<TAB>nodes for every depth 1..=DEPTH from the position.
    #[arg(long, value_name = "DEPTH")]
    perft: Option<u32>,
    /// Slice name (e.g. 3113.01) whose position at --at to print.
    #[arg(long, value_name = "SLICE", requires = "at", conflicts_with_all = ["fen", "perft"])]
    slice: Option<String>,
    /// Index within --slice.
    #[arg(long, value_name = "INDEX", requires = "slice")]
    at: Option<u64>,
    /// Machine-readable output (for the position description).
    #[arg(long, conflicts_with_all = ["perft", "slice"])]
    json: bool,
}

fn run(args: Args) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    if let (Some(name), Some(at)) = (&args.slice, args.at) {
        let slice: Slice = name.parse().map_err(|e| format!("{e}"))?;
        return inspect::write_position_at(&slice, at, &mut out);
    }
    let setup = match &args.fen {
        Some(text) => text.parse::<Setup>().map_err(|e| e.to_string())?,
        None => Setup::opening(),
    };
    let written = match args.perft {
        Some(depth) => inspect::write_perft(&setup, depth, &mut out),
        None => inspect::write_description(&setup, args.json, &mut out),
    };
    written.map_err(output_error)
}

fn main() -> ExitCode {
    nowdb::cli::finish("dbprobe", run(Args::parse()))
}
