//! `dbstatus serve`: the status page live over HTTP, with the standard library's
//! `TcpListener` (no crate: two read-only GET routes need no more). `/` is the page (which
//! polls `/status.json` every few seconds), `/status.json` the snapshot; anything else is
//! 404 and any method but GET or HEAD is 405. The server keeps no state: every request reads
//! the site's files again. Connections are served one at a time with short timeouts.

use crate::cli::CliError;
use crate::solve::Site;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

/// The address `dbstatus serve` listens on by default: loopback only.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";

/// Binds `listen`; a port in use (or any other failure) is an error naming the address.
pub fn bind(listen: &str) -> Result<TcpListener, CliError> {
    TcpListener::bind(listen)
        .map_err(|e| CliError::Failed(format!("cannot listen on {listen}: {e}")))
}

/// Serves `site` on `listener` until the process is stopped. `log` gets one line when it
/// starts (the address to open).
pub fn serve(
    site: &Site,
    pieces: Option<u32>,
    listener: TcpListener,
    log: &mut dyn Write,
) -> Result<(), CliError> {
    let addr: SocketAddr = listener
        .local_addr()
        .map_err(|e| CliError::Failed(format!("listening socket: {e}")))?;
    let _ = writeln!(log, "dbstatus: serving the status page on http://{addr}/");
    let _ = log.flush();
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        // One client's failure (it went away, sent garbage) is not the server's.
        let _ = handle(site, pieces, stream);
    }
    Ok(())
}

/// A response: status line, content type, body.
struct Reply {
    status: &'static str,
    kind: &'static str,
    body: Vec<u8>,
}

/// What a request for `method path` gets.
fn route(site: &Site, pieces: Option<u32>, method: &str, path: &str) -> Reply {
    let text = |status, body: String| Reply {
        status,
        kind: "text/plain; charset=utf-8",
        body: body.into_bytes(),
    };
    if method != "GET" && method != "HEAD" {
        return text("405 Method Not Allowed", "only GET and HEAD\n".into());
    }
    let path = path.split('?').next().unwrap_or("");
    match path {
        "/" | "/status.json" => match super::snapshot::snapshot(site, pieces) {
            Ok(snap) if path == "/" => Reply {
                status: "200 OK",
                kind: "text/html; charset=utf-8",
                body: super::page::render(&snap, true).into_bytes(),
            },
            Ok(snap) => Reply {
                status: "200 OK",
                kind: "application/json",
                body: crate::cli::json_line(&snap).into_bytes(),
            },
            Err(e) => text("500 Internal Server Error", format!("{e:?}\n")),
        },
        _ => text("404 Not Found", format!("not found: {path}\n")),
    }
}

fn handle(site: &Site, pieces: Option<u32>, stream: TcpStream) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    stream.set_write_timeout(Some(Duration::from_secs(10)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut first = String::new();
    reader.read_line(&mut first)?;
    // Headers, up to the blank line (a bounded number of them).
    for _ in 0..100 {
        let mut h = String::new();
        if reader.read_line(&mut h)? == 0 || h.trim().is_empty() {
            break;
        }
    }
    let mut words = first.split_whitespace();
    let (method, path) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let reply = route(site, pieces, method, path);
    let mut out = stream;
    write!(
        out,
        "HTTP/1.1 {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nCache-Control: no-store\r\n\
         X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n",
        reply.status,
        reply.kind,
        reply.body.len()
    )?;
    if method != "HEAD" {
        out.write_all(&reply.body)?;
    }
    out.flush()
}
