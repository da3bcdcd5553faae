//! Reading finished slices, for `cap` and `lookup` (the only phases that need them, paper
//! Table 4).
//!
//! Decision: they are read from the finished slices' work files (`solved/<slice>.nwk`), each
//! held whole in memory once loaded and shared by all the jobs of a process ([`SolvedStore`],
//! with a byte budget). The files are exact, need no decoding and take 2 bits a position (a
//! 6-piece slice is at most 8.4 MB), so this is the fastest source while building; the compressed database (issue 4) can implement [`SolvedValues`]
//! and be swapped in without touching the phases.

use super::pool::Load;
use super::store;
use super::{Result, Site, Value};
use crate::board::{MoveList, generate_moves};
use crate::slice::index::SliceIndex;
use crate::solve_err;
use crate::{Move, Position, Slice};
use std::fmt;

use crate::budget::{BudgetCache, Bytes};
use std::sync::Arc;

/// Win/loss/draw counts (Black to move) of one slice or material (`dbstatus counts`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ValueCounts {
    pub positions: u64,
    pub win: u64,
    pub loss: u64,
    pub draw: u64,
}

impl ValueCounts {
    /// Adds the positions of `bytes` (four a byte) whose bits `keep` keeps (`0x55`: all).
    fn tally(&mut self, bytes: &[u8], keep: u8) {
        for &b in bytes {
            let low = b & 0x55 & keep;
            let high = (b >> 1) & 0x55 & keep;
            self.positions += keep.count_ones() as u64;
            self.win += (low & !high).count_ones() as u64;
            self.loss += (high & !low).count_ones() as u64;
            self.draw += (low & high).count_ones() as u64;
        }
    }
}

/// Values of positions in finished slices.
pub trait SolvedValues {
    /// The exact value, Black to move, of `pos`. A position where Black has no piece is a loss.
    fn value(&mut self, pos: &Position) -> Result<Value>;

    /// Finds where `pos`'s value is and asks memory for it, to [`SolvedValues::read`] a little
    /// later: a walk that locates many children before reading any overlaps their round
    /// trips to memory (at 8 pieces, the lower slices are larger than the cache). By default
    /// the value is read at once.
    fn locate(&mut self, pos: &Position) -> Result<Located> {
        self.value(pos).map(Located::Known)
    }

    /// Bytes of the largest slice read so far (0 where nothing is held in memory whole).
    fn largest_bytes(&self) -> usize {
        0
    }

    /// The value [`SolvedValues::locate`] found.
    fn read(&self, at: Located) -> Result<Value> {
        match at {
            Located::Known(v) => Ok(v),
            Located::At { .. } => unreachable!("only work files locate without reading"),
        }
    }
}

/// A finished slice larger than this is read at random from memory, not from the
/// last-level cache (32 MB on the machines measured, shared by the runners): once a job has
/// read one, `cap` batches its captures and `ver` locates its conversions before reading
/// them (8 pieces; a 7-piece job's lower slices are at most 8.4 MB, and batching measured
/// 3-7 % slower there). The environment's `NOWDB_CACHE_BYTES` replaces it (the tests set
/// 0, so that the small slices they build take the batched paths too).
pub const LARGER_THAN_CACHE: usize = 16 << 20;

/// [`LARGER_THAN_CACHE`], or `NOWDB_CACHE_BYTES` when set to a number.
pub fn larger_than_cache() -> usize {
    static BYTES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *BYTES.get_or_init(|| {
        std::env::var("NOWDB_CACHE_BYTES")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(LARGER_THAN_CACHE)
    })
}

/// A value [`SolvedValues::locate`] found: read already, or slice (a job's handle) and index.
#[derive(Clone, Copy, Debug)]
pub enum Located {
    Known(Value),
    At { slice: u32, index: u64 },
}

/// The best value among all the moves of `pos`, with their results looked up in `solved`
/// (see [`best_of`]). Leaves the moves in `moves`.
pub fn best_move_value(
    solved: &mut impl SolvedValues,
    pos: &Position,
    moves: &mut MoveList,
) -> Result<Value> {
    generate_moves(pos, moves);
    best_of(solved, pos, moves.as_slice())
}

