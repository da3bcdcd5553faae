//! dbserve: a site's finished database over HTTP, for browsers (the explorer page) and
//! programs (the JSON API).

use clap::Parser;
use nowdb::explorer::{ServeOptions, serve};
use nowdb::http::Limits;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Parser)]
#[command(
    version,
    about = "Serve a finished endgame database over HTTP: an explorer page and a JSON API.",
    long_about = "Serve a finished endgame database over HTTP: an explorer page and a JSON API.\n\n\
                  `/` is the explorer: a board to set up a position on, its value and every \
                  move's, a mainline, the position in the URL. The API (docs/OPERATING.md): \
                  GET /api/position?fen=FEN (the value, plies to conversion, every move best \
                  first), GET /api/mainline?fen=FEN (the game the databases play, as PDN), \
                  POST /api/batch (a JSON array of FENs: their values), GET /api/info; \
                  GET /metrics counts requests and database time (Prometheus' text format).\n\n\
                  Only a finished database is served: every slice the site's plans name (or \
                  every slice of 2..N pieces) must have its file in SITE/db. Distances and \
                  mainlines need a site built with --mtc. Each request is written to the \
                  access log; SIGTERM or SIGINT stops the server once the requests under way \
                  are answered."
)]
struct Args {
    /// The site whose database (SITE/db) is served.
    #[arg(long, default_value = ".")]
    site: std::path::PathBuf,
    /// Address to listen on (loopback by default; 0.0.0.0:PORT for every interface).
    #[arg(long, default_value = "127.0.0.1:8090")]
    listen: String,
    /// Serve slices of at most N pieces.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(2..=10))]
    pieces: Option<u32>,
    /// Block cache in MiB.
    #[arg(long, default_value_t = 256)]
    cache_mb: usize,
    /// Where each request is logged: `-` (stderr), `off`, or a file appended to.
    #[arg(long, value_name = "WHERE", default_value = "-")]
    access_log: String,
    /// Database answers computed at once [default: twice the cores]; more wait.
    #[arg(long, value_name = "N")]
    workers: Option<usize>,
    /// Seconds a request waits for a worker before it is told 503 (busy, Retry-After: 1).
    #[arg(long, value_name = "SECS", default_value_t = nowdb::explorer::routes::BUSY_WAIT.as_secs_f64())]
    busy_wait: f64,
    /// Open connections at once; more are closed at once.
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_connections)]
    max_connections: usize,
    /// Seconds a client has to send a request's head (idle keep-alive connections too).
    #[arg(long, value_name = "SECS", default_value_t = Limits::default().header_timeout.as_secs_f64())]
    header_timeout: f64,
    /// Seconds one answer may take (503 past it).
    #[arg(long, value_name = "SECS", default_value_t = Limits::default().request_timeout.as_secs_f64())]
    request_timeout: f64,
}

fn run(args: Args) -> Result<(), nowdb::cli::CliError> {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let secs = |name: &str, s: f64| {
        if s.is_finite() && s > 0.0 && s < 1e6 {
            Ok(Duration::from_secs_f64(s))
        } else {
            Err(format!("--{name} {s}: give a number of seconds above 0"))
        }
    };
    let options = ServeOptions {
        listen: args.listen,
        pieces: args.pieces,
        cache_mb: args.cache_mb,
        access_log: args.access_log,
        workers: args.workers.unwrap_or(2 * cores),
        busy_wait: secs("busy-wait", args.busy_wait)?,
        limits: Limits {
            max_connections: args.max_connections.max(1),
            header_timeout: secs("header-timeout", args.header_timeout)?,
            request_timeout: secs("request-timeout", args.request_timeout)?,
            ..Limits::default()
        },
    };
    let site = nowdb::solve::Site::new(&args.site);
    serve(&site, &options, &mut std::io::stderr())
}

fn main() -> ExitCode {
    nowdb::cli::finish("dbserve", run(nowdb::cli::parse::<Args>("dbserve")))
}
