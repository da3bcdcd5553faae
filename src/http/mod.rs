//! Serving HTTP, the one way the project does it: `dbserve` (the explorer and its API) and
//! `dbstatus serve` (the status page) hand an axum [`Router`] to [`serve`], which runs it on
//! hyper and tokio with the limits a public-facing server needs:
//!
//! - at most [`Limits::max_connections`] open connections; one more is closed at once and
//!   counted (thousands of idle clients cannot starve the rest);
//! - a client has [`Limits::header_timeout`] to send a request's head, from the moment it
//!   connects or its last answer was sent (a client sending a byte a second is dropped);
//! - at most [`Limits::max_headers`] headers in [`Limits::max_head_bytes`] bytes (431 past
//!   them);
//! - a request's answer takes at most [`Limits::request_timeout`] (503 past it);
//! - keep-alive, and on SIGTERM or SIGINT a clean stop: no new connection is taken, the
//!   requests under way are answered, then the process exits 0.
//!
//! Every request is written to an [access log](AccessLog) and counted in [`Metrics`].

mod log;
mod metrics;
mod query;

pub use log::AccessLog;
pub use metrics::Metrics;
pub use query::{QueryError, query_param};

use crate::cli::CliError;
use axum::Router;
use axum::body::Body;
use axum::http::{HeaderValue, Request, Response, StatusCode, header};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::convert::Infallible;
use std::io::Write;
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tower::ServiceExt;

/// What a server allows its clients.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Open connections at once.
    pub max_connections: usize,
    /// Time to send a request's head (from connecting, or from the last answer).
    pub header_timeout: Duration,
    /// Time to answer one request.
    pub request_timeout: Duration,
    /// Headers in one request.
    pub max_headers: usize,
    /// Bytes of a request's head (hyper's read buffer; at least 8,192).
    pub max_head_bytes: usize,
    /// Time the requests under way get to finish after SIGTERM.
    pub drain_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_connections: 4096,
            header_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            max_headers: 64,
            max_head_bytes: 16 << 10,
            drain_timeout: Duration::from_secs(10),
        }
    }
}

/// Binds `listen`; a port in use (or any other failure) is an error naming the address.
pub fn bind(listen: &str) -> Result<TcpListener, CliError> {
    TcpListener::bind(listen)
        .map_err(|e| CliError::Failed(format!("cannot listen on {listen}: {e}")))
}

