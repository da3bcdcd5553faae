//! What both kinds of database file share (docs/FORMAT.md): the values' `.ndb` and the
//! distances' `.mtc` each have a 48-byte header (magic and version at 0..12, the slice name
//! at 16..32, the position count at 32..40, the number of blocks at 40..44, the last
//! block's length at 46..48; the rest is the kind's own), a CRC32 of that header and of the
//! block index, the block index (the first position of each block), and 1 KiB blocks, each
//! starting with the CRC32 of its other bytes. This module opens and checks that much and
//! reads blocks; each kind checks its own fields and decodes its own blocks.

use super::crc32::{Crc32, crc32};
use super::error::{DbError, ReadAt, Result};
use crate::slice::Slice;
use std::fs::File;
use std::path::{Path, PathBuf};

/// The bytes of a block.
pub const BLOCK_BYTES: usize = 1024;
/// The header before its CRC.
pub(super) const FIXED_HEADER: usize = 48;

/// A block as read, with 8 zero bytes after it so the bit reader may load 8 bytes anywhere,
/// and the slice position of its first run (from the block index).
pub struct Block {
    pub bytes: [u8; BLOCK_BYTES + 8],
    pub first: u64,
}

/// The bucket table of a file's block lookup for a block index over `count` positions.
pub(super) fn block_buckets(index: &[u64], count: u64) -> (Vec<u32>, u32) {
    let mut shift = 0;
    while (count - 1) >> shift >= 4 * index.len() as u64 {
        shift += 1;
    }
    let buckets = ((count - 1) >> shift) as usize + 1;
    let mut table = Vec::with_capacity(buckets + 1);
    let mut b = 0;
    for k in 0..buckets as u64 {
        while b + 1 < index.len() && index[b + 1] <= k << shift {
            b += 1;
        }
        table.push(b as u32);
    }
    table.push((index.len() - 1) as u32);
    (table, shift)
}

/// The block of `index` holding position `i`, through the bucket table of [`block_buckets`].
#[inline]
pub(super) fn find_block(index: &[u64], buckets: &[u32], shift: u32, i: u64) -> usize {
    // The bucket of `i` names the blocks holding its first and last positions: usually the
    // same block (no search, the index is not read) or the next.
    let k = (i >> shift) as usize;
    let (lo, hi) = (buckets[k] as usize, buckets[k + 1] as usize);
    lo + index[lo + 1..=hi].partition_point(|&first| first <= i)
}

/// How a kind of file names itself in errors, and its magic and version.
pub(super) struct Kind {
    pub magic: &'static [u8; 8],
    pub version: u32,
    /// "database slice", "moves-to-conversion file".
    pub what: &'static str,
    /// "database format", "moves-to-conversion format".
    pub format: &'static str,
}

/// An open file's shared parts, checked.
pub(super) struct Container {
    pub path: PathBuf,
    pub count: u64,
    pub bytes: Box<dyn ReadAt>,
    pub index: Vec<u64>,
    pub blocks_at: u64,
    pub last_len: usize,
    pub buckets: Vec<u32>,
    pub bucket_shift: u32,
}

/// Opens `path` for reading; a missing file is [`DbError::Missing`] saying `missing`.
pub(super) fn open_file(path: &Path, missing: impl FnOnce() -> String) -> Result<File> {
    File::open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            DbError::Missing(format!("{}: {}", path.display(), missing()))
        }
        _ => DbError::io(path, "opening", e),
    })
}

