//! A real SMTP server (python3 aiosmtpd on loopback) that stores what it receives in a
//! maildir, for the tests of mail alerts.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A real SMTP server storing what it receives in a maildir.
pub struct SmtpServer {
    child: Child,
    maildir: PathBuf,
}

impl SmtpServer {
    pub fn start(maildir: &Path, port: u16) -> SmtpServer {
        super::parts::require(&[super::parts::Part::Aiosmtpd]);
        let child = Command::new("python3")
            .args(["-m", "aiosmtpd", "-n", "-l"])
            .arg(format!("127.0.0.1:{port}"))
            .args(["-c", "aiosmtpd.handlers.Mailbox"])
            .arg(maildir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 with aiosmtpd (pip install aiosmtpd)");
        // Ready when it greets with "220".
        let deadline = Instant::now() + Duration::from_secs(20);
        let greets = || -> bool {
            use std::io::Read;
            let Ok(mut c) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
                return false;
            };
            let _ = c.set_read_timeout(Some(Duration::from_secs(2)));
            let mut b = [0u8; 3];
            c.read_exact(&mut b).is_ok() && &b == b"220"
        };
        while !greets() {
            assert!(Instant::now() < deadline, "aiosmtpd did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        SmtpServer {
            child,
            maildir: maildir.to_path_buf(),
        }
    }

    /// The messages received so far.
    pub fn messages(&self) -> Vec<String> {
        let mut out = Vec::new();
        for sub in ["new", "cur"] {
            if let Ok(entries) = std::fs::read_dir(self.maildir.join(sub)) {
                for e in entries {
                    out.push(std::fs::read_to_string(e.unwrap().path()).unwrap());
                }
            }
        }
        out
    }

    pub fn stop(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for SmtpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}

/// A free port below the ephemeral range (where an outgoing connection could take it, or a
/// probe connect to it could connect to itself), never the same twice in this process.
pub fn free_port() -> u16 {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    loop {
        let k = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let port = 20_000 + ((std::process::id() * 16 + k) % 12_000) as u16;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}
