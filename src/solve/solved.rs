//! Reading finished slices, for `cap` and `lookup` (the only phases that need them, paper
//! Table 4).
//!
//! Decision: they are read from the finished slices' work files (`solved/<slice>.nwk`), through
//! the same page cache as the slice being solved. The files are exact, need no decoding and
//! are at most 2 bits a position (a 6-piece slice is at most 8.4 MB), so this is the fastest
//! source while building; the compressed database (issue 4) can implement [`SolvedValues`]
//! and be swapped in without touching the phases.

use super::store::PageCache;
use super::{Result, Site, Value};
use crate::index::SliceIndex;
use crate::solve_err;
use crate::{Position, Slice};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Values of positions in finished slices.
pub trait SolvedValues {
    /// The exact value, Black to move, of `pos`. A position where Black has no piece is a loss.
    fn value(&mut self, pos: &Position) -> Result<Value>;
}

/// A multiply-shift hasher for the small integer keys of slice lookups (SipHash would cost
/// more than the lookup it guards).
#[derive(Default)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0 ^ v)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(29);
    }
}

pub type KeyMap<V> = HashMap<u64, V, BuildHasherDefault<KeyHasher>>;

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

struct Opened {
    index: SliceIndex,
    cache: PageCache,
}

/// Finished slices read from their work files under `solved/`, opened on first use.
pub struct SolvedWorkFiles {
    site: Site,
    buffers_per_slice: usize,
    opened: Vec<Opened>,
    by_key: KeyMap<usize>,
}

impl SolvedWorkFiles {
    pub fn new(site: &Site, buffers_per_slice: usize) -> SolvedWorkFiles {
        SolvedWorkFiles {
            site: site.clone(),
            buffers_per_slice,
            opened: Vec::new(),
            by_key: KeyMap::default(),
        }
    }

    #[cold]
    fn open(&mut self, slice: Slice) -> Result<usize> {
        let path = self.site.solved_file(&slice);
        if !path.exists() {
            return Err(solve_err!(
                "missing lower slice {slice}: {} does not exist (solve it first)",
                path.display()
            ));
        }
        let index = SliceIndex::new(slice);
        let cache = PageCache::open_read(&path, &slice, index.count(), self.buffers_per_slice)?;
        self.opened.push(Opened { index, cache });
        self.by_key.insert(slice_key(&slice), self.opened.len() - 1);
        Ok(self.opened.len() - 1)
    }

    /// Pages read from disk so far.
    pub fn page_reads(&self) -> u64 {
        self.opened.iter().map(|o| o.cache.reads).sum()
    }
}

impl SolvedValues for SolvedWorkFiles {
    #[inline]
    fn value(&mut self, pos: &Position) -> Result<Value> {
        if pos.black == 0 {
            return Ok(Value::Loss);
        }
        let slice = Slice::of(pos);
        let h = match self.by_key.get(&slice_key(&slice)) {
            Some(&h) => h,
            None => self.open(slice)?,
        };
        let o = &mut self.opened[h];
        let v = o.cache.get(o.index.index(pos))?;
        if v == Value::Unknown {
            return Err(solve_err!(
                "{}: finished slice {slice} holds an unknown value at index {}",
                o.cache.path().display(),
                o.index.index(pos)
            ));
        }
        Ok(v)
    }
}