/// [`best_of`] for a position whose first move's result `first` was located already
/// ([`SolvedValues::locate`]) and whose other moves are `rest`.
#[inline]
pub fn best_of_located(
    solved: &mut impl SolvedValues,
    pos: &Position,
    first: Located,
    rest: &[Move],
) -> Result<Value> {
    Ok(match solved.read(first)? {
        Value::Loss => Value::Win,
        first => match best_of(solved, pos, rest)? {
            Value::Win => Value::Win,
            _ if first == Value::Draw => Value::Draw,
            rest => rest,
        },
    })
}

/// The best value among `moves` of `pos`, with their results looked up in `solved`,
/// stopping at the first win. Without moves it is a loss.
#[inline]
pub fn best_of(solved: &mut impl SolvedValues, pos: &Position, moves: &[Move]) -> Result<Value> {
    let mut best = Value::Loss;
    for m in moves {
        match solved.value(&pos.successor(m))? {
            Value::Loss => return Ok(Value::Win),
            Value::Draw => best = Value::Draw,
            _ => {}
        }
    }
    Ok(best)
}

use crate::slice::key::{SliceSlots, position_slice_key, slice_key};

/// One finished slice, whole in memory (at most 8.4 MB for 6 pieces, 45 MB for 7).
pub struct SolvedSlice {
    index: SliceIndex,
    data: crate::solve::pool::PagePool,
}

impl SolvedSlice {
    /// Reads `solved/<slice>.nwk` into huge pages, checking its header and length.
    pub fn load(site: &Site, slice: Slice) -> Result<SolvedSlice> {
        Self::load_as(site, slice, Load::Read)
    }

    /// [`SolvedSlice::load`], the file brought in as `how` says.
    pub fn load_as(site: &Site, slice: Slice, how: Load) -> Result<SolvedSlice> {
        let path = site.solved_file(&slice);
        if !path.exists() && site.values_released(&slice) {
            return Err(solve_err!(
                "lower slice {slice}: {} was removed by --release-solved; its values are read \
                 from db/ (the site's jobs do so while work/release-solved exists)",
                path.display()
            ));
        }
        if !path.exists() {
            return Err(solve_err!(
                "missing lower slice {slice}: {} does not exist (solve it first)",
                path.display()
            ));
        }
        let index = SliceIndex::new(slice);
        let data = store::read_values(&path, &slice, index.count(), how)?;
        Ok(SolvedSlice { index, data })
    }

    /// The slice's index (position <-> index).
    pub fn index(&self) -> &SliceIndex {
        &self.index
    }

    #[inline]
    pub fn get(&self, i: u64) -> Value {
        Value::from_bits(self.data[(i / 4) as usize] >> (2 * (i % 4)))
    }

    /// Starts fetching position `i`'s value from memory, for a [`SolvedSlice::get`] soon.
    #[inline(always)]
    pub fn prefetch(&self, i: u64) {
        crate::db::cache::prefetch_line(self.data.as_ptr().wrapping_add((i / 4) as usize));
    }

    /// Bytes the values take in memory.
    pub fn bytes(&self) -> usize {
        self.data.len()
    }

    /// How many positions hold each value.
    pub fn counts(&self) -> ValueCounts {
        let count = self.index.count();
        let full = (count / 4) as usize;
        let mut c = ValueCounts::default();
        c.tally(&self.data[..full], 0x55);
        if !count.is_multiple_of(4) {
            let keep = (((1u16 << (2 * (count % 4))) - 1) as u8) & 0x55;
            c.tally(&self.data[full..=full], keep);
        }
        c
    }

    /// [`SolvedSlice::counts`] of a fixed sample, the same every time: 64 bytes (256
    /// positions) of every 4 KiB, or every byte of a slice under 256 KiB: a 64th of a large
    /// slice's values, for a choice each job of it makes again.
    pub fn sampled_counts(&self) -> ValueCounts {
        const EVERY: usize = 4096;
        const TAKE: usize = 64;
        if self.data.len() < 64 * EVERY {
            return self.counts();
        }
        let full = (self.index.count() / 4) as usize;
        let mut c = ValueCounts::default();
        for at in (0..full.saturating_sub(TAKE)).step_by(EVERY) {
            c.tally(&self.data[at..at + TAKE], 0x55);
        }
        c
    }
}

