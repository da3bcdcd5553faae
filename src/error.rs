//! The error of nowdb's work on a site (the solver's files, the queues, the running records,
//! locks): its message, naming the file, slice or job as before, and its kind, which callers
//! match on: a job or a runner that meets a full disk is not at fault, waits for room and is
//! not charged an attempt.

use std::fmt::Display;
use std::io;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Too little disk space: found before writing ([`crate::space`]) or met as ENOSPC or
    /// EDQUOT while writing. Another host, or the same one later, may have room.
    #[error("{0}")]
    NoSpace(String),
    /// Anything else.
    #[error("{0}")]
    Failed(String),
}

pub type Result<T> = std::result::Result<T, Error>;

/// Builds an [`Error`] from a format string (of its kind when the text carries ENOSPC).
#[macro_export]
macro_rules! solve_err {
    ($($arg:tt)*) => { $crate::error::Error::from_message(format!($($arg)*)) };
}

impl Error {
    /// An I/O error in `context` (a path, "locking q"): "context: error", of the I/O error's
    /// kind.
    pub fn io(context: impl Display, e: io::Error) -> Error {
        Error::of_io_kind(&e, format!("{context}: {e}"))
    }

    /// `e`, met doing `op` to `path`: "reading PATH: cause" (a [`crate::files::FileError`]),
    /// of the I/O error's kind.
    pub fn file(op: crate::files::FileOp, path: &std::path::Path, e: io::Error) -> Error {
        crate::files::failed(op, path, e).into()
    }

    /// `message`, of the kind of the I/O error `e`.
    fn of_io_kind(e: &io::Error, message: String) -> Error {
        match is_no_space(e) {
            true => Error::NoSpace(message),
            false => Error::Failed(message),
        }
    }

    /// An error from its message alone, from code that still reports errors as text:
    /// [`Error::NoSpace`] when the message carries ENOSPC or EDQUOT as `std::io::Error`
    /// prints them, else [`Error::Failed`].
    pub fn from_message(message: String) -> Error {
        match crate::space::names_full_disk(&message) {
            true => Error::NoSpace(message),
            false => Error::Failed(message),
        }
    }

    pub fn is_no_space(&self) -> bool {
        matches!(self, Error::NoSpace(_))
    }

    /// The same error with its message rewritten (the kind kept).
    pub fn map_message(self, f: impl FnOnce(String) -> String) -> Error {
        match self {
            Error::NoSpace(m) => Error::NoSpace(f(m)),
            Error::Failed(m) => Error::Failed(f(m)),
        }
    }
}

fn is_no_space(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded
    )
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Self {
        Error::of_io_kind(&e, e.to_string())
    }
}

impl From<crate::space::SpaceError> for Error {
    fn from(e: crate::space::SpaceError) -> Self {
        match e {
            crate::space::SpaceError::TooLittle { .. } => Error::NoSpace(e.to_string()),
            crate::space::SpaceError::Unreadable { .. } => Error::Failed(e.to_string()),
        }
    }
}

/// Errors of code that still reports text keep their kind when it is printed in them.
impl From<String> for Error {
    fn from(message: String) -> Self {
        Error::from_message(message)
    }
}

impl From<&str> for Error {
    fn from(message: &str) -> Self {
        Error::from_message(message.to_string())
    }
}

/// For code that still reports errors as text.
impl From<Error> for String {
    fn from(e: Error) -> Self {
        e.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kind_follows_the_io_error_and_the_message_names_the_context() {
        let full = Error::io("queues/prime.lock", io::Error::from_raw_os_error(28));
        assert!(full.is_no_space());
        assert!(
            full.to_string()
                .starts_with("queues/prime.lock: No space left")
        );
        let full = Error::file(
            crate::files::FileOp::Writing,
            std::path::Path::new("work/ckpt/x"),
            io::Error::from_raw_os_error(28),
        );
        assert!(full.is_no_space());
        assert!(
            full.to_string()
                .starts_with("writing work/ckpt/x: No space left"),
            "{full}"
        );
        assert!(crate::space::names_full_disk(&full.to_string()));
        let gone = Error::io("x", io::Error::from(io::ErrorKind::NotFound));
        assert!(!gone.is_no_space());
        assert!(Error::from(io::Error::from_raw_os_error(122)).is_no_space());
        let text: String = Error::Failed("bad line".into()).into();
        assert_eq!(text, "bad line");
    }
}
