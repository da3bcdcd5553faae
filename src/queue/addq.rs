//! What `addq` does (1994 paper Appendix C): add jobs to a queue (split into mini-slices, or
//! an explicit range, or `stop`), list a queue, and edit one under its lock (the paper's
//! `vidb`), validating before saving.

use super::file::{Queue, parse_queue_text};
use super::line::{LineError, QueueLine, mini_slices, parse_line};
use crate::cli::{CliError, output_error};
use crate::files::{FileOp, failed};
use crate::lock::Machine;
use std::collections::HashSet;
use std::io::Write;
use std::path::Path;

/// Words of `addq` that give no job: none, or the words and what is wrong with them.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AddError {
    #[error("addq: no job given (e.g. `addq p lookup 3113.01`)")]
    NoJob,
    #[error("addq {words:?}: {error}")]
    BadJob { words: String, error: LineError },
}

impl From<AddError> for CliError {
    fn from(e: AddError) -> Self {
        CliError::Failed(e.to_string())
    }
}

/// The lines `addq QUEUE WORDS...` adds: `stop`; `PHASE SLICE FIRST LAST [-s R] [-n N]`;
/// or `PHASE SLICE [-s R]`, split into mini-slices of about `positions` positions.
pub fn lines_for(words: &[String], positions: u64) -> Result<Vec<QueueLine>, AddError> {
    let text = words.join(" ");
    let bad = |error: LineError| AddError::BadJob {
        words: text.clone(),
        error,
    };
    match words.first().map(String::as_str) {
        None => return Err(AddError::NoJob),
        Some("stop") => {
            return parse_line(&text)
                .map(|l| l.into_iter().collect())
                .map_err(bad);
        }
        _ => {}
    }
    let explicit = words.len() >= 4 && words[2].parse::<u64>().is_ok();
    if explicit {
        let full = if words.iter().any(|w| w == "-n") {
            text.clone()
        } else {
            format!("{text} -n 00")
        };
        return parse_line(&full)
            .map(|l| l.into_iter().collect())
            .map_err(bad);
    }
    // PHASE SLICE [-s R]: check the words through the grammar, then split.
    let round_words = match &words[2..] {
        [] => "-s 1".to_string(),
        [s, r] if s == "-s" => format!("-s {r}"),
        rest => {
            return Err(bad(LineError::Syntax(format!(
                "expected FIRST LAST or -s ROUND after the slice, found {:?}",
                rest.join(" ")
            ))));
        }
    };
    let probe = format!("{} {} -max 01 {round_words} -n 00", words[0], words[1]);
    let Some(QueueLine::Job(job)) = parse_line(&probe).map_err(bad)? else {
        unreachable!("a job line parses to a job");
    };
    Ok(
        mini_slices(job.phase, job.mirror, job.slice, job.round, positions)
            .into_iter()
            .map(QueueLine::Job)
            .collect(),
    )
}

fn logger() -> impl FnMut(String) {
    |m: String| eprintln!("addq: {m}")
}

/// `addq`'s options.
#[derive(Clone, Copy, Debug)]
pub struct AddOptions {
    /// Positions per mini-slice when splitting a slice.
    pub positions: u64,
    /// `plan`: pairs under this many positions are one `pair` job each (0: never).
    pub pair_below: u64,
    /// At the top of the queue instead of the end.
    pub top: bool,
    pub json: bool,
    /// `plan`: queue even when the site's disk looks too small for the build.
    pub no_space_check: bool,
    /// `plan`: the site builds moves to conversion too (`solve::mtc`).
    pub mtc: bool,
    /// `plan`: the site removes each pair's `solved/` files once its database is verified
    /// ([`crate::solve::Site::releases_solved`]).
    pub release_solved: bool,
}

