//! Replacing a small state file so that a reader sees the old text or the new, never part
//! of one: checkpoints, done and stage records, running records, heartbeats, monitor and
//! watch state, spooled mail.

use std::io::{self, Write};
use std::path::Path;

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
/// over it. Creates the directory if needed.
pub fn replace(path: &Path, bytes: &[u8], durability: Durability) -> io::Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    if let Some(d) = dir {
        std::fs::create_dir_all(d)?;
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let write = || -> io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        if durability != Durability::Volatile {
            f.sync_all()?;
        }
        std::fs::rename(&tmp, path)?;
        match (durability, dir) {
            (Durability::Full, Some(d)) => std::fs::File::open(d)?.sync_all(),
            _ => Ok(()),
        }
    };
    write().inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_whole_and_leaves_no_temporary() {
        let dir = std::env::temp_dir().join(format!("nowdb-files-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
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
        let _ = std::fs::remove_dir_all(&dir);
    }
}
