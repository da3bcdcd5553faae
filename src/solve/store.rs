//! The page store (1994 paper section 3.1, DESIGN.md section 6): one work file per slice,
//! 2 bits per position, read and written in 8 KiB pages of 32,768 positions with
//! `pread`/`pwrite` through a small least-recently-used page cache. The moves-to-conversion
//! phases keep a byte per position in the same kind of file ([`MTC_BITS`]: pages of 8,192
//! positions, so every page-aligned job range is aligned for both).
//!
//! A work file starts with one header page (magic, slice name, position count) so a file of
//! the wrong slice, a truncated file or a stray file is refused with a clear error; the values
//! follow, page `p` at byte `8192 * (p + 1)`.
//!
//! Dirty pages are written only by [`PageCache::flush`], never by eviction: the file on disk
//! then holds exactly the state of the last checkpoint, which is what makes a resumed job
//! redo everything after it (and re-queue what it resolves) instead of trusting half-written
//! pages.

use super::Value;
use super::pool::{Load, PagePool};
use crate::files::{FileOp, failed};
use crate::slice::Slice;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// Positions per page of a win/loss/draw work file (32,768).
pub const PAGE_POSITIONS: u64 = page_positions(VALUE_BITS);
/// Bytes per page (and of the header).
pub const PAGE_BYTES: usize = 8192;
/// Bits per position of a win/loss/draw work file.
pub const VALUE_BITS: u32 = 2;
/// Bits per position of a moves-to-conversion work file.
pub const MTC_BITS: u32 = 8;
const NO_SLOT: u32 = u32::MAX;

/// Positions per page of a work file of `bits` per position.
pub const fn page_positions(bits: u32) -> u64 {
    PAGE_BYTES as u64 * 8 / bits as u64
}

/// Number of pages holding `count` positions.
pub fn pages_for(count: u64) -> u64 {
    count.div_ceil(PAGE_POSITIONS)
}

/// Exact length of the work file of a slice of `count` positions.
pub fn file_len(count: u64) -> u64 {
    file_len_bits(count, VALUE_BITS)
}

/// Exact length of a work file of `bits` per position.
pub fn file_len_bits(count: u64, bits: u32) -> u64 {
    (count.div_ceil(page_positions(bits)) + 1) * PAGE_BYTES as u64
}

fn header(slice: &Slice, count: u64, bits: u32) -> Vec<u8> {
    let mut h = vec![0u8; PAGE_BYTES];
    h[..8].copy_from_slice(match bits {
        VALUE_BITS => b"NOWDBWK1",
        MTC_BITS => b"NOWDBMT1",
        _ => unreachable!("work files hold 2 or 8 bits a position"),
    });
    h[8..16].copy_from_slice(&count.to_le_bytes());
    let name = slice.to_string();
    h[16..16 + name.len()].copy_from_slice(name.as_bytes());
    h
}

fn invalid(path: &Path, what: String) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("{}: {what}", path.display()),
    )
}

/// Creates a new work file of `slice` at `path` (which must not exist) with every value
/// UNKNOWN (a sparse file), synced when `durable`.
pub fn create(path: &Path, slice: &Slice, count: u64, durable: bool) -> io::Result<()> {
    create_bits(path, slice, count, VALUE_BITS, durable)
}

/// [`create`] for a work file of `bits` per position (every value 0).
pub fn create_bits(
    path: &Path,
    slice: &Slice,
    count: u64,
    bits: u32,
    durable: bool,
) -> io::Result<()> {
    let f = OpenOptions::new().write(true).create_new(true).open(path)?;
    f.write_all_at(&header(slice, count, bits), 0)?;
    f.set_len(file_len_bits(count, bits))?;
    if durable {
        f.sync_all()?;
    }
    Ok(())
}

/// Makes a rename or creation in the file's directory durable (the current directory for
/// a bare file name).
pub fn sync_dir(path: &Path) -> io::Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    File::open(dir.unwrap_or(Path::new(".")))?.sync_all()
}

