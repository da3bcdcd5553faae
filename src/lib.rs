//! nowdb: checkers endgame databases by retrograde analysis on a pool of ordinary machines,
//! after the Chinook team's 1994 "network of workstations".
//!
//! Modules follow the domain:
//! - [`board`]: positions as bitboards, legal moves, reversal, perft;
//! - [`notation`]: PDN FEN;
//! - [`slice`](mod@slice): material nodes, slices, mirrors, conversions, the dependency graph and plan;
//! - [`index`]: the 1994 paper's Appendix-B gapless indexing and in-order enumeration;
//! - [`solve`]: the phases, work files, position queue and local build;
//! - [`db`]: the compressed database: `build`, `ver` and the probe;
//! - [`queue`]: queue files, lock files, done records and each pair's stage in files;
//! - [`runner`]: the runner daemon and its running records; [`hosts`]: `hosts.toml`;
//!   [`mail`]: alerts for the operators (spooled, then sent with lettre);
//! - [`monitor`], [`watch`], [`slurm`]: who supplies and watches the runners (wsmonitor and
//!   dbstart over ssh, wswatch on a workstation, Slurm pilots on a cluster);
//! - [`http`]: the one HTTP server (axum on hyper and tokio) under [`explorer`] (`dbserve`:
//!   the explorer page and the JSON API) and [`status`] (`dbstatus serve`).

pub mod board;
pub mod budget;
pub mod cli;
pub mod clock;
pub mod db;
pub mod error;
pub mod explorer;
pub mod fault;
pub mod files;
pub mod hosts;
pub mod http;
pub mod inspect;
pub mod lock;
pub mod mail;
pub mod mem;
pub mod monitor;
pub mod notation;
pub mod procfs;
pub mod progress;
pub mod queue;
pub mod rng;
pub mod runner;
pub mod slice;
pub mod slurm;
/// The indexing of a slice (Appendix B) lives with the slices it counts: `slice::index`.
pub use slice::index;
pub mod solve;
pub mod space;
pub mod state;
pub mod status;
pub mod value;
pub mod watch;

pub use board::{Color, Move, MoveList, Position};
pub use index::SliceIndex;
pub use notation::{Setup, parse_fen};
pub use slice::{Material, Selection, Slice};
