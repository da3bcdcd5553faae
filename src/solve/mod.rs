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

/// The solver's error is the crate's ([`crate::error::Error`]).
pub use crate::error::Error as SolveError;

pub type Result<T> = std::result::Result<T, SolveError>;

/// Builds a [`SolveError`] from a format string.
#[macro_export]
macro_rules! solve_err {
    ($($arg:tt)*) => { $crate::solve::SolveError::from_message(format!($($arg)*)) };
}
