//! The `build` and `ver` phases (paper Figure 4, 2003 paper Table 3).
//!
//! `build` on a page-aligned range classifies its positions and writes the refilled runs as
//! a part file; the job that completes the set of parts codes the whole slice and publishes
//! `db/<slice>.ndb` by rename, so a reader never sees a half-written slice and the file does
//! not depend on how the slice was split. `ver` checks a range: from the solver's
//! values while the pair's `solved/` files exist ([`super::ver_exact`]), else from the
//! compressed database alone ([`super::ver`]).

use super::publish::{ensure_version_line, unique_tmp};
use crate::db::crc32::crc32;
use crate::db::format::is_current;
use crate::db::probe::{VERSION_LINE, slice_path};
use crate::db::removed::{RangeRuns, RuleRuns, ValueRun, range_runs};
use crate::db::write::write_best_slice;
use crate::slice::Slice;
use crate::solve::running::{
    Outcome, PhaseStats, RunOptions, STOP_CHECK, from_the_start, stop_requested,
};
use crate::solve::solved::SolvedSlice;
use crate::solve::store::sync_dir;
use crate::solve::{Job, Phase, Result, Site, Value};
use crate::solve_err;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const PART_MAGIC: &[u8; 8] = b"NOWDBPT3";
/// Parts written before threat values could be stored (runs with their removed tails, one
/// rule): a slice assembled from one keeps its threats removed.
const PART_MAGIC_2: &[u8; 8] = b"NOWDBPT2";
/// Parts written before runs carried their removed tails: read with no tails (a slice
/// assembled from them is correct, only less tightly coded).
const PART_MAGIC_1: &[u8; 8] = b"NOWDBPT1";

/// Runs a `build` or `ver` job. Neither writes a checkpoint: a stopped job is simply run
/// again (a range is a few seconds of work and its output appears atomically).
pub fn run_db_job(site: &Site, job: &Job, opts: &RunOptions) -> Result<Outcome> {
    match job.phase {
        Phase::Build => build_range(site, job, opts),
        Phase::Ver | Phase::MtcVer => {
            let db = opts.database(site)?;
            match job.phase {
                Phase::Ver => match super::ver_exact::verify_range_exact(site, &db, job, opts)? {
                    Some(outcome) => Ok(outcome),
                    None => super::ver::verify_range(&db, job, opts),
                },
                _ => super::mtc::verify_mtc_range(site, &db, job, opts),
            }
        }
        _ => unreachable!("not a database phase: {}", job.phase),
    }
}

fn parts_dir(site: &Site, slice: &Slice) -> PathBuf {
    site.db_dir().join("parts").join(slice.to_string())
}

/// Writes `db/VERSION` once (temp + rename).
pub fn ensure_version_file(site: &Site) -> Result<()> {
    // A database of an older version is being built again: its files are replaced one by
    // one, each checked by its own header.
    ensure_version_line(&site.db_dir(), VERSION_LINE)
}

fn build_range(site: &Site, job: &Job, opts: &RunOptions) -> Result<Outcome> {
    let slice = job.slice;
    ensure_version_file(site)?;
    let final_path = slice_path(&site.db_dir(), &slice);
    let stats = PhaseStats {
        looked: job.last - job.first,
        ..Default::default()
    };
    if is_current(&final_path) {
        // A pair whose distances came after its values were built.
        super::mtc::build_mtc(site, &slice)?;
        return Ok(Outcome::Done(stats));
    }
    let solved = match &opts.solved {
        Some(store) => store.get(slice)?,
        None => Arc::new(SolvedSlice::load(site, slice)?),
    };
    let ix = crate::slice::index::SliceIndex::new(slice);
    // Classified in chunks so that a stop request is seen within a fraction of a second.
    let mut runs = RuleRuns::default();
    let mut at = job.first;
    while at < job.last {
        if stop_requested(opts) {
            return Ok(from_the_start(job));
        }
        let end = (at + STOP_CHECK * 16).min(job.last);
        runs.append(range_runs(&ix, at, end, |i| solved.get(i)));
        at = end;
    }
    if job.first == 0 && job.last >= slice.count() {
        // The whole slice in one job (every small pair): no part to write, sync and read
        // back, and no lock, as there are no other parts to wait for: another job that
        // published this slice meanwhile wrote the same bytes, the rename replaces them
        // whole, and an assembly that loses its parts to our cleanup finds the slice
        // published.
        publish(site, &slice, runs)?;
    } else {
        write_part(site, job, &runs)?;
        assemble(site, &slice)?;
    }
    // Whichever job published the value file writes the distances' (a job killed between
    // the two runs again and finds the value file current).
    if is_current(&final_path) {
        super::mtc::build_mtc(site, &slice)?;
    }
    Ok(Outcome::Done(stats))
}

