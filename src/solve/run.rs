//! The one place that runs a job of any phase: the scan phases ([`super::phases`]), the
//! database's `build`, `ver` and `mtcver` ([`super::database::build`]), a whole small pair
//! ([`super::pair_job`], which runs the others through this) and the distances' rounds
//! ([`super::mtc::phase`]).

use super::running::{Outcome, RunOptions};
use super::{Job, Phase, Result, Site};

/// Runs `job` (resuming from its checkpoint if it has one) and checkpoints at the end.
pub fn run_job(site: &Site, job: &Job, opts: &RunOptions) -> Result<Outcome> {
    job.validate()?;
    match job.phase {
        Phase::Build | Phase::Ver | Phase::MtcVer => {
            super::database::build::run_db_job(site, job, opts)
        }
        Phase::Pair => super::pair_job::run_pair(site, job, opts, run_job),
        Phase::Mtc => super::mtc::phase::run_mtc_job(site, job, opts),
        Phase::Cap | Phase::Lookup | Phase::NoIo | Phase::Fill | Phase::WinMove | Phase::Que => {
            super::phases::run_scan_job(site, job, opts)
        }
    }
}
