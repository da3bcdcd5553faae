//! Scratch directories of the test suites: `$TMPDIR/nowdb-<suite>-<pid>-<name>`.
//!
//! Each run first removes the directories of earlier runs of the same suite whose process
//! is gone, so runs do not pile up in the temporary directory, while a failed run's
//! directories stay until the next run for a look.

use std::path::PathBuf;

/// The path `$TMPDIR/nowdb-<suite>-<pid>-<name>`, nothing there yet.
pub fn fresh_path(suite: &str, name: &str) -> PathBuf {
    remove_earlier_runs(suite);
    let d = std::env::temp_dir().join(format!("nowdb-{suite}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// [`fresh_path`], created empty.
pub fn fresh_dir(suite: &str, name: &str) -> PathBuf {
    let d = fresh_path(suite, name);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn remove_earlier_runs(suite: &str) {
    static SWEPT: std::sync::Once = std::sync::Once::new();
    SWEPT.call_once(|| {
        let prefix = format!("nowdb-{suite}-");
        let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
            return;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let pid = name
                .strip_prefix(&prefix)
                .and_then(|rest| rest.split('-').next())
                .and_then(|pid| pid.parse::<u32>().ok());
            if pid.is_some_and(|p| p != std::process::id() && nowdb::files::process_is_gone(p)) {
                // Not a link: these are plain directories the suites made.
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    });
}