/// `addq QUEUE WORDS...`.
pub fn add_command(
    site: &Path,
    queue: &str,
    words: &[String],
    o: &AddOptions,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let (positions, top, json) = (o.positions, o.top, o.json);
    if words.first().is_some_and(|w| w == "plan") {
        return plan_command(site, queue, words, o, out);
    }
    let q = Queue::named(site, queue)?;
    let lines = lines_for(words, positions)?;
    let here = Machine::current().map_err(|e| format!("identifying this machine: {e}"))?;
    q.append(&here, &mut logger(), &lines, top)?;
    let place = if top { "top" } else { "end" };
    let text = if json {
        crate::cli::json_line(&serde_json::json!({
            "queue": q.name,
            "added": lines.len(),
            "at": place,
        }))
    } else {
        let mut t = format!(
            "added {} line(s) at the {place} of {}\n",
            lines.len(),
            q.path().display()
        );
        for l in lines.iter().take(3) {
            t += &format!("  {l}\n");
        }
        if lines.len() > 3 {
            t += &format!("  ... {}\n", lines.last().expect("several lines"));
        }
        t
    };
    out.write_all(text.as_bytes()).map_err(output_error)
}

/// Slice pairs with fewer positions go to the `small` queue: their jobs need little memory.
pub const SMALL_PAIR_POSITIONS: u64 = 2 << 20;

/// Slice pairs with fewer positions are planned as one `pair` job each (`--pair-below`):
/// every job costs its runner some 9 ms of queue traffic, records and process start, and
/// a pair of phase jobs is thirty-odd jobs. At 16 M (a pair job of at most some ten seconds,
/// restarted whole if stopped) 2..6 through the queues spent 2.3 % of its runner time
/// outside jobs instead of 9.3 %, and ended in 474 s instead of 515 s.
pub const PAIR_JOB_POSITIONS: u64 = 16 << 20;