/// Opens a work file and checks its header and length against the slice.
fn open_checked(
    path: &Path,
    slice: &Slice,
    count: u64,
    bits: u32,
    write: bool,
) -> io::Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .write(write)
        .open(path)
        .map_err(|e| failed(FileOp::Opening, path, e))?;
    let len = file
        .metadata()
        .map_err(|e| failed(FileOp::Inspecting, path, e))?
        .len();
    let mut h = vec![0u8; PAGE_BYTES];
    if len < PAGE_BYTES as u64 {
        return Err(invalid(path, format!("truncated work file ({len} bytes)")));
    }
    file.read_exact_at(&mut h, 0)
        .map_err(|e| failed(FileOp::Reading, path, e))?;
    if h != header(slice, count, bits) {
        return Err(invalid(
            path,
            format!("not the work file of slice {slice} ({count} positions): bad header"),
        ));
    }
    let want = file_len_bits(count, bits);
    if len != want {
        return Err(invalid(
            path,
            format!("work file of {slice} is {len} bytes, expected {want} (truncated or corrupt)"),
        ));
    }
    Ok(file)
}

/// Opens a finished work file of `bits` per position for reading, its header and length
/// checked.
pub fn open_work_file(path: &Path, slice: &Slice, count: u64, bits: u32) -> io::Result<File> {
    open_checked(path, slice, count, bits, false)
}

/// All values of a finished work file (checked like [`PageCache::open_read`]), brought in
/// as `how` says.
pub fn read_values(path: &Path, slice: &Slice, count: u64, how: Load) -> io::Result<PagePool> {
    read_bits(path, slice, count, VALUE_BITS, how)
}

/// [`read_values`] of a work file of `bits` per position.
pub fn read_bits(
    path: &Path,
    slice: &Slice,
    count: u64,
    bits: u32,
    how: Load,
) -> io::Result<PagePool> {
    let file = open_checked(path, slice, count, bits, false)?;
    let len = (file_len_bits(count, bits) - PAGE_BYTES as u64) as usize;
    let mut data = PagePool::new(len).map_err(|e| failed(FileOp::Mapping, path, e))?;
    data.load(&file, PAGE_BYTES as u64, len, how)
        .map_err(|e| failed(FileOp::Reading, path, e))?;
    Ok(data)
}

struct Slot {
    page: u64,
    stamp: u64,
    dirty: bool,
}

/// A page cache over one work file of `BITS` per position. Reads may touch any page; writes
/// are confined to the `writable` range of positions (the job's own range), which is checked
/// on every write.
pub struct PageCache<const BITS: u32 = VALUE_BITS> {
    file: File,
    path: PathBuf,
    count: u64,
    /// Page number -> slot, or `NO_SLOT`.
    table: Vec<u32>,
    slots: Vec<Slot>,
    /// The slots' page buffers, back to back.
    pool: PagePool,
    capacity: usize,
    clock: u64,
    /// The page touched last: its stamp is current, so repeated touches skip the update.
    last_page: u64,
    writable: std::ops::Range<u64>,
    dirty: usize,
    /// Pages read from disk (misses), for statistics.
    pub reads: u64,
    /// Pages `run_first..run_first + run_len` sit in slots `0..run_len` in order (the first
    /// [`PageCache::preload`] of an empty cache): their lookups need neither the table nor an
    /// LRU stamp, the cost of every random probe into a preloaded mirror.
    run_first: u64,
    run_len: u64,
}

impl<const BITS: u32> PageCache<BITS> {
    /// Starts fetching position `index`'s bits from memory when its page is in the cache
    /// (a preloaded mirror read at random, or a range read in sorted order); otherwise
    /// nothing: a miss is read when the position is.
    #[inline(always)]
    pub fn prefetch(&self, index: u64) {
        let page = index / Self::PER_PAGE;
        let in_run = page.wrapping_sub(self.run_first);
        let slot = match in_run < self.run_len {
            true => in_run as usize,
            false => match self.table.get(page as usize) {
                Some(&s) if s != NO_SLOT => s as usize,
                _ => return,
            },
        };
        let bit = index % Self::PER_PAGE * BITS as u64;
        let at = slot * PAGE_BYTES + (bit / 8) as usize;
        crate::db::cache::prefetch_line(self.pool.as_ptr().wrapping_add(at));
    }

    /// Positions per page.
    pub const PER_PAGE: u64 = page_positions(BITS);

    /// Opens `path` for reading only.
    pub fn open_read(path: &Path, slice: &Slice, count: u64, buffers: usize) -> io::Result<Self> {
        let file = open_checked(path, slice, count, BITS, false)?;
        Self::new(file, path, count, buffers, 0..0)
    }