fn part_path(site: &Site, job: &Job) -> PathBuf {
    parts_dir(site, &job.slice).join(format!("{}-{}.part", job.first, job.last))
}

/// A part: magic, first, last, threats, then per rule (threats removed, then stored) the
/// leading removed positions, the run count and each run as `len << 2 | value` and its
/// tail; a CRC32 of all that last.
fn write_part(site: &Site, job: &Job, runs: &RuleRuns) -> Result<()> {
    let dir = parts_dir(site, &job.slice);
    std::fs::create_dir_all(&dir).map_err(|e| solve_err!("{}: {e}", dir.display()))?;
    let stored = runs
        .threats_stored
        .as_ref()
        .expect("a range built now has both rules' runs");
    let mut words = vec![job.first, job.last, runs.threats];
    for rule in [&runs.threats_removed, stored] {
        words.extend([rule.lead_removed, rule.runs.len() as u64]);
        for r in &rule.runs {
            words.extend([r.len << 2 | r.value as u64, r.tail]);
        }
    }
    let mut bytes = PART_MAGIC.to_vec();
    bytes.extend(words.iter().flat_map(|w| w.to_le_bytes()));
    let crc = crc32(&bytes);
    bytes.extend_from_slice(&crc.to_le_bytes());
    let path = part_path(site, job);
    let tmp = unique_tmp(&dir, &format!("{}-{}", job.first, job.last));
    let write = || -> std::io::Result<()> {
        std::fs::write(&tmp, &bytes)?;
        std::fs::File::open(&tmp)?.sync_all()?;
        std::fs::rename(&tmp, &path)
    };
    write().map_err(|e| solve_err!("{}: {e}", path.display()))
}

fn read_part(path: &Path) -> Result<(u64, u64, RuleRuns)> {
    let bad = |what: &str| solve_err!("{}: {what}", path.display());
    let bytes = std::fs::read(path).map_err(|e| bad(&e.to_string()))?;
    let magic = bytes.get(0..8).filter(|_| bytes.len() >= 44);
    let (rules, words_per_run, head) = match magic {
        Some(m) if m == PART_MAGIC => (2, 2, 3),
        Some(m) if m == PART_MAGIC_2 => (1, 2, 2),
        Some(m) if m == PART_MAGIC_1 => (1, 1, 2),
        _ => return Err(bad("not a build part (bad magic or too short)")),
    };
    let (body, crc) = bytes.split_at(bytes.len() - 4);
    if crc32(body) != u32::from_le_bytes(crc.try_into().unwrap()) || body.len() % 8 != 0 {
        return Err(bad("CRC error"));
    }
    let words: Vec<u64> = body[8..]
        .chunks_exact(8)
        .map(|w| u64::from_le_bytes(w.try_into().unwrap()))
        .collect();
    let mut at = head;
    let mut rule = || -> Result<RangeRuns> {
        let short = || bad("length does not match its run count");
        let counts = words.get(at..at + 2).ok_or_else(short)?;
        let (lead, n) = (counts[0], counts[1]);
        at += 2;
        let len = n.checked_mul(words_per_run).ok_or_else(short)? as usize;
        let run_words = words.get(at..at + len).ok_or_else(short)?;
        at += len;
        let runs = run_words
            .chunks_exact(words_per_run as usize)
            .map(|w| {
                let tail = w.get(1).copied().unwrap_or(0);
                let value = Value::from_bits(w[0] as u8);
                if value == Value::Unknown || w[0] >> 2 == 0 || tail >= w[0] >> 2 {
                    return Err(bad("bad run"));
                }
                Ok(ValueRun::new(value, w[0] >> 2, tail))
            })
            .collect::<Result<_>>()?;
        Ok(RangeRuns {
            lead_removed: lead,
            runs,
        })
    };
    let threats_removed = rule()?;
    let threats_stored = if rules == 2 { Some(rule()?) } else { None };
    if at != words.len() {
        return Err(bad("length does not match its run count"));
    }
    let threats = if rules == 2 { words[2] } else { 0 };
    Ok((
        words[0],
        words[1],
        RuleRuns {
            threats_removed,
            threats_stored,
            threats,
        },
    ))
}

