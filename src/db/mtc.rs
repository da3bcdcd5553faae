//! The compressed moves-to-conversion file of a slice, `db/mtc/<slice>.mtc` (docs/FORMAT.md,
//! "The compressed MTC file"): the distances of the won and lost positions from
//! [`THRESHOLD`] plies up, exactly; below it only "short". Draws are free to take any
//! value (the win/loss/draw file says which positions are draws), so runs continue
//! through them. Same container as a `.ndb` file (header, CRC, block index, 1 KiB blocks
//! each with its CRC); the blocks hold byte-coded runs.

use super::container::{BLOCK_BYTES, Block, FIXED_HEADER};
use super::container::{Container, Kind, open_file};
use super::crc32::{Crc32, crc32};
use super::error::{DbError, ReadAt, Result};
use crate::slice::Slice;
use std::fs::File;
use std::path::{Path, PathBuf};

pub const MTC_MAGIC: &[u8; 8] = b"NOWDBMC\0";
pub const MTC_VERSION: u32 = 1;
/// Distances below this many plies are stored as "short" (KingsRow's `MTC_THRESHOLD`, and
/// the measured sweet spot: 2..6 at 10 plies takes 115.6 positions a byte, at 8 78.6, at
/// 12 165.4; docs/PERFORMANCE.md).
pub const THRESHOLD: u32 = 10;
/// A block's CRC, then its runs.
const BLOCK_HEAD: usize = 4;
/// The symbol byte of "short".
const SHORT: u8 = 0;

/// A stored distance: what a file says of a position that is won or lost (a draw's is
/// meaningless).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stored {
    /// Fewer plies than the file's threshold (0 included: no move at all).
    Short,
    /// Exactly this many plies (at least the threshold).
    Plies(u32),
}

fn symbol_of(plies: u32, threshold: u32) -> u8 {
    if plies < threshold {
        SHORT
    } else {
        (plies - threshold + 1) as u8
    }
}

fn stored_of(symbol: u8, threshold: u32) -> Stored {
    match symbol {
        SHORT => Stored::Short,
        s => Stored::Plies(threshold + s as u32 - 1),
    }
}

/// Whether `path` is a compressed MTC file of this version (by its first bytes;
/// [`MtcFile::open`] checks the rest).
pub fn is_current(path: &Path) -> bool {
    let mut head = [0u8; 12];
    File::open(path)
        .and_then(|f| std::os::unix::fs::FileExt::read_exact_at(&f, &mut head, 0))
        .is_ok_and(|_| &head[..8] == MTC_MAGIC && head[8..12] == MTC_VERSION.to_le_bytes())
}

/// The first line of `db/mtc/VERSION`.
pub const MTC_VERSION_LINE: &str = "nowdb-mtc 1";
const _: () = assert!(
    MTC_VERSION == 1,
    "MTC_VERSION_LINE names the format version"
);

/// The directory of the compressed distances in the database directory `db`: `db/mtc/`,
/// a directory of its own so that an engine opens it as an MTC database (KingsRow's MTC
/// databases are directories of their own too); its values are read from `db/`, its
/// parent.
pub fn mtc_dir(db: &Path) -> PathBuf {
    db.join("mtc")
}

/// `db/mtc/<slice>.mtc` of the database directory `db`.
pub fn mtc_path(db: &Path, slice: &Slice) -> PathBuf {
    mtc_dir(db).join(format!("{slice}.mtc"))
}

/// Whether `dir` is a directory of compressed distances (its `VERSION` says so).
pub fn is_mtc_dir(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("VERSION"))
        .is_ok_and(|v| v.lines().next().map(str::trim) == Some(MTC_VERSION_LINE))
}

/// Codes the distances of `slice` (one work-file byte per position in index order, as
/// `solved/<slice>.mtc` holds them: 0 a draw, `d + 1` a distance `d`) into the bytes of
/// its compressed file; `None` when the distances are not one per position.
pub fn code_mtc(slice: &Slice, distances: impl IntoIterator<Item = u8>) -> Option<Vec<u8>> {
    let threshold = THRESHOLD;
    let mut w = BlockWriter::default();
    // The current run: its symbol (None while only draws were seen), start and length.
    let (mut symbol, mut start, mut len) = (None::<u8>, 0u64, 0u64);
    let mut count = 0u64;
    for byte in distances {
        count += 1;
        if byte != 0 {
            let s = symbol_of(byte as u32 - 1, threshold);
            match symbol {
                None => symbol = Some(s),
                Some(cur) if cur != s => {
                    w.run(start, cur, len);
                    (symbol, start, len) = (Some(s), start + len, 0);
                }
                Some(_) => {}
            }
        }
        len += 1;
    }
    if count != slice.count() {
        return None;
    }
    w.run(start, symbol.unwrap_or(SHORT), len);
    Some(w.finish(slice, count, threshold))
}