/// Finished slices shared by every job of a process, loaded on first use; beyond the byte
/// budget the least recently loaded-or-asked-for slice is dropped (jobs holding it keep it).
pub struct SolvedStore {
    site: Site,
    slices: BudgetCache<SolvedSlice>,
    /// How the slices' files come into memory ([`Load`]).
    how: Load,
}

impl Bytes for SolvedSlice {
    fn bytes(&self) -> usize {
        self.data.len()
    }
}

impl fmt::Debug for SolvedStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "SolvedStore({}, {} bytes)",
            self.site.root().display(),
            self.slices.budget()
        )
    }
}

impl SolvedStore {
    /// Bytes of finished slices a process holds at once, when nothing says otherwise.
    pub const BUDGET: usize = 1 << 30;

    /// A store whose slices are read into huge pages, for jobs that read them at random
    /// through (most do).
    pub fn new(site: &Site, budget_bytes: usize) -> Arc<SolvedStore> {
        Self::with_load(site, budget_bytes, Load::Read)
    }

    /// A store whose slices come in as `how` says ([`Load::Map`] for a job that reads a
    /// few of their positions).
    pub fn with_load(site: &Site, budget_bytes: usize, how: Load) -> Arc<SolvedStore> {
        Arc::new(SolvedStore {
            site: site.clone(),
            slices: BudgetCache::new(budget_bytes),
            how,
        })
    }

    /// The finished slice, loading it if needed.
    pub fn get(&self, slice: Slice) -> Result<Arc<SolvedSlice>> {
        self.slices.get_or_load(slice_key(&slice), || {
            SolvedSlice::load_as(&self.site, slice, self.how)
        })
    }
}

/// A job's view of the finished slices: the shared store plus its own handles, so a lookup
/// takes no lock.
pub struct SolvedWorkFiles {
    store: Arc<SolvedStore>,
    /// [`position_slice_key`] -> the job's handle: a place in `slices`.
    mine: SliceSlots,
    slices: Vec<Arc<SolvedSlice>>,
    /// Bytes of the largest of `slices`.
    largest: usize,
    /// The men cache ([`MenSlot`]), a slot per hash of the men.
    men: Box<[MenSlot; MEN_SLOTS]>,
}

/// Slots of [`SolvedWorkFiles`]' men cache (a power of two).
const MEN_SLOTS: usize = 64;

/// One entry of the men cache: positions with these men and king counts lie in the slice
/// `handle`, and the men's part of their index there is `part`
/// ([`SliceIndex::men_part`]). Neighbours in a walk differ mostly in their kings, and so do
/// the children of their conversions and captures: the slice lookup and most of the index
/// are done once for all of them.
#[derive(Clone, Copy)]
struct MenSlot {
    /// Black men (low 32 bits) and white men (high); `u64::MAX`: empty.
    men: u64,
    /// Black's king count, and White's times 256.
    kings: u32,
    handle: u32,
    part: (u64, u32),
}

const NO_MEN: MenSlot = MenSlot {
    men: u64::MAX,
    kings: 0,
    handle: 0,
    part: (0, 0),
};

impl SolvedWorkFiles {
    pub fn new(store: Arc<SolvedStore>) -> SolvedWorkFiles {
        SolvedWorkFiles {
            store,
            mine: SliceSlots::default(),
            slices: Vec::new(),
            largest: 0,
            men: Box::new([NO_MEN; MEN_SLOTS]),
        }
    }

    #[cold]
    fn open(&mut self, pos: &Position) -> Result<u32> {
        let slice = Slice::of(pos);
        let s = self.store.get(slice)?;
        self.largest = self.largest.max(s.bytes());
        self.slices.push(s);
        let handle = (self.slices.len() - 1) as u32;
        self.mine.insert(position_slice_key(pos), handle);
        Ok(handle)
    }

