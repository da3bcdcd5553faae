//! The probe library: the value of any position of the built slices, for either side to
//! move, in a fraction of a microsecond when the block is cached.

use super::cache::{BlockCache, SlotHint};
use super::container::Block;
use super::decoded::{DecodedSlice, DecodedStore, worth_decoding};
use super::error::{DbError, Result};
use super::format::SliceFile;
use super::removed::{Kind, removed_threat_children};
use crate::board::{MoveList, generate_moves, has_capture, white_has_capture};
use crate::notation::Setup;
use crate::slice::Slice;
use crate::slice::index::SliceIndex;
use crate::value::Value;
use crate::{Color, Position};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// The first line of `db/VERSION`.
pub const VERSION_LINE: &str = "nowdb-db 4";
const _: () = assert!(
    super::format::VERSION == 4,
    "VERSION_LINE names the format version"
);

/// A slice file opened for probing.
pub struct OpenSlice {
    pub file: SliceFile,
    pub index: SliceIndex,
    /// The slice's number in the block cache's keys.
    id: u32,
    /// Per block: where the cache last put it.
    hints: Box<[SlotHint]>,
}

/// Counts of each kind of piece (0..=12) and leading ranks (0..=6, or none): every slice
/// has a place in [`SliceTable`] without hashing.
const MATERIALS: usize = 13 * 13 * 13 * 13;
const RANK_PAIRS: usize = 8 * 8;

/// The opened slices, found by arithmetic and without a lock: a probe only reads (slices
/// are opened once, on first use, and stay open).
pub(super) struct SliceTable<T = OpenSlice> {
    materials: Box<[OnceLock<RankRow<T>>]>,
}

/// The slices of one material, by leading ranks.
type RankRow<T> = Box<[OnceLock<Box<T>>]>;

impl<T> SliceTable<T> {
    pub(super) fn new() -> SliceTable<T> {
        SliceTable {
            materials: (0..MATERIALS).map(|_| OnceLock::new()).collect(),
        }
    }

    /// The memory of the table itself (its rows of ranks where a slice was opened).
    pub(super) fn table_bytes(&self) -> usize {
        MATERIALS * std::mem::size_of::<OnceLock<RankRow<T>>>()
            + self.materials.iter().filter(|m| m.get().is_some()).count()
                * RANK_PAIRS
                * std::mem::size_of::<OnceLock<Box<T>>>()
    }

    /// Everything opened so far.
    pub(super) fn all(&self) -> Vec<&T> {
        self.materials
            .iter()
            .filter_map(|m| m.get())
            .flat_map(|row| row.iter().filter_map(|s| s.get().map(|b| &**b)))
            .collect()
    }

    #[inline]
    pub(super) fn slot(&self, s: &Slice) -> &OnceLock<Box<T>> {
        let m = s.material;
        let material =
            ((m.bk as usize * 13 + m.wk as usize) * 13 + m.bm as usize) * 13 + m.wm as usize;
        let rank = |r: Option<u8>| r.map_or(7, |r| r as usize);
        let row = self.materials[material]
            .get_or_init(|| (0..RANK_PAIRS).map(|_| OnceLock::new()).collect());
        &row[rank(s.rb) * 8 + rank(s.rw)]
    }
}

/// Where a lookup may take the blocks it needs from.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Fetch {
    /// The cache, or the disk (then cached).
    Load,
    /// Only the cache and the slices already open: an engine's conditional lookup, which
    /// must not wait on the disk. A lookup that needs more fails with
    /// [`DbError::NotInCache`].
    CachedOnly,
}

/// Empty cache hints for a file of `blocks` blocks.
pub(super) fn hints(blocks: usize) -> Box<[SlotHint]> {
    (0..blocks).map(|_| SlotHint::default()).collect()
}

/// A compressed database directory (`<site>/db`), safe to share between threads.
pub struct Database {
    pub(super) dir: PathBuf,
    open: SliceTable,
    /// Every slice the database will use is open ([`Database::open_slices`]): a slice not
    /// open is not there, and the directory is not looked at again.
    all_open: bool,
    /// Numbers the opened slices for the block cache's keys.
    next_id: std::sync::atomic::AtomicU32,
    cache: BlockCache,
    /// The compressed moves-to-conversion files opened so far ([`Database::probe_mtc`]).
    /// (Made on first use: a database probed for values only does not pay for the table.)
    pub(super) mtc: OnceLock<SliceTable<super::mtc::OpenMtc>>,
    /// Whole slices decoded for lookups that probe them often ([`Database::decoding`]).
    decoded: DecodedStore,
}

