//! The runner daemon's log: `logs/<host>.log`, one line per event, each with the time, host,
//! pid and runner number, also echoed on stderr when asked.

use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};

#[derive(Clone)]
pub struct Log {
    file: Arc<Mutex<std::fs::File>>,
    host: String,
    echo: bool,
}

impl Log {
    /// Opens (appends to) `logs/<host>.log` of the site.
    pub fn open(site: &Path, host: &str, echo: bool) -> std::io::Result<Log> {
        let path = site.join("logs").join(format!("{host}.log"));
        let file = crate::files::open_append(&path)?;
        Ok(Log {
            file: Arc::new(Mutex::new(file)),
            host: host.to_string(),
            echo,
        })
    }

    pub fn line(&self, runner: usize, msg: &str) {
        let text = format!(
            "{} {} {}.{runner} {msg}\n",
            crate::clock::local_time(crate::queue::running::now_secs()),
            self.host,
            std::process::id()
        );
        // One write per line: with O_APPEND the lines of several daemons do not interleave.
        let _ = self.file.lock().expect("log").write_all(text.as_bytes());
        if self.echo {
            // Not eprint!: a closed stderr (`| head`) must not stop a runner.
            let _ = std::io::stderr().write_all(text.as_bytes());
        }
    }
}
