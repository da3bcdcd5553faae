//! `dbserve`'s routes: the explorer page at `/`, the JSON API under `/api/`, the counters at
//! `/metrics`. At most [`Served::new`]'s `workers` pieces of database work run at once
//! (a position on the connection's thread, mainlines and batches on blocking threads); a
//! request that waits longer than its busy wait ([`BUSY_WAIT`] by default) for a worker is
//! told 503.

use super::api::MAX_BATCH;
use super::{Explorer, ExplorerError};
use crate::http::{Metrics, QueryError, json_error, query_param, reply};
use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Response, StatusCode, Uri, header};
use axum::routing::{get, post};
use serde::Serialize;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The explorer page: HTML, CSS, JS and the board's SVG, nothing fetched from elsewhere.
const PAGE: &str = include_str!("page.html");

/// The largest batch body read, in bytes.
pub const MAX_BATCH_BYTES: usize = 64 << 10;

/// How long a request waits for a free worker before it is told the server is busy, by
/// default (`dbserve --busy-wait`).
pub const BUSY_WAIT: Duration = Duration::from_secs(2);

/// The paths counted on their own in `/metrics`.
pub const ROUTES: [&str; 6] = [
    "/",
    "/api/info",
    "/api/position",
    "/api/mainline",
    "/api/batch",
    "/metrics",
];

/// What the routes share.
pub struct Served {
    pub explorer: Explorer,
    pub metrics: Arc<Metrics>,
    workers: Arc<tokio::sync::Semaphore>,
    busy_wait: Duration,
}

impl Served {
    /// `explorer` answered by at most `workers` threads at once; a request waits
    /// `busy_wait` at most for one.
    pub fn new(
        explorer: Explorer,
        metrics: Arc<Metrics>,
        workers: usize,
        busy_wait: Duration,
    ) -> Arc<Served> {
        Arc::new(Served {
            explorer,
            metrics,
            workers: Arc::new(tokio::sync::Semaphore::new(workers.max(1))),
            busy_wait,
        })
    }
}

/// The router of `dbserve`.
pub fn router(served: Arc<Served>) -> Router {
    Router::new()
        .route("/", get(page))
        .route("/api/info", get(info))
        .route("/api/position", get(position))
        .route("/api/mainline", get(mainline))
        .route("/api/batch", post(batch))
        .route("/metrics", get(metrics))
        .fallback(not_found)
        .method_not_allowed_fallback(not_allowed)
        .with_state(served)
}

/// An answer that never changes for this database: it may be cached.
fn immutable_json(value: &impl Serialize) -> Response<Body> {
    reply(
        StatusCode::OK,
        &[
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "public, max-age=86400, immutable"),
            (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"),
        ],
        serde_json::to_string(value).expect("answers serialize"),
    )
}

fn error_answer(e: &ExplorerError) -> Response<Body> {
    let status = match e {
        ExplorerError::BadFen(_) | ExplorerError::GameOver(_) => StatusCode::BAD_REQUEST,
        ExplorerError::NotHeld(_) | ExplorerError::NoDistances => StatusCode::NOT_FOUND,
        ExplorerError::Database(_) => StatusCode::INTERNAL_SERVER_ERROR,
    };
    json_error(status, e.to_string())
}

fn query_error(e: QueryError) -> Response<Body> {
    json_error(
        StatusCode::BAD_REQUEST,
        format!("{e} (ask /api/position?fen=FEN)"),
    )
}

/// How long a piece of database work takes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Work {
    /// Tens of microseconds (one position and its moves): done on the connection's own
    /// thread, as handing it to a blocking thread and back costs more than the answer
    /// (`cargo bench --bench serve`: 33 against 49 µs of server CPU a request, 1.43 times
    /// the requests a second).
    Quick,
    /// Milliseconds or more (a mainline, a batch): done on a blocking thread, so that
    /// the connections on the same thread are not held up.
    Long,
}

