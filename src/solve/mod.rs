//! The solver: work files of 2-bit values, the 1994 paper's phases on page-aligned ranges,
//! checkpoints, and a local driver that builds all slices of 2..N pieces (DESIGN.md sections
//! 5 and 6, paper Figure 4 and Appendix A).
//!
//! Values are for Black to move. During the computation `Draw` means "at least a draw" (set
//! by `lookup` when a conversion move draws); the final `fill` turns every `Unknown` and
//! `Draw` into an exact draw.

pub mod checkpoint;
pub mod disk;
pub mod job;
pub mod local;
pub mod pair_job;
pub mod phases;
pub mod posqueue;
pub mod site;
pub mod solved;
pub mod stage;
pub mod store;
pub mod verify;

pub use job::{Job, Phase};
pub use phases::{PhaseStats, RunOptions, run_job};
pub use site::Site;

use std::fmt;

/// A 2-bit position value. `Unknown` is 0 so that a fresh (sparse, zeroed) work file is all
/// unknown.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
#[repr(u8)]
pub enum Value {
    Unknown = 0,
    Win = 1,
    Loss = 2,
    Draw = 3,
}

impl Value {
    #[inline]
    pub fn from_bits(b: u8) -> Value {
        match b & 3 {
            0 => Value::Unknown,
            1 => Value::Win,
            2 => Value::Loss,
            _ => Value::Draw,
        }
    }

    /// The value for the side that moved into a position of value `self`.
    #[inline]
    pub fn for_mover(self) -> Value {
        match self {
            Value::Win => Value::Loss,
            Value::Loss => Value::Win,
            v => v,
        }
    }

    pub fn is_resolved(self) -> bool {
        matches!(self, Value::Win | Value::Loss)
    }

    pub fn name(self) -> &'static str {
        match self {
            Value::Unknown => "unknown",
            Value::Win => "win",
            Value::Loss => "loss",
            Value::Draw => "draw",
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An error of the solver: what failed, naming the file, slice or job. Callers match on the
/// kind: a job that found too little disk space is not at fault and is not charged an attempt.
#[derive(Debug, thiserror::Error)]
pub enum SolveError {
    /// Too little disk space: found before writing ([`crate::space`]) or met as ENOSPC or
    /// EDQUOT while writing. Another host, or the same one later, may have room.
    #[error("{0}")]
    NoSpace(String),
    /// Anything else.
    #[error("{0}")]
    Failed(String),
}

impl SolveError {
    /// An error from its message: [`SolveError::NoSpace`] when the message carries ENOSPC or
    /// EDQUOT (an I/O error wrapped with its file's name), else [`SolveError::Failed`].
    pub fn from_message(message: String) -> SolveError {
        match crate::space::names_full_disk(&message) {
            true => SolveError::NoSpace(message),
            false => SolveError::Failed(message),
        }
    }

    /// The same error with its message rewritten (the kind kept).
    pub fn map_message(self, f: impl FnOnce(String) -> String) -> SolveError {
        match self {
            SolveError::NoSpace(m) => SolveError::NoSpace(f(m)),
            SolveError::Failed(m) => SolveError::Failed(f(m)),
        }
    }
}

impl From<std::io::Error> for SolveError {
    fn from(e: std::io::Error) -> Self {
        match e.kind() {
            std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded => {
                SolveError::NoSpace(e.to_string())
            }
            _ => SolveError::Failed(e.to_string()),
        }
    }
}

impl From<crate::space::SpaceError> for SolveError {
    fn from(e: crate::space::SpaceError) -> Self {
        match e {
            crate::space::SpaceError::TooLittle { .. } => SolveError::NoSpace(e.to_string()),
            crate::space::SpaceError::Unreadable { .. } => SolveError::Failed(e.to_string()),
        }
    }
}

pub type Result<T> = std::result::Result<T, SolveError>;

/// Builds a [`SolveError`] from a format string.
#[macro_export]
macro_rules! solve_err {
    ($($arg:tt)*) => { $crate::solve::SolveError::from_message(format!($($arg)*)) };
}