    /// Opens `path` for reading everything and writing positions in `writable`.
    pub fn open_write(
        path: &Path,
        slice: &Slice,
        count: u64,
        buffers: usize,
        writable: std::ops::Range<u64>,
    ) -> io::Result<Self> {
        let file = open_checked(path, slice, count, BITS, true)?;
        Self::new(file, path, count, buffers, writable)
    }

    fn new(
        file: File,
        path: &Path,
        count: u64,
        buffers: usize,
        writable: std::ops::Range<u64>,
    ) -> io::Result<Self> {
        let pages = count.div_ceil(Self::PER_PAGE) as usize;
        // Address space for every page of the file: a page is in one slot at most, and the
        // cache may grow past `buffers` while every page is dirty.
        let pool =
            PagePool::new(pages * PAGE_BYTES).map_err(|e| failed(FileOp::Mapping, path, e))?;
        Ok(PageCache {
            file,
            path: path.to_path_buf(),
            count,
            table: vec![NO_SLOT; pages],
            slots: Vec::new(),
            pool,
            capacity: buffers.max(4),
            clock: 0,
            last_page: u64::MAX,
            writable,
            dirty: 0,
            reads: 0,
            run_first: 0,
            run_len: 0,
        })
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// Makes room on disk for the pages this cache may write, before any is written: their
    /// holes are checked against the free space (too little is an error saying how much is
    /// needed and free, for `what`), then reserved where the file system can, so that no
    /// flush meets a full disk halfway through a job.
    pub fn reserve_writable(&self, what: &str) -> Result<(), crate::space::SpaceError> {
        use crate::space;
        let first = self.writable.start / Self::PER_PAGE;
        let last = self.writable.end.div_ceil(Self::PER_PAGE).max(first);
        let offset = (first + 1) * PAGE_BYTES as u64;
        let len = (last - first) * PAGE_BYTES as u64;
        let dir = self.path.parent().unwrap_or(Path::new("."));
        let needed = space::unallocated(&self.file, len).map_err(|source| {
            space::SpaceError::Unreadable {
                dir: dir.to_path_buf(),
                source,
            }
        })?;
        space::ensure(dir, needed, what)?;
        space::reserve(&self.file, &self.path, offset, len, what)?;
        Ok(())
    }

    /// Whether the dirty pages fill most of the cache: the caller should checkpoint soon,
    /// since dirty pages are never evicted.
    pub fn wants_flush(&self) -> bool {
        self.dirty + 16 >= self.capacity
    }

    /// The slot holding `page`, loading it on a miss; the byte offset of the page in the pool.
    #[inline(always)]
    fn base_of(&mut self, page: u64) -> io::Result<usize> {
        let in_run = page.wrapping_sub(self.run_first);
        if in_run < self.run_len {
            // Never evicted while the run lasts (an eviction in it ends the run): no stamp.
            return Ok(in_run as usize * PAGE_BYTES);
        }
        let s = self.table[page as usize];
        if s != NO_SLOT {
            if page != self.last_page {
                self.clock += 1;
                self.slots[s as usize].stamp = self.clock;
                self.last_page = page;
            }
            return Ok(s as usize * PAGE_BYTES);
        }
        self.load(page).map(|s| s * PAGE_BYTES)
    }

    #[cold]
    fn load(&mut self, page: u64) -> io::Result<usize> {
        let slot = if self.slots.len() < self.capacity || self.dirty == self.slots.len() {
            // Grow while below capacity, or beyond it when every page is dirty (rare: the
            // caller checkpoints when `wants_flush`).
            self.slots.push(Slot {
                page,
                stamp: 0,
                dirty: false,
            });
            self.pool.grow(PAGE_BYTES);
            self.slots.len() - 1
        } else {
            let victim = (0..self.slots.len())
                .filter(|&i| !self.slots[i].dirty)
                .min_by_key(|&i| self.slots[i].stamp)
                .expect("a clean page exists");
            self.table[self.slots[victim].page as usize] = NO_SLOT;
            if victim < self.run_len as usize {
                self.run_len = 0;
            }
            victim
        };
        let offset = (page + 1) * PAGE_BYTES as u64;
        let buf = &mut self.pool[slot * PAGE_BYTES..(slot + 1) * PAGE_BYTES];
        self.file
            .read_exact_at(buf, offset)
            .map_err(|e| failed(FileOp::Reading, &self.path, e))?;
        self.clock += 1;
        let s = &mut self.slots[slot];
        s.page = page;
        s.stamp = self.clock;
        s.dirty = false;
        self.table[page as usize] = slot as u32;
        self.last_page = page;
        self.reads += 1;
        Ok(slot)
    }

    /// Brings pages `[first, last)` of the file into the cache, as `how` says, when they fit
    /// in the free buffers (a job usually touches all of its range and much of the mirror):
    /// one system call (they are dear on virtual machines). A page written reaches the file
    /// only by [`Self::flush`].
    pub fn preload(&mut self, first: u64, last: u64, how: Load) -> io::Result<()> {
        let last = last.min(self.table.len() as u64);
        if first >= last
            || self.slots.len() + (last - first) as usize > self.capacity
            || (first..last).any(|p| self.table[p as usize] != NO_SLOT)
        {
            return Ok(());
        }
        let n = (last - first) as usize;
        if self.pool.is_empty() {
            (self.run_first, self.run_len) = (first, n as u64);
        }
        self.pool
            .load(
                &self.file,
                (first + 1) * PAGE_BYTES as u64,
                n * PAGE_BYTES,
                how,
            )
            .map_err(|e| failed(FileOp::Reading, &self.path, e))?;
        for page in first..last {
            self.clock += 1;
            self.table[page as usize] = self.slots.len() as u32;
            self.slots.push(Slot {
                page,
                stamp: self.clock,
                dirty: false,
            });
        }
        self.reads += n as u64;
        Ok(())
    }

    fn mark_dirty(&mut self, base: usize) {
        let s = &mut self.slots[base / PAGE_BYTES];
        if !s.dirty {
            s.dirty = true;
            self.dirty += 1;
        }
    }

    /// The bytes of `page` for writing (4 positions a byte, low bits first); the whole page
    /// must lie in the writable range, up to the end of the slice.
    pub fn page_mut(&mut self, page: u64) -> io::Result<&mut [u8]> {
        let first = page * Self::PER_PAGE;
        let end = (first + Self::PER_PAGE).min(self.count);
        assert!(
            self.writable.start <= first && end <= self.writable.end,
            "page {page} outside the job's range {:?} of {}",
            self.writable,
            self.path.display()
        );
        let base = self.base_of(page)?;
        self.mark_dirty(base);
        Ok(&mut self.pool[base..base + PAGE_BYTES])
    }

    /// The bytes of page `page` (4 positions a byte, the first in the low bits), to read.
    #[inline]
    pub fn page(&mut self, page: u64) -> io::Result<&[u8]> {
        let base = self.base_of(page)?;
        Ok(&self.pool[base..base + PAGE_BYTES])
    }

    fn check_writable(&self, index: u64) {
        assert!(
            self.writable.contains(&index),
            "write to position {index} outside the job's range {:?} of {}",
            self.writable,
            self.path.display()
        );
    }

    /// The paper's sequential hint: a scan in index order has left `page`, so it becomes the
    /// first page to evict.
    pub fn done_with_page(&mut self, page: u64) {
        if let Some(&s) = self.table.get(page as usize)
            && s != NO_SLOT
        {
            self.slots[s as usize].stamp = 0;
            self.last_page = u64::MAX;
        }
    }

    /// Writes every dirty page and, when `durable`, `fsync`s the file. On error nothing is
    /// marked clean, so a later flush retries, and the caller must not advance its checkpoint.
    pub fn flush(&mut self, durable: bool) -> io::Result<()> {
        if self.dirty == 0 {
            return Ok(());
        }
        // Dirty pages in consecutive slots that are consecutive in the file (a preloaded
        // range) go out in one write: a job's range is hundreds of pages, and system calls
        // are dear on virtual machines.
        let mut k = 0;
        while k < self.slots.len() {
            if !self.slots[k].dirty {
                k += 1;
                continue;
            }
            let first = self.slots[k].page;
            let mut n = 1;
            while k + n < self.slots.len()
                && self.slots[k + n].dirty
                && self.slots[k + n].page == first + n as u64
            {
                n += 1;
            }
            self.file
                .write_all_at(
                    &self.pool[k * PAGE_BYTES..(k + n) * PAGE_BYTES],
                    (first + 1) * PAGE_BYTES as u64,
                )
                .map_err(|e| failed(FileOp::Writing, &self.path, e))?;
            k += n;
        }
        if durable {
            self.file
                .sync_data()
                .map_err(|e| failed(FileOp::Syncing, &self.path, e))?;
        }
        for s in self.slots.iter_mut() {
            s.dirty = false;
        }
        self.dirty = 0;
        Ok(())
    }
}

impl PageCache<MTC_BITS> {
    /// The byte of position `index`.
    #[inline(always)]
    pub fn get_byte(&mut self, index: u64) -> io::Result<u8> {
        debug_assert!(index < self.count);
        let base = self.base_of(index / Self::PER_PAGE)?;
        Ok(self.pool[base + (index % Self::PER_PAGE) as usize])
    }

