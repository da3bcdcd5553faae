//! Take files: `running/<host>-<pid>-take-<n>.take` lists the running records of the jobs
//! one locked step of a queue took. Inside the queue's lock a daemon writes this one synced
//! file, however many jobs it takes, rather than a synced record for each: on a file server
//! that syncs one file after another, the lock is then held for one sync a take. After the
//! lock the daemon writes each job's own record and removes the take file, before any of
//! the jobs starts, so a record of a job that ended is never brought back by its take file.
//! A take of one job has no take file: its own record, synced inside the lock, is the one
//! sync (the daemon's `take_from_queues`).
//!
//! Until it is removed, a take file's jobs are running records like any other: readers of
//! `running/` ([`super::running::read_all`]) list its entries that have no record of their
//! own, and whoever settles one of them ([`super::running::settle`]) first writes the
//! take's records and removes it ([`complete`]), inside the queue's lock.

use super::running::{RunningRecord, remove_record, running_dir};
use crate::error::{Error, Result};
use crate::files::FileOp;
use crate::solve::Site;
use std::path::{Path, PathBuf};

/// The ending of a take file's name.
pub const SUFFIX: &str = ".take";

/// Whether `name` (a file of `running/`) is a take file.
pub fn is_take(name: &str) -> bool {
    name.ends_with(SUFFIX)
}

/// A take file's path: this host and daemon, and the take's number.
pub fn path(site: &Site, host: &str, pid: u32, n: u64) -> PathBuf {
    running_dir(site).join(format!("{host}-{pid}-take-{n}{SUFFIX}"))
}

#[derive(serde::Serialize, serde::Deserialize)]
struct TakeFile {
    job: Vec<Entry>,
}

/// One job of a take: the name its own record gets, and the record.
#[derive(serde::Serialize, serde::Deserialize)]
struct Entry {
    #[serde(deserialize_with = "crate::state::text")]
    name: String,
    record: RunningRecord,
}

/// Writes, synced, the take file at `take` listing `records` (each at its own record's
/// path, in `running/`).
pub fn write(take: &Path, records: &[(PathBuf, RunningRecord)]) -> Result<()> {
    let job = records
        .iter()
        .map(|(p, r)| Entry {
            name: p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            record: r.clone(),
        })
        .collect();
    crate::state::write(take, &TakeFile { job }, crate::files::Durability::Data)
}

/// The records a take file lists, each with the path of its own record; `None` when the
/// file is gone (its take was completed since it was listed).
pub fn read(take: &Path) -> Result<Option<Vec<(PathBuf, RunningRecord)>>> {
    let Some(file) = crate::state::read::<TakeFile>(take, "take file", &[])? else {
        return Ok(None);
    };
    let dir = take.parent().unwrap_or(Path::new("."));
    file.job
        .into_iter()
        .map(|e| {
            let plain = !e.name.is_empty()
                && !e.name.contains('/')
                && !e.name.starts_with('.')
                && !is_take(&e.name);
            match plain && !e.record.host.is_empty() && e.record.pid != 0 {
                true => Ok((dir.join(&e.name), e.record)),
                false => Err(Error::Failed(format!(
                    "{}: corrupt take file: {:?} is not a running record's name",
                    take.display(),
                    e.name
                ))),
            }
        })
        .collect::<Result<Vec<_>>>()
        .map(Some)
}

/// Completes the take at `take`: writes, synced, each of its records that is not written
/// yet, then removes the take file. Nothing to do when it is gone. Done by the daemon after
/// the lock, and by a settler inside it for a daemon that died before.
pub fn complete(take: &Path) -> Result<()> {
    let Some(records) = read(take)? else {
        return Ok(());
    };
    write_records(&records, true)?;
    remove_record(take)
}

