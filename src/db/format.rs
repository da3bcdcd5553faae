//! One compressed slice file (docs/FORMAT.md): the layout shared with the writer
//! (`write.rs`), and the reader a probe decodes through.

use super::code::{CONTEXTS, Decoder, SKIP_PEEK, SYMBOLS, class_start};
use super::container::{BLOCK_BYTES, Block, Container, Kind, open_file};
use super::error::{DbError, ReadAt, Result};

use super::removed::Removal;
use crate::slice::Slice;
use crate::value::Value;
use std::fs::File;
use std::path::{Path, PathBuf};

pub const MAGIC: &[u8; 8] = b"NOWDBDB\0";
pub const VERSION: u32 = 4;
/// Sync points per block written by this version (a file of one block may have fewer).
pub const SYNC_POINTS: usize = 32;
/// The most sync points per block a header may name.
const MAX_SYNC_POINTS: usize = 64;
/// A sync point is one `u32`: position offset (low 23 bits), bits past its nominal payload
/// bit (6), state (top 3). All ones: unused.
pub(super) const SYNC_BYTES: usize = 4;
pub(super) const OFFSET_BITS: u32 = 23;
const OFFSET_MASK: u32 = (1 << OFFSET_BITS) - 1;
pub(super) const DELTA_BITS: u32 = 6;
pub(super) const STATE_SHIFT: u32 = OFFSET_BITS + DELTA_BITS;
pub(super) const UNUSED_SYNC: u32 = u32::MAX;
/// A block covers fewer positions than this, so that every offset is below the unused
/// mark's (a longer run is cut at the block's end, as at any block boundary).
pub(super) const MAX_BLOCK_POSITIONS: u64 = OFFSET_MASK as u64 - 1;
/// Built-in codes a file may choose from (`default_code.rs`).
pub const CODES: usize = super::default_code::DEFAULT_CODES.len();

pub(super) fn value_code(v: Value) -> u8 {
    v as u8 - 1
}

fn value_of(code: u8) -> Value {
    Value::from_bits(code + 1)
}

use super::code::{AFTER, state_of};

pub(super) fn header_bytes_for(sync_points: usize) -> usize {
    5 + SYNC_BYTES * (sync_points - 1)
}

/// Where sync point `k` (1..S) of a block of `payload_bytes` aims: payload bit `k·P/S`.
pub(super) fn nominal_bit(k: usize, payload_bytes: usize, sync_points: usize) -> u64 {
    (k * payload_bytes * 8 / sync_points) as u64
}

/// Built-in code `k` (< [`CODES`]): trained on the 2..6-piece database (as the 2003 paper
/// fixed its code from its largest files), see `default_code.rs`.
pub fn builtin_code(k: usize) -> [[u8; SYMBOLS]; CONTEXTS] {
    super::default_code::DEFAULT_CODES[k]
}

/// The decoders of the built-in codes, built once: every file shares them, so a probe's
/// decoding tables stay in the processor's cache whichever slice it reads (a table per
/// file, as version 1 had, made most probes wait for memory).
fn decoder(k: usize) -> &'static Decoder {
    static DECODERS: std::sync::OnceLock<Vec<Decoder>> = std::sync::OnceLock::new();
    &DECODERS.get_or_init(|| (0..CODES).map(|k| Decoder::new(&builtin_code(k))).collect())[k]
}

/// The memory the shared decoders take once built, in bytes.
pub fn decoder_bytes() -> usize {
    CODES * std::mem::size_of::<Decoder>()
}

/// Whether `path` is a slice file of this format version (by its first bytes; [`SliceFile::open`]
/// checks the rest). A file of an older version is built again.
pub fn is_current(path: &Path) -> bool {
    let mut head = [0u8; 12];
    File::open(path)
        .and_then(|f| f.read_exact_at(&mut head, 0))
        .is_ok_and(|_| &head[..8] == MAGIC && head[8..12] == VERSION.to_le_bytes())
}

/// Where decoding stands inside a block: the next run's bit and the prediction state.
struct Cursor {
    bit: u64,
    /// The prediction state (0..6), checked when read from the block.
    state: u8,
    /// Where the payload starts in the block, and its length in bits.
    head: usize,
    limit: u64,
}