/// An answer: `status`, `headers` (fixed values) and `body`.
pub fn reply(
    status: StatusCode,
    headers: &[(header::HeaderName, &'static str)],
    body: impl Into<Body>,
) -> Response<Body> {
    let mut r = Response::new(body.into());
    *r.status_mut() = status;
    for (name, value) in headers {
        r.headers_mut()
            .insert(name.clone(), HeaderValue::from_static(value));
    }
    r
}

/// A JSON error answer: `{"error": message}` with `status`, never cached.
pub fn json_error(status: StatusCode, message: impl Into<String>) -> Response<Body> {
    let body = serde_json::json!({ "error": message.into() }).to_string();
    reply(
        status,
        &[
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body,
    )
}

/// Serves `app` on `listener` until SIGTERM or SIGINT, then drains and returns. `who` names
/// the program in the lines written to `log` (the address when it starts, the stop);
/// `metrics` counts every request under the route that `route` names for its path.
pub fn serve(
    who: &str,
    app: Router,
    listener: TcpListener,
    limits: Limits,
    access: AccessLog,
    metrics: Arc<Metrics>,
    log: &mut dyn Write,
) -> Result<(), CliError> {
    let failed = |what: &str, e: std::io::Error| CliError::Failed(format!("{who}: {what}: {e}"));
    let addr: SocketAddr = listener
        .local_addr()
        .map_err(|e| failed("listening socket", e))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| failed("listening socket", e))?;
    let limits = Limits {
        max_connections: room_for_connections(limits.max_connections, who, log),
        ..limits
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name(format!("{who}-http"))
        .build()
        .map_err(|e| failed("starting the server's threads", e))?;
    let access = Arc::new(access);
    runtime.block_on(async {
        let listener =
            tokio::net::TcpListener::from_std(listener).map_err(|e| failed("listening", e))?;
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .map_err(|e| failed("SIGTERM handler", e))?;
        let mut int = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
            .map_err(|e| failed("SIGINT handler", e))?;
        let _ = writeln!(log, "{who}: serving on http://{addr}/");
        let _ = log.flush();
        let graceful = hyper_util::server::graceful::GracefulShutdown::new();
        let slots = Arc::new(tokio::sync::Semaphore::new(limits.max_connections));
        let why = loop {
            let (stream, peer) = tokio::select! {
                _ = term.recv() => break "SIGTERM",
                _ = int.recv() => break "SIGINT",
                accepted = listener.accept() => match accepted {
                    Ok(a) => a,
                    Err(e) => {
                        // Out of file descriptors and the like: wait, do not spin.
                        metrics.accept_failed();
                        let _ = writeln!(log, "{who}: accepting a connection: {e}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                },
            };
            let Ok(slot) = slots.clone().try_acquire_owned() else {
                metrics.connection_refused();
                drop(stream);
                continue;
            };
            metrics.connection_opened();
            let _ = stream.set_nodelay(true);
            let (app, access, counted) = (app.clone(), access.clone(), metrics.clone());
            let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                answer(
                    app.clone(),
                    req,
                    peer,
                    limits,
                    access.clone(),
                    counted.clone(),
                )
            });
            let mut http1 = hyper::server::conn::http1::Builder::new();
            http1
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_timeout)
                .max_headers(limits.max_headers)
                .max_buf_size(limits.max_head_bytes.max(8192))
                .keep_alive(true);
            let conn = graceful.watch(http1.serve_connection(TokioIo::new(stream), service));
            let metrics = metrics.clone();
            tokio::spawn(async move {
                let _ = conn.await;
                metrics.connection_closed();
                drop(slot);
            });
        };
        drop(listener);
        let _ = writeln!(
            log,
            "{who}: {why}: not taking connections; finishing the requests under way"
        );
        let _ = log.flush();
        if tokio::time::timeout(limits.drain_timeout, graceful.shutdown())
            .await
            .is_err()
        {
            let _ = writeln!(
                log,
                "{who}: requests still under way after {} s were cut off",
                limits.drain_timeout.as_secs()
            );
        }
        let _ = writeln!(log, "{who}: stopped");
        Ok(())
    })
}

/// Open files beyond the connections: the listener, the database's files, the logs.
const OTHER_FILES: u64 = 256;

/// Raises this process' limit of open files (its soft limit, up to the hard one) to hold
/// `wanted` connections; when the hard limit is lower, the connections it leaves room for,
/// said in `log`.
fn room_for_connections(wanted: usize, who: &str, log: &mut dyn Write) -> usize {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else {
        return wanted;
    };
    let need = wanted as u64 + OTHER_FILES;
    if soft >= need {
        return wanted;
    }
    let raised = need.min(hard);
    let soft = match setrlimit(Resource::RLIMIT_NOFILE, raised, hard) {
        Ok(()) => raised,
        Err(_) => soft,
    };
    if soft >= need {
        return wanted;
    }
    let room = soft.saturating_sub(OTHER_FILES).max(1) as usize;
    let _ = writeln!(
        log,
        "{who}: this process may open {soft} files: taking at most {room} connections, not {wanted}"
    );
    room
}

/// One request: routed, bounded in time, logged and counted.
async fn answer(
    app: Router,
    req: Request<Incoming>,
    peer: SocketAddr,
    limits: Limits,
    access: Arc<AccessLog>,
    metrics: Arc<Metrics>,
) -> Result<Response<Body>, Infallible> {
    let start = Instant::now();
    let method = req.method().clone();
    let uri = req.uri().clone();
    let routed = tokio::time::timeout(limits.request_timeout, app.oneshot(req.map(Body::new)));
    let response = match routed.await {
        Ok(Ok(r)) => r,
        Err(_) => json_error(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "the answer took longer than {} s (the server's --request-timeout)",
                limits.request_timeout.as_secs_f64()
            ),
        ),
    };
    let took = start.elapsed();
    let bytes = hyper::body::Body::size_hint(response.body()).exact();
    access.line(peer, &method, &uri, response.status(), bytes, took);
    metrics.request(uri.path(), response.status(), took);
    Ok(response)
}
