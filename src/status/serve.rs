//! `dbstatus serve`: the status page live over HTTP, on the project's one HTTP server
//! ([`crate::http`]). `/` is the page (which polls `/status.json` every few seconds),
//! `/status.json` the snapshot, `/metrics` the server's counters; anything else is 404 and
//! any method but GET or HEAD is 405. The server keeps no state: every request reads the
//! site's files again (on a blocking thread: they may be on a network filesystem).

use crate::cli::CliError;
use crate::http::{AccessLog, Limits, Metrics};
use crate::solve::Site;
use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{Response, StatusCode, Uri, header};
use axum::routing::get;
use std::io::Write;
use std::net::TcpListener;
use std::sync::Arc;

/// The address `dbstatus serve` listens on by default: loopback only.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";

pub use crate::http::bind;

/// The paths counted on their own in `/metrics`.
const ROUTES: [&str; 3] = ["/", "/status.json", "/metrics"];

struct Served {
    site: Site,
    pieces: Option<u32>,
    metrics: Arc<Metrics>,
}

/// Serves `site` on `listener` until SIGTERM or SIGINT. `log` gets the address to open,
/// then one line per request.
pub fn serve(
    site: &Site,
    pieces: Option<u32>,
    listener: TcpListener,
    log: &mut dyn Write,
) -> Result<(), CliError> {
    let metrics = Arc::new(Metrics::new(&ROUTES));
    let served = Arc::new(Served {
        site: site.clone(),
        pieces,
        metrics: metrics.clone(),
    });
    let app = Router::new()
        .route("/", get(page))
        .route("/status.json", get(status_json))
        .route("/metrics", get(counters))
        .fallback(not_found)
        .method_not_allowed_fallback(not_allowed)
        .with_state(served);
    let access = AccessLog::to(Box::new(std::io::stderr()));
    crate::http::serve(
        "dbstatus",
        app,
        listener,
        Limits::default(),
        access,
        metrics,
        log,
    )
}

/// A read-only answer that is always fresh.
fn reply(status: StatusCode, kind: &'static str, body: impl Into<Body>) -> Response<Body> {
    crate::http::reply(
        status,
        &[
            (header::CONTENT_TYPE, kind),
            (header::CACHE_CONTROL, "no-store"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        body,
    )
}

const TEXT: &str = "text/plain; charset=utf-8";

/// The snapshot, read on a blocking thread, rendered by `render`.
async fn snapshot(
    s: Arc<Served>,
    render: fn(serde_json::Value) -> Response<Body>,
) -> Response<Body> {
    let read = tokio::task::spawn_blocking(move || {
        let start = std::time::Instant::now();
        let snap = super::snapshot::snapshot(&s.site, s.pieces);
        s.metrics.worked(1, start.elapsed());
        snap
    })
    .await;
    match read {
        Ok(Ok(snap)) => render(snap),
        Ok(Err(e)) => reply(StatusCode::INTERNAL_SERVER_ERROR, TEXT, format!("{e:?}\n")),
        Err(e) => reply(StatusCode::INTERNAL_SERVER_ERROR, TEXT, format!("{e}\n")),
    }
}

async fn page(State(s): State<Arc<Served>>) -> Response<Body> {
    snapshot(s, |snap| {
        reply(
            StatusCode::OK,
            "text/html; charset=utf-8",
            super::page::render(&snap, true),
        )
    })
    .await
}

async fn status_json(State(s): State<Arc<Served>>) -> Response<Body> {
    snapshot(s, |snap| {
        reply(
            StatusCode::OK,
            "application/json",
            crate::cli::json_line(&snap),
        )
    })
    .await
}

async fn counters(State(s): State<Arc<Served>>) -> Response<Body> {
    reply(
        StatusCode::OK,
        "text/plain; version=0.0.4",
        s.metrics.render("nowdb_status"),
    )
}

async fn not_found(uri: Uri) -> Response<Body> {
    reply(
        StatusCode::NOT_FOUND,
        TEXT,
        format!("not found: {}\n", uri.path()),
    )
}

async fn not_allowed(_: Request) -> Response<Body> {
    reply(StatusCode::METHOD_NOT_ALLOWED, TEXT, "only GET and HEAD\n")
}
