//! The position queue (1994 paper section 3.2, `NQueue`/`DoQueue`): every job of a `noio`
//! pass or `que` round appends the indices it resolved to its own file; the next round's jobs
//! on the mirror read them all and re-evaluate their predecessors.
//!
//! Entries are little-endian `u64` indices. They reach the disk (and are synced) before the
//! pages holding the values they name, so a resolution on disk always has its queue entry on
//! disk; a job resumed after a crash may append an entry twice, which only costs a repeated
//! evaluation.

use super::Site;
use crate::files::{FileOp, failed};
use crate::slice::Slice;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Appends resolved indices to one job's queue file. The file is made at the first flush
/// with entries: a job that resolves nothing leaves none (a missing file reads as no
/// entries), since creating a file is what most of a small pair's passes would cost.
pub struct QueueWriter {
    file: Option<File>,
    path: PathBuf,
    buf: Vec<u8>,
}

impl QueueWriter {
    pub fn new(path: &Path) -> QueueWriter {
        QueueWriter {
            file: None,
            path: path.to_path_buf(),
            buf: Vec::with_capacity(1 << 16),
        }
    }

    #[inline]
    pub fn push(&mut self, index: u64) {
        self.buf.extend_from_slice(&index.to_le_bytes());
    }

    /// Writes buffered entries and, when `durable`, syncs them.
    pub fn flush(&mut self, durable: bool) -> io::Result<()> {
        if self.buf.is_empty() && self.file.is_none() {
            return Ok(());
        }
        let file = match &mut self.file {
            Some(f) => f,
            None => self.file.insert(Self::open(&self.path)?),
        };
        if !self.buf.is_empty() {
            file.write_all(&self.buf)
                .map_err(|e| failed(FileOp::Appending, &self.path, e))?;
            self.buf.clear();
        }
        if durable {
            file.sync_data()
                .map_err(|e| failed(FileOp::Syncing, &self.path, e))?;
        }
        Ok(())
    }

    /// Opens (creating) the file for appending; a torn last entry from a crash is cut off.
    fn open(path: &Path) -> io::Result<File> {
        let file = crate::files::open_append(path)?;
        let len = file.metadata()?.len();
        if len % 8 != 0 {
            file.set_len(len - len % 8)
                .map_err(|e| failed(FileOp::Truncating, path, e))?;
        }
        Ok(file)
    }
}

/// The queue files of `slice`: round, path and length of each `r<R>-<first>.pq`. A missing
/// directory has none; any other error is reported (reading it as "no entries" would end a
/// round too early).
fn round_files(site: &Site, slice: &Slice) -> io::Result<Vec<(u32, PathBuf, u64)>> {
    let mut files = Vec::new();
    for (name, path) in crate::files::list(&site.queue_dir(slice))? {
        let round = name
            .strip_suffix(".pq")
            .and_then(|n| n.strip_prefix('r'))
            .and_then(|r| r.split('-').next())
            .and_then(|r| r.parse::<u32>().ok());
        if let Some(round) = round {
            let len = std::fs::metadata(&path)
                .map_err(|e| failed(FileOp::Inspecting, &path, e))?
                .len();
            files.push((round, path, len));
        }
    }
    Ok(files)
}

/// Every index queued on `slice` in `round`, sorted and without repeats (sorted order also
/// gives the next round locality in the page cache).
pub fn read_round(site: &Site, slice: &Slice, round: u32) -> io::Result<Vec<u64>> {
    let mut out = Vec::new();
    for (_, path, _) in round_files(site, slice)?
        .into_iter()
        .filter(|f| f.0 == round)
    {
        let bytes = std::fs::read(&path).map_err(|e| failed(FileOp::Reading, &path, e))?;
        out.extend(
            bytes
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))),
        );
    }
    // A radix sort: the entries are a round's resolutions, millions at 7 pieces, and every
    // job of the next round sorts them (`que 4300.-- -r 8`: 531 M instructions for 2.7 M
    // entries with `sort_unstable`).
    radsort::sort(&mut out);
    out.dedup();
    Ok(out)
}

/// Number of entries (repeats included) queued on `slice` in `round`: zero means the round
/// resolved nothing. Read from the files, which never undercount (unlike the statistics of a
/// job resumed after its pages reached the disk).
pub fn round_entries(site: &Site, slice: &Slice, round: u32) -> io::Result<u64> {
    Ok(round_files(site, slice)?
        .iter()
        .filter(|f| f.0 == round)
        .map(|f| f.2 / 8)
        .sum())
}

/// Removes the queue files of `slice` for rounds before `keep_from`.
pub fn remove_rounds_before(site: &Site, slice: &Slice, keep_from: u32) -> io::Result<()> {
    for (_, path, _) in round_files(site, slice)?
        .into_iter()
        .filter(|f| f.0 < keep_from)
    {
        std::fs::remove_file(&path).map_err(|e| failed(FileOp::Removing, &path, e))?;
    }
    Ok(())
}