/// What a long series of probes (`ver`) remembers: the values of capture positions and
/// removed threats already searched (the 2009 note: the same capture position is the
/// successor of many positions),
/// the last run decoded in each slice (successors of consecutive positions lie close
/// together in their slices), and the slices decoded whole.
///
/// The capture memo is direct-mapped: a position has one slot, and a newer one overwrites
/// it. Successors of nearby positions repeat within a short stretch, so a table that fits
/// the processor's cache keeps most of what a large one would, without the cache miss of
/// every lookup in a large one (a 1 M-entry hash map made `ver` 1.5 times slower than 64 K
/// slots).
pub struct CaptureCache {
    memo: Box<[MemoSlot]>,
    pub hits: u64,
    /// By slice number: `(first, end, value)` of the last run decoded there.
    runs: Vec<(u64, u64, Value)>,
    /// By slice number: the slice decoded whole, or how often it was probed without.
    decoded: Vec<Decoded>,
}

/// A capture position and its value; `black == 0` marks an empty slot (Black, to move,
/// always has a piece in a capture position).
#[derive(Clone, Copy, Default)]
struct MemoSlot {
    black: u32,
    white: u32,
    kings: u32,
    value: u8,
}

impl MemoSlot {
    #[inline]
    fn holds(&self, pos: &Position) -> bool {
        self.black == pos.black && self.white == pos.white && self.kings == pos.kings
    }
}

#[derive(Default)]
struct Decoded {
    slice: Option<Arc<DecodedSlice>>,
    probes: u64,
    /// Too large for the database's budget: never asked for again.
    refused: bool,
}

/// The capture memo's slots for a long series of probes: 256 KiB, within a core's L2 cache
/// (16 K slots verified 2..6 `ver` ranges faster than 4 K or 64 K).
pub const MEMO_SLOTS: usize = 1 << 14;

impl CaptureCache {
    /// A memo of about `slots` capture positions (a power of two, at least 1,024).
    pub fn new(slots: usize) -> CaptureCache {
        CaptureCache {
            memo: vec![MemoSlot::default(); slots.max(1024).next_power_of_two()].into_boxed_slice(),
            hits: 0,
            runs: Vec::new(),
            decoded: Vec::new(),
        }
    }

    /// The remembered value of the searched position `pos`, if its slot holds it.
    #[inline]
    fn remembered(&mut self, pos: &Position) -> Option<Value> {
        let slot = &self.memo[self.slot(pos)];
        if !slot.holds(pos) {
            return None;
        }
        self.hits += 1;
        Some(Value::from_bits(slot.value))
    }

    /// Remembers the value of the searched position `pos` in its slot.
    #[inline]
    fn remember(&mut self, pos: &Position, v: Value) {
        let k = self.slot(pos);
        self.memo[k] = MemoSlot {
            black: pos.black,
            white: pos.white,
            kings: pos.kings,
            value: v as u8,
        };
    }

    /// The slot of `pos`: a multiplicative hash of its three bitboards.
    #[inline]
    fn slot(&self, pos: &Position) -> usize {
        let k = ((pos.black as u64) << 32 | pos.white as u64)
            ^ (pos.kings as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let h = k.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        (h >> (64 - self.memo.len().trailing_zeros())) as usize
    }
}

/// The database file of a slice.
pub fn slice_path(dir: &Path, slice: &Slice) -> PathBuf {
    dir.join(format!("{slice}.ndb"))
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Database({})", self.dir.display())
    }
}

