//! Open handles of the directories a process writes records in (`running/`, `queues/`,
//! `done/<slice>/`), so that a file in one is named relative to its directory's handle
//! (`openat`, `renameat`, `unlinkat`, `fstatat`) instead of by its whole path.
//!
//! Why: a network filesystem mounted for coherence between hosts (sshfs with
//! `entry_timeout=0`, NFS without a lookup cache) asks the server about every component of a
//! path at every use; a rename asks twice. Relative to an open handle only the file's own
//! name is looked up: a fifth to a quarter of a job's round trips to the file server.
//!
//! A handle may go stale: its directory removed (and perhaps made again). An operation that
//! finds no file through a handle is tried once more through a freshly opened one, so a
//! directory made again is found, and a file that is really absent costs one more look.

use nix::errno::Errno;
use nix::fcntl::{OFlag, open};
use nix::sys::stat::Mode;
use std::io;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// How many directory handles a process keeps: the record directories of a daemon's
/// current work. The oldest is closed first.
const KEEP: usize = 32;

static OPEN: Mutex<Vec<(PathBuf, Arc<OwnedFd>)>> = Mutex::new(Vec::new());

fn handle(dir: &Path) -> io::Result<Arc<OwnedFd>> {
    let mut open_dirs = OPEN.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(k) = open_dirs.iter().position(|(d, _)| d == dir) {
        return Ok(open_dirs[k].1.clone());
    }
    let fd = open(
        dir,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )?;
    let fd = Arc::new(fd);
    if open_dirs.len() >= KEEP {
        open_dirs.remove(0);
    }
    open_dirs.push((dir.to_path_buf(), fd.clone()));
    Ok(fd)
}

fn forget(dir: &Path, stale: &Arc<OwnedFd>) {
    let mut open_dirs = OPEN.lock().unwrap_or_else(|p| p.into_inner());
    open_dirs.retain(|(d, fd)| !(d == dir && Arc::ptr_eq(fd, stale)));
}

/// Runs `op` on the handle of `dir`; when it finds nothing (`ENOENT`, `ESTALE`), once more
/// on a handle opened again, in case the directory was removed and made again.
pub fn at<T>(dir: &Path, op: impl Fn(BorrowedFd<'_>) -> nix::Result<T>) -> io::Result<T> {
    use std::os::fd::AsFd;
    let fd = handle(dir)?;
    match op(fd.as_fd()) {
        Err(Errno::ENOENT | Errno::ESTALE) => {
            forget(dir, &fd);
            Ok(op(handle(dir)?.as_fd())?)
        }
        r => Ok(r?),
    }
}

/// The directory and the file name of `path` (a path without a parent is in `.`).
pub fn split(path: &Path) -> io::Result<(&Path, &std::ffi::OsStr)> {
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}: not a file's path", path.display()),
        )
    })?;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    Ok((dir, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_removed_and_made_again_is_found_through_a_new_handle() {
        let dir = crate::files::test_dir("dirs-stale");
        let file = dir.join("a");
        crate::files::replace(&file, b"one", crate::files::Durability::Full).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        std::fs::create_dir_all(&dir).unwrap();
        crate::files::replace(&file, b"two", crate::files::Durability::Full).unwrap();
        assert_eq!(std::fs::read(&file).unwrap(), b"two");
        assert!(crate::files::exists(&file).unwrap());
        crate::files::remove(&file).unwrap();
        assert!(!crate::files::exists(&file).unwrap());
        assert!(!file.exists());
    }

    #[test]
    fn at_most_keep_handles_stay_open() {
        let root = crate::files::test_dir("dirs-many");
        for k in 0..KEEP + 5 {
            let f = root.join(k.to_string()).join("x");
            crate::files::replace(&f, b"x", crate::files::Durability::Data).unwrap();
        }
        assert!(OPEN.lock().unwrap().len() <= KEEP);
    }
}
