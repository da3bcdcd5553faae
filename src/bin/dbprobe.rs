//! dbprobe: look at positions, slices and indices, and with `--site` ask the compressed
//! database for their values.

use clap::Parser;
use nowdb::cli::{CliError, output_error};
use nowdb::solve::Site;
use nowdb::solve::database::{report, ship};
use nowdb::{Setup, Slice, inspect};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    version,
    about = "Inspect checkers positions and probe the endgame database.",
    long_about = "Inspect checkers positions and probe the endgame database.\n\n\
                  Without --site: a FEN's slice, index and legal moves; --perft counts move \
                  paths; --slice with --at turns an index back into a position.\n\n\
                  With --site DIR (database in DIR/db): the FEN's value (win, loss or draw \
                  for the side to move) and every move's value for the side that plays it; \
                  --mtc adds the plies to conversion (a capture or a man's move) of each, \
                  from DIR/db/*.mtc (a site built with --mtc; distances below the files' \
                  threshold, stored as short, are found by a small search); --play plays a won or \
                  lost position out by the databases and prints the game as PDN; \
                  --batch answers one FEN per stdin line as FEN<TAB>value; --check compares \
                  the database with the solver's exact values.\n\n\
                  --ship DIR copies the finished database out of the site to ship: VERSION \
                  and every slice file (of up to --pieces N pieces) into DIR, new or empty, \
                  each checked by its CRCs as read back from the copy; nothing is left in DIR \
                  unless all of it checked out. DIR/MANIFEST lists every file as \
                  NAME<TAB>BYTES<TAB>CRC32 (8 lowercase hex digits, zlib's CRC-32, as `crc32 FILE` \
                  prints it), then total<TAB>BYTES<TAB>N files."
)]
#[command(group(clap::ArgGroup::new("whole").args(["check", "ship"])))]
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
    /// Site whose compressed database (DIR/db) answers the probes.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["perft", "slice"])]
    site: Option<std::path::PathBuf>,
    /// Read one FEN per line on stdin and print FEN<TAB>win|loss|draw for each.
    #[arg(long, requires = "site", conflicts_with = "fen")]
    batch: bool,
    /// Compare the database with solved/: every position, or --random N of them.
    #[arg(long, requires = "site", conflicts_with_all = ["fen", "batch"])]
    check: bool,
    /// Copy the finished database into DIR (new or empty), checked, with a MANIFEST.
    #[arg(long, value_name = "DIR", requires = "site", conflicts_with_all = ["fen", "batch", "check"])]
    ship: Option<std::path::PathBuf>,
    /// With --check: this many random positions (probed one by one, timed).
    #[arg(long, value_name = "N", requires = "check")]
    random: Option<u64>,
    /// With --check: only slices of this many pieces; with --ship: 2..N pieces.
    #[arg(long, value_name = "N", requires = "whole")]
    pieces: Option<u32>,
    /// With --check: parallel threads for the every-position check.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Block cache size in MiB.
    #[arg(long, default_value_t = 64)]
    cache_mb: usize,
    /// With --site and a FEN: the plies to conversion (a capture or a man's move under
    /// best play) of the position and of each move, from the database's db/*.mtc.
    #[arg(long, requires_all = ["site", "fen"], conflicts_with_all = ["batch", "check", "ship"])]
    mtc: bool,
    /// With --site and a won or lost FEN: play it out by the databases (the winner
    /// converts soonest, the loser latest) and print the game as PDN.
    #[arg(long, requires_all = ["site", "fen"], conflicts_with_all = ["batch", "check", "ship", "mtc"])]
    play: bool,
    /// Machine-readable output.
    #[arg(long, conflicts_with_all = ["perft", "slice"])]
    json: bool,
}

fn run(args: Args) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    if let (Some(name), Some(at)) = (&args.slice, args.at) {
        let slice: Slice = name.parse().map_err(|e| format!("{e}"))?;
        return inspect::write_position_at(&slice, at, &mut out);
    }
    let setup = || -> Result<Setup, CliError> {
        match &args.fen {
            Some(text) => Ok(text.parse::<Setup>().map_err(|e| e.to_string())?),
            None => Ok(Setup::opening()),
        }
    };
    if let Some(dir) = &args.site {
        let site = Site::new(dir);
        if let Some(to) = &args.ship {
            return ship::write_ship(&site, to, args.pieces, args.json, &mut out);
        }
        let db = report::open_database(&site, args.cache_mb)?;
        if args.batch {
            return report::write_batch(&db, &mut std::io::stdin().lock(), args.json, &mut out);
        }
        if args.check {
            let (pieces, random) = (args.pieces, args.random);
            return report::write_check(
                &site,
                &db,
                pieces,
                random,
                args.threads,
                args.json,
                &mut out,
            );
        }
        if args.fen.is_none() {
            return Err("--site needs a FEN to probe (or --batch, or --check)"
                .to_string()
                .into());
        }
        if args.mtc {
            return report::write_mtc(&db, &setup()?, args.json, &mut out);
        }
        if args.play {
            return report::write_play(&db, &setup()?, args.json, &mut out);
        }
        return report::write_probe(&db, &setup()?, args.json, &mut out);
    }
    let setup = setup()?;
    let written = match args.perft {
        Some(depth) => inspect::write_perft(&setup, depth, &mut out),
        None => inspect::write_description(&setup, args.json, &mut out),
    };
    written.map_err(output_error)
}

fn main() -> ExitCode {
    nowdb::cli::finish("dbprobe", run(nowdb::cli::parse::<Args>("dbprobe")))
}
