//! The solver: work files of 2-bit values, the 1994 paper's phases on page-aligned ranges,
//! checkpoints, and a local driver that builds all slices of 2..N pieces (DESIGN.md sections
//! 5 and 6, paper Figure 4 and Appendix A).
//!
//! Values are for Black to move. During the computation `Draw` means "at least a draw" (set
//! by `lookup` when a conversion move draws); the final `fill` turns every `Unknown` and
//! `Draw` into an exact draw.

pub mod checkpoint;
pub mod database;
pub mod disk;
pub mod job;
pub mod local;
pub mod mtc;
pub mod pair_job;
pub mod phases;
pub mod pool;
pub mod posqueue;
pub mod run;
pub mod running;
pub mod site;
pub mod solved;
pub mod stage;
pub mod store;
pub mod verify;

pub use job::{Job, JobError, Phase};
pub use run::run_job;
pub use running::{PhaseStats, RunOptions};
pub use site::Site;

pub use crate::value::Value;

/// The solver's error is the crate's ([`crate::error::Error`]).
pub use crate::error::Error as SolveError;

pub type Result<T> = std::result::Result<T, SolveError>;

pub use crate::solve_err;
