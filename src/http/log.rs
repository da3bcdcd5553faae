//! The access log: one line a request, for a person to read.
//!
//! `2026-11-28 10:50:01+00:00 127.0.0.1:51234 GET /api/position?fen=B:W18:B14 200 312 B 0.41 ms`
//!
//! The request target is written as it came, cut at 200 bytes, with anything that is not
//! printable ASCII escaped, so that no client can forge or break a line.

use axum::http::{Method, StatusCode, Uri};
use std::io::Write;
use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::Duration;

/// The longest request target a log line holds.
const TARGET_MAX: usize = 200;

/// Where the access log goes.
pub struct AccessLog {
    out: Option<Mutex<Box<dyn Write + Send>>>,
}

impl AccessLog {
    /// Lines to `out` (a file, stderr).
    pub fn to(out: Box<dyn Write + Send>) -> AccessLog {
        AccessLog {
            out: Some(Mutex::new(out)),
        }
    }

    /// No access log.
    pub fn off() -> AccessLog {
        AccessLog { out: None }
    }

    /// `--access-log WHERE`: `-` for stderr, `off` for none, else a file appended to.
    pub fn open(place: &str) -> Result<AccessLog, crate::cli::CliError> {
        match place {
            "off" => Ok(AccessLog::off()),
            "-" => Ok(AccessLog::to(Box::new(std::io::stderr()))),
            path => std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map(|f| AccessLog::to(Box::new(std::io::LineWriter::new(f))))
                .map_err(|e| crate::cli::CliError::Failed(format!("access log {path}: {e}"))),
        }
    }

    /// Writes the line of one answered request.
    pub fn line(
        &self,
        peer: SocketAddr,
        method: &Method,
        uri: &Uri,
        status: StatusCode,
        bytes: Option<u64>,
        took: Duration,
    ) {
        let Some(out) = &self.out else { return };
        let line = format!(
            "{} {peer} {} {} {} {} {:.2} ms\n",
            crate::clock::local_time(crate::clock::now_secs()),
            printable(method.as_str()),
            printable(&uri.to_string()),
            status.as_u16(),
            bytes.map_or("-".to_string(), |b| format!("{b} B")),
            took.as_secs_f64() * 1e3
        );
        if let Ok(mut out) = out.lock() {
            let _ = out.write_all(line.as_bytes());
        }
    }
}

/// `text` cut at [`TARGET_MAX`] bytes, with spaces, controls and anything beyond ASCII as
/// `%XX` (a request target is ASCII already; this is for what is not).
fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(TARGET_MAX) + 3);
    for b in text.bytes() {
        if out.len() >= TARGET_MAX {
            out.push_str("...");
            break;
        }
        if b.is_ascii_graphic() {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_cannot_be_forged_or_grow_without_bound() {
        assert_eq!(printable("/a b\nc"), "/a%20b%0Ac");
        assert_eq!(printable("/é"), "/%C3%A9");
        let long = printable(&"x".repeat(1000));
        assert!(
            long.len() <= TARGET_MAX + 3 && long.ends_with("..."),
            "{long}"
        );
    }
}