/// An open compressed slice: header checked, block index and decoding tables in memory.
pub struct SliceFile {
    pub path: PathBuf,
    pub slice: Slice,
    pub count: u64,
    /// Which positions have no stored value.
    pub removal: Removal,
    /// Header, block index and blocks, as every kind of database file has them.
    c: Container,
    sync_points: usize,
    /// The nominal bit of each sync point in a full block (`[0]`) and in the last (`[1]`).
    sync_bits: [[u16; MAX_SYNC_POINTS]; 2],
    /// The decoder of the file's built-in code.
    decoder: &'static Decoder,
}

impl SliceFile {
    /// The memory this open file takes beside the struct itself (block index, buckets,
    /// path), in bytes.
    pub fn memory_bytes(&self) -> usize {
        self.c.memory_bytes()
    }

    /// Opens `path`, which must hold `slice`.
    pub fn open(path: &Path, slice: &Slice) -> Result<SliceFile> {
        let file = open_file(path, || {
            format!("missing database slice {slice} (build it first)")
        })?;
        SliceFile::from_reader(path, slice, Box::new(file))
    }

    /// Reads the slice file held in `bytes` (tests and fuzzing need no temporary file);
    /// `path` names it in errors.
    pub fn from_bytes(path: &Path, slice: &Slice, bytes: Vec<u8>) -> Result<SliceFile> {
        SliceFile::from_reader(path, slice, Box::new(bytes))
    }

    /// Checks the header and block index read through `bytes` (called `path` in errors),
    /// which must hold `slice`.
    pub fn from_reader(path: &Path, slice: &Slice, bytes: Box<dyn ReadAt>) -> Result<SliceFile> {
        let kind = Kind {
            magic: MAGIC,
            version: VERSION,
            what: "database slice",
            format: "database format",
        };
        let mut own = (None, 0, 0);
        let c = Container::read(path, slice, bytes, &kind, |header| {
            let u16_at = |o: usize| u16::from_le_bytes([header[o], header[o + 1]]);
            let bad = |what: String| DbError::format(path, what);
            let removal = Removal::from_number(u16_at(12));
            let Some(removal) = removal.filter(|_| (u16_at(14) as usize) < CODES) else {
                return Err(bad(format!(
                    "unknown removal rule {} or code kind {}",
                    u16_at(12),
                    u16_at(14)
                )));
            };
            let sync_points = u16_at(44) as usize;
            if !(1..=MAX_SYNC_POINTS).contains(&sync_points) {
                return Err(bad(format!("bad header: {sync_points} sync points")));
            }
            own = (Some(removal), u16_at(14) as usize, sync_points);
            Ok(header_bytes_for(sync_points))
        })?;
        let (Some(removal), code, sync_points) = own else {
            unreachable!("checked by Container::read")
        };
        let head = header_bytes_for(sync_points);
        let mut sync_bits = [[0u16; MAX_SYNC_POINTS]; 2];
        for (table, len) in sync_bits.iter_mut().zip([BLOCK_BYTES, c.last_len]) {
            for (k, bit) in table.iter_mut().enumerate().take(sync_points) {
                *bit = nominal_bit(k, len - head, sync_points) as u16;
            }
        }
        Ok(SliceFile {
            path: path.to_path_buf(),
            slice: *slice,
            count: c.count,
            removal,
            c,
            sync_points,
            sync_bits,
            decoder: decoder(code),
        })
    }

    pub fn blocks(&self) -> usize {
        self.c.blocks()
    }

    /// The block holding position `i`.
    #[inline]
    pub fn block_of(&self, i: u64) -> usize {
        self.c.block_of(i)
    }

    /// The first position of block `b` (the slice's count past the last block).
    pub fn block_first(&self, b: usize) -> u64 {
        self.c.block_first(b)
    }

    /// Where block `b` starts in the file.
    pub fn block_offset(&self, b: usize) -> u64 {
        self.c.block_offset(b)
    }