/// Blocks filled with runs, each starting a new block when the next run does not fit.
#[derive(Default)]
struct BlockWriter {
    index: Vec<u64>,
    blocks: Vec<Vec<u8>>,
}

impl BlockWriter {
    fn run(&mut self, start: u64, symbol: u8, len: u64) {
        let mut run = vec![symbol];
        let mut rest = len - 1;
        loop {
            let low = (rest & 0x7f) as u8;
            rest >>= 7;
            if rest == 0 {
                run.push(low);
                break;
            }
            run.push(low | 0x80);
        }
        if self
            .blocks
            .last()
            .is_none_or(|b| b.len() + run.len() > BLOCK_BYTES)
        {
            self.index.push(start);
            self.blocks.push(vec![0; BLOCK_HEAD]);
        }
        self.blocks.last_mut().unwrap().extend_from_slice(&run);
    }

    fn finish(mut self, slice: &Slice, count: u64, threshold: u32) -> Vec<u8> {
        let last = self.blocks.len() - 1;
        for (k, b) in self.blocks.iter_mut().enumerate() {
            // Every block but the last is padded with zeros to its full length (a reader
            // stops at the block's last position, before the padding).
            if k < last {
                b.resize(BLOCK_BYTES, 0);
            }
            let crc = crc32(&b[BLOCK_HEAD..]);
            b[..4].copy_from_slice(&crc.to_le_bytes());
        }
        let mut out = Vec::with_capacity(FIXED_HEADER + 4 + self.index.len() * (8 + BLOCK_BYTES));
        out.extend_from_slice(MTC_MAGIC);
        out.extend_from_slice(&MTC_VERSION.to_le_bytes());
        out.extend_from_slice(&(threshold as u16).to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        let mut name = [0u8; 16];
        let s = slice.to_string();
        name[..s.len()].copy_from_slice(s.as_bytes());
        out.extend_from_slice(&name);
        out.extend_from_slice(&count.to_le_bytes());
        out.extend_from_slice(&(self.blocks.len() as u32).to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        let last_len = self.blocks.last().map_or(0, |b| b.len());
        out.extend_from_slice(&(last_len as u16).to_le_bytes());
        let index: Vec<u8> = self.index.iter().flat_map(|f| f.to_le_bytes()).collect();
        let mut crc = Crc32::default();
        crc.update(&out);
        crc.update(&index);
        out.extend_from_slice(&crc.finish().to_le_bytes());
        out.extend_from_slice(&index);
        for b in &self.blocks {
            out.extend_from_slice(b);
        }
        out
    }
}

/// An open compressed MTC file: header checked, block index in memory.
pub struct MtcFile {
    pub path: PathBuf,
    pub slice: Slice,
    pub count: u64,
    pub threshold: u32,
    c: Container,
}

impl MtcFile {
    /// Opens `path`, which must hold the distances of `slice`.
    pub fn open(path: &Path, slice: &Slice) -> Result<MtcFile> {
        let file = open_file(path, || {
            format!("missing moves to conversion of slice {slice} (build them with --mtc)")
        })?;
        MtcFile::from_reader(path, slice, Box::new(file))
    }

    /// Reads the file held in `bytes` (`path` names it in errors).
    pub fn from_bytes(path: &Path, slice: &Slice, bytes: Vec<u8>) -> Result<MtcFile> {
        MtcFile::from_reader(path, slice, Box::new(bytes))
    }

    fn from_reader(path: &Path, slice: &Slice, bytes: Box<dyn ReadAt>) -> Result<MtcFile> {
        let kind = Kind {
            magic: MTC_MAGIC,
            version: MTC_VERSION,
            what: "moves-to-conversion file",
            format: "moves-to-conversion format",
        };
        let mut threshold = 0;
        let c = Container::read(path, slice, bytes, &kind, |header| {
            threshold = u16::from_le_bytes([header[12], header[13]]) as u32;
            match (1..=254).contains(&threshold) {
                true => Ok(BLOCK_HEAD + 2),
                false => Err(DbError::format(
                    path,
                    format!("bad header: threshold {threshold}"),
                )),
            }
        })?;
        Ok(MtcFile {
            path: path.to_path_buf(),
            slice: *slice,
            count: c.count,
            threshold,
            c,
        })
    }

    pub fn blocks(&self) -> usize {
        self.c.blocks()
    }

    /// The memory this open file takes beside the struct itself, in bytes.
    pub fn memory_bytes(&self) -> usize {
        self.c.memory_bytes()
    }

    /// The block holding position `i`.
    #[inline]
    pub fn block_of(&self, i: u64) -> usize {
        self.c.block_of(i)
    }

    /// Reads block `b` and checks its CRC.
    pub fn read_block(&self, b: usize) -> Result<Box<Block>> {
        self.c.read_block(b)
    }

    /// The stored distance of position `i` in block `b` (read by [`MtcFile::read_block`]),
    /// and the positions `[first, end)` of its run.
    #[inline]
    pub fn run_in_block(&self, block: &Block, b: usize, i: u64) -> Result<(Stored, u64, u64)> {
        let mut runs = Runs {
            bytes: &block.bytes[BLOCK_HEAD..self.c.block_len(b)],
            at: 0,
            first: block.first,
        };
        loop {
            let Some((symbol, first, end)) = runs.next_run() else {
                return Err(DbError::corrupt(
                    &self.path,
                    format!("block {b} ends before position {i}"),
                ));
            };
            if i < end {
                return Ok((stored_of(symbol, self.threshold), first, end));
            }
        }
    }

    /// The stored distance of position `i`, read from the disk (no cache: for checks and
    /// tests; probes go through [`super::Database::probe_mtc`]).
    pub fn get(&self, i: u64) -> Result<Stored> {
        let b = self.block_of(i);
        Ok(self.run_in_block(&*self.read_block(b)?, b, i)?.0)
    }

    /// The runs over positions `[first, last)`, in order and cut to that range:
    /// `f(stored, from, to)`; an error if the runs of a block read do not cover it exactly.
    pub fn for_each_run<E: From<DbError>>(
        &self,
        first: u64,
        last: u64,
        mut f: impl FnMut(Stored, u64, u64) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        if first >= last {
            return Ok(());
        }
        for b in self.block_of(first)..self.blocks() {
            let block = self.read_block(b)?;
            if block.first >= last {
                break;
            }
            let end = self.c.block_first(b + 1);
            let mut runs = Runs {
                bytes: &block.bytes[BLOCK_HEAD..self.c.block_len(b)],
                at: 0,
                first: block.first,
            };
            let mut at = block.first;
            while at < end
                && let Some((symbol, from, to)) = runs.next_run()
                && to <= end
            {
                at = to;
                if to > first && from < last {
                    f(
                        stored_of(symbol, self.threshold),
                        from.max(first),
                        to.min(last),
                    )?;
                }
            }
            if at != end || runs.bytes[runs.at..].iter().any(|&b| b != 0) {
                return Err(DbError::corrupt(
                    &self.path,
                    format!("block {b}'s runs do not cover its positions"),
                )
                .into());
            }
        }
        Ok(())
    }
}

/// A slice's distances held in memory, for walks that look up many positions of one slice
/// (`mtcver` reads the mirror's distances of every king move), where decoding a block from
/// its start each time would cost a thousand runs a lookup. Held as runs (first position
/// and symbol, 9 bytes a run) or, once that would take more memory than a byte a position,
/// as that byte: the slices with many runs are the king endings (a byte a position made
/// `mtcver` of `3400.--` 4 times faster; docs/PERFORMANCE.md). A lookup in the runs starts
/// from the run holding the first position of its group of [`GROUP_POSITIONS`] and
/// searches only the runs of that group: a binary search over all of a 7-piece slice's
/// millions of runs cost a cache miss a level, 80 % of `mtcver`.
pub struct MtcRuns {
    starts: Vec<u64>,
    symbols: Vec<u8>,
    /// The run holding the first position of every group of [`GROUP_POSITIONS`].
    groups: Vec<u32>,
    /// A symbol a position, when the runs would be larger (or [`MtcRuns::flatten`]).
    flat: Option<Vec<u8>>,
    threshold: u32,
    /// Positions of the slice.
    count: u64,
}

/// Bytes a run takes in [`MtcRuns`].
const RUN_BYTES: u64 = 9;

/// Positions a group of [`MtcRuns`] (their runs fit a few cache lines: runs are at least
/// 9 positions long on average, or the slice is held a byte a position).
pub const GROUP_POSITIONS: u64 = 512;

impl MtcRuns {
    /// The stored distance of position `i`.
    #[inline]
    pub fn get(&self, i: u64) -> Stored {
        let symbol = match &self.flat {
            Some(flat) => flat[i as usize],
            None => {
                let g = (i / GROUP_POSITIONS) as usize;
                let first = self.groups[g] as usize;
                let end = self
                    .groups
                    .get(g + 1)
                    .map_or(self.starts.len(), |&r| r as usize + 1);
                // The group's first run starts at or before `i`.
                self.symbols[first + self.starts[first..end].partition_point(|&s| s <= i) - 1]
            }
        };
        stored_of(symbol, self.threshold)
    }

    /// Starts bringing position `i`'s distance into the cache (a byte a position: its byte;
    /// runs: the group's first run), so that several lookups wait for memory together.
    #[inline]
    pub fn prefetch(&self, i: u64) {
        let byte = match &self.flat {
            Some(flat) => flat.as_ptr().wrapping_add(i as usize),
            None => {
                let group = self
                    .groups
                    .as_ptr()
                    .wrapping_add((i / GROUP_POSITIONS) as usize);
                group.cast::<u8>()
            }
        };
        crate::db::cache::prefetch_line(byte);
    }

    pub fn memory_bytes(&self) -> usize {
        self.starts.capacity() * 8
            + self.symbols.capacity()
            + self.groups.capacity() * 4
            + self.flat.as_ref().map_or(0, |f| f.capacity())
    }

    /// Finds the run holding each group's first position, once the runs of the slice's
    /// `count` positions are all pushed.
    fn index_groups(&mut self, count: u64) {
        if self.flat.is_some() {
            return;
        }
        let mut run = 0;
        self.groups = (0..count.div_ceil(GROUP_POSITIONS))
            .map(|g| {
                while self
                    .starts
                    .get(run + 1)
                    .is_some_and(|&s| s <= g * GROUP_POSITIONS)
                {
                    run += 1;
                }
                // Fewer runs than count / RUN_BYTES, or the slice is held flat.
                run as u32
            })
            .collect();
    }

    /// Adds the run of `symbol` over `[first, end)`, going over to a byte a position once
    /// the runs outgrow it.
    fn push(&mut self, symbol: u8, first: u64, end: u64) {
        // The runs come in order from position 0.
        if let Some(flat) = &mut self.flat {
            debug_assert_eq!(flat.len() as u64, first);
            flat.resize(end as usize, symbol);
            return;
        }
        self.starts.push(first);
        self.symbols.push(symbol);
        if self.starts.len() as u64 * RUN_BYTES > self.count {
            self.go_flat(end);
        }
    }

    /// Holds the runs so far, which end at position `end`, a byte a position from now on.
    fn go_flat(&mut self, end: u64) {
        // In huge pages: it is read at random.
        let mut flat = Vec::with_capacity(self.count as usize);
        crate::mem::advise_huge_pages(&flat);
        let ends = self.starts.iter().skip(1).copied().chain([end]);
        for (to, &symbol) in ends.zip(&self.symbols) {
            flat.resize(to as usize, symbol);
        }
        self.starts = Vec::new();
        self.symbols = Vec::new();
        self.groups = Vec::new();
        self.flat = Some(flat);
    }

    /// Holds the slice a byte a position from now on (`count` bytes, where the runs may
    /// take far less), for a caller that will look up so many positions that one memory
    /// read a lookup pays for it: the runs take a search of a group's runs, three or four
    /// cache misses (`mtcver` of a slice with many lost positions).
    pub fn flatten(&mut self) {
        if self.flat.is_none() {
            self.go_flat(self.count);
        }
    }

    /// Whether the slice is held a byte a position.
    pub fn is_flat(&self) -> bool {
        self.flat.is_some()
    }
}

impl MtcFile {
    /// Every distance of the slice, read into memory (every block's CRC checked) as runs,
    /// or a byte a position when the runs would take more.
    pub fn runs(&self) -> Result<MtcRuns> {
        let mut runs = MtcRuns {
            starts: Vec::new(),
            symbols: Vec::new(),
            groups: Vec::new(),
            flat: None,
            threshold: self.threshold,
            count: self.count,
        };
        self.for_each_run::<DbError>(0, self.count, |stored, first, end| {
            let plies = match stored {
                Stored::Short => 0,
                Stored::Plies(d) => d,
            };
            runs.push(symbol_of(plies, self.threshold), first, end);
            Ok(())
        })?;
        // `for_each_run` covers the slice exactly, or fails.
        debug_assert!(
            runs.flat
                .as_ref()
                .is_none_or(|f| f.len() as u64 == self.count)
        );
        runs.starts.shrink_to_fit();
        runs.symbols.shrink_to_fit();
        runs.index_groups(self.count);
        Ok(runs)
    }
}

/// The runs of one block's payload.
struct Runs<'a> {
    bytes: &'a [u8],
    at: usize,
    first: u64,
}

impl Runs<'_> {
    /// The next run: its symbol and positions `[first, end)`; `None` at the payload's end
    /// or on a truncated length.
    #[inline(always)]
    fn next_run(&mut self) -> Option<(u8, u64, u64)> {
        let symbol = *self.bytes.get(self.at)?;
        let mut len = 0u64;
        let mut shift = 0;
        let mut k = self.at + 1;
        loop {
            let byte = *self.bytes.get(k)?;
            k += 1;
            len |= ((byte & 0x7f) as u64) << shift;
            if byte & 0x80 == 0 {
                break;
            }
            shift += 7;
            if shift > 63 {
                return None;
            }
        }
        self.at = k;
        let first = self.first;
        self.first += len + 1;
        Some((symbol, first, self.first))
    }
}

