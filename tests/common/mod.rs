//! Test helpers shared by several test crates. Each crate uses only part of them.

#![allow(dead_code)]

pub mod brute;
pub mod brute_mtc;
pub mod cdp;
pub mod dirs;
pub mod fixture;
pub mod http;
pub mod parts;
pub mod pool;
pub mod queue_stress;
pub mod reference;
pub mod sample;
pub mod site;
pub mod smtp;
pub mod sshfs;
