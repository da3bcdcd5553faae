//! Alerts for the operators. Every alert is first written to the site's outbox
//! (`mail/outbox/<time>-<host>-<pid>-<n>.txt`, subject line then body), so that nothing is
//! lost when the mail server is away; the mailer delivers and removes them.

use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

static SEQ: AtomicU64 = AtomicU64::new(0);

/// Queues an alert. A failure to write it is returned for the caller to log; it is never a
/// reason to stop work.
pub fn alert(site: &Path, host: &str, subject: &str, body: &str) -> Result<(), String> {
    let dir = site.join("mail/outbox");
    let name = format!(
        "{}-{host}-{}-{}.txt",
        crate::runner::record::now_secs(),
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    );
    let path = dir.join(&name);
    let tmp = dir.join(format!(".{name}"));
    let write = || -> std::io::Result<()> {
        std::fs::create_dir_all(&dir)?;
        let mut f = std::fs::File::create(&tmp)?;
        write!(f, "Subject: [nowdb {host}] {subject}\n\n{body}\n")?;
        f.sync_all()?;
        std::fs::rename(&tmp, &path)
    };
    write().map_err(|e| format!("queueing the alert {subject:?} in {}: {e}", dir.display()))
}