/// `addq QUEUE plan [MIN..]MAX`: every job of every slice pair of MIN..MAX pieces not yet
/// done, in dependency order (`queue::pairs::plan_lines`); pairs under
/// [`SMALL_PAIR_POSITIONS`] go to `small`, the others to QUEUE; pairs under
/// `--pair-below` ([`PAIR_JOB_POSITIONS`]) are one `pair` job.
fn plan_command(
    site: &Path,
    queue: &str,
    words: &[String],
    o: &AddOptions,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let (top, json) = (o.top, o.json);
    // The flag may also follow the plan's words (they are taken as they come).
    let flag = "--no-space-check";
    let no_space_check = o.no_space_check || words.iter().any(|w| w == flag);
    let mtc = o.mtc || words.iter().any(|w| w == "--mtc");
    let release = o.release_solved || words.iter().any(|w| w == "--release-solved");
    let words: Vec<String> = (words.iter())
        .filter(|w| *w != flag && *w != "--mtc" && *w != "--release-solved")
        .cloned()
        .collect();
    let main = Queue::named(site, queue)?;
    let small = Queue::named(site, "m")?;
    let usage = "addq QUEUE plan [MIN..]MAX [--only SLICE|NODE|SPLIT...] [--mtc] [--release-solved] [--no-space-check]: e.g. 2..6, 2..5 --only 2300, 2..7 --only 2221, 2..8 --only 4v4";
    let (range, only, only_words) = match words.as_slice() {
        [_, r] => (r.as_str(), Vec::new(), Vec::new()),
        [_, r, flag, rest @ ..] if flag == "--only" && !rest.is_empty() => {
            // `--only 4400 5300` and `--only 4400 --only 5300` say the same.
            let rest: Vec<String> = rest.iter().filter(|w| *w != flag).cloned().collect();
            if rest.is_empty() {
                return Err(usage.to_string().into());
            }
            let mut only = Vec::new();
            for w in &rest {
                match w.parse::<crate::slice::Selection>() {
                    Ok(s) => only.extend(s.0),
                    Err(e) => return Err(format!("addq plan --only {w}: {e}").into()),
                }
            }
            (r.as_str(), only, rest)
        }
        _ => return Err(usage.to_string().into()),
    };
    let bad = || format!("addq plan {range:?}: expected MAX or MIN..MAX piece counts, e.g. 2..6");
    let (min, max) = match range.split_once("..") {
        Some((a, b)) => (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?),
        None => (2, range.parse().map_err(|_| bad())?),
    };
    let site_dirs = crate::solve::Site::new(site);
    // Before the plan: its lines depend on it (the first round of pairs solved already). Kept
    // once the disk check passes.
    let marker = match mtc {
        true => Some(crate::solve::mtc::set_wanted(&site_dirs).map_err(|e| e.to_string())?),
        false => None,
    };
    let planned = super::pairs::plan_lines(&site_dirs, min, max, o.positions, o.pair_below, &only)?;
    // Jobs still queued from an earlier plan, or running now, are not added again. They are
    // compared as jobs, not as text: a job requeued after a stop is in the explicit-range
    // form, and a second `pair` job of a running pair would rewrite its work files.
    let job_of = |line: &QueueLine| match line {
        QueueLine::Job(j) => j.job().ok(),
        QueueLine::Stop => None,
    };
    let mut taken = HashSet::new();
    for q in [&main, &small] {
        taken.extend(
            q.read_checked()?
                .iter()
                .filter_map(|(_, l)| job_of(l.as_ref()?)),
        );
    }
    for (_, rec) in crate::queue::running::read_all(&site_dirs)? {
        taken.extend(rec.job().ok().map(|(_, job)| job));
    }
    // Held jobs wait for the operator's release (`addq --release`), not for a new plan.
    for s in super::held::list(&site_dirs).map_err(|e| e.to_string())? {
        if !matches!(s.held, Ok(None)) {
            taken.insert(s.job);
        }
    }
    // A pair is solved one way: as one `pair` job or by phase jobs. A plan added again with
    // another --pair-below must not queue the other way beside jobs already queued, running
    // or held: both would write the pair's work files. (`build` and `ver` jobs left of a
    // pair write none; a `pair` job for it does them again.)
    let (mut as_pair, mut as_phases) = (HashSet::new(), HashSet::new());
    for j in &taken {
        let pair = crate::slice::SlicePair::of(j.slice);
        match j.phase {
            crate::solve::Phase::Pair => as_pair.insert(pair),
            crate::solve::Phase::Build | crate::solve::Phase::Ver => false,
            _ => as_phases.insert(pair),
        };
    }
    let (mut to_main, mut to_small) = (Vec::new(), Vec::new());
    let mut planned_pairs = Vec::new();
    for (pair, line) in planned {
        let Some(job) = job_of(&line) else { continue };
        let other_way = if job.phase == crate::solve::Phase::Pair {
            as_phases.contains(&pair)
        } else {
            as_pair.contains(&pair)
        };
        if taken.contains(&job) || other_way {
            continue;
        }
        planned_pairs.push((pair, line));
        if pair.count() < SMALL_PAIR_POSITIONS && main.name != small.name {
            to_small.push(line);
        } else {
            to_main.push(line);
        }
    }
    // The disk the whole queued work needs, not only what this plan adds: a build resumed
    // with the same plan refuses to start without room for what is left.
    let mut pairs: std::collections::BTreeSet<_> = taken
        .iter()
        .map(|j| crate::slice::SlicePair::of(j.slice))
        .collect();
    for line in to_main.iter().chain(&to_small) {
        if let Some(job) = job_of(line) {
            pairs.insert(crate::slice::SlicePair::of(job.slice));
        }
    }
    let disk = plan_disk(&site_dirs, &pairs);
    if !no_space_check {
        disk.check(&site_dirs, &format!("addq plan {min}..{max}"))
            .map_err(|e| CliError::NoSpace(format!("{e} (--no-space-check queues it anyway)")))?;
    }
    if let Some(m) = marker {
        m.keep();
    }
    super::plans::record(&site_dirs, min, max, &only_words)?;
    if release && !site_dirs.releases_solved() {
        let path = site_dirs.release_marker();
        let text = "each pair's solved/ files are removed once its database is verified; \
                    lower slices are read from db/ (addq plan --release-solved)\n";
        crate::files::replace(&path, text.as_bytes(), crate::files::Durability::Full)
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    super::pairs::restart_local_pairs(&site_dirs, &planned_pairs)?;
    let here = Machine::current().map_err(|e| format!("identifying this machine: {e}"))?;
    super::pairs::restart_removed_distances(&site_dirs, pairs, &here, &mut logger())?;
    for (q, lines) in [(&small, &to_small), (&main, &to_main)] {
        if !lines.is_empty() {
            q.append(&here, &mut logger(), lines, top)?;
        }
    }
    let text = if json {
        let mut v = serde_json::json!({ "plan": format!("{min}..{max}") });
        v[main.name] = to_main.len().into();
        v[small.name] = to_small.len().into();
        v["disk_bytes"] = disk.total().into();
        v["release_solved"] = site_dirs.releases_solved().into();
        crate::cli::json_line(&v)
    } else {
        format!(
            "plan {min}..{max}: added {} job(s) to {} and {} to {} (pairs under {} positions \
             go to {}, under {} they are one pair job); the queued work needs at most {} of disk{}\n",
            to_main.len(),
            main.name,
            to_small.len(),
            small.name,
            SMALL_PAIR_POSITIONS,
            small.name,
            o.pair_below,
            disk.describe(),
            match site_dirs.releases_solved() {
                true => " (less: solved/ files are released once their pair is verified)",
                false => "",
            }
        )
    };
    out.write_all(text.as_bytes()).map_err(output_error)
}

/// What `pairs` still write, their position queues sized for every runner of hosts.toml (2
/// without one).
fn plan_disk(
    site: &crate::solve::Site,
    pairs: &std::collections::BTreeSet<crate::slice::SlicePair>,
) -> crate::solve::disk::DiskNeeds {
    let mut disk = crate::solve::disk::DiskNeeds::default();
    for pair in pairs {
        let slices = pair.slices();
        let solved = slices.iter().all(|s| site.is_solved(s));
        let compressed = crate::solve::stage::database_stage(site, true, &slices)
            != crate::solve::stage::Stage::Build;
        disk.add_pair(site, &slices, solved, compressed);
    }
    let runners = crate::hosts::Hosts::load(&site.root().join("hosts.toml"))
        .map(|h| h.hosts.iter().map(|h| h.runners).sum::<usize>().max(1))
        .unwrap_or(2);
    disk.add_queues(runners);
    disk
}

/// `addq --list QUEUE`: the queue's lines (with their line numbers in `--json`).
pub fn list_command(
    site: &Path,
    queue: &str,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let q = Queue::named(site, queue)?;
    let entries = q.read_checked()?;
    let mut text = String::new();
    if json {
        let items: Vec<serde_json::Value> = entries
            .iter()
            .filter(|(_, p)| p.is_some())
            .map(|(e, _)| serde_json::json!({"line": e.line, "job": e.text}))
            .collect();
        text = crate::cli::json_line(&serde_json::Value::from(items));
    } else {
        for (e, _) in &entries {
            text += &e.text;
            text.push('\n');
        }
    }
    out.write_all(text.as_bytes()).map_err(output_error)
}

/// `addq --edit QUEUE`: `$EDITOR` (default `vi`) on a copy, under the queue's lock; the
/// edited text replaces the queue only if every line parses.
pub fn edit_command(site: &Path, queue: &str) -> Result<(), CliError> {
    let q = Queue::named(site, queue)?;
    let here = Machine::current().map_err(|e| format!("identifying this machine: {e}"))?;
    let editor = std::env::var("EDITOR").unwrap_or_else(|_| "vi".into());
    q.with_lines(&here, &mut logger(), |lines| {
        let copy = q
            .path()
            .with_extension(format!("edit.{}", std::process::id()));
        let mut text = String::new();
        for l in lines.iter() {
            text += &l.text;
            text.push('\n');
        }
        std::fs::write(&copy, &text).map_err(|e| failed(FileOp::Writing, &copy, e))?;
        // The editor is a program name from the environment, run with the file as its one
        // argument (through `sh -c` only to allow `EDITOR="code --wait"`).
        let status = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("{editor} \"$1\""))
            .arg("editor")
            .arg(&copy)
            .status()
            .map_err(|e| format!("running {editor}: {e}"))?;
        if !status.success() {
            let _ = std::fs::remove_file(&copy);
            return Err(format!(
                "{editor} failed ({status}); {} unchanged",
                q.path().display()
            )
            .into());
        }
        let edited =
            std::fs::read_to_string(&copy).map_err(|e| failed(FileOp::Reading, &copy, e))?;
        match parse_queue_text(&edited) {
            Ok(new) => {
                let _ = std::fs::remove_file(&copy);
                *lines = new;
                Ok(((), true))
            }
            Err(e) => Err(format!(
                "{}: {e}; the queue is unchanged, your edit is kept in {}",
                q.path().display(),
                copy.display()
            )
            .into()),
        }
    })?;
    Ok(())
}
