//! Replacing a small state file so that a reader sees the old text or the new, never part
//! of one: checkpoints, done and stage records, running records, heartbeats, monitor and
//! watch state, spooled mail.

pub mod dirs;

use nix::fcntl::OFlag;
use nix::sys::stat::Mode;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// What a replacement must survive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// Nothing: a crash may lose it (state that is rewritten every round anyway).
    Volatile,
    /// A crash: the data is synced before the rename. The rename itself may be lost, and
    /// the old file stands (right for records where an older one is still safe).
    Data,
    /// A crash, rename included: the directory is synced too.
    Full,
}

/// Replaces `path` by `bytes`: written under a hidden name beside it that carries this
/// process's id (two machines writing the same file never share a temporary), then renamed
/// over it, both named relative to the directory's open handle ([`dirs`]). Creates the
/// directory if needed, only once the temporary cannot be created without it: on a network
/// filesystem every look at the directory is a round trip, and the directories of records
/// nearly always exist.
pub fn replace(path: &Path, bytes: &[u8], durability: Durability) -> io::Result<()> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = format!(".{name}.{}.tmp", std::process::id());
    replace_through(path, &tmp, bytes, durability)
}

/// [`replace`] through the temporary `tmp` in the same directory (a name that no other
/// writer of the file can use at the same time).
pub fn replace_through(
    path: &Path,
    tmp: &str,
    bytes: &[u8],
    durability: Durability,
) -> io::Result<()> {
    let (dir, name) = dirs::split(path)?;
    let tmp = std::ffi::OsStr::new(tmp);
    let create = || {
        dirs::at(dir, |d| {
            let flags = OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_TRUNC | OFlag::O_CLOEXEC;
            nix::fcntl::openat(d, tmp, flags, Mode::from_bits_truncate(0o666))
        })
    };
    let write = || -> io::Result<()> {
        let fd = match create() {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                std::fs::create_dir_all(dir)?;
                create()?
            }
            f => f?,
        };
        let mut f = std::fs::File::from(fd);
        f.write_all(bytes)?;
        if durability != Durability::Volatile {
            f.sync_all()?;
        }
        drop(f);
        dirs::at(dir, |d| nix::fcntl::renameat(d, tmp, d, name))?;
        match durability {
            Durability::Full => dirs::at(dir, |d| nix::unistd::fsync(d)),
            _ => Ok(()),
        }
    };
    write().inspect_err(|_| {
        let _ = std::fs::remove_file(dir.join(tmp));
    })
}

/// Creates the file at `path`, which must not exist yet, for writing (a lock file), named
/// relative to its directory's open handle ([`dirs`]).
pub fn create_new(path: &Path) -> io::Result<std::fs::File> {
    let (dir, name) = dirs::split(path)?;
    let flags = OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_CLOEXEC;
    let fd = dirs::at(dir, |d| {
        nix::fcntl::openat(d, name, flags, Mode::from_bits_truncate(0o666))
    })?;
    Ok(std::fs::File::from(fd))
}

/// Removes the file at `path`, named relative to its directory's open handle ([`dirs`]).
pub fn remove(path: &Path) -> io::Result<()> {
    let (dir, name) = dirs::split(path)?;
    dirs::at(dir, |d| {
        nix::unistd::unlinkat(d, name, nix::unistd::UnlinkatFlags::NoRemoveDir)
    })
}

/// [`remove`], where a file already gone is no error: true when this call removed it.
pub fn remove_if_there(path: &Path) -> io::Result<bool> {
    match remove(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// Whether a file is at `path` (a symbolic link counts as its target), asked relative to its
/// directory's open handle ([`dirs`]); an error other than "no such file" is an error.
pub fn exists(path: &Path) -> io::Result<bool> {
    let (dir, name) = dirs::split(path)?;
    match dirs::at(dir, |d| {
        nix::sys::stat::fstatat(d, name, nix::fcntl::AtFlags::empty())
    }) {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// What was being done to a file when it failed: the first word of a [`FileError`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileOp {
    Reading,
    Mapping,
    Writing,
    Appending,
    Creating,
    Opening,
    Syncing,
    Truncating,
    Inspecting,
    Renaming,
    Removing,
    Listing,
    Locking,
    Unlocking,
}

impl std::fmt::Display for FileOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FileOp::Reading => "reading",
            FileOp::Mapping => "mapping",
            FileOp::Writing => "writing",
            FileOp::Appending => "appending to",
            FileOp::Creating => "creating",
            FileOp::Opening => "opening",
            FileOp::Syncing => "syncing",
            FileOp::Truncating => "truncating",
            FileOp::Inspecting => "reading the metadata of",
            FileOp::Renaming => "renaming",
            FileOp::Removing => "removing",
            FileOp::Listing => "listing",
            FileOp::Locking => "locking",
            FileOp::Unlocking => "unlocking",
        })
    }
}

/// A failed operation on a file: "reading /site/hosts.toml: No such file or directory"
/// (the operation, the file, the cause). The cause prints as `std::io::Error` does, so a
/// full disk still reads "(os error 28)", which `space::names_full_disk` looks for.
#[derive(Debug, thiserror::Error)]
#[error("{op} {}: {source}", path.display())]
pub struct FileError {
    pub op: FileOp,
    pub path: PathBuf,
    pub source: io::Error,
}

/// `e`, met while doing `op` to `path`, as an I/O error of the same kind (callers and the
/// site's `error::Error` match on the kind: a full disk stays one) whose message is a
/// [`FileError`]'s.
pub fn failed(op: FileOp, path: &Path, e: io::Error) -> io::Error {
    io::Error::new(
        e.kind(),
        FileError {
            op,
            path: path.to_path_buf(),
            source: e,
        },
    )
}