    /// Sets the byte of position `index`, which must lie in the writable range.
    #[inline]
    pub fn set_byte(&mut self, index: u64, byte: u8) -> io::Result<()> {
        self.check_writable(index);
        let base = self.base_of(index / Self::PER_PAGE)?;
        self.pool[base + (index % Self::PER_PAGE) as usize] = byte;
        self.mark_dirty(base);
        Ok(())
    }
}

impl PageCache<VALUE_BITS> {
    /// The value of position `index`.
    #[inline(always)]
    pub fn get(&mut self, index: u64) -> io::Result<Value> {
        debug_assert!(index < self.count);
        let base = self.base_of(index / PAGE_POSITIONS)?;
        let off = index % PAGE_POSITIONS;
        let byte = self.pool[base + (off / 4) as usize];
        Ok(Value::from_bits(byte >> (2 * (off % 4))))
    }

    /// Sets the value of position `index`, which must lie in the writable range.
    #[inline]
    pub fn set(&mut self, index: u64, value: Value) -> io::Result<()> {
        self.check_writable(index);
        let base = self.base_of(index / PAGE_POSITIONS)?;
        let off = index % PAGE_POSITIONS;
        let b = &mut self.pool[base + (off / 4) as usize];
        let shift = 2 * (off % 4);
        *b = (*b & !(3 << shift)) | ((value as u8) << shift);
        self.mark_dirty(base);
        Ok(())
    }
}

/// Which values a scan stops at (the rest it passes over without decoding positions).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wanted {
    /// Every position (a first pass, where all are unknown).
    Any,
    Unknown,
    /// Unknown, or a draw that may still turn out a win (`noio`).
    UnknownOrDraw,
    /// A loss (`winmove` walks the mirror's).
    Loss,
}