    /// Reads block `b` from disk and checks its CRC.
    pub fn read_block(&self, b: usize) -> Result<Box<Block>> {
        self.c.read_block(b)
    }

    /// Decodes the next run at `c`: its value code and length.
    #[inline(always)]
    fn next_run(&self, block: &Block, b: usize, c: &mut Cursor) -> Result<(u8, u64)> {
        if c.bit >= c.limit {
            return Err(self.corrupt(b));
        }
        let byte = c.head + (c.bit / 8) as usize;
        let window =
            u64::from_be_bytes(block.bytes[byte..byte + 8].try_into().unwrap()) << (c.bit % 8);
        // The context is the last run's value, the state's `cur`.
        let Some(run) = self.decoder.run((c.state >> 1) as usize, window) else {
            return Err(self.corrupt(b));
        };
        c.state = AFTER[c.state as usize][run.hit as usize];
        c.bit += run.bits as u64;
        Ok((c.state >> 1, run.len))
    }

    #[cold]
    fn corrupt(&self, b: usize) -> DbError {
        DbError::corrupt(&self.path, format!("block {b} does not decode (corrupt)"))
    }

    fn start(&self, b: usize, state: u8, bit: u64) -> Result<Cursor> {
        if state_of(state).is_none() {
            return Err(self.corrupt(b));
        }
        let head = header_bytes_for(self.sync_points);
        let limit = ((self.c.block_len(b) - head) * 8) as u64;
        Ok(Cursor {
            bit,
            state,
            head,
            limit,
        })
    }