/// Where `program` is on the `PATH`, if it is there.
pub fn find_on_path(program: &str) -> Option<std::path::PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// Opens `path` for appending (a log, a list of events), creating it and, if missing, its
/// directory; an error names the file. Each `write` of the result lands whole at the end,
/// even with other writers.
pub fn open_append(path: &Path) -> io::Result<std::fs::File> {
    let open = || {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
    };
    match open() {
        // The directory is made only when missing: over sshfs every call is a round trip.
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if let Some(d) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(d).map_err(|e| failed(FileOp::Creating, d, e))?;
            }
            open().map_err(|e| failed(FileOp::Opening, path, e))
        }
        r => r.map_err(|e| failed(FileOp::Opening, path, e)),
    }
}

/// The entries of `dir` that are not hidden (temporaries of [`replace`], FUSE's
/// `.fuse_hidden*` copies of files replaced while open), as (name, path); a missing
/// directory has none. Any other error is returned, naming the directory: reading it as
/// "empty" could end a round or a phase too early.
pub fn list(dir: &Path) -> io::Result<Vec<(String, std::path::PathBuf)>> {
    let mut out = Vec::new();
    for e in walkdir::WalkDir::new(dir).max_depth(1) {
        let e = match e {
            Ok(e) => e,
            // The directory itself is missing: nothing in it.
            Err(err) if root_missing(&err) => return Ok(Vec::new()),
            Err(err) => {
                let text = err.to_string();
                let e = err
                    .into_io_error()
                    .unwrap_or_else(|| io::Error::other(text));
                return Err(failed(FileOp::Listing, dir, e));
            }
        };
        if e.depth() == 0 {
            if !e.file_type().is_dir() {
                let e = io::Error::from(io::ErrorKind::NotADirectory);
                return Err(failed(FileOp::Listing, dir, e));
            }
            continue;
        }
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.starts_with('.') {
            out.push((name, e.into_path()));
        }
    }
    Ok(out)
}

/// Whether a walk's error is only that its root directory does not exist (a walk of a
/// directory not made yet finds nothing).
pub fn root_missing(err: &walkdir::Error) -> bool {
    err.depth() == 0
        && err
            .io_error()
            .is_some_and(|e| e.kind() == io::ErrorKind::NotFound)
}

/// Removes the hidden copies `.<name>.<digits>` (or `.<name>.<pid>.<n>`) beside `path` last changed more than
/// `older_than` ago: the temporaries of a copy that was killed before its rename (their
/// writer may be another host's process, so age, not a pid, says they are dead).
pub fn remove_stale_temporaries(path: &Path, older_than: std::time::Duration) {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return;
    };
    let prefix = format!(".{}.", name.to_string_lossy());
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let file = e.file_name().to_string_lossy().into_owned();
        let is_temp = file.strip_prefix(&prefix).is_some_and(|pid| {
            !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        });
        // Only a temporary's age is asked for: over sshfs each is a round trip, and the
        // directory may hold thousands of files.
        let old = || {
            e.metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| t.elapsed().is_ok_and(|age| age > older_than))
        };
        if is_temp && old() {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// An empty directory `$TMPDIR/nowdb-<name>-<pid>` for a unit test (the integration
/// tests have `tests/common/dirs.rs`).
#[cfg(test)]
pub(crate) fn test_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("nowdb-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_temporaries_go_and_everything_else_stays() {
        let dir = test_dir("temps");
        let names = [
            "2211.01.nwk",
            ".2211.01.nwk.123",
            ".2211.01.nwk.x1",
            ".2211.01.nwk.",
            ".2211.011.nwk.5",
        ];
        for n in names {
            std::fs::write(dir.join(n), "").unwrap();
        }
        let path = dir.join("2211.01.nwk");
        remove_stale_temporaries(&path, std::time::Duration::from_secs(3600));
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 5, "all are new");
        remove_stale_temporaries(&path, std::time::Duration::ZERO);
        let mut left: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [
                ".2211.01.nwk.",
                ".2211.01.nwk.x1",
                ".2211.011.nwk.5",
                "2211.01.nwk"
            ]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn replaces_whole_and_leaves_no_temporary() {
        let dir = test_dir("files");
        let path = dir.join("sub/state");
        for (text, d) in [
            ("one", Durability::Volatile),
            ("two", Durability::Data),
            ("three", Durability::Full),
        ] {
            replace(&path, text.as_bytes(), d).unwrap();
            assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        }
        assert_eq!(std::fs::read_dir(dir.join("sub")).unwrap().count(), 1);
        // A directory in the way: an error, and no temporary left behind.
        std::fs::create_dir_all(dir.join("sub/blocked")).unwrap();
        assert!(replace(&dir.join("sub/blocked"), b"x", Durability::Data).is_err());
        assert_eq!(std::fs::read_dir(dir.join("sub")).unwrap().count(), 2);
        std::fs::write(dir.join("sub/.hidden"), "").unwrap();
        let mut names: Vec<String> = list(&dir.join("sub"))
            .unwrap()
            .into_iter()
            .map(|e| e.0)
            .collect();
        names.sort();
        assert_eq!(names, ["blocked", "state"]);
        assert!(list(&dir.join("missing")).unwrap().is_empty());
        let log = dir.join("logs/new/a.log");
        for line in ["one\n", "two\n"] {
            open_append(&log)
                .unwrap()
                .write_all(line.as_bytes())
                .unwrap();
        }
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "one\ntwo\n");
        let err = open_append(&dir.join("sub/state/x"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("sub/state"), "{err}");
        let err = list(&dir.join("sub/state")).unwrap_err().to_string();
        assert!(err.contains("sub/state"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
