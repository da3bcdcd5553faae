//! What `jobrunner` does. For now: run one phase job in the foreground (`jobrunner run`), and
//! the local build (`jobrunner build-local`, behind `scripts/build-local`).

use crate::cli::{CliError, STOP, output_error, peak_rss_bytes};
use crate::solve::local::{BuildOptions, BuildSummary, build_local};
use crate::solve::phases::{Outcome, PhaseStats, RunOptions};
use crate::solve::{Job, Site, run_job};
use std::io::Write;
use std::time::{Duration, Instant};

fn stats_json(s: &PhaseStats) -> String {
    format!(
        "{{\"looked\":{},\"win\":{},\"loss\":{},\"draw\":{}}}",
        s.looked, s.win, s.loss, s.draw
    )
}

/// `jobrunner run JOB`: runs (or resumes) one job and reports its statistics. A SIGTERM or
/// the deadline checkpoints it; the exit is then 3 so a caller can requeue the rest.
pub fn run_one(
    site: &Site,
    job_text: &str,
    run: &RunOptions,
    json: bool,
    out: &mut dyn Write,
) -> Result<bool, CliError> {
    let job: Job = job_text.parse()?;
    let t0 = Instant::now();
    let outcome = run_job(site, &job, run).map_err(|e| CliError::Failed(e.to_string()))?;
    let secs = t0.elapsed().as_secs_f64();
    let (done, next, stats) = match outcome {
        Outcome::Done(s) => (true, None, s),
        Outcome::Stopped { next, stats } => (false, Some(next), stats),
    };
    if json {
        writeln!(
            out,
            "{{\"job\":\"{job}\",\"complete\":{done},\"next\":{},\"seconds\":{secs:.3},\"stats\":{}}}",
            next.map_or("null".into(), |n| n.to_string()),
            stats_json(&stats)
        )
    } else {
        let state = match next {
            None => "done".to_string(),
            Some(n) => format!("stopped at checkpoint {n} (run again to resume)"),
        };
        writeln!(
            out,
            "{job}: {state} in {secs:.2}s; looked at {}, resolved win {} loss {} draw {}",
            stats.looked, stats.win, stats.loss, stats.draw
        )
    }
    .map_err(output_error)?;
    Ok(done)
}

fn rate(positions: u64, d: Duration) -> f64 {
    positions as f64 / d.as_secs_f64().max(1e-9)
}

/// `jobrunner build-local`: the whole local build with progress on stderr and a summary.
pub fn build_local_command(
    site: &Site,
    opts: &BuildOptions,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let mut err = std::io::stderr();
    let s: BuildSummary =
        build_local(site, opts, &mut err).map_err(|e| CliError::Failed(e.to_string()))?;
    let rss = peak_rss_bytes().unwrap_or(0);
    let wall = s.elapsed.as_secs_f64();
    let per_core = rate(s.positions, s.elapsed) / opts.runners as f64;
    if json {
        let phases: Vec<String> = s
            .phase_time
            .iter()
            .map(|(p, t)| {
                format!(
                    "\"{p}\":{{\"seconds\":{:.3},\"stats\":{}}}",
                    t.as_secs_f64(),
                    stats_json(&s.phase_stats[p])
                )
            })
            .collect();
        writeln!(
            out,
            "{{\"pieces\":{},\"runners\":{},\"slices\":{},\"already_solved\":{},\"positions\":{},\"seconds\":{wall:.3},\"positions_per_second_per_core\":{per_core:.0},\"peak_rss_bytes\":{rss},\"noio_passes\":{},\"que_rounds\":{},\"verified\":{},\"phases\":{{{}}}}}",
            opts.pieces,
            opts.runners,
            s.slices,
            s.already_solved,
            s.positions,
            s.noio_passes,
            s.que_rounds,
            s.verified,
            phases.join(",")
        )
        .map_err(output_error)?;
        return Ok(());
    }
    let mut text = format!(
        "built 2..{} pieces: {} slices ({} were already solved), {} positions\n\
         wall time {wall:.1}s with {} runners: {:.2} M positions/s, {:.2} M per core; peak RSS {} MiB\n\
         noio passes {}, que rounds {}{}\n\
         phase\tjob-seconds\tlooked\twin\tloss\tdraw\n",
        opts.pieces,
        s.slices,
        s.already_solved,
        s.positions,
        opts.runners,
        rate(s.positions, s.elapsed) / 1e6,
        per_core / 1e6,
        rss >> 20,
        s.noio_passes,
        s.que_rounds,
        if opts.verify {
            format!(", verified {} positions", s.verified)
        } else {
            String::new()
        }
    );
    for (p, t) in &s.phase_time {
        let st = &s.phase_stats[p];
        text += &format!(
            "{p}\t{:.1}\t{}\t{}\t{}\t{}\n",
            t.as_secs_f64(),
            st.looked,
            st.win,
            st.loss,
            st.draw
        );
    }
    out.write_all(text.as_bytes()).map_err(output_error)
}

/// The run options from the command line, wired to SIGTERM.
pub fn run_options(buffers: usize, checkpoint_secs: u64, deadline_secs: Option<u64>) -> RunOptions {
    RunOptions {
        buffers,
        solved: None,
        checkpoint_every: Duration::from_secs(checkpoint_secs),
        deadline: deadline_secs.map(|s| Instant::now() + Duration::from_secs(s)),
        stop: Some(&STOP),
        durable: true,
        database: None,
        lower_from_database: false,
    }
}

/// `jobrunner verify`: every solved slice against its successors.
pub fn verify_command(
    site: &Site,
    runners: usize,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let t0 = Instant::now();
    let n = crate::solve::verify::verify_site(site, runners, &mut std::io::stderr())
        .map_err(|e| CliError::Failed(e.to_string()))?;
    let d = t0.elapsed();
    let per_core = rate(n, d) / runners.max(1) as f64;
    if json {
        writeln!(
            out,
            "{{\"verified\":{n},\"seconds\":{:.3},\"positions_per_second_per_core\":{per_core:.0}}}",
            d.as_secs_f64()
        )
    } else {
        writeln!(
            out,
            "verified {n} positions in {:.1}s: every value agrees with its successors ({:.2} M positions/s per core)",
            d.as_secs_f64(),
            per_core / 1e6
        )
    }
    .map_err(output_error)
}
