//! The files through which the tools above the runners talk to a host's runners: the
//! heartbeat they write (wsmonitor reads it for the host's boot id and liveness) and the
//! pause flag they obey (wswatch sets it while the workstation's user is back).

use crate::solve::Site;
use std::path::PathBuf;

/// `pause/<host>`: while it exists the host's runners take no job.
pub fn pause_path(site: &Site, host: &str) -> PathBuf {
    site.root().join("pause").join(host)
}

/// The heartbeat a host's runners write: its boot id and when.
pub fn read_heartbeat(site: &Site, host: &str) -> Option<(String, u64)> {
    let text = std::fs::read_to_string(heartbeat_path(site, host)).ok()?;
    let (mut boot, mut time) = (None, None);
    for line in text.lines() {
        match line.split_once(' ') {
            Some(("boot_id", v)) => boot = Some(v.to_string()),
            Some(("time", v)) => time = v.parse().ok(),
            _ => {}
        }
    }
    Some((boot?, time?))
}

pub fn heartbeat_path(site: &Site, host: &str) -> PathBuf {
    site.root().join("heartbeats").join(host)
}

/// Writes this host's heartbeat (called by the runner daemon).
pub fn write_heartbeat(site: &Site, host: &str, boot_id: &str, now: u64) -> Result<(), String> {
    let path = heartbeat_path(site, host);
    let text = format!("boot_id {boot_id}\ntime {now}\n");
    crate::files::replace(&path, text.as_bytes(), crate::files::Durability::Volatile)
        .map_err(|e| format!("{}: {e}", path.display()))
}
