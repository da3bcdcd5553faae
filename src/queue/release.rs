//! `addq --release` and `addq --remove`: the operator's commands for held jobs
//! ([`super::held`]).

use super::held::{self, HeldError};
use crate::cli::{CliError, output_error};
use crate::lock::Machine;
use crate::solve::Site;
use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;

fn failed(e: HeldError) -> CliError {
    CliError::Failed(e.to_string())
}

/// `addq --release WHICH` (a job name, a slice, or `all`): the held jobs back at the top of
/// their queues, attempts reset.
pub fn release_command(
    site: &Path,
    which: &str,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let policy = crate::hosts::site_policy(site)?;
    let here = Machine::current().map_err(|e| format!("identifying this machine: {e}"))?;
    let site = Site::new(site);
    let mut log = |m: String| eprintln!("addq: {m}");
    let done = held::release(&site, &here, &policy, which, &mut log).map_err(failed)?;
    let text = if json {
        serde_json::to_string(&serde_json::json!({ "released": done })).expect("json") + "\n"
    } else {
        done.iter().map(|d| format!("released {d}\n")).collect()
    };
    out.write_all(text.as_bytes()).map_err(output_error)
}

/// `addq --remove JOB [--yes]`: a held job forgotten for good, after a confirmation on a
/// terminal (without one, `--yes` is required).
pub fn remove_command(
    site: &Path,
    which: &str,
    yes: bool,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let policy = crate::hosts::site_policy(site)?;
    let site = Site::new(site);
    if !yes {
        // Check first, so a wrong name is an error before any question.
        let states = held::list(&site).map_err(failed)?;
        let job = held::parse_key(which).map_err(failed)?;
        let key = held::key(&job);
        if !states.iter().any(|s| s.key == key && s.is_held(&policy)) {
            return Err(failed(HeldError::NotHeld {
                key,
                state: "it is not among the held jobs (dbstatus held)".into(),
            }));
        }
        if !std::io::stdin().is_terminal() {
            return Err(format!(
                "refusing to remove {key} for good without confirmation: add --yes (standard input is not a terminal)"
            )
            .into());
        }
        eprint!("Remove held job {key} for good (its pair will never finish)? [y/N] ");
        let mut answer = String::new();
        std::io::stdin()
            .lock()
            .read_line(&mut answer)
            .map_err(|e| format!("reading the answer: {e}"))?;
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            return Err("not removed".to_string().into());
        }
    }
    let s = held::remove(&site, &policy, which).map_err(failed)?;
    let text = if json {
        serde_json::to_string(&serde_json::json!({ "removed": s.key })).expect("json") + "\n"
    } else {
        format!(
            "removed {} for good ({} attempt(s) forgotten); `addq plan` would queue it again\n",
            s.key,
            s.attempts.as_ref().map_or(0, |a| a.len())
        )
    };
    out.write_all(text.as_bytes()).map_err(output_error)
}
