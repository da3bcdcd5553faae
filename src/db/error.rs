//! The errors of reading and probing a compressed database, and where a slice file's bytes
//! come from ([`ReadAt`]): an engine that only probes gets an error type of the reader's own,
//! and tests and fuzzing read files held in memory.

use std::path::{Path, PathBuf};

/// What went wrong reading or probing a database; every message names the directory or
/// file and what was wrong with it.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// The database directory, its version file or a slice file is not there.
    #[error("{0}")]
    Missing(String),
    /// Reading a file failed.
    #[error("{}: {what}: {source}", path.display())]
    Io {
        path: PathBuf,
        what: String,
        #[source]
        source: std::io::Error,
    },
    /// Not a database of the format this nowdb reads (magic, version, header, size).
    #[error("{}: {what}", path.display())]
    Format { path: PathBuf, what: String },
    /// Damage: a CRC error or a block that does not decode.
    #[error("{}: {what}", path.display())]
    Corrupt { path: PathBuf, what: String },
    /// The database directory cannot be listed, or holds a file named like no slice.
    #[error("{0}")]
    Directory(String),
    /// A position the database has no slice for (more pieces than it holds).
    #[error("{0}")]
    Position(String),
    /// A lookup that may only use memory ([`Fetch::CachedOnly`](super::probe::Fetch)) needs a
    /// block, or a slice, that is not in memory.
    #[error("not in the cache")]
    NotInCache,
}

pub type Result<T> = std::result::Result<T, DbError>;

impl DbError {
    pub(crate) fn format(path: &Path, what: impl Into<String>) -> DbError {
        DbError::Format {
            path: path.to_path_buf(),
            what: what.into(),
        }
    }

    pub(crate) fn corrupt(path: &Path, what: impl Into<String>) -> DbError {
        DbError::Corrupt {
            path: path.to_path_buf(),
            what: what.into(),
        }
    }

    pub(crate) fn io(path: &Path, what: impl Into<String>, source: std::io::Error) -> DbError {
        DbError::Io {
            path: path.to_path_buf(),
            what: what.into(),
            source,
        }
    }
}

/// The site's work meets a database error as a failure (never a full disk: it only reads).
impl From<DbError> for crate::error::Error {
    fn from(e: DbError) -> Self {
        crate::error::Error::Failed(e.to_string())
    }
}

/// Where a slice file's bytes come from: a file, or bytes in memory.
pub trait ReadAt: Send + Sync {
    /// Fills `buf` from `offset`; an `UnexpectedEof` error past the end.
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()>;
    /// The size in bytes.
    fn size(&self) -> std::io::Result<u64>;
}

impl ReadAt for std::fs::File {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        std::os::unix::fs::FileExt::read_exact_at(self, buf, offset)
    }

    fn size(&self) -> std::io::Result<u64> {
        Ok(self.metadata()?.len())
    }
}

impl ReadAt for Vec<u8> {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        let start = usize::try_from(offset).unwrap_or(usize::MAX);
        match self.get(start..).and_then(|rest| rest.get(..buf.len())) {
            Some(bytes) => {
                buf.copy_from_slice(bytes);
                Ok(())
            }
            None => Err(std::io::ErrorKind::UnexpectedEof.into()),
        }
    }

    fn size(&self) -> std::io::Result<u64> {
        Ok(self.len() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_in_memory_read_like_a_file() {
        let bytes: Vec<u8> = (0..10).collect();
        let mut buf = [0u8; 3];
        bytes.read_exact_at(&mut buf, 7).unwrap();
        assert_eq!(buf, [7, 8, 9]);
        let e = bytes.read_exact_at(&mut buf, 8).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::UnexpectedEof);
        assert!(bytes.read_exact_at(&mut buf, u64::MAX).is_err());
        assert_eq!(bytes.size().unwrap(), 10);
    }
}
