//! A plain HTTP/1.1 client over one kept-alive `TcpStream`, for tests that must see what
//! goes over the wire (status lines, headers, closed connections), and `dbserve` run as a
//! child process.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// An answer: status code, headers (names in lower case) and body.
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: u16,
    pub headers: BTreeMap<String, String>,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body as JSON (a panic naming the body when it is not).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("{e}: answer {} is not JSON: {}", self.status, self.text()))
    }
}

/// One connection, kept alive across requests.
pub struct Client {
    addr: String,
    reader: BufReader<TcpStream>,
}

impl Client {
    pub fn connect(addr: &str) -> Client {
        let s = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        s.set_nodelay(true).unwrap();
        Client {
            addr: addr.to_string(),
            reader: BufReader::new(s),
        }
    }

    pub fn get(&mut self, target: &str) -> std::io::Result<Answer> {
        self.send("GET", target, &[])
    }

    pub fn post(&mut self, target: &str, body: &[u8]) -> std::io::Result<Answer> {
        self.send("POST", target, body)
    }

    /// Sends one request and reads its answer (an error when the server closed instead).
    pub fn send(&mut self, method: &str, target: &str, body: &[u8]) -> std::io::Result<Answer> {
        let mut head = format!("{method} {target} HTTP/1.1\r\nHost: {}\r\n", self.addr);
        if method == "POST" {
            head += &format!(
                "Content-Type: application/json\r\nContent-Length: {}\r\n",
                body.len()
            );
        }
        head += "\r\n";
        let s = self.reader.get_mut();
        s.write_all(head.as_bytes())?;
        s.write_all(body)?;
        self.read_answer()
    }

    /// Writes `bytes` as they are (a request of the test's own making).
    pub fn write_raw(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.reader.get_mut().write_all(bytes)
    }

    /// Reads one answer.
    pub fn read_answer(&mut self) -> std::io::Result<Answer> {
        let mut line = String::new();
        if self.reader.read_line(&mut line)? == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "the server closed the connection",
            ));
        }
        let status: u16 = line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("status line {line:?}"));
        let mut headers = BTreeMap::new();
        loop {
            let mut h = String::new();
            self.reader.read_line(&mut h)?;
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            let (k, v) = h.split_once(':').unwrap_or((h, ""));
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
        let len: usize = headers
            .get("content-length")
            .map_or(0, |v| v.parse().unwrap());
        let mut body = vec![0; len];
        self.reader.read_exact(&mut body)?;
        Ok(Answer {
            status,
            headers,
            body,
        })
    }

    /// Whether the server has closed this connection (reads EOF within `wait`).
    pub fn closed_within(&mut self, wait: Duration) -> bool {
        let s = self.reader.get_mut();
        s.set_read_timeout(Some(wait)).unwrap();
        let mut b = [0u8; 1];
        let closed = match s.read(&mut b) {
            Ok(n) => n == 0,
            Err(e) => !matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ),
        };
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        closed
    }
}

/// A `dbserve` child: its address, and its stderr lines as they come.
pub struct Server {
    pub child: Child,
    pub addr: String,
    pub stderr: Arc<Mutex<Vec<String>>>,
}

impl Server {
    /// Starts `dbserve --site SITE --listen 127.0.0.1:0 ARGS...` and waits for its address;
    /// `None` with its stderr when it exits first.
    pub fn start(bin: &str, site: &Path, args: &[&str]) -> Result<Server, String> {
        let mut child = Command::new(bin)
            .arg("--site")
            .arg(site)
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let lines = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let err = child.stderr.take().unwrap();
        let kept = lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines() {
                let Ok(line) = line else { break };
                if let Some(a) = line.split("serving on http://").nth(1) {
                    let _ = tx.send(a.trim_end_matches('/').to_string());
                }
                kept.lock().unwrap().push(line);
            }
        });
        match rx.recv_timeout(Duration::from_secs(120)) {
            Ok(addr) => Ok(Server {
                child,
                addr,
                stderr: lines,
            }),
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                std::thread::sleep(Duration::from_millis(100));
                Err(lines.lock().unwrap().join("\n"))
            }
        }
    }

    pub fn client(&self) -> Client {
        Client::connect(&self.addr)
    }

    pub fn stderr_text(&self) -> String {
        self.stderr.lock().unwrap().join("\n")
    }

    /// The CPU time the server has used so far, user and system, in seconds.
    pub fn cpu_seconds(&self) -> f64 {
        let ticks = nowdb::procfs::cpu_ticks(self.child.id()).expect("the server is running");
        // SAFETY: sysconf only reads a constant of the system.
        ticks as f64 / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64
    }

    /// The server's resident memory now, in bytes (`/proc/PID/statm`).
    pub fn rss_bytes(&self) -> u64 {
        let statm = std::fs::read_to_string(format!("/proc/{}/statm", self.child.id())).unwrap();
        let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
        pages * 4096
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `text` with everything but unreserved characters as `%XX`, for a query parameter.
pub fn encode(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
