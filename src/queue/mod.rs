//! The job queues on the shared filesystem (DESIGN.md section 7, 1994 paper Appendix C):
//! the queue line grammar, the queue files and the cross-machine lock files that guard them.

pub mod addq;
pub mod done;
pub mod file;
pub mod held;
pub mod line;
/// Lock files sit below the queues (the database build and mail use them too).
pub use crate::lock;
pub mod pairs;
pub mod plans;
pub mod release;
pub mod running;
pub mod takes;

pub use file::{QUEUES, Queue};
pub use line::{QueueLine, QueuedJob};
pub use lock::{LockFile, LockOwner, Machine};
