//! dbstatus: reports on the build.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    version,
    about = "Report on a nowdb build: the plan of slices (more to come)."
)]
struct Args {
    /// Machine-readable output.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The order in which the slices of 2..=N pieces are computed: waves of slice pairs
    /// (slice/mirror) whose members can run side by side.
    Plan {
        /// Largest number of pieces (2..=10).
        #[arg(long, value_parser = clap::value_parser!(u32).range(2..=10))]
        pieces: u32,
    },
}

fn main() -> ExitCode {
    let args = Args::parse();
    let mut out = std::io::stdout().lock();
    let result = match args.command {
        Command::Plan { pieces } => nowdb::status::write_plan(pieces, args.json, &mut out),
    };
    nowdb::cli::finish("dbstatus", result.map_err(nowdb::cli::output_error))
}
