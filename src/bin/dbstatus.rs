//! dbstatus: reports on the build.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    version,
    about = "Report on a nowdb build: the plan, the values of solved slices, the queues, the runners, one slice's progress, the totals."
)]
struct Args {
    #[command(flatten)]
    common: nowdb::cli::SiteArgs,
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
    /// Win/loss/draw counts (Black to move) of every solved slice, as a TSV:
    /// slice pieces bk wk bm wm rb rw positions win loss draw.
    Counts {
        /// One row per slice, or per material (then rb and rw are '-').
        #[arg(long, value_enum, default_value = "slice")]
        by: By,
    },
    /// The queues (prime, nonprime, slow, small): jobs, stop lines, positions and the first
    /// job of each, as a TSV.
    Queues,
    /// The hosts (hosts.toml) and every running job: host, runner, state, job, progress
    /// (from its checkpoint) and since when.
    Runners,
    /// One slice's progress through the phases: the pair's stage, then per phase and round
    /// the share of the slice done, jobs, job seconds and statistics (the paper's capcheck,
    /// lookcheck, noncheck and vercheck).
    Slice {
        /// The slice, e.g. 3113.01.
        slice: nowdb::Slice,
    },
    /// The jobs that failed: held ones (out of the queues until `addq --release`) and those
    /// retried, each attempt with its host, exit status or signal, time and kept output.
    Held,
    /// Totals for 2..N pieces: slices solved, built and verified, jobs queued, running and
    /// retried and held, the recent rate and the time the queued work needs at it.
    Summary {
        /// Largest number of pieces [default: the most of any slice queued or solved on the
        /// site; 5 on a site with neither].
        #[arg(long, value_parser = clap::value_parser!(u32).range(2..=10))]
        pieces: Option<u32>,
    },
    /// The status page: one self-contained HTML file (inline CSS, JS and SVG; it fetches
    /// nothing) with the summary, the slice graph by stage, the hosts and runners, the
    /// queues, the failed jobs, the throughput and the last alerts.
    Html {
        /// Write the page here instead of to standard output.
        #[arg(long)]
        out: Option<std::path::PathBuf>,
        /// Largest number of pieces [default: as `summary`].
        #[arg(long, value_parser = clap::value_parser!(u32).range(2..=10))]
        pieces: Option<u32>,
    },
    /// Serves the status page live over HTTP: `/` (which updates itself every 5 s) and
    /// `/status.json`; anything else is 404. Read-only.
    Serve {
        /// Address to listen on (loopback by default).
        #[arg(long, default_value = nowdb::status::serve::DEFAULT_LISTEN)]
        listen: String,
        /// Largest number of pieces [default: as `summary`].
        #[arg(long, value_parser = clap::value_parser!(u32).range(2..=10))]
        pieces: Option<u32>,
    },
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum By {
    Slice,
    Material,
}

fn main() -> ExitCode {
    let args = nowdb::cli::parse::<Args>("dbstatus");
    let mut out = std::io::stdout().lock();
    let result = match args.command {
        Command::Plan { pieces } => nowdb::status::write_plan(pieces, args.common.json, &mut out)
            .map_err(nowdb::cli::output_error),
        Command::Counts { by } => {
            let site = nowdb::solve::Site::new(&args.common.site);
            let json = args.common.json;
            nowdb::status::write_counts(&site, matches!(by, By::Material), json, &mut out)
        }
        Command::Queues => {
            nowdb::status::write_queues(&args.common.site, args.common.json, &mut out)
        }
        Command::Runners => {
            let site = nowdb::solve::Site::new(&args.common.site);
            nowdb::status::build::write_runners(&site, args.common.json, &mut out)
        }
        Command::Slice { slice } => {
            let site = nowdb::solve::Site::new(&args.common.site);
            nowdb::status::build::write_slice(&site, slice, args.common.json, &mut out)
        }
        Command::Held => {
            let site = nowdb::solve::Site::new(&args.common.site);
            nowdb::status::held::write_held(&site, args.common.json, &mut out)
        }
        Command::Summary { pieces } => {
            let site = nowdb::solve::Site::new(&args.common.site);
            nowdb::status::build::write_summary(&site, pieces, args.common.json, &mut out)
        }
        Command::Html { out: file, pieces } => {
            let site = nowdb::solve::Site::new(&args.common.site);
            html(&site, pieces, file.as_deref(), &mut out)
        }
        Command::Serve { listen, pieces } => {
            let site = nowdb::solve::Site::new(&args.common.site);
            nowdb::status::serve::bind(&listen)
                .and_then(|l| nowdb::status::serve::serve(&site, pieces, l, &mut std::io::stderr()))
        }
    };
    nowdb::cli::finish("dbstatus", result)
}

/// `dbstatus html`: the page to `file` (replaced whole) or to `out`.
fn html(
    site: &nowdb::solve::Site,
    pieces: Option<u32>,
    file: Option<&std::path::Path>,
    out: &mut dyn std::io::Write,
) -> Result<(), nowdb::cli::CliError> {
    let snap = nowdb::status::snapshot::snapshot(site, pieces)?;
    let page = nowdb::status::page::render(&snap, false);
    match file {
        Some(f) => std::fs::write(f, page)
            .map_err(|e| nowdb::cli::CliError::Failed(format!("writing {}: {e}", f.display()))),
        None => out
            .write_all(page.as_bytes())
            .map_err(nowdb::cli::output_error),
    }
}
