//! `dbserve`: a finished database asked from a browser (the explorer page) or any program
//! (a JSON API after lichess' tablebase server), served by [`crate::http`].
//!
//! - [`api`]: the answers, apart from HTTP;
//! - [`routes`]: the routes, their errors and limits;
//! - `page.html`: the explorer, one self-contained page.

pub mod api;
pub mod routes;

use crate::db::probe::{Database, list_slices};
use crate::slice::Slice;
use crate::solve::Site;
use std::collections::BTreeSet;

/// The longest FEN read: 32 squares written one by one, with kings, fit in well under it.
pub const MAX_FEN_BYTES: usize = 256;

/// Why a request could not be answered; each maps to an HTTP status in [`routes`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExplorerError {
    /// The FEN does not parse (400).
    #[error("{0}")]
    BadFen(String),
    /// One side has no piece (400).
    #[error("{0}")]
    GameOver(String),
    /// Too many pieces, or material the database was not built for (404).
    #[error("{0}")]
    NotHeld(String),
    /// A mainline from a database built without `--mtc` (404).
    #[error("this database has no distances (it was built without --mtc): no mainline")]
    NoDistances,
    /// The database failed to answer: a damaged or missing file (500).
    #[error("the database failed: {0}")]
    Database(String),
}

impl ExplorerError {
    fn database(e: impl std::fmt::Display) -> ExplorerError {
        ExplorerError::Database(e.to_string())
    }
}

/// Why a site cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("{0}")]
    Database(String),
    /// Slices of the plan whose database files are not there.
    #[error(
        "{site}: the database is not finished: {} of {planned} planned slices have no database file ({}); serving only a finished database",
        missing.len(),
        list_some(missing)
    )]
    NotFinished {
        site: String,
        planned: usize,
        missing: Vec<Slice>,
    },
}

fn list_some(slices: &[Slice]) -> String {
    let some: Vec<String> = slices.iter().take(8).map(|s| s.to_string()).collect();
    let more = if slices.len() > 8 { ", ..." } else { "" };
    format!("{}{more}", some.join(", "))
}

/// A site's finished database, open for answering.
pub struct Explorer {
    pub db: Database,
    /// The slices served: the site's plans (with what they read), or 2..N pieces.
    pub slices: BTreeSet<Slice>,
    /// The most pieces of any.
    pub most: u32,
    /// What was planned, in `addq plan`'s words (`2..7`, `2..8 4v4`).
    pub plans: Vec<String>,
    /// Every served slice has its distances (`db/mtc/<slice>.mtc`).
    pub distances: bool,
}

impl Explorer {
    /// Opens `site`'s database with a block cache of `cache_mb` MiB, up to `pieces` pieces
    /// when given; refuses it unless every planned slice (every slice of 2..N pieces for a
    /// site built without a plan) has its database file.
    pub fn open(site: &Site, pieces: Option<u32>, cache_mb: usize) -> Result<Explorer, OpenError> {
        let dberr = |e: crate::db::DbError| OpenError::Database(e.to_string());
        let db = Database::open(&site.db_dir(), cache_mb << 20).map_err(dberr)?;
        let built: BTreeSet<Slice> = list_slices(&site.db_dir())
            .map_err(dberr)?
            .into_iter()
            .collect();
        let planned =
            crate::queue::plans::planned(site).map_err(|e| OpenError::Database(e.to_string()))?;
        let most_built = built.iter().map(|s| s.pieces()).max().unwrap_or(0);
        let (wanted, plans): (BTreeSet<Slice>, Vec<String>) = match planned {
            Some(p) => (p.pairs.iter().flat_map(|p| p.slices()).collect(), p.lines),
            None => {
                let n = pieces.unwrap_or(most_built).max(2);
                (
                    crate::slice::plan(n)
                        .pairs()
                        .flat_map(|p| p.slices())
                        .collect(),
                    vec![format!("2..{n}")],
                )
            }
        };
        let wanted: BTreeSet<Slice> = wanted
            .into_iter()
            .filter(|s| pieces.is_none_or(|n| s.pieces() <= n))
            .collect();
        let missing: Vec<Slice> = wanted.difference(&built).copied().collect();
        if !missing.is_empty() || wanted.is_empty() {
            return Err(OpenError::NotFinished {
                site: site.root().display().to_string(),
                planned: wanted.len(),
                missing,
            });
        }
        let mtc = crate::db::mtc::mtc_dir(&site.db_dir());
        let distances = crate::db::mtc::is_mtc_dir(&mtc)
            && wanted
                .iter()
                .all(|s| crate::db::mtc::mtc_path(&site.db_dir(), s).is_file());
        Ok(Explorer {
            db,
            most: wanted.iter().map(|s| s.pieces()).max().unwrap_or(0),
            slices: wanted,
            plans,
            distances,
        })
    }
}

/// How `dbserve` serves.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    pub listen: String,
    pub pieces: Option<u32>,
    pub cache_mb: usize,
    /// `-` (stderr), `off`, or a file.
    pub access_log: String,
    /// Database answers computed at once.
    pub workers: usize,
    /// How long a request waits for a worker before it is told 503.
    pub busy_wait: std::time::Duration,
    pub limits: crate::http::Limits,
}

/// `dbserve`: opens the site's finished database and serves it until SIGTERM. The
/// address, what is served and the stop are written to `log`.
pub fn serve(
    site: &Site,
    options: &ServeOptions,
    log: &mut dyn std::io::Write,
) -> Result<(), crate::cli::CliError> {
    let failed = |e: String| crate::cli::CliError::Failed(e);
    let explorer = Explorer::open(site, options.pieces, options.cache_mb)
        .map_err(|e| failed(e.to_string()))?;
    let access = crate::http::AccessLog::open(&options.access_log)?;
    let listener = crate::http::bind(&options.listen)?;
    let _ = writeln!(
        log,
        "dbserve: {} ({}): {} slices of up to {} pieces, {}",
        site.root().display(),
        explorer.plans.join(", "),
        explorer.slices.len(),
        explorer.most,
        if explorer.distances {
            "with distances (db/mtc)"
        } else {
            "values only (built without --mtc: no distances, no mainline)"
        }
    );
    let metrics = std::sync::Arc::new(crate::http::Metrics::new(&routes::ROUTES));
    let served = routes::Served::new(
        explorer,
        metrics.clone(),
        options.workers,
        options.busy_wait,
    );
    crate::http::serve(
        "dbserve",
        routes::router(served),
        listener,
        options.limits,
        access,
        metrics,
        log,
    )
}
