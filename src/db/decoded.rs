//! Whole slices decoded to 2 bits per position in memory. A long series of probes that
//! walks the successors of a slice (`ver` checks every stored value against them) reads
//! most of the slice's mirror and of the slices its promotions lead to; once a lookup has
//! probed a slice often enough to pay for decoding it ([`worth_decoding`]), an array read
//! replaces finding the position's run in its block. The values are the file's stored
//! (refilled) ones: which positions are removed is still decided by the probe, as before.

use super::error::{DbError, Result};
use super::format::SliceFile;
use crate::budget::{BudgetCache, Bytes};
use crate::value::Value;
use std::sync::Arc;

/// One slice's stored values, four positions per byte (position `i` in bits `2 * (i % 4)`
/// of byte `i / 4`, the layout of the solver's work files).
pub struct DecodedSlice {
    data: Box<[u8]>,
}

impl DecodedSlice {
    /// Decodes every block of `file` (each block's CRC checked as it is read).
    pub fn decode(file: &SliceFile) -> Result<DecodedSlice> {
        let mut data = vec![0u8; file.count.div_ceil(4) as usize].into_boxed_slice();
        file.for_each_run(0, file.count, |first, len, v| {
            fill(&mut data, first, len, v as u8);
            Ok::<(), DbError>(())
        })?;
        Ok(DecodedSlice { data })
    }

    /// `count` positions, all [`Value::Unknown`], to be set one by one ([`DecodedSlice::set`]):
    /// a memo by index. The memory is zeroed lazily by the system, so a large slice of which
    /// a job touches a part costs only that part.
    pub fn unknown(count: u64) -> DecodedSlice {
        DecodedSlice {
            data: vec![0u8; count.div_ceil(4) as usize].into_boxed_slice(),
        }
    }

    #[inline]
    pub fn get(&self, i: u64) -> Value {
        Value::from_bits(self.data[(i / 4) as usize] >> (2 * (i % 4)))
    }

    #[inline]
    pub fn set(&mut self, i: u64, v: Value) {
        set(&mut self.data, i, v as u8);
    }
}

/// Sets positions `first..first + len` to the 2-bit value `bits`: whole bytes at once
/// (runs are long, so most of a slice is written a byte or more at a time).
fn fill(data: &mut [u8], first: u64, len: u64, bits: u8) {
    let (mut i, end) = (first, first + len);
    while i < end && i % 4 != 0 {
        set(data, i, bits);
        i += 1;
    }
    let whole = (end - i) / 4;
    let from = (i / 4) as usize;
    data[from..from + whole as usize].fill(bits * 0x55);
    i += whole * 4;
    while i < end {
        set(data, i, bits);
        i += 1;
    }
}

#[inline]
fn set(data: &mut [u8], i: u64, bits: u8) {
    let shift = 2 * (i % 4);
    let b = &mut data[(i / 4) as usize];
    *b = (*b & !(3 << shift)) | (bits << shift);
}

/// Whether a lookup that has already probed a slice of `count` positions `probes` times
/// outside its decoded slices should decode it: decoding costs about a byte write per four
/// positions and a step per run, a probe a search of its block, some hundred times more.
#[inline]
pub fn worth_decoding(probes: u64, count: u64) -> bool {
    probes >= 64 + count / 256
}

/// The decoded slices shared by a database's lookups, by slice number, within a byte
/// budget.
pub struct DecodedStore {
    cache: BudgetCache<DecodedSlice>,
}

impl Bytes for DecodedSlice {
    fn bytes(&self) -> usize {
        self.data.len()
    }
}

impl DecodedStore {
    /// A store of at most `budget` bytes; 0 decodes nothing (a probe's default: an engine
    /// probing a few positions of many slices gains nothing from it).
    pub fn new(budget: usize) -> DecodedStore {
        DecodedStore {
            cache: BudgetCache::new(budget),
        }
    }

    pub fn budget(&self) -> usize {
        self.cache.budget()
    }

    /// Slice number `id` decoded from `file`, decoding it if no lookup has; `None` when it
    /// does not fit the budget.
    pub fn get(&self, id: u32, file: &SliceFile) -> Result<Option<Arc<DecodedSlice>>> {
        if file.count.div_ceil(4) as usize > self.budget() {
            return Ok(None);
        }
        self.cache
            .get_or_load(id as u64, || DecodedSlice::decode(file))
            .map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_sets_exactly_the_run_at_any_alignment() {
        let mut rng = crate::rng::XorShift::new(7);
        let mut data = vec![0u8; 40];
        let mut want = [0u8; 160];
        for _ in 0..2000 {
            let first = rng.below(160);
            let len = rng.below(161 - first);
            let bits = 1 + rng.below(3) as u8;
            fill(&mut data, first, len, bits);
            want[first as usize..(first + len) as usize].fill(bits);
            for (i, &w) in want.iter().enumerate() {
                assert_eq!(data[i / 4] >> (2 * (i % 4)) & 3, w, "position {i}");
            }
        }
    }

    #[test]
    fn decoding_pays_once_a_slice_is_probed_enough() {
        assert!(!worth_decoding(10, 1000));
        assert!(worth_decoding(64 + 4, 1000));
        assert!(!worth_decoding(1000, 1 << 20));
        assert!(worth_decoding(64 + 4096, 1 << 20));
    }
}
