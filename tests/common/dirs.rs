//! Scratch directories of the test suites: `$TMPDIR/nowdb-<suite>-<pid>-<name>`.
//!
//! Each run first removes the directories of earlier runs of the same suite whose process
//! is gone, so runs do not pile up in the temporary directory, while a failed run's
//! directories stay until the next run for a look. Mounts left inside them (the sshfs
//! suites' mount points, after a run was killed) are unmounted first.

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

/// Lazily unmounts every mount point under `dir`, deepest first, so that removing `dir`
/// neither fails on them nor walks into what they show.
fn unmount_inside(dir: &std::path::Path) {
    let Ok(mounts) = std::fs::read_to_string("/proc/mounts") else {
        return;
    };
    let mut inside: Vec<&str> = mounts
        .lines()
        .filter_map(|l| l.split(' ').nth(1))
        .filter(|m| std::path::Path::new(m).starts_with(dir))
        .collect();
    inside.sort_by_key(|m| std::cmp::Reverse(m.len()));
    for m in inside {
        let _ = std::process::Command::new("fusermount3")
            .arg("-uz")
            .arg(m)
            .stderr(std::process::Stdio::null())
            .status();
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(m)
            .stderr(std::process::Stdio::null())
            .status();
    }
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
            if pid.is_some_and(|p| p != std::process::id() && nowdb::procfs::process_is_gone(p)) {
                unmount_inside(&e.path());
                // Not a link: these are plain directories the suites made.
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    });
}