/// A compressed MTC file opened for probing (`mtc_probe`); the database holds one per
/// slice asked for.
pub struct OpenMtc {
    pub file: MtcFile,
    pub index: crate::slice::index::SliceIndex,
    /// The file's number in the block cache's keys (shared with the value files').
    pub(super) id: u32,
    pub(super) hints: Box<[super::cache::SlotHint]>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slice() -> Slice {
        "0011.00".parse().unwrap()
    }

    fn distances(n: u64, f: impl Fn(u64) -> u8) -> Vec<u8> {
        (0..n).map(f).collect()
    }

    fn check(bytes: &[u8]) -> MtcFile {
        check_on(slice(), bytes)
    }

    fn check_on(s: Slice, bytes: &[u8]) -> MtcFile {
        let coded = code_mtc(&s, bytes.iter().copied()).unwrap();
        let file = MtcFile::from_bytes(Path::new("t.mtc"), &s, coded).unwrap();
        for (i, &b) in bytes.iter().enumerate() {
            if b != 0 {
                let want = match b as u32 - 1 {
                    d if d < THRESHOLD => Stored::Short,
                    d => Stored::Plies(d),
                };
                assert_eq!(file.get(i as u64).unwrap(), want, "position {i}");
            }
        }
        let runs = file.runs().unwrap();
        // Held a byte a position whatever the runs: the same distances.
        let mut flat = file.runs().unwrap();
        flat.flatten();
        assert!(flat.is_flat() && flat.starts.is_empty() && flat.groups.is_empty());
        assert_eq!(flat.flat.as_ref().map(|f| f.len() as u64), Some(s.count()));
        for (i, &b) in bytes.iter().enumerate() {
            if b != 0 {
                let want = file.get(i as u64).unwrap();
                assert_eq!(runs.get(i as u64), want, "position {i}");
                assert_eq!(flat.get(i as u64), want, "position {i}, a byte a position");
            }
        }
        // Runs, or a byte a position once they would take more.
        let mut n_runs = 0;
        file.for_each_run::<DbError>(0, s.count(), |_, _, _| {
            n_runs += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!(
            runs.flat.is_some(),
            n_runs * RUN_BYTES > s.count(),
            "{n_runs} runs"
        );
        let groups = match runs.flat {
            Some(_) => 0,
            None => s.count().div_ceil(GROUP_POSITIONS) * 4,
        };
        assert_eq!(
            runs.memory_bytes() as u64,
            (n_runs * RUN_BYTES).min(s.count()) + groups
        );
        let mut n = 0;
        file.for_each_run::<DbError>(0, s.count(), |_, first, end| {
            assert_eq!(first, n);
            n = end;
            Ok(())
        })
        .unwrap();
        assert_eq!(n, s.count());
        file
    }

    #[test]
    fn every_cared_distance_reads_back_and_draws_continue_runs() {
        let n = slice().count();
        // Draws between equal symbols take no run of their own.
        let f = check(&distances(n, |i| [0, 3, 0, 3, 12][(i % 5) as usize]));
        assert!(f.blocks() >= 1);
        check(&distances(n, |i| (i * 7 % 40) as u8));
        check(&distances(n, |_| 0));
        check(&distances(n, |i| if i == n - 1 { 255 } else { 0 }));
    }

    #[test]
    fn many_runs_fill_many_blocks() {
        // Alternating short and long: two bytes a position, several blocks.
        let s: Slice = "2200.--".parse().unwrap();
        let n = s.count();
        let bytes = distances(n, |i| if i % 2 == 0 { 2 } else { 20 + (i % 3) as u8 });
        let coded = code_mtc(&s, bytes.iter().copied()).unwrap();
        assert!(code_mtc(&s, bytes[1..].iter().copied()).is_none());
        let file = MtcFile::from_bytes(Path::new("t.mtc"), &s, coded).unwrap();
        assert!(file.blocks() > 1, "{} blocks", file.blocks());
        let runs = file.runs().unwrap();
        assert!(runs.flat.is_some(), "a run a position: a byte a position");
        for i in (0..n).step_by(97) {
            let want = match bytes[i as usize] as u32 - 1 {
                d if d < THRESHOLD => Stored::Short,
                d => Stored::Plies(d),
            };
            assert_eq!(file.get(i).unwrap(), want);
            assert_eq!(runs.get(i), want);
        }
    }

    #[test]
    fn runs_are_found_across_many_groups() {
        // Runs of 1 to 300 positions (long enough to be held as runs), so that groups
        // begin inside runs, at their starts, and hold one run or dozens.
        let s: Slice = "2200.--".parse().unwrap();
        let n = s.count();
        let mut bytes = Vec::with_capacity(n as usize);
        let mut x = 12345u64;
        while (bytes.len() as u64) < n {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let len = match x >> 60 {
                0..=3 => 1 + (x >> 20) % 4,
                _ => 1 + (x >> 20) % 300,
            };
            // Exact distances (at least the threshold), so that neighbouring runs differ.
            let b = 1 + THRESHOLD as u8 + ((x >> 8) % 40) as u8;
            bytes.extend(std::iter::repeat_n(b, len as usize));
        }
        bytes.truncate(n as usize);
        let file = check_on(s, &bytes);
        let runs = file.runs().unwrap();
        assert!(runs.flat.is_none());
        assert!(
            runs.starts.len() as u64 > 4 * n / GROUP_POSITIONS,
            "{} runs",
            runs.starts.len()
        );
        // Each group's first and last position, where a wrong group boundary shows.
        for g in 0..n.div_ceil(GROUP_POSITIONS) {
            for i in [g * GROUP_POSITIONS, ((g + 1) * GROUP_POSITIONS).min(n) - 1] {
                assert_eq!(runs.get(i), file.get(i).unwrap(), "position {i}");
            }
        }
    }

    #[test]
    fn damage_is_an_error_naming_the_file() {
        let s = slice();
        let good = code_mtc(&s, distances(s.count(), |i| (i % 30) as u8)).unwrap();
        let mut flipped = good.clone();
        let last = flipped.len() - 2;
        flipped[last] ^= 0x10;
        let f = MtcFile::from_bytes(Path::new("x.mtc"), &s, flipped).unwrap();
        let err = (0..s.count()).find_map(|i| f.get(i).err()).unwrap();
        assert!(
            err.to_string().contains("x.mtc: CRC error in block"),
            "{err}"
        );
        let short = good[..good.len() - 1].to_vec();
        let err = MtcFile::from_bytes(Path::new("x.mtc"), &s, short)
            .err()
            .unwrap();
        assert!(err.to_string().contains("truncated"), "{err}");
        let other: Slice = "1100.--".parse().unwrap();
        let err = MtcFile::from_bytes(Path::new("x.mtc"), &other, good)
            .err()
            .unwrap();
        assert!(err.to_string().contains("holds slice 0011.00"), "{err}");
    }
}