    /// The job's handle of `pos`'s slice, and `pos`'s index in it: from the men cache when
    /// a position with the same men and king counts was found last in its slot.
    /// The hit is inlined into the callers' loops, the miss (one find in eight in `ver`) is
    /// a call.
    #[inline(always)]
    fn find(&mut self, pos: &Position) -> Result<(u32, u64)> {
        let men = pos.black_men() as u64 | (pos.white_men() as u64) << 32;
        let kings = pos.black_kings().count_ones() | pos.white_kings().count_ones() << 8;
        let at = (men.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - MEN_SLOTS.ilog2())) as usize;
        let slot = self.men[at];
        if slot.men == men && slot.kings == kings {
            let ix = &self.slices[slot.handle as usize].index;
            let i = ix.index_from_men_part(slot.part, pos);
            debug_assert_eq!(i, ix.index(pos));
            return Ok((slot.handle, i));
        }
        self.find_missed(pos, at, men, kings)
    }

    /// [`SolvedWorkFiles::find`] when slot `at` holds other men: the slice by its key (opened
    /// the first time), the men's part ranked and kept in the slot.
    #[inline(never)]
    fn find_missed(
        &mut self,
        pos: &Position,
        at: usize,
        men: u64,
        kings: u32,
    ) -> Result<(u32, u64)> {
        let handle = match self.mine.get(position_slice_key(pos)) {
            Some(h) => h,
            None => self.open(pos)?,
        };
        let ix = &self.slices[handle as usize].index;
        let part = ix.men_part(ix.black_men_base(pos.black_men()), pos);
        self.men[at] = MenSlot {
            men,
            kings,
            handle,
            part,
        };
        Ok((handle, ix.index_from_men_part(part, pos)))
    }

    /// The value at `i` of the slice `handle`; an unknown one is an error. Inlined, with its
    /// message out of line: the call cost 0.5 % of `ver 2301.-6` (callgrind).
    #[inline(always)]
    fn get(&self, handle: u32, i: u64) -> Result<Value> {
        match self.slices[handle as usize].get(i) {
            Value::Unknown => Err(self.unknown(handle, i)),
            v => Ok(v),
        }
    }

    #[cold]
    fn unknown(&self, handle: u32, i: u64) -> crate::error::Error {
        let slice = self.slices[handle as usize].index.slice();
        solve_err!(
            "{}: finished slice {slice} holds an unknown value at index {i}",
            self.store.site.solved_file(&slice).display(),
        )
    }
}

impl SolvedValues for SolvedWorkFiles {
    #[inline(always)]
    fn value(&mut self, pos: &Position) -> Result<Value> {
        if pos.black == 0 {
            return Ok(Value::Loss);
        }
        let (handle, i) = self.find(pos)?;
        self.get(handle, i)
    }

    fn largest_bytes(&self) -> usize {
        self.largest
    }

    #[inline]
    fn locate(&mut self, pos: &Position) -> Result<Located> {
        if pos.black == 0 {
            return Ok(Located::Known(Value::Loss));
        }
        let (slice, index) = self.find(pos)?;
        self.slices[slice as usize].prefetch(index);
        Ok(Located::At { slice, index })
    }

    #[inline]
    fn read(&self, at: Located) -> Result<Value> {
        match at {
            Located::Known(v) => Ok(v),
            Located::At { slice, index } => self.get(slice, index),
        }
    }
}

/// The database as the solver's source of lower slices (`--lower-from-db`).
impl SolvedValues for crate::db::probe::DbLookup {
    #[inline]
    fn value(&mut self, pos: &Position) -> Result<Value> {
        Ok(self.probe(pos)?)
    }
}

/// Where a job reads the finished slices its conversions lead to.
pub enum LowerSlices {
    WorkFiles(SolvedWorkFiles),
    Database(crate::db::probe::DbLookup),
}

impl SolvedValues for LowerSlices {
    #[inline]
    fn value(&mut self, pos: &Position) -> Result<Value> {
        match self {
            LowerSlices::WorkFiles(w) => w.value(pos),
            LowerSlices::Database(d) => d.value(pos),
        }
    }

    #[inline]
    fn locate(&mut self, pos: &Position) -> Result<Located> {
        match self {
            LowerSlices::WorkFiles(w) => w.locate(pos),
            LowerSlices::Database(d) => d.locate(pos),
        }
    }

    fn largest_bytes(&self) -> usize {
        match self {
            LowerSlices::WorkFiles(w) => w.largest_bytes(),
            LowerSlices::Database(_) => 0,
        }
    }

    #[inline]
    fn read(&self, at: Located) -> Result<Value> {
        match self {
            LowerSlices::WorkFiles(w) => w.read(at),
            LowerSlices::Database(d) => d.read(at),
        }
    }
}