impl Database {
    /// Opens the database in `dir` with a block cache of about `cache_bytes`.
    pub fn open(dir: &Path, cache_bytes: usize) -> Result<Database> {
        let version_file = dir.join("VERSION");
        let version = std::fs::read_to_string(&version_file).map_err(|e| {
            if !dir.is_dir() {
                DbError::Missing(format!(
                    "database directory {} does not exist",
                    dir.display()
                ))
            } else {
                DbError::Missing(format!(
                    "{} is not a nowdb database: {}: {e}",
                    dir.display(),
                    version_file.display()
                ))
            }
        })?;
        let line = version.lines().next().unwrap_or("").trim();
        if line != VERSION_LINE {
            return Err(DbError::format(
                &version_file,
                format!("database version \"{line}\"; this nowdb reads \"{VERSION_LINE}\""),
            ));
        }
        Ok(Database {
            dir: dir.to_path_buf(),
            open: SliceTable::new(),
            all_open: false,
            next_id: Default::default(),
            cache: BlockCache::new(cache_bytes),
            mtc: OnceLock::new(),
            decoded: DecodedStore::new(0),
        })
    }

    /// The same database, its lookups ([`Database::probe_cached`]) decoding whole slices
    /// they probe often into memory, within `budget` bytes: for walks over many positions
    /// (`ver`), not for an engine's scattered probes.
    pub fn decoding(mut self, budget: usize) -> Database {
        self.decoded = DecodedStore::new(budget);
        self
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The opened slice `s` decoded whole, shared with the lookups' decoded slices; `None`
    /// when this database does not decode ([`Database::decoding`]) or `s` exceeds its budget.
    pub fn decoded(&self, s: &OpenSlice) -> Result<Option<Arc<DecodedSlice>>> {
        if self.decoded.budget() == 0 {
            return Ok(None);
        }
        self.decoded.get(s.id, &s.file)
    }

    /// The bytes of whole slices this database may hold decoded (0: it does not decode).
    pub fn decoding_budget(&self) -> usize {
        self.decoded.budget()
    }

    /// Blocks read from disk so far.
    pub fn blocks_read(&self) -> u64 {
        self.cache.misses()
    }

    /// The opened slice (opened on first use).
    #[inline]
    pub fn slice(&self, slice: &Slice) -> Result<&OpenSlice> {
        self.slice_from(slice, Fetch::Load)
    }

    #[inline]
    fn slice_from(&self, slice: &Slice, fetch: Fetch) -> Result<&OpenSlice> {
        let slot = self.open.slot(slice);
        match slot.get() {
            Some(s) => Ok(s),
            None if self.all_open => Err(self.not_opened(slice)),
            None if fetch == Fetch::CachedOnly => Err(DbError::NotInCache),
            None => self.open_slice(slot, slice),
        }
    }

    /// Opens every slice of the directory with at most `max_pieces` pieces, and no other
    /// from then on (a position of another slice is [`DbError::Position`] or
    /// [`DbError::Missing`] without a look at the disk); the number opened. An engine's
    /// driver opens all at once, so that a damaged header shows at once and conditional
    /// lookups find every slice open.
    pub fn open_slices(&mut self, max_pieces: u32) -> Result<usize> {
        let mut n = 0;
        for s in list_slices(&self.dir)? {
            if s.pieces() <= max_pieces {
                self.slice(&s)?;
                n += 1;
            }
        }
        self.all_open = true;
        Ok(n)
    }

    /// Why `slice` is not open once [`Database::open_slices`] has opened all.
    #[cold]
    fn not_opened(&self, slice: &Slice) -> DbError {
        let most = self
            .open_slices_list()
            .iter()
            .map(|s| s.file.slice.pieces())
            .max();
        if most.is_none_or(|m| slice.pieces() > m) {
            DbError::Position(format!(
                "the position has {} pieces; the database opened in {} holds at most {}",
                slice.pieces(),
                self.dir.display(),
                most.unwrap_or(0)
            ))
        } else {
            DbError::Missing(format!("slice {slice} is not in {}", self.dir.display()))
        }
    }

    /// The slices open so far.
    pub fn open_slices_list(&self) -> Vec<&OpenSlice> {
        self.open.all()
    }

    /// The memory the open slices take beside the block cache (headers, block indexes,
    /// the cache's hints, the table that finds them, and the index and decoding tables all
    /// slices share), in bytes.
    pub fn index_bytes(&self) -> usize {
        let table = self.open.table_bytes();
        let slices: usize = self
            .open_slices_list()
            .iter()
            .map(|s| {
                std::mem::size_of::<OpenSlice>()
                    + s.file.memory_bytes()
                    + s.hints.len() * std::mem::size_of::<SlotHint>()
            })
            .sum();
        table
            + slices
            + self.mtc_index_bytes()
            + crate::slice::index::shared_table_bytes()
            + super::format::decoder_bytes()
    }

    /// Replaces the block cache by an empty one of about `bytes` (before the database is
    /// shared: an engine's driver sizes it once the slices' own memory is known).
    pub fn set_cache_bytes(&mut self, bytes: usize) {
        self.cache = BlockCache::new(bytes);
    }

    /// The most memory the block cache takes, in bytes.
    pub fn cache_bytes(&self) -> usize {
        self.cache.capacity_bytes()
    }

    /// Probes answered from cached blocks so far.
    pub fn blocks_hit(&self) -> u64 {
        self.cache.hits()
    }

    /// Reads every block of every open slice from the disk, checking its CRC (the headers'
    /// were checked when they were opened); `each` hears every slice's outcome. The number
    /// of slices found damaged.
    pub fn verify_open(&self, mut each: impl FnMut(&Slice, &Result<()>)) -> usize {
        let mut bad = 0;
        for s in self.open_slices_list() {
            let r = (0..s.file.blocks()).try_for_each(|b| s.file.read_block(b).map(|_| ()));
            bad += usize::from(r.is_err());
            each(&s.file.slice, &r);
        }
        bad
    }

    #[cold]
    fn open_slice<'a>(
        &self,
        slot: &'a OnceLock<Box<OpenSlice>>,
        slice: &Slice,
    ) -> Result<&'a OpenSlice> {
        let path = slice_path(&self.dir, slice);
        if !path.exists() {
            let most = list_slices(&self.dir)?
                .iter()
                .map(|s| s.pieces())
                .max()
                .unwrap_or(0);
            return Err(if slice.pieces() > most {
                DbError::Position(format!(
                    "the position has {} pieces; the database in {} holds at most {most}",
                    slice.pieces(),
                    self.dir.display()
                ))
            } else {
                DbError::Missing(format!(
                    "missing slice {slice}: {} does not exist",
                    path.display()
                ))
            });
        }
        let file = SliceFile::open(&path, slice)?;
        // Threads opening the same slice at once: one wins, the others' copies are dropped.
        Ok(slot.get_or_init(|| {
            Box::new(OpenSlice {
                hints: hints(file.blocks()),
                file,
                index: SliceIndex::new(*slice),
                id: self.file_id(),
            })
        }))
    }

    /// A new number for an opened file in the block cache's keys.
    pub(super) fn file_id(&self) -> u32 {
        self.next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }

    /// `f` of block `b` of an opened slice, read through the cache.
    #[inline]
    pub fn with_block<R>(
        &self,
        s: &OpenSlice,
        b: usize,
        f: impl FnOnce(&Block) -> Result<R>,
    ) -> Result<R> {
        self.with_block_from(s, b, Fetch::Load, f)
    }

    #[inline(always)]
    fn with_block_from<R>(
        &self,
        s: &OpenSlice,
        b: usize,
        fetch: Fetch,
        f: impl FnOnce(&Block) -> Result<R>,
    ) -> Result<R> {
        self.cached_block(s.id, &s.hints[b], b, fetch, || s.file.read_block(b), f)
    }

    /// `f` of block `b` of the file numbered `id` (whose block `b` the cache remembers in
    /// `hint`), from where `fetch` allows; `read` reads it from disk.
    #[inline(always)]
    pub(super) fn cached_block<R>(
        &self,
        id: u32,
        hint: &SlotHint,
        b: usize,
        fetch: Fetch,
        read: impl FnOnce() -> Result<Box<Block>>,
        f: impl FnOnce(&Block) -> Result<R>,
    ) -> Result<R> {
        let key = (id as u64) << 32 | b as u64;
        match fetch {
            Fetch::Load => self.cache.with_block(key, hint, read, f),
            Fetch::CachedOnly => self
                .cache
                .with_cached_block(key, hint, f)
                .unwrap_or(Err(DbError::NotInCache)),
        }
    }

    /// The stored (refilled) value of position `i` of an opened slice.
    #[inline]
    pub fn stored_at(&self, s: &OpenSlice, i: u64) -> Result<Value> {
        Ok(self.stored_run(s, i, Fetch::Load)?.0)
    }

    /// [`Database::stored_at`], and the positions around `i` in the same run.
    #[inline(always)]
    fn stored_run(&self, s: &OpenSlice, i: u64, fetch: Fetch) -> Result<(Value, u64, u64)> {
        let b = s.file.block_of(i);
        self.with_block_from(s, b, fetch, |block| s.file.run_in_block(block, b, i))
    }

    /// The value of `setup` for its side to move.
    pub fn probe_setup(&self, setup: &Setup) -> Result<Value> {
        self.probe(&setup.black_to_move())
    }

    /// The value of `pos` (Black to move; reverse a White-to-move board first, as
    /// [`Setup::black_to_move`] does). Removed positions are searched.
    pub fn probe(&self, pos: &Position) -> Result<Value> {
        self.value(pos, None, Fetch::Load)
    }

    /// Like [`Database::probe`], taking blocks only from where `fetch` allows: with
    /// [`Fetch::CachedOnly`], [`DbError::NotInCache`] when a block it needs is not cached.
    pub fn probe_from(&self, pos: &Position, fetch: Fetch) -> Result<Value> {
        self.value(pos, None, fetch)
    }

    /// Like [`Database::probe`], remembering the values of capture positions in `cache`.
    pub fn probe_cached(&self, pos: &Position, cache: &mut CaptureCache) -> Result<Value> {
        self.value(pos, Some(cache), Fetch::Load)
    }

    #[inline(always)]
    fn value(
        &self,
        pos: &Position,
        cache: Option<&mut CaptureCache>,
        fetch: Fetch,
    ) -> Result<Value> {
        if has_capture(pos) {
            return self.capture_value(pos, cache, fetch);
        }
        self.quiet_value(pos, cache, fetch)
    }

    /// The value of a position whose side to move has no capture.
    #[inline(always)]
    fn quiet_value(
        &self,
        pos: &Position,
        cache: Option<&mut CaptureCache>,
        fetch: Fetch,
    ) -> Result<Value> {
        if pos.black == 0 {
            return Ok(Value::Loss);
        }
        if pos.white == 0 {
            return Ok(Value::Win);
        }
        let s = self.slice_from(&Slice::of(pos), fetch)?;
        // Most positions are stored, and so are all threats of a slice that keeps them:
        // answer them without building a move list.
        if !white_has_capture(pos) || !s.file.removal.removes(Kind::Threat) {
            return self.stored(s, pos, cache, fetch);
        }
        // A removed threat is searched like a capture position, and remembered with them.
        let mut cache = cache;
        if let Some(v) = cache.as_deref_mut().and_then(|c| c.remembered(pos)) {
            return Ok(v);
        }
        let mut moves = MoveList::new();
        match removed_threat_children(pos, &mut moves) {
            Some(captures) => {
                let v = self.best_move(pos, &moves, captures, cache.as_deref_mut(), fetch)?;
                if let Some(c) = cache {
                    c.remember(pos, v);
                }
                Ok(v)
            }
            None => self.stored(s, pos, cache, fetch),
        }
    }

    /// The best capture's value, remembered in `cache` if given.
    fn capture_value(
        &self,
        pos: &Position,
        mut cache: Option<&mut CaptureCache>,
        fetch: Fetch,
    ) -> Result<Value> {
        if let Some(v) = cache.as_deref_mut().and_then(|c| c.remembered(pos)) {
            return Ok(v);
        }
        let mut moves = MoveList::new();
        generate_moves(pos, &mut moves);
        let captures = moves
            .iter()
            .enumerate()
            .filter(|(_, m)| white_has_capture(&pos.play(m)))
            .fold(0u128, |mask, (k, _)| mask | 1 << k);
        let v = self.best_move(pos, &moves, captures, cache.as_deref_mut(), fetch)?;
        if let Some(c) = cache {
            c.remember(pos, v);
        }
        Ok(v)
    }

    /// The value of a stored position of the opened slice `s`, through the memo's last run
    /// of the slice if any.
    #[inline]
    fn stored(
        &self,
        s: &OpenSlice,
        pos: &Position,
        cache: Option<&mut CaptureCache>,
        fetch: Fetch,
    ) -> Result<Value> {
        let i = s.index.index(pos);
        let Some(c) = cache else {
            return Ok(self.stored_run(s, i, fetch)?.0);
        };
        let id = s.id as usize;
        if let Some(d) = c.decoded.get(id).and_then(|d| d.slice.as_deref()) {
            return Ok(d.get(i));
        }
        if let Some(&(first, end, v)) = c.runs.get(id)
            && (first..end).contains(&i)
        {
            return Ok(v);
        }
        if self.decoded.budget() > 0
            && let Some(d) = self.decode_if_worth(s, c)?
        {
            return Ok(d.get(i));
        }
        let (v, first, end) = self.stored_run(s, i, fetch)?;
        if c.runs.len() <= id {
            c.runs.resize(id + 1, (0, 0, Value::Unknown));
        }
        c.runs[id] = (first, end, v);
        Ok(v)
    }

    /// The opened slice `s` decoded whole for the lookup memo `c`, once `c` has probed it
    /// often enough (and the database's budget holds it).
    fn decode_if_worth<'c>(
        &self,
        s: &OpenSlice,
        c: &'c mut CaptureCache,
    ) -> Result<Option<&'c DecodedSlice>> {
        let id = s.id as usize;
        if c.decoded.len() <= id {
            c.decoded.resize_with(id + 1, Decoded::default);
        }
        let d = &mut c.decoded[id];
        d.probes += 1;
        if d.refused || !worth_decoding(d.probes, s.file.count) {
            return Ok(None);
        }
        d.slice = self.decoded.get(s.id, &s.file)?;
        d.refused = d.slice.is_none();
        Ok(d.slice.as_deref())
    }

    /// The best value over `moves`, where bit `k` of `captures` says whether the opponent
    /// must capture after move `k`. Successors without a capture (one decode each) come
    /// first: a winning one among them saves the capture searches of the others.
    fn best_move(
        &self,
        pos: &Position,
        moves: &MoveList,
        captures: u128,
        mut cache: Option<&mut CaptureCache>,
        fetch: Fetch,
    ) -> Result<Value> {
        let mut best = Value::Loss;
        for capturing in [false, true] {
            for (k, m) in moves.iter().enumerate() {
                if (captures >> k & 1 != 0) != capturing {
                    continue;
                }
                let child = pos.successor(m);
                let v = if capturing {
                    self.capture_value(&child, cache.as_deref_mut(), fetch)?
                } else {
                    self.quiet_value(&child, cache.as_deref_mut(), fetch)?
                };
                match v {
                    Value::Loss => return Ok(Value::Win),
                    Value::Draw => best = Value::Draw,
                    _ => {}
                }
            }
        }
        Ok(best)
    }

    /// The value of every legal move of `setup` for the side that plays it, in
    /// generation order (what `dbprobe` prints).
    pub fn move_values(&self, setup: &Setup) -> Result<Vec<(crate::Move, Value)>> {
        let pos = setup.black_to_move();
        let mut moves = MoveList::new();
        generate_moves(&pos, &mut moves);
        moves
            .iter()
            .map(|m| Ok((*m, self.probe(&pos.successor(m))?.for_mover())))
            .collect()
    }
}

/// The slices in a database directory, sorted.
pub fn list_slices(dir: &Path) -> Result<Vec<Slice>> {
    let mut slices = crate::slice::key::slice_files(dir, "ndb")
        .map_err(|e| DbError::Directory(e.to_string()))?;
    slices.sort();
    Ok(slices)
}

/// The colour whose turn it is in `setup`, as a word.
pub fn side_name(c: Color) -> &'static str {
    match c {
        Color::Black => "black",
        Color::White => "white",
    }
}

/// Values of finished slices read through the compressed database, for `cap` and
/// `lookup` (the alternative to `solved/` work files) and for `ver`.
pub struct DbLookup {
    pub db: Arc<Database>,
    pub memo: CaptureCache,
}

impl DbLookup {
    pub fn new(db: Arc<Database>) -> DbLookup {
        DbLookup {
            db,
            memo: CaptureCache::new(MEMO_SLOTS),
        }
    }

    /// The value of `pos` (Black to move), capture positions remembered in this lookup.
    #[inline]
    pub fn probe(&mut self, pos: &Position) -> Result<Value> {
        self.db.probe_cached(pos, &mut self.memo)
    }
}
