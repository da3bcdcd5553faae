//! Disk space, checked before a job or a build writes (fs2's `statvfs`), so that a full disk
//! is a clear error at the start ("needs 2.1 GB in site/work, 0.4 GB free") and not ENOSPC at
//! a flush, and reserved (`fallocate`) for the pages a job will write where the file system
//! can, so that the check cannot be overtaken by another writer.

use std::fs::File;
use std::io;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

/// Too little room, or room that cannot be measured.
#[derive(Debug, thiserror::Error)]
pub enum SpaceError {
    #[error("{what}: needs {} in {}, {} free", bytes(*needed), dir.display(), bytes(*free))]
    TooLittle {
        /// What wanted the room (a job, a build).
        what: String,
        dir: PathBuf,
        needed: u64,
        free: u64,
    },
    #[error("{}: cannot read its free space: {source}", dir.display())]
    Unreadable {
        dir: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// A byte count for people: "340 kB", "2.1 GB" (decimal units, as `df -H` prints them).
pub fn bytes(n: u64) -> String {
    const UNITS: [(&str, f64); 4] = [("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)];
    for (unit, size) in UNITS {
        if n as f64 >= size {
            return format!("{:.1} {unit}", n as f64 / size);
        }
    }
    format!("{n} B")
}

/// The bytes an unprivileged writer may still use in the file system holding `dir` (the
/// nearest existing ancestor when `dir` is not made yet).
pub fn free(dir: &Path) -> Result<u64, SpaceError> {
    let existing = dir
        .ancestors()
        .find(|d| d.exists())
        .unwrap_or(Path::new("."));
    fs2::available_space(existing).map_err(|source| SpaceError::Unreadable {
        dir: dir.to_path_buf(),
        source,
    })
}

/// Fails with [`SpaceError::TooLittle`] unless `needed` bytes are free in `dir`; the bytes
/// free.
pub fn ensure(dir: &Path, needed: u64, what: &str) -> Result<u64, SpaceError> {
    let free = free(dir)?;
    if needed > free {
        return Err(SpaceError::TooLittle {
            what: what.to_string(),
            dir: dir.to_path_buf(),
            needed,
            free,
        });
    }
    Ok(free)
}

/// Bytes of `file` not yet backed by disk blocks (a sparse work file's holes), at most `len`.
pub fn unallocated(file: &File, len: u64) -> io::Result<u64> {
    use std::os::unix::fs::MetadataExt;
    let m = file.metadata()?;
    Ok(m.size().saturating_sub(m.blocks() * 512).min(len))
}

/// Bytes a file of `len` bytes at `path` still needs on disk: all of them if it does not
/// exist, its holes if it does.
pub fn still_to_allocate(path: &Path, len: u64) -> u64 {
    use std::os::unix::fs::MetadataExt;
    match std::fs::metadata(path) {
        Ok(m) => len.saturating_sub(m.blocks() * 512),
        Err(_) => len,
    }
}

/// Reserves `len` bytes of `file` from `offset` (`fallocate`, mode 0: holes become zeroed
/// blocks, data stays as it is). Returns `false` where the file system cannot (sshfs, NFSv3):
/// the caller's [`ensure`] is then all there is. fs2's `allocate` is not used: it reserves
/// from byte 0, and glibc's fallback for such file systems writes zeros into the file, which
/// on a work file other hosts are writing could overwrite their pages.
pub fn reserve(
    file: &File,
    path: &Path,
    offset: u64,
    len: u64,
    what: &str,
) -> Result<bool, SpaceError> {
    use nix::errno::Errno;
    let (Ok(off), Ok(l)) = (i64::try_from(offset), i64::try_from(len)) else {
        return Ok(false);
    };
    if l == 0 {
        return Ok(true);
    }
    match nix::fcntl::fallocate(file.as_fd(), nix::fcntl::FallocateFlags::empty(), off, l) {
        Ok(()) => Ok(true),
        Err(Errno::ENOSPC | Errno::EDQUOT) => {
            let dir = path.parent().unwrap_or(Path::new("."));
            Err(SpaceError::TooLittle {
                what: what.to_string(),
                dir: dir.to_path_buf(),
                needed: len,
                free: free(dir)?,
            })
        }
        Err(_) => Ok(false),
    }
}

/// Whether an error message carries ENOSPC or EDQUOT, as `std::io::Error` prints them: the
/// runner's queue and record code still reports errors as text, and a full disk there must
/// make it wait for room, not give up.
pub fn names_full_disk(message: &str) -> bool {
    message.contains("(os error 28)") || message.contains("(os error 122)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_disk_errors_are_told_from_their_text() {
        let e = io::Error::from_raw_os_error(28);
        assert!(names_full_disk(&format!("locking q: q.lock: {e}")));
        assert!(names_full_disk(
            &io::Error::from_raw_os_error(122).to_string()
        ));
        assert!(!names_full_disk(
            &io::Error::from_raw_os_error(2).to_string()
        ));
    }

    #[test]
    fn byte_counts_read_as_df_prints_them() {
        assert_eq!(bytes(0), "0 B");
        assert_eq!(bytes(999), "999 B");
        assert_eq!(bytes(163_840), "163.8 kB");
        assert_eq!(bytes(2_100_000_000), "2.1 GB");
    }

    #[test]
    fn too_little_room_names_the_directory_and_both_sizes() {
        let e = ensure(Path::new("/"), u64::MAX, "build 2..7").unwrap_err();
        let text = e.to_string();
        assert!(
            text.starts_with("build 2..7: needs 18446744.1 TB in /, "),
            "{text}"
        );
        assert!(text.ends_with(" free"), "{text}");
        assert!(matches!(e, SpaceError::TooLittle { .. }));
        // A directory not made yet is measured at its nearest existing ancestor.
        assert!(free(Path::new("/tmp/nowdb-no-such-dir/work")).is_ok());
    }
}
