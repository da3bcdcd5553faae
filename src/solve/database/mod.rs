//! The solver's database stages and checks, on top of the database's reader and writer
//! (`crate::db`): the `build` and `ver` phases ([`build`]), the comparison of a database with
//! the solved slices ([`check`]), `dbprobe --site`'s reports ([`report`]) and a finished
//! database copied out of a site to ship ([`ship`]).

pub mod build;
pub mod check;
mod exact_children;
pub mod mtc;
pub mod publish;
pub mod report;
pub mod ship;
pub mod ver;
pub mod ver_exact;
pub mod ver_reverse;
