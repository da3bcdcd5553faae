//! The job queues on the shared filesystem (DESIGN.md section 7, 1994 paper Appendix C).
//! So far: the cross-machine lock files that guard them.

pub mod lock;

pub use lock::{LockFile, LockOwner, Machine};
