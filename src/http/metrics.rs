//! What a server counts, served as Prometheus' text format at `/metrics`: requests by route
//! and status class with their latency, connections, and the time spent on the database.

use axum::http::StatusCode;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// The latency buckets' upper bounds, in seconds.
const BUCKETS: [f64; 7] = [0.0001, 0.001, 0.01, 0.1, 1.0, 10.0, f64::INFINITY];

/// One route's counters.
#[derive(Default)]
struct Route {
    /// Answers by status class: 1xx..5xx at 0..5.
    by_class: [AtomicU64; 5],
    /// Answers at or under each bucket's bound (not cumulative here; summed when written).
    buckets: [AtomicU64; BUCKETS.len()],
    micros: AtomicU64,
}

/// The counters of one server.
pub struct Metrics {
    routes: Vec<(&'static str, Route)>,
    opened: AtomicU64,
    closed: AtomicU64,
    refused: AtomicU64,
    accept_failed: AtomicU64,
    work: AtomicU64,
    work_micros: AtomicU64,
}

impl Metrics {
    /// Counters for `routes` (paths as they are asked); any other path counts as `other`.
    pub fn new(routes: &[&'static str]) -> Metrics {
        Metrics {
            routes: routes
                .iter()
                .chain(std::iter::once(&"other"))
                .map(|r| (*r, Route::default()))
                .collect(),
            opened: AtomicU64::new(0),
            closed: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            accept_failed: AtomicU64::new(0),
            work: AtomicU64::new(0),
            work_micros: AtomicU64::new(0),
        }
    }

    pub(super) fn connection_opened(&self) {
        self.opened.fetch_add(1, Relaxed);
    }

    pub(super) fn connection_closed(&self) {
        self.closed.fetch_add(1, Relaxed);
    }

    pub(super) fn connection_refused(&self) {
        self.refused.fetch_add(1, Relaxed);
    }

    pub(super) fn accept_failed(&self) {
        self.accept_failed.fetch_add(1, Relaxed);
    }

    /// Counts an answered request.
    pub(super) fn request(&self, path: &str, status: StatusCode, took: Duration) {
        let route = match self.routes.iter().find(|(r, _)| *r == path) {
            Some((_, r)) => r,
            None => &self.routes.last().expect("the other route").1,
        };
        let class = (status.as_u16() / 100).clamp(1, 5) as usize - 1;
        route.by_class[class].fetch_add(1, Relaxed);
        let secs = took.as_secs_f64();
        let b = BUCKETS.iter().position(|&le| secs <= le).unwrap_or(0);
        route.buckets[b].fetch_add(1, Relaxed);
        route.micros.fetch_add(took.as_micros() as u64, Relaxed);
    }

    /// Counts `n` positions answered from the database in `took`.
    pub fn worked(&self, n: u64, took: Duration) {
        self.work.fetch_add(n, Relaxed);
        self.work_micros.fetch_add(took.as_micros() as u64, Relaxed);
    }

    /// Requests answered so far on every route.
    pub fn requests(&self) -> u64 {
        self.routes
            .iter()
            .flat_map(|(_, r)| r.by_class.iter())
            .map(|c| c.load(Relaxed))
            .sum()
    }

    /// The counters in Prometheus' text format (version 0.0.4).
    pub fn render(&self, prefix: &str) -> String {
        let mut t = String::new();
        let head = |t: &mut String, name: &str, kind: &str, help: &str| {
            let _ = writeln!(
                t,
                "# HELP {prefix}_{name} {help}\n# TYPE {prefix}_{name} {kind}"
            );
        };
        head(
            &mut t,
            "http_requests_total",
            "counter",
            "Requests answered, by route and status class.",
        );
        for (name, r) in &self.routes {
            for (i, c) in r.by_class.iter().enumerate() {
                let n = c.load(Relaxed);
                if n > 0 {
                    let _ = writeln!(
                        t,
                        "{prefix}_http_requests_total{{route=\"{name}\",status=\"{}xx\"}} {n}",
                        i + 1
                    );
                }
            }
        }
        head(
            &mut t,
            "http_request_seconds",
            "histogram",
            "Time from a request's head to its answer, by route.",
        );
        for (name, r) in &self.routes {
            let mut below = 0;
            for (le, c) in BUCKETS.iter().zip(&r.buckets) {
                below += c.load(Relaxed);
                let le = if le.is_infinite() {
                    "+Inf".to_string()
                } else {
                    le.to_string()
                };
                let _ = writeln!(
                    t,
                    "{prefix}_http_request_seconds_bucket{{route=\"{name}\",le=\"{le}\"}} {below}"
                );
            }
            let secs = r.micros.load(Relaxed) as f64 / 1e6;
            let _ = writeln!(
                t,
                "{prefix}_http_request_seconds_sum{{route=\"{name}\"}} {secs}\n\
                 {prefix}_http_request_seconds_count{{route=\"{name}\"}} {below}"
            );
        }
        let (opened, closed) = (self.opened.load(Relaxed), self.closed.load(Relaxed));
        let gauges = [
            (
                "http_connections_open",
                "gauge",
                "Connections open now.",
                opened - closed.min(opened),
            ),
            (
                "http_connections_total",
                "counter",
                "Connections taken.",
                opened,
            ),
            (
                "http_connections_refused_total",
                "counter",
                "Connections closed at once: the server had its most open.",
                self.refused.load(Relaxed),
            ),
            (
                "http_accept_errors_total",
                "counter",
                "Failures to accept a connection (out of file descriptors).",
                self.accept_failed.load(Relaxed),
            ),
            (
                "db_positions_total",
                "counter",
                "Positions answered from the database.",
                self.work.load(Relaxed),
            ),
        ];
        for (name, kind, help, n) in gauges {
            head(&mut t, name, kind, help);
            let _ = writeln!(t, "{prefix}_{name} {n}");
        }
        head(
            &mut t,
            "db_seconds_total",
            "counter",
            "Time spent answering positions from the database (all threads).",
        );
        let _ = writeln!(
            t,
            "{prefix}_db_seconds_total {}",
            self.work_micros.load(Relaxed) as f64 / 1e6
        );
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_counted_by_route_class_and_bucket() {
        let m = Metrics::new(&["/a"]);
        m.request("/a", StatusCode::OK, Duration::from_micros(50));
        m.request("/a", StatusCode::NOT_FOUND, Duration::from_millis(5));
        m.request("/zzz", StatusCode::NOT_FOUND, Duration::from_secs(20));
        m.worked(3, Duration::from_millis(2));
        assert_eq!(m.requests(), 3);
        let t = m.render("x");
        for line in [
            "x_http_requests_total{route=\"/a\",status=\"2xx\"} 1",
            "x_http_requests_total{route=\"/a\",status=\"4xx\"} 1",
            "x_http_requests_total{route=\"other\",status=\"4xx\"} 1",
            "x_http_request_seconds_bucket{route=\"/a\",le=\"0.0001\"} 1",
            "x_http_request_seconds_bucket{route=\"/a\",le=\"0.01\"} 2",
            "x_http_request_seconds_bucket{route=\"other\",le=\"10\"} 0",
            "x_http_request_seconds_bucket{route=\"other\",le=\"+Inf\"} 1",
            "x_http_request_seconds_count{route=\"/a\"} 2",
            "x_db_positions_total 3",
            "x_db_seconds_total 0.002",
        ] {
            assert!(t.lines().any(|l| l == line), "{line} not in\n{t}");
        }
    }
}
