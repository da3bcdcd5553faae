//! What the runners have finished: one record per job under `done/<slice>/`, named by phase,
//! round and range (`done/3113.01/noio-r2-0-65536`), holding the job's statistics, host and
//! time. A phase (round) of a slice is complete when its records tile the slice; that is
//! what `dbstatus slice` shows (the 1994 paper's capcheck, lookcheck, noncheck, vercheck)
//! and what the runners' stage decisions read.

use crate::error::{Error, Result};
use crate::files::FileOp;
use crate::slice::Slice;
use crate::solve::{Job, Phase, PhaseStats, Site};
use std::path::PathBuf;

/// One finished job as recorded.
#[derive(Clone, Debug, PartialEq)]
pub struct DoneRecord {
    pub phase: Phase,
    pub round: u32,
    pub first: u64,
    pub last: u64,
    pub stats: PhaseStats,
    pub host: String,
    pub seconds: f64,
}

pub fn slice_dir(site: &Site, slice: &Slice) -> PathBuf {
    site.root().join("done").join(slice.to_string())
}

pub fn record_name(phase: Phase, round: u32, first: u64, last: u64) -> String {
    format!("{phase}-r{round}-{first}-{last}")
}

pub fn record_path(site: &Site, job: &Job) -> PathBuf {
    slice_dir(site, &job.slice).join(record_name(job.phase, job.round, job.first, job.last))
}

/// Writes the record of a finished job (temp file, fsync, rename: a reader sees all of it or
/// nothing).
pub fn write(site: &Site, job: &Job, stats: &PhaseStats, host: &str, seconds: f64) -> Result<()> {
    let file = RecordFile {
        job: job.to_string(),
        host: host.to_string(),
        seconds: (seconds * 1000.0).round() / 1000.0,
        stats: *stats,
    };
    crate::state::write(
        &record_path(site, job),
        &file,
        crate::files::Durability::Full,
    )
}

/// A done record's file: the job, who ran it, how long and what it found (its name says
/// the job's phase, round and range again, for listings that open no file).
#[derive(serde::Serialize, serde::Deserialize)]
struct RecordFile {
    #[serde(deserialize_with = "crate::state::text")]
    job: String,
    #[serde(deserialize_with = "crate::state::text")]
    host: String,
    seconds: f64,
    #[serde(flatten)]
    stats: PhaseStats,
}

/// What a record's name says: `<phase>-r<round>-<first>-<last>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordName {
    pub phase: Phase,
    pub round: u32,
    pub first: u64,
    pub last: u64,
}

pub fn parse_name(name: &str) -> Option<RecordName> {
    let mut parts = name.splitn(4, '-');
    let phase = Phase::from_name(parts.next()?)?;
    Some(RecordName {
        phase,
        round: parts.next()?.strip_prefix('r')?.parse().ok()?,
        first: parts.next()?.parse().ok()?,
        last: parts.next()?.parse().ok()?,
    })
}

fn parse_record(n: RecordName, text: &str) -> Option<DoneRecord> {
    let file: RecordFile = crate::state::parse(text, &[]).ok()?;
    Some(DoneRecord {
        phase: n.phase,
        round: n.round,
        first: n.first,
        last: n.last,
        stats: file.stats,
        host: file.host,
        seconds: file.seconds,
    })
}

/// The records of `slice` by name only: one directory listing, no file opened (what decides
/// completeness, cheap on a network filesystem). A name that does not parse is an error
/// naming it: silently skipping it could hold a phase back forever or, worse, hide damage.
pub fn names(site: &Site, slice: &Slice) -> Result<Vec<(PathBuf, RecordName)>> {
    let mut out = Vec::new();
    for (name, path) in crate::files::list(&slice_dir(site, slice)).map_err(|e| e.to_string())? {
        let n =
            parse_name(&name).ok_or_else(|| format!("{}: not a done record", path.display()))?;
        out.push((path, n));
    }
    out.sort_by_key(|(_, n)| (n.phase, n.round, n.first));
    Ok(out)
}

fn read_records(found: impl Iterator<Item = (PathBuf, RecordName)>) -> Result<Vec<DoneRecord>> {
    found
        .map(|(path, n)| {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| Error::file(FileOp::Reading, &path, e))?;
            parse_record(n, &text)
                .ok_or_else(|| Error::Failed(format!("{}: not a done record", path.display())))
        })
        .collect()
}

/// Every done record of `slice` (any phase), with its statistics.
pub fn records(site: &Site, slice: &Slice) -> Result<Vec<DoneRecord>> {
    read_records(names(site, slice)?.into_iter())
}

/// Positions of `[0, count)` the ranges cover (overlaps counted once).
pub fn covered(ranges: &mut [(u64, u64)], count: u64) -> u64 {
    ranges.sort_unstable();
    let (mut reach, mut total) = (0u64, 0u64);
    for &(first, last) in ranges.iter() {
        let (a, b) = (first.max(reach), last.min(count));
        if b > a {
            total += b - a;
        }
        reach = reach.max(last);
    }
    total
}

/// How far `phase` (`round`) of `slice` has got: positions covered by done records, and the
/// statistics summed over them (only those records are read).
pub fn progress(site: &Site, slice: &Slice, phase: Phase, round: u32) -> Result<(u64, PhaseStats)> {
    let found = names(site, slice)?
        .into_iter()
        .filter(|(_, n)| n.phase == phase && n.round == round);
    let mut ranges = Vec::new();
    let mut stats = PhaseStats::default();
    for r in read_records(found)? {
        ranges.push((r.first, r.last));
        stats.add(&r.stats);
    }
    Ok((covered(&mut ranges, slice.count()), stats))
}

/// Whether `phase` (`round`) of `slice` is done on every position (from the names alone).
pub fn is_complete(site: &Site, slice: &Slice, phase: Phase, round: u32) -> Result<bool> {
    let mut ranges: Vec<(u64, u64)> = names(site, slice)?
        .into_iter()
        .filter(|(_, n)| n.phase == phase && n.round == round)
        .map(|(_, n)| (n.first, n.last))
        .collect();
    Ok(covered(&mut ranges, slice.count()) == slice.count())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coverage_counts_overlaps_once_and_stops_at_the_slice() {
        assert_eq!(covered(&mut [(10, 20), (0, 10)], 20), 20);
        assert_eq!(covered(&mut [(0, 15), (10, 20)], 20), 20);
        assert_eq!(covered(&mut [(0, 5), (10, 20)], 20), 15);
        assert_eq!(covered(&mut [(0, 30)], 20), 20);
        assert_eq!(covered(&mut [], 20), 0);
    }

    #[test]
    fn records_round_trip() {
        let dir = crate::files::test_dir("done");
        let site = Site::new(&dir);
        let slice: Slice = "2200".parse().unwrap();
        let job = Job::whole(Phase::NoIo, slice, 3);
        let stats = PhaseStats {
            looked: 7,
            win: 1,
            loss: 2,
            draw: 3,
        };
        write(&site, &job, &stats, "h1", 0.25).unwrap();
        let recs = records(&site, &slice).unwrap();
        assert_eq!(recs.len(), 1);
        assert_eq!(recs[0].stats, stats);
        assert_eq!(recs[0].host, "h1");
        assert!(is_complete(&site, &slice, Phase::NoIo, 3).unwrap());
        assert!(!is_complete(&site, &slice, Phase::NoIo, 2).unwrap());
        std::fs::write(slice_dir(&site, &slice).join("noio-r1-0-x"), "").unwrap();
        assert!(
            records(&site, &slice)
                .unwrap_err()
                .to_string()
                .contains("noio-r1-0-x")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