impl Container {
    /// Reads and checks the header and block index of `bytes` (called `path` in errors),
    /// which must hold `slice`. After magic and version, `own` checks the kind's fields and
    /// returns the shortest a last block may be.
    pub fn read(
        path: &Path,
        slice: &Slice,
        bytes: Box<dyn ReadAt>,
        kind: &Kind,
        own: impl FnOnce(&[u8; FIXED_HEADER]) -> Result<usize>,
    ) -> Result<Container> {
        let bad = |what: String| DbError::format(path, what);
        let len = bytes
            .size()
            .map_err(|e| DbError::io(path, "reading its size", e))?;
        if len < FIXED_HEADER as u64 + 4 {
            return Err(bad(format!(
                "truncated: {len} bytes, shorter than the header"
            )));
        }
        let mut header = [0u8; FIXED_HEADER];
        bytes
            .read_exact_at(&mut header, 0)
            .map_err(|e| DbError::io(path, "reading the header", e))?;
        if &header[0..8] != kind.magic {
            return Err(bad(format!("not a nowdb {} (bad magic)", kind.what)));
        }
        let u16_at = |o: usize| u16::from_le_bytes([header[o], header[o + 1]]);
        let u32_at = |o: usize| u32::from_le_bytes(header[o..o + 4].try_into().unwrap());
        let version = u32_at(8);
        if version != kind.version {
            return Err(bad(format!(
                "{} version {version}; this nowdb reads version {}",
                kind.format, kind.version
            )));
        }
        let min_last = own(&header)?;
        let name_end = header[16..32].iter().position(|&b| b == 0).unwrap_or(16);
        let name = String::from_utf8_lossy(&header[16..16 + name_end]);
        if name != slice.to_string() {
            return Err(bad(format!("holds slice {name}, expected {slice}")));
        }
        let count = u64::from_le_bytes(header[32..40].try_into().unwrap());
        if count != slice.count() {
            return Err(bad(format!(
                "{count} positions, but slice {slice} has {}",
                slice.count()
            )));
        }
        let blocks = u32_at(40) as u64;
        let last_len = u16_at(46) as usize;
        if blocks == 0 {
            return Err(bad("bad header: 0 blocks".into()));
        }
        if !(min_last..=BLOCK_BYTES).contains(&last_len) {
            return Err(bad(format!("bad header: last block of {last_len} bytes")));
        }
        let blocks_at = FIXED_HEADER as u64 + 4 + 8 * blocks;
        let expected = blocks_at + (blocks - 1) * BLOCK_BYTES as u64 + last_len as u64;
        if len != expected {
            return Err(bad(format!(
                "truncated or padded: {len} bytes, the header says {expected}"
            )));
        }
        let mut rest = vec![0u8; 4 + blocks as usize * 8];
        bytes
            .read_exact_at(&mut rest, FIXED_HEADER as u64)
            .map_err(|e| DbError::io(path, "reading the block index", e))?;
        let mut crc = Crc32::default();
        crc.update(&header);
        crc.update(&rest[4..]);
        if crc.finish() != u32::from_le_bytes(rest[0..4].try_into().unwrap()) {
            return Err(DbError::corrupt(
                path,
                "CRC error in the header or block index",
            ));
        }
        let index: Vec<u64> = rest[4..]
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        let increasing = index.windows(2).all(|w| w[0] < w[1]);
        if index.first() != Some(&0) || !increasing || index.last().is_some_and(|&l| l >= count) {
            return Err(bad(
                "block index is not increasing from 0 within the slice".into()
            ));
        }
        let (buckets, bucket_shift) = block_buckets(&index, count);
        Ok(Container {
            path: path.to_path_buf(),
            count,
            bytes,
            index,
            blocks_at,
            last_len,
            buckets,
            bucket_shift,
        })
    }

    pub fn blocks(&self) -> usize {
        self.index.len()
    }

    /// The block holding position `i`.
    #[inline]
    pub fn block_of(&self, i: u64) -> usize {
        find_block(&self.index, &self.buckets, self.bucket_shift, i)
    }

    /// The first position of block `b` (the slice's count past the last block).
    pub fn block_first(&self, b: usize) -> u64 {
        self.index.get(b).copied().unwrap_or(self.count)
    }

    /// Where block `b` starts in the file.
    pub fn block_offset(&self, b: usize) -> u64 {
        self.blocks_at + (b * BLOCK_BYTES) as u64
    }

    pub fn block_len(&self, b: usize) -> usize {
        if b + 1 == self.index.len() {
            self.last_len
        } else {
            BLOCK_BYTES
        }
    }

    /// Reads block `b` from disk and checks its CRC.
    pub fn read_block(&self, b: usize) -> Result<Box<Block>> {
        let mut block = Box::new(Block {
            bytes: [0u8; BLOCK_BYTES + 8],
            first: self.index[b],
        });
        let len = self.block_len(b);
        let offset = self.block_offset(b);
        self.bytes
            .read_exact_at(&mut block.bytes[..len], offset)
            .map_err(|e| DbError::io(&self.path, format!("block {b}"), e))?;
        let stored = u32::from_le_bytes(block.bytes[0..4].try_into().unwrap());
        if crc32(&block.bytes[4..len]) != stored {
            return Err(DbError::corrupt(
                &self.path,
                format!(
                    "CRC error in block {b} (file bytes {offset}..{})",
                    offset + len as u64
                ),
            ));
        }
        Ok(block)
    }

    /// The memory the block index and buckets take, and the path.
    pub fn memory_bytes(&self) -> usize {
        self.index.capacity() * std::mem::size_of::<u64>()
            + self.buckets.capacity() * std::mem::size_of::<u32>()
            + self.path.as_os_str().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_lookup_finds_the_block_of_every_position() {
        // Even blocks, one block, and very uneven blocks (a lopsided stretch of millions of
        // positions next to dense ones).
        let cases: Vec<(Vec<u64>, u64)> = vec![
            ((0..50).map(|b| b * 1000).collect(), 50_000),
            (vec![0], 1),
            (vec![0], 12_345),
            (vec![0, 1, 2, 3, 4_000_000, 4_000_001, 4_000_100], 9_000_000),
            (
                vec![0, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 100_000],
                100_001,
            ),
        ];
        for (index, count) in cases {
            let (buckets, shift) = block_buckets(&index, count);
            assert!(buckets.len() <= 4 * index.len() + 1, "{buckets:?}");
            let mut probes: Vec<u64> = index
                .iter()
                .flat_map(|&f| [f, f.saturating_sub(1), f + 1])
                .chain([count - 1, count / 2, count / 3])
                .filter(|&i| i < count)
                .collect();
            let mut rng = crate::rng::XorShift::new(88172645463325252);
            probes.extend((0..1000).map(|_| rng.below(count)));
            for i in probes {
                let want = index.partition_point(|&first| first <= i) - 1;
                assert_eq!(
                    find_block(&index, &buckets, shift, i),
                    want,
                    "position {i} of {index:?}"
                );
            }
        }
    }
}