/// The first position `p` with `from <= p < to` of a page's bytes whose value is `wanted`.
/// Reads 32 positions a step: most positions of a late pass are resolved already.
#[inline]
pub fn next_wanted(bytes: &[u8], from: usize, to: usize, wanted: Wanted) -> Option<usize> {
    const LOW: u64 = 0x5555_5555_5555_5555;
    let mut word = from / 32;
    // Positions before `from` in the first word are not wanted.
    let mut keep = LOW << (2 * (from % 32));
    while word * 32 < to {
        let w = u64::from_le_bytes(bytes[word * 8..word * 8 + 8].try_into().unwrap());
        let (low, high) = (w & LOW, (w >> 1) & LOW);
        let hits = match wanted {
            Wanted::Unknown => !(low | high),
            Wanted::UnknownOrDraw => !(low ^ high),
            Wanted::Loss => high & !low,
            Wanted::Any => LOW, // (the caller walks every position itself)
        } & keep;
        if hits != 0 {
            let p = word * 32 + hits.trailing_zeros() as usize / 2;
            return (p < to).then_some(p);
        }
        keep = LOW;
        word += 1;
    }
    None
}

/// Creates the work file of `slice` unless it exists. Safe against a racing creator: the
/// file is prepared under a private name and linked into place, which fails if another
/// process got there first.
pub fn ensure_work_file(site: &super::Site, slice: &Slice, durable: bool) -> super::Result<()> {
    ensure_file(site, &site.work_file(slice), slice, VALUE_BITS, durable)
}

