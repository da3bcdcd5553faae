//! The compressed database (docs/FORMAT.md): its files, their writer and the probe. It needs
//! the rules, the indexing and nothing of the solver: an engine that only probes uses this.
//! The `build` and `ver` phases that make it are the solver's (`solve::database`).
//!
//! - [`removed`]: which positions are not stored (captures, capture threats) and the
//!   refilled runs of the rest; `boundaries.rs` places the boundary between two runs
//!   within the removed positions that separate them;
//! - [`code`]: the run code (predicted run values, length-limited prefix code);
//! - [`format`](mod@format): one slice file: header, block index, 1 KiB blocks with CRC32, and its
//!   reader; [`write`](mod@write): coding runs into such a file (each slice coded with threat values
//!   removed and stored, the better kept);
//! - [`cache`], [`probe`]: [`Database`], the thread-safe probe with an LRU block cache;
//!   [`decoded`]: whole slices decoded in memory for lookups that walk them (`ver`);
//! - [`error`]: [`DbError`], the reader's and the probe's own error type, and [`ReadAt`],
//!   where a slice file's bytes come from (a file, or bytes in memory).

mod boundaries;
pub mod cache;
pub mod code;
mod container;
pub mod crc32;
pub mod decoded;
mod default_code;
pub mod error;
pub mod format;
pub mod mtc;
pub mod mtc_probe;
pub mod probe;
pub mod removed;
pub mod write;

pub use error::{DbError, ReadAt};
pub use probe::{CaptureCache, Database, Fetch};
