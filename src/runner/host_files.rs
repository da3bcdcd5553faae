//! The files through which the tools above the runners talk to a host's runners: the
//! heartbeat they write (wsmonitor reads it for the host's boot id and liveness) and the
//! pause flag they obey (wswatch sets it while the workstation's user is back).

use crate::solve::Site;
use std::path::PathBuf;

/// The jobrunner a host of `platform` runs: the site's `bin/<platform>/jobrunner` when the
/// site has one (hosts of several kinds), else the one beside this program.
pub fn jobrunner_for(site: &Site, platform: &str) -> std::io::Result<PathBuf> {
    let in_site = site.root().join("bin").join(platform).join("jobrunner");
    if in_site.exists() {
        return Ok(in_site);
    }
    Ok(std::env::current_exe()?.with_file_name("jobrunner"))
}

/// `pause/<host>`: while it exists the host's runners take no job.
pub fn pause_path(site: &Site, host: &str) -> PathBuf {
    site.root().join("pause").join(host)
}

/// How often a host's runner daemon writes its heartbeat.
pub const HEARTBEAT_EVERY_SECS: u64 = 10;

/// A heartbeat at most this old shows its runners alive: three missed beats make them gone
/// (a loaded host or a slow network filesystem may delay one).
pub const HEARTBEAT_ALIVE_SECS: u64 = 3 * HEARTBEAT_EVERY_SECS;

/// Whether a heartbeat written at `time` shows its host's runners alive at `now`.
pub fn heartbeat_alive(time: u64, now: u64) -> bool {
    now.saturating_sub(time) <= HEARTBEAT_ALIVE_SECS
}

/// The heartbeat a host's runners write: its boot id and when.
#[derive(serde::Serialize, serde::Deserialize)]
struct Heartbeat {
    #[serde(deserialize_with = "crate::state::text")]
    boot_id: String,
    time: u64,
}

/// The heartbeat a host's runners write: its boot id and when.
pub fn read_heartbeat(site: &Site, host: &str) -> Option<(String, u64)> {
    let beat: Heartbeat =
        crate::state::read(&heartbeat_path(site, host), "heartbeat", &[]).ok()??;
    Some((beat.boot_id, beat.time))
}

pub fn heartbeat_path(site: &Site, host: &str) -> PathBuf {
    site.root().join("heartbeats").join(host)
}

/// Writes this host's heartbeat (called by the runner daemon).
pub fn write_heartbeat(
    site: &Site,
    host: &str,
    boot_id: &str,
    now: u64,
) -> crate::error::Result<()> {
    let beat = Heartbeat {
        boot_id: boot_id.to_string(),
        time: now,
    };
    let volatile = crate::files::Durability::Volatile;
    crate::state::write(&heartbeat_path(site, host), &beat, volatile)
}
