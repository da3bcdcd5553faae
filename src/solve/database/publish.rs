//! Publishing a file of the database where readers may look: a private temporary name per
//! process and thread, then a rename.

use crate::solve::Result;
use crate::solve_err;
use std::path::{Path, PathBuf};

/// A temporary file name no other process or thread uses at the same time.
pub(crate) fn unique_tmp(dir: &Path, stem: &str) -> PathBuf {
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let k = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    dir.join(format!(".{stem}.{}.{k}", std::process::id()))
}
/// Writes `dir/VERSION` holding `line` unless its first line is that already (the
/// directory created if need be; temp + rename).
pub(crate) fn ensure_version_line(dir: &Path, line: &str) -> Result<()> {
    let path = dir.join("VERSION");
    if std::fs::read_to_string(&path).is_ok_and(|v| v.lines().next() == Some(line)) {
        return Ok(());
    }
    std::fs::create_dir_all(dir).map_err(|e| solve_err!("{}: {e}", dir.display()))?;
    let tmp = unique_tmp(dir, "VERSION");
    std::fs::write(&tmp, format!("{line}\n"))
        // Another writer may have published it meanwhile: the same text, so either wins.
        .and_then(|_| std::fs::rename(&tmp, &path))
        .map_err(|e| solve_err!("{}: {e}", path.display()))
}