/// Codes and publishes the slice if its parts cover it; otherwise does nothing. Jobs that
/// finish together take turns (a lock file, broken if its owner died): the first
/// publishes, the others find the slice published.
fn assemble(site: &Site, slice: &Slice) -> Result<()> {
    let lock_path = site.db_dir().join("parts").join(format!("{slice}.lock"));
    let here =
        crate::lock::Machine::current().map_err(|e| solve_err!("identifying this machine: {e}"))?;
    let mut events = Vec::new();
    let lock = crate::lock::LockFile::acquire(
        &lock_path,
        &here,
        std::time::Duration::from_secs(3600),
        &mut events,
    )
    .map_err(|e| solve_err!("assembling {slice}: {e}"))?;
    for crate::lock::LockEvent::BrokeStale { path, owner } in events {
        crate::cli::stderr_line(&format!(
            "broke the stale lock {} of pid {} on {}: its owner is gone",
            path.display(),
            owner.pid,
            owner.host
        ));
    }
    let result = assemble_locked(site, slice);
    lock.release()
        .map_err(|e| solve_err!("{}: {e}", lock_path.display()))?;
    result
}

fn assemble_locked(site: &Site, slice: &Slice) -> Result<()> {
    let dir = parts_dir(site, slice);
    let final_path = slice_path(&site.db_dir(), slice);
    let count = slice.count();
    if is_current(&final_path) {
        return Ok(());
    }
    let mut found = Vec::new();
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        // Another job published it and removed the parts.
        Err(_) if is_current(&final_path) => return Ok(()),
        Err(e) => return Err(solve_err!("{}: {e}", dir.display())),
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(range) = name.strip_suffix(".part") else {
            continue;
        };
        let parsed = range
            .split_once('-')
            .and_then(|(a, b)| Some((a.parse::<u64>().ok()?, b.parse::<u64>().ok()?)));
        let Some((first, last)) = parsed else {
            return Err(solve_err!("{}: not a part name", e.path().display()));
        };
        found.push((first, last, e.path()));
    }
    found.sort();
    // The parts must tile 0..count; parts of an older, different split are ignored only if
    // a tiling exists without them.
    let mut chosen = Vec::new();
    let mut at = 0;
    for (first, last, path) in &found {
        if *first == at {
            chosen.push(path.clone());
            at = *last;
        }
    }
    if at != count {
        return Ok(());
    }
    let mut runs = RuleRuns::default();
    for path in &chosen {
        match read_part(path) {
            Ok((_, _, part)) => runs.append(part),
            Err(_) if is_current(&final_path) => return Ok(()),
            Err(e) => return Err(e),
        }
    }
    publish(site, slice, runs)
}