    /// The stored (refilled) value of position `i` in block `b`, and the range of positions
    /// around `i` in the same run (within the block).
    #[inline]
    pub fn run_in_block(&self, block: &Block, b: usize, i: u64) -> Result<(Value, u64, u64)> {
        let first = block.first;
        let target = i - first;
        let data = &block.bytes;
        let (mut state, mut pos, mut bit) = (data[4], 0u64, 0u64);
        // The last sync point at or before the target, found by counting (no branch per
        // entry): offsets increase, and unused entries are above every offset.
        let entries = &data[5..header_bytes_for(self.sync_points)];
        let offset = |e: &[u8]| (u32::from_le_bytes(e.try_into().unwrap()) & OFFSET_MASK) as u64;
        let k: usize = entries
            .chunks_exact(SYNC_BYTES)
            .map(|e| (offset(e) <= target) as usize)
            .sum();
        if k > 0 {
            let e = u32::from_le_bytes(
                entries[SYNC_BYTES * (k - 1)..][..SYNC_BYTES]
                    .try_into()
                    .unwrap(),
            );
            pos = (e & OFFSET_MASK) as u64;
            if pos > target {
                return Err(self.corrupt(b));
            }
            let last = (b + 1 == self.c.blocks()) as usize;
            let delta = (e >> OFFSET_BITS) & ((1 << DELTA_BITS) - 1);
            bit = self.sync_bits[last][k] as u64 + delta as u64;
            state = (e >> STATE_SHIFT) as u8;
        }
        // Checks the state read from the block; every later state comes from the tables.
        let mut c = self.start(b, state, bit)?;
        // The run of value code `v` that starts `at` and holds the target, within the block.
        let found = |v: u8, at: u64, len: u64| {
            let end = self.c.block_first(b + 1);
            Ok((value_of(v), first + at, (first + at + len).min(end)))
        };
        loop {
            // Skip whole groups of short runs that end before the target. The state stays a
            // byte here (a table index), and the bits stay in a register: each step is a
            // shift and one table load.
            'skip: while c.bit < c.limit {
                let byte = c.head + (c.bit / 8) as usize;
                let mut window =
                    u64::from_be_bytes(data[byte..byte + 8].try_into().unwrap()) << (c.bit % 8);
                let mut valid = 64 - (c.bit % 8) as u32;
                while valid >= SKIP_PEEK {
                    let e = self.decoder.skip(c.state, window);
                    let (len, bits) = if e.runs() != 0 {
                        (e.length() as u64, e.bits())
                    } else {
                        // A long run: its code word is in the window, its extra bits follow.
                        let (l, extra) = (e.bits(), e.length());
                        if l == 0 {
                            break 'skip;
                        }
                        if valid < l + extra {
                            continue 'skip;
                        }
                        let x = (window << l) >> (64 - extra);
                        (class_start(extra) + x, l + extra)
                    };
                    if pos + len > target {
                        if e.runs() > 1 {
                            // Several runs: the one holding the target is found one by one.
                            break 'skip;
                        }
                        return found(e.state() >> 1, pos, len);
                    }
                    pos += len;
                    c.bit += bits as u64;
                    window <<= bits;
                    valid -= bits;
                    c.state = e.state();
                    if c.bit >= c.limit {
                        break 'skip;
                    }
                }
            }
            // One run at a time: a long one, or the one holding the target.
            let (v, len) = self.next_run(block, b, &mut c)?;
            if pos + len > target {
                return found(v, pos, len);
            }
            pos += len;
        }
    }

    /// The stored (refilled) values of positions `from..to` in index order, as runs
    /// `(first, length, value)` clipped to the range, reading each block once. `f`'s errors
    /// are the caller's own (`ver`'s wrong values), the file's are [`DbError`]s.
    pub fn for_each_run<E: From<DbError>>(
        &self,
        from: u64,
        to: u64,
        mut f: impl FnMut(u64, u64, Value) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        if from >= to {
            return Ok(());
        }
        let first_block = self.block_of(from);
        for b in first_block..self.c.blocks() {
            let first = self.c.block_first(b);
            if first >= to {
                break;
            }
            let block = self.read_block(b)?;
            let end = self.c.block_first(b + 1);
            let mut c = self.start(b, block.bytes[4], 0)?;
            let mut pos = first;
            while pos < end.min(to) {
                let (v, len) = self.next_run(&block, b, &mut c)?;
                let (lo, hi) = (pos.max(from), (pos + len).min(end).min(to));
                if lo < hi {
                    f(lo, hi - lo, value_of(v))?;
                }
                pos += len;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::removed::ValueRun;
    use crate::db::write::write_slice;

    #[test]
    fn every_run_decodes_through_sync_points_and_cut_long_runs() {
        // Short runs, one run longer than two blocks may cover, short runs again.
        let slice = crate::slice::Material::all_with_pieces(6)
            .iter()
            .flat_map(|m| m.slices())
            .max_by_key(|s| s.count())
            .unwrap();
        let count = slice.count();
        assert!(count > 2 * MAX_BLOCK_POSITIONS + 1_000_000, "{count}");
        let mut rng = crate::rng::XorShift::new(0x5EED);
        let values = [Value::Win, Value::Loss, Value::Draw];
        let (mut runs, mut total, mut v) = (Vec::new(), 0, 0);
        while total < count {
            let len = match runs.len() {
                1000 => count - total - 300_000,
                _ => {
                    let most = if rng.below(4) == 0 { 2000 } else { 40 };
                    1 + rng.below(most)
                }
            }
            .min(count - total);
            v = (v + 1 + rng.below(2) as usize) % 3;
            runs.push(ValueRun::new(values[v], len, 0));
            total += len;
        }
        assert!(runs[1000].len > 2 * MAX_BLOCK_POSITIONS);
        let path = crate::files::test_dir("format-sync").join("s.ndb");
        write_slice(&path, &slice, count, &runs, Removal::CapturesAndThreats).unwrap();
        let f = SliceFile::open(&path, &slice).unwrap();
        assert_eq!(f.sync_points, SYNC_POINTS);
        let mut first = 0;
        for r in &runs {
            for i in [first, first + r.len / 2, first + r.len - 1] {
                let b = f.block_of(i);
                let block = f.read_block(b).unwrap();
                let (got, from, to) = f.run_in_block(&block, b, i).unwrap();
                assert_eq!(got, r.value, "position {i}");
                assert!(from <= i && i < to && from >= first && to <= first + r.len);
                assert!(to - from < MAX_BLOCK_POSITIONS + 1);
            }
            first += r.len;
        }
        let _ = std::fs::remove_dir_all(path.parent().unwrap());
    }
}