/// [`ensure_work_file`] for the work file at `path` of `bits` per position.
pub(crate) fn ensure_file(
    site: &super::Site,
    path: &std::path::Path,
    slice: &Slice,
    bits: u32,
    durable: bool,
) -> super::Result<()> {
    let path = path.to_path_buf();
    if path.exists() {
        return Ok(());
    }
    site.create_dirs()?;
    // A private name per process and thread: jobs of one slice may start together.
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let tmp = path.with_extension(format!(
        "new{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    create_bits(&tmp, slice, slice.count(), bits, durable)
        .map_err(|e| crate::solve_err!("{}: {e}", tmp.display()))?;
    let linked = std::fs::hard_link(&tmp, &path);
    std::fs::remove_file(&tmp)?;
    match linked {
        Ok(()) if durable => Ok(sync_dir(&path)?),
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(crate::solve_err!("{}: {e}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Flushes write exactly the values set, whether the pages were preloaded (one write for
    /// a run of them) or loaded one at a time into a small cache that evicts: random sets
    /// against a plain array, read back from the file after each flush.
    #[test]
    fn a_flush_writes_the_values_set_and_nothing_else() {
        let dir = std::env::temp_dir().join(format!("nowdb-flush-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let slice: Slice = "2200".parse().unwrap();
        let count = 40 * PAGE_POSITIONS + 123;
        let mut rng = crate::rng::XorShift::new(0xF1A5);
        let cases = [
            (64, Some(Load::Map)),
            (64, Some(Load::Read)),
            (64, None),
            (6, None),
        ];
        for (case, (buffers, preload)) in cases.into_iter().enumerate() {
            let path = dir.join(format!("case{case}.nwk"));
            let _ = std::fs::remove_file(&path);
            create(&path, &slice, count, false).unwrap();
            let writable = 3 * PAGE_POSITIONS + 7..37 * PAGE_POSITIONS;
            let mut cache =
                PageCache::open_write(&path, &slice, count, buffers, writable.clone()).unwrap();
            if let Some(how) = preload {
                cache
                    .preload(0, count.div_ceil(PAGE_POSITIONS), how)
                    .unwrap();
            }
            let mut model = vec![Value::Unknown; count as usize];
            for round in 0..6 {
                for _ in 0..500 {
                    // Clustered in a few pages some rounds, spread over all others.
                    let span = if round % 2 == 0 {
                        3 * PAGE_POSITIONS
                    } else {
                        writable.end - writable.start
                    };
                    let i = writable.start + rng.below(span);
                    let v = Value::from_bits(1 + rng.below(3) as u8);
                    cache.set(i, v).unwrap();
                    model[i as usize] = v;
                    // Reads outside the writable range keep the loads and evictions going.
                    let _ = cache.get(rng.below(count)).unwrap();
                    if cache.wants_flush() {
                        cache.flush(false).unwrap();
                    }
                }
                cache.flush(false).unwrap();
                let on_disk = read_values(&path, &slice, count, Load::Map).unwrap();
                for (i, want) in model.iter().enumerate() {
                    let got = Value::from_bits(on_disk[i / 4] >> (2 * (i % 4)));
                    assert_eq!(got, *want, "case {case} round {round}: position {i}");
                }
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// `next_wanted` against a position-by-position search, over random pages and bounds.
    #[test]
    fn next_wanted_finds_what_a_plain_search_finds() {
        let mut rng = crate::rng::XorShift::new(0x9A6E);
        for round in 0..200 {
            // Sparse wanted values in some pages, dense in others.
            let dense = round % 3 == 0;
            let bytes: Vec<u8> = (0..PAGE_BYTES)
                .map(|_| {
                    let mut b = 0u8;
                    for k in 0..4 {
                        let v = match rng.below(if dense { 4 } else { 200 }) {
                            0 => 0,
                            1 => 3,
                            n => 1 + (n % 2) as u8,
                        };
                        b |= v << (2 * k);
                    }
                    b
                })
                .collect();
            let from = rng.below(PAGE_POSITIONS) as usize;
            let to = from + rng.below(PAGE_POSITIONS - from as u64 + 1) as usize;
            for (wanted, hit) in [
                (Wanted::Unknown, &[0u8][..]),
                (Wanted::UnknownOrDraw, &[0, 3][..]),
                (Wanted::Loss, &[2][..]),
                (Wanted::Any, &[0, 1, 2, 3][..]),
            ] {
                let plain =
                    (from..to).find(|&p| hit.contains(&((bytes[p / 4] >> (2 * (p % 4))) & 3)));
                assert_eq!(
                    next_wanted(&bytes, from, to, wanted),
                    plain,
                    "{wanted:?} {from}..{to}"
                );
            }
        }
    }
}