/// Codes the runs of the whole slice into `db/<slice>.ndb` (a temporary file, synced, then
/// renamed) and drops the slice's parts.
fn publish(site: &Site, slice: &Slice, runs: RuleRuns) -> Result<()> {
    let final_path = slice_path(&site.db_dir(), slice);
    // The temporary is written in `db/parts/`, beside the few parts and locks of slices
    // being built, so that clearing the temporaries of assemblies killed before their
    // rename (an hour old: an assembly takes seconds) lists that small directory, not
    // `db/` with a file per slice (6,903 entries at 2..7, and a listing per slice).
    let parts = site.db_dir().join("parts");
    std::fs::create_dir_all(&parts).map_err(|e| solve_err!("{}: {e}", parts.display()))?;
    let tmp_name = parts.join(format!("{slice}.ndb"));
    crate::files::remove_stale_temporaries(&tmp_name, std::time::Duration::from_secs(3600));
    let tmp = parts.join(format!(".{slice}.ndb.{}", std::process::id()));
    write_best_slice(&tmp, slice, slice.count(), runs)?;
    std::fs::rename(&tmp, &final_path)
        .and_then(|_| sync_dir(&final_path))
        .map_err(|e| solve_err!("publishing {}: {e}", final_path.display()))?;
    let _ = std::fs::remove_dir_all(parts_dir(site, slice));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> Site {
        Site::new(crate::files::test_dir(&format!("part-{name}")))
    }

    #[test]
    fn parts_keep_their_runs_tails() {
        let site = scratch("v2");
        let job = Job {
            phase: crate::solve::Phase::Build,
            slice: "1100.--".parse().unwrap(),
            first: 0,
            last: 30,
            round: 0,
        };
        let runs = RuleRuns {
            threats_removed: RangeRuns {
                lead_removed: 2,
                runs: vec![
                    ValueRun::new(Value::Win, 20, 7),
                    ValueRun::new(Value::Draw, 8, 0),
                ],
            },
            threats_stored: Some(RangeRuns {
                lead_removed: 1,
                runs: vec![
                    ValueRun::new(Value::Loss, 1, 0),
                    ValueRun::new(Value::Win, 19, 6),
                    ValueRun::new(Value::Draw, 9, 0),
                ],
            }),
            threats: 2,
        };
        write_part(&site, &job, &runs).unwrap();
        let path = part_path(&site, &job);
        assert_eq!(read_part(&path).unwrap(), (0, 30, runs));
        // Any damage is refused.
        let bytes = std::fs::read(&path).unwrap();
        for at in [3, 20, bytes.len() / 2, bytes.len() - 1] {
            let mut bad = bytes.clone();
            bad[at] ^= 4;
            std::fs::write(&path, &bad).unwrap();
            assert!(read_part(&path).is_err(), "byte {at}");
        }
        std::fs::remove_dir_all(site.root()).unwrap();
    }

    #[test]
    fn parts_of_the_first_layout_are_read_without_tails() {
        let site = scratch("v1");
        let path = site.root().join("0-9.part");
        let mut bytes = PART_MAGIC_1.to_vec();
        for w in [
            0u64,
            9,
            1,
            2,
            5 << 2 | Value::Loss as u64,
            3 << 2 | Value::Win as u64,
        ] {
            bytes.extend_from_slice(&w.to_le_bytes());
        }
        let crc = crc32(&bytes);
        bytes.extend_from_slice(&crc.to_le_bytes());
        std::fs::write(&path, &bytes).unwrap();
        let (first, last, rules) = read_part(&path).unwrap();
        assert_eq!(rules.threats_stored, None, "threats stay removed");
        let runs = rules.threats_removed;
        assert_eq!((first, last, runs.lead_removed), (0, 9, 1));
        let plain: Vec<_> = runs.runs.iter().map(|r| (r.value, r.len, r.tail)).collect();
        assert_eq!(plain, [(Value::Loss, 5, 0), (Value::Win, 3, 0)]);
        std::fs::remove_dir_all(site.root()).unwrap();
    }
}
