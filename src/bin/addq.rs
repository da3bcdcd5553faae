//! addq: add jobs to a queue file, list a queue, or edit one under its lock.

use clap::Parser;
use nowdb::cli::CliError;
use nowdb::queue::{addq, release};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    version,
    about = "Add jobs to a nowdb queue (p prime, n nonprime, s slow, m small).",
    long_about = "Add jobs to a nowdb queue file (queues/prime, nonprime, slow, small; letters \
                  p n s m), as the 1994 paper's addq.\n\n\
                  addq p lookup 3113.01          split the slice into page-aligned mini-slices \
                  of about --positions positions (-max/-n lines)\n\
                  addq p noio 3113.01 -s 2       the same for round 2\n\
                  addq p cap 2123.66 FIRST LAST  one explicit range (-n N optional)\n\
                  addq --top p ...               at the top of the queue instead of the end\n\
                  addq p stop                    the runner that takes it exits\n\
                  addq p plan 2..6               every job of every slice up to 6 pieces not \
                  yet done, in dependency order (pairs under --pair-below positions as one \
                  `pair` job each; those under 2 M positions in the small queue)\n\
                  addq p plan 2..6 --mtc         the same, with moves to conversion after each \
                  pair's values (also for pairs solved already)\n\
                  addq p plan 2..5 --only 2300   the same for those slices and what they need\n\
                  addq p plan 2..7 --only 2221   a node alone: every slice of it (or name one: \
                  2221.66)\n\
                  addq p plan 2..8 --only 4v4    a split by piece count: every node of four \
                  pieces a side (5v3 builds 3v5 too: a slice is built with its mirror)\n\
                  \x20                              (a plan that would not fit on the site's disk \
                  is refused, saying what it needs; --no-space-check queues it anyway)\n\
                  addq m pair 2100.6-            the whole pipeline of one small pair, cap to \
                  ver\n\
                  addq --list p                  print the queue\n\
                  addq --edit p                  $EDITOR on the queue, under its lock; saved \
                  only if every line is valid\n\
                  addq --release 3113.01/lookup-r0-0-32768   a held job (dbstatus held lists \
                  them) back at the top of its queue, attempts reset; or a slice's held jobs \
                  (--release 3113.01), or all of them (--release all)\n\
                  addq --remove 3113.01/lookup-r0-0-32768    forget a held job for good (asks \
                  first; --yes to skip the question)\n\n\
                  Exit status: 0 done; 1 an error (said on stderr); 2 a usage error; 4 a plan \
                  refused for too little disk space."
)]
struct Args {
    /// Queue letter or name: p, n, s, m (prime, nonprime, slow, small).
    #[arg(required_unless_present_any = ["release", "remove"])]
    queue: Option<String>,
    /// The job: PHASE SLICE [FIRST LAST] [-s ROUND] [-n N], or stop.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    job: Vec<String>,
    /// Site directory holding queues/.
    #[arg(long, default_value = ".")]
    site: std::path::PathBuf,
    /// Add at the top of the queue.
    #[arg(long)]
    top: bool,
    /// Positions per mini-slice when splitting a slice.
    #[arg(long, default_value_t = 10_000_000)]
    positions: u64,
    /// plan: slice pairs under this many positions are one `pair` job each (their whole
    /// pipeline, cap to ver), not thirty-odd phase jobs; 0 for phase jobs everywhere.
    #[arg(long, default_value_t = addq::PAIR_JOB_POSITIONS)]
    pair_below: u64,
    /// plan: queue the build even when the site's disk looks too small for it (the check
    /// refuses a plan whose files would not fit: work files, database, position queues).
    #[arg(long)]
    no_space_check: bool,
    /// plan: also build moves to conversion (plies to a capture or a man's move, for every
    /// won and lost position) after each pair's values; the site remembers it.
    #[arg(long)]
    mtc: bool,
    /// plan: remove each pair's solved/ files (two bits a position) once its database is
    /// verified, reading lower slices from db/ instead, so that the build's disk is its
    /// working set; the site remembers it (work/release-solved).
    #[arg(long)]
    release_solved: bool,
    /// Print the queue instead of adding.
    #[arg(long, conflicts_with_all = ["edit", "top"])]
    list: bool,
    /// Edit the queue with $EDITOR under its lock.
    #[arg(long, conflicts_with = "top")]
    edit: bool,
    /// Put held jobs back at the top of their queues, attempts reset: a job name
    /// (SLICE/PHASE-rROUND-FIRST-LAST, as `dbstatus held` prints it), a slice, or `all`.
    #[arg(long, value_name = "JOB|SLICE|all", conflicts_with_all = ["queue", "job", "list", "edit", "top", "remove"])]
    release: Option<String>,
    /// Forget a held job for good (its held record and attempts).
    #[arg(long, value_name = "JOB", conflicts_with_all = ["queue", "job", "list", "edit", "top"])]
    remove: Option<String>,
    /// With --remove: do not ask for confirmation.
    #[arg(long, requires = "remove")]
    yes: bool,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
}

fn run(a: Args) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    if let Some(which) = &a.release {
        return release::release_command(&a.site, which, a.json, &mut out);
    }
    if let Some(which) = &a.remove {
        return release::remove_command(&a.site, which, a.yes, a.json, &mut out);
    }
    let queue = a.queue.unwrap_or_default();
    if (a.list || a.edit) && !a.job.is_empty() {
        return Err(format!(
            "--list and --edit take only the queue, not {:?}",
            a.job.join(" ")
        )
        .into());
    }
    if a.list {
        return addq::list_command(&a.site, &queue, a.json, &mut out);
    }
    if a.edit {
        return addq::edit_command(&a.site, &queue);
    }
    let options = addq::AddOptions {
        positions: a.positions,
        pair_below: a.pair_below,
        top: a.top,
        json: a.json,
        no_space_check: a.no_space_check,
        mtc: a.mtc,
        release_solved: a.release_solved,
    };
    addq::add_command(&a.site, &queue, &a.job, &options, &mut out)
}

fn main() -> ExitCode {
    nowdb::cli::finish("addq", run(nowdb::cli::parse::<Args>("addq")))
}