/// Runs `work` once a worker is free; 503 when none is within the busy wait. `n`
/// positions are counted as database work.
async fn on_worker<T: Send + 'static>(
    served: &Arc<Served>,
    n: u64,
    kind: Work,
    work: impl FnOnce(&Explorer) -> T + Send + 'static,
) -> Result<T, Response<Body>> {
    let permit = tokio::time::timeout(served.busy_wait, served.workers.clone().acquire_owned())
        .await
        .map_err(|_| {
            let mut r = json_error(
                StatusCode::SERVICE_UNAVAILABLE,
                "busy: every worker is taken; ask again in a moment",
            );
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            r
        })?
        .expect("the workers' semaphore is never closed");
    let s = served.clone();
    if kind == Work::Quick {
        let start = Instant::now();
        let t = work(&s.explorer);
        s.metrics.worked(n, start.elapsed());
        drop(permit);
        return Ok(t);
    }
    let answer = tokio::task::spawn_blocking(move || {
        let start = Instant::now();
        let t = work(&s.explorer);
        s.metrics.worked(n, start.elapsed());
        // Held until the work is done, even when the request gave up waiting for it
        // (`--request-timeout`): abandoned work still counts against the workers.
        drop(permit);
        t
    })
    .await;
    answer.map_err(|e| json_error(StatusCode::INTERNAL_SERVER_ERROR, format!("worker: {e}")))
}

async fn page() -> Response<Body> {
    reply(
        StatusCode::OK,
        &[
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
                 connect-src 'self'; img-src data:",
            ),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        PAGE,
    )
}

async fn info(State(s): State<Arc<Served>>) -> Response<Body> {
    let e = &s.explorer;
    let info = serde_json::json!({
        "pieces": e.most,
        "slices": e.slices.len(),
        "plans": e.plans,
        "distances": e.distances,
        "max_batch": MAX_BATCH,
        "max_batch_bytes": MAX_BATCH_BYTES,
    });
    reply(
        StatusCode::OK,
        &[(header::CONTENT_TYPE, "application/json")],
        info.to_string(),
    )
}

/// The answer of `ask` for the request's `fen` parameter.
async fn fen_answer<T: Serialize + Send + 'static>(
    s: &Arc<Served>,
    uri: &Uri,
    kind: Work,
    ask: fn(&Explorer, &str) -> Result<T, ExplorerError>,
) -> Response<Body> {
    let fen = match query_param(uri.query(), "fen") {
        Ok(f) => f,
        Err(e) => return query_error(e),
    };
    match on_worker(s, 1, kind, move |e| ask(e, &fen)).await {
        Ok(Ok(a)) => immutable_json(&a),
        Ok(Err(e)) => error_answer(&e),
        Err(r) => r,
    }
}

async fn position(State(s): State<Arc<Served>>, uri: Uri) -> Response<Body> {
    fen_answer(&s, &uri, Work::Quick, Explorer::position).await
}

async fn mainline(State(s): State<Arc<Served>>, uri: Uri) -> Response<Body> {
    fen_answer(&s, &uri, Work::Long, Explorer::mainline).await
}

async fn batch(State(s): State<Arc<Served>>, req: Request) -> Response<Body> {
    let too_large = |what: String| json_error(StatusCode::PAYLOAD_TOO_LARGE, what);
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BATCH_BYTES as u64) {
        return too_large(format!(
            "a batch body of {} bytes: at most {MAX_BATCH_BYTES} are read",
            declared.unwrap_or_default()
        ));
    }
    let body = match axum::body::to_bytes(req.into_body(), MAX_BATCH_BYTES).await {
        Ok(b) => b,
        Err(_) => {
            return too_large(format!(
                "a batch body over {MAX_BATCH_BYTES} bytes: at most that is read"
            ));
        }
    };
    let fens: Vec<String> = match serde_json::from_slice(&body) {
        Ok(f) => f,
        Err(e) => {
            return json_error(
                StatusCode::BAD_REQUEST,
                format!("the batch body must be a JSON array of FEN strings: {e}"),
            );
        }
    };
    if fens.len() > MAX_BATCH {
        return too_large(format!(
            "a batch of {} FENs: at most {MAX_BATCH} at once",
            fens.len()
        ));
    }
    let n = fens.len() as u64;
    match on_worker(&s, n, Work::Long, move |e| e.batch(&fens)).await {
        Ok(answers) => immutable_json(&answers),
        Err(r) => r,
    }
}

async fn metrics(State(s): State<Arc<Served>>) -> Response<Body> {
    reply(
        StatusCode::OK,
        &[(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        s.metrics.render("nowdb"),
    )
}

async fn not_found(uri: Uri) -> Response<Body> {
    json_error(
        StatusCode::NOT_FOUND,
        format!(
            "no such path: {} (the explorer is at /, the API under /api/)",
            uri.path()
        ),
    )
}

async fn not_allowed(req: Request) -> Response<Body> {
    json_error(
        StatusCode::METHOD_NOT_ALLOWED,
        format!(
            "{} is not allowed on {} (POST for /api/batch, GET otherwise)",
            req.method(),
            req.uri().path()
        ),
    )
}