/// [`complete`] for the daemon that wrote the take, which holds its `records` still: the take
/// file is only looked for (gone, a settler completed it), not read, and the records are
/// written whether or not a settler wrote them meanwhile (with the same text).
pub fn complete_own(take: &Path, records: &[(PathBuf, RunningRecord)]) -> Result<()> {
    if !crate::files::exists(take).map_err(|e| Error::file(FileOp::Inspecting, take, e))? {
        return Ok(());
    }
    write_records(records, false)?;
    remove_record(take)
}

/// Writes `records` (each synced) side by side: a take of many jobs waits for about one
/// journal commit rather than one per job. With `skip_written`, a record already there is
/// left as it is.
fn write_records(records: &[(PathBuf, RunningRecord)], skip_written: bool) -> Result<()> {
    let write = |(path, rec): &(PathBuf, RunningRecord)| -> Result<()> {
        if skip_written && path.exists() {
            return Ok(());
        }
        rec.write(path, true)
    };
    let results: Vec<Result<()>> = match records.len() {
        0 | 1 => records.iter().map(write).collect(),
        _ => std::thread::scope(|s| {
            let handles: Vec<_> = records.iter().map(|r| s.spawn(move || write(r))).collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err("writing a running record panicked".into()))
                })
                .collect()
        }),
    };
    results.into_iter().collect()
}

/// Completes every take file of `running/` that lists a record at `record` (which is not
/// written yet): what a settler does before it reads the record.
pub fn complete_listing(site: &Site, record: &Path) -> Result<()> {
    if record.exists() {
        return Ok(());
    }
    let dir = running_dir(site);
    for (name, path) in crate::files::list(&dir).map_err(|e| e.to_string())? {
        if !is_take(&name) {
            continue;
        }
        if let Some(records) = read(&path)?
            && records.iter().any(|(p, _)| p == record)
        {
            complete(&path)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::queue::running::tests::taken as rec;

    #[test]
    fn a_take_file_round_trips_and_completes_into_its_records() {
        let dir = crate::files::test_dir("takes");
        let site = Site::new(&dir);
        let take = path(&site, "h", 7, 0);
        let records = vec![
            (
                running_dir(&site).join("h-7-0-0.a"),
                rec(7, "cap 2200.-- 0 10"),
            ),
            (
                running_dir(&site).join("h-7-1-1.b"),
                rec(7, "cap 2200.-- 10 20"),
            ),
        ];
        write(&take, &records).unwrap();
        assert_eq!(
            read(&take)
                .unwrap()
                .unwrap()
                .iter()
                .map(|(p, r)| (p.clone(), r.line.clone()))
                .collect::<Vec<_>>(),
            records
                .iter()
                .map(|(p, r)| (p.clone(), r.line.clone()))
                .collect::<Vec<_>>()
        );
        // One record written already (a daemon killed half way): the other is added, the
        // written one left as it is.
        let mut changed = records[0].1.clone();
        changed.child = 99;
        changed.write(&records[0].0, false).unwrap();
        complete_listing(&site, &records[1].0).unwrap();
        assert!(!take.exists());
        let read_back = |p: &Path| RunningRecord::parse(&std::fs::read_to_string(p).unwrap());
        assert_eq!(read_back(&records[0].0), Some(changed));
        assert_eq!(read_back(&records[1].0), Some(records[1].1.clone()));
        // Gone: nothing to do.
        complete(&take).unwrap();
        assert_eq!(read(&take).unwrap().map(|r| r.len()), None);
    }

    #[test]
    fn a_take_file_naming_a_path_outside_running_is_refused() {
        let dir = crate::files::test_dir("takes-bad");
        let site = Site::new(&dir);
        let take = path(&site, "h", 7, 0);
        let bad = vec![(PathBuf::from("x/.hidden"), rec(7, "cap 2200.-- 0 10"))];
        write(&take, &bad).unwrap();
        let e = read(&take).unwrap_err().to_string();
        assert!(
            e.contains("corrupt take file") && e.contains(".hidden"),
            "{e}"
        );
        std::fs::write(&take, "job = 3\n").unwrap();
        let e = read(&take).unwrap_err().to_string();
        assert!(e.contains("corrupt take file"), "{e}");
    }
}
