//! Slices as keys: a slice packed into a `u64`, a position's slice as a `u32` and a small map
//! keyed by it, and the slices named by the files of a directory (`<slice>.<extension>`:
//! work files, solved slices, database files).

use super::{Slice, SliceError};
use crate::files::{FileOp, failed};
use std::path::{Path, PathBuf};

/// A slice packed into a `u64` key.
#[inline]
pub fn slice_key(s: &Slice) -> u64 {
    let m = s.material;
    let r = |x: Option<u8>| x.map_or(0xFF, |r| r as u64);
    (m.bk as u64)
        | (m.wk as u64) << 8
        | (m.bm as u64) << 16
        | (m.wm as u64) << 24
        | r(s.rb) << 32
        | r(s.rw) << 40
}

/// A directory of slice files that cannot be listed, or holds a file named like no slice.
#[derive(Debug, thiserror::Error)]
pub enum SliceFilesError {
    /// A [`crate::files::FileError`]: "listing DIR: cause".
    #[error(transparent)]
    List(std::io::Error),
    #[error("{}: not a slice file: {error}", path.display())]
    NotASlice { path: PathBuf, error: SliceError },
}

/// The slices of the files `<slice>.<extension>` in `dir` (in directory order); a file of
/// that extension whose name is no slice is an error.
pub fn slice_files(dir: &Path, extension: &str) -> Result<Vec<Slice>, SliceFilesError> {
    let list = |e| SliceFilesError::List(failed(FileOp::Listing, dir, e));
    let entries = std::fs::read_dir(dir).map_err(list)?;
    let mut slices = Vec::new();
    for e in entries {
        let e = e.map_err(list)?;
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(stem) = name
            .strip_suffix(extension)
            .and_then(|n| n.strip_suffix('.'))
        {
            let s: Slice = stem.parse().map_err(|error| SliceFilesError::NotASlice {
                path: e.path(),
                error,
            })?;
            slices.push(s);
        }
    }
    Ok(slices)
}

/// The key of `pos`'s slice (Black to move) taken straight from its bitboards: four piece
/// counts and two leading ranks ([`super::NO_MEN`] for no man) in 4 bits each, one key per
/// slice. The solver's conversions look their slice up by it once per child, where building a
/// [`Slice`] and hashing its `u64` cost more than the lookup itself.
#[inline(always)]
pub fn position_slice_key(pos: &crate::board::Position) -> u32 {
    let m = super::Material::of(pos);
    let (rb, rw) = super::leading_rank_codes(pos);
    m.bk as u32
        | (m.wk as u32) << 4
        | (m.bm as u32) << 8
        | (m.wm as u32) << 12
        | rb << 16
        | rw << 20
}

/// A small map from [`position_slice_key`] to a `u32` (a job's handle of a slice): open
/// addressing in one array of key and value pairs, at most half full, so that a lookup is
/// one multiply and usually one cache line.
pub struct SliceSlots {
    slots: Vec<(u32, u32)>,
    /// 32 less the log2 of the number of slots: a key's first slot is the top bits of its
    /// multiplicative hash.
    shift: u32,
    len: usize,
}

/// No key is all ones (the piece counts fit 4 bits, the ranks are at most 8).
const EMPTY: u32 = u32::MAX;

impl Default for SliceSlots {
    fn default() -> SliceSlots {
        SliceSlots::with_bits(6)
    }
}

impl SliceSlots {
    fn with_bits(bits: u32) -> SliceSlots {
        SliceSlots {
            slots: vec![(EMPTY, 0); 1 << bits],
            shift: 32 - bits,
            len: 0,
        }
    }

    #[inline(always)]
    fn first_slot(&self, key: u32) -> usize {
        (key.wrapping_mul(0x9E37_79B1) >> self.shift) as usize
    }

    /// The value kept for `key`.
    #[inline(always)]
    pub fn get(&self, key: u32) -> Option<u32> {
        let mask = self.slots.len() - 1;
        let mut i = self.first_slot(key);
        loop {
            let (k, v) = self.slots[i];
            if k == key {
                return Some(v);
            }
            if k == EMPTY {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    /// Keeps `value` for `key` (replacing what was kept for it).
    pub fn insert(&mut self, key: u32, value: u32) {
        debug_assert_ne!(key, EMPTY);
        if (self.len + 1) * 2 > self.slots.len() {
            let mut larger = SliceSlots::with_bits(33 - self.shift);
            for &(k, v) in self.slots.iter().filter(|(k, _)| *k != EMPTY) {
                larger.insert(k, v);
            }
            *self = larger;
        }
        let mask = self.slots.len() - 1;
        let mut i = self.first_slot(key);
        while self.slots[i].0 != EMPTY && self.slots[i].0 != key {
            i = (i + 1) & mask;
        }
        if self.slots[i].0 == EMPTY {
            self.len += 1;
        }
        self.slots[i] = (key, value);
    }

    /// Keys kept.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slice::index::SliceIndex;
    use std::collections::HashMap;

    /// Positions of many slices: two have the same key exactly when they are in the same
    /// slice.
    #[test]
    fn a_position_slice_key_names_its_slice_and_no_other() {
        let mut rng = crate::rng::XorShift::new(5);
        let mut seen: HashMap<u32, Slice> = HashMap::new();
        for name in [
            "3300.--", "0033.65", "2211.43", "1122.06", "3201.-5", "0055.66", "5500.--", "1144.36",
            "0062.16", "2221.66", "2212.66", "0111.06", "0311.60", "1110.5-", "1201.-4", "2320.6-",
            "4400.--", "2200.--", "3101.-4",
        ] {
            let ix = SliceIndex::for_name(name).unwrap();
            for _ in 0..2_000 {
                let p = ix.position_unchecked(rng.next() % ix.count());
                let s = Slice::of(&p);
                assert_eq!(s.to_string(), name);
                let key = position_slice_key(&p);
                assert_ne!(key, EMPTY);
                assert_eq!(*seen.entry(key).or_insert(s), s, "{name}: key {key:#x}");
            }
        }
        assert_eq!(seen.len(), 19);
    }

    #[test]
    fn slice_slots_keep_every_key_through_growth() {
        let mut slots = SliceSlots::default();
        let keys: Vec<u32> = (0..3_000u32).map(|i| i * 7919 % 0x88_cccc).collect();
        for (n, &k) in keys.iter().enumerate() {
            assert_eq!(slots.get(k), None);
            slots.insert(k, n as u32);
            assert_eq!(slots.get(k), Some(n as u32));
        }
        slots.insert(keys[10], 99);
        assert_eq!(slots.len(), keys.len());
        for (n, &k) in keys.iter().enumerate() {
            assert_eq!(slots.get(k), Some(if n == 10 { 99 } else { n as u32 }));
        }
        assert_eq!(slots.get(0x88_cccd), None);
    }
}
