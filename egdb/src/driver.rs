//! The driver behind an `EGDB_DRIVER` handle: the database opened within the engine's
//! memory, the engine's message function and the counts of `get_stats`.

use crate::layout::{Layout, internal_position};
use crate::{
    Bitboard, EGDB_DRAW, EGDB_LOSS, EGDB_NOT_IN_CACHE, EGDB_SUBDB_UNAVAILABLE, EGDB_UNKNOWN,
    EGDB_WIN, EgdbDriver, MsgFn, Stats,
};
use nowdb::db::{Database, DbError, Fetch};
use nowdb::value::Value;
use std::ffi::c_int;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};

/// The smallest block cache a driver keeps, however small `cache_mb`: a capture search
/// touches a few dozen blocks at once.
const MIN_CACHE_BYTES: usize = 1 << 20;

/// Memory taken while opening that `index_bytes` does not count: the list of slice files,
/// buffers the allocator keeps after reading the headers (0.8 MiB measured on 2..5).
const UNCOUNTED_BYTES: usize = 1 << 20;

/// The engine's message function; lines from several threads are sent one at a time.
pub struct Messages {
    msg_fn: Option<MsgFn>,
    lock: Mutex<()>,
}

impl Messages {
    pub fn new(msg_fn: Option<MsgFn>) -> Messages {
        Messages {
            msg_fn,
            lock: Mutex::new(()),
        }
    }

    /// Sends `text` and a newline.
    pub fn line(&self, text: &str) {
        let Some(f) = self.msg_fn else { return };
        let mut line = format!("{text}\n").replace('\0', " ").into_bytes();
        line.push(0);
        let _one_at_a_time = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: `f` takes a NUL-terminated string (egdb_open's contract); it gets its own
        // copy, which it may even write to (the interface's `char *`).
        unsafe { f(line.as_mut_ptr().cast()) };
    }
}

/// Counters that many threads add to: one padded slot per thread (by a number each thread
/// takes once), so that counting never contends for one cache line.
#[repr(align(64))]
#[derive(Default)]
struct Slot {
    requests: AtomicU64,
    returns: AtomicU64,
    unavailable: AtomicU64,
}

const SLOTS: usize = 16;

fn thread_slot() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local!(static SLOT: usize = NEXT.fetch_add(1, Relaxed) % SLOTS);
    SLOT.with(|s| *s)
}

/// What a directory holds: win/loss/draw values (a nowdb `db/`), or moves to conversion
/// (its `mtc/` subdirectory, read with the values of its parent).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Wld,
    Mtc,
}

/// An open database and what its handle reports.
pub struct Driver {
    db: Database,
    kind: Kind,
    layout: Layout,
    max_pieces: u32,
    say: Messages,
    counts: [Slot; SLOTS],
    /// What the counts and the cache's stood at when the engine last reset them.
    reset_at: Mutex<(Stats, u64, u64)>,
    stats: Mutex<Box<Stats>>,
    /// A lookup that could not read the database has been reported (once is enough).
    read_error_said: AtomicBool,
}

/// What `dir` holds and the most pieces of any of its slices; an error when it is not a
/// nowdb database (or an MTC directory beside one).
pub fn identify(dir: &Path) -> Result<(Kind, u32), DbError> {
    let (kind, values) = kind_of(dir);
    let db = Database::open(&values, 0)?;
    let slices = match kind {
        Kind::Wld => nowdb::db::probe::list_slices(db.dir())?,
        Kind::Mtc => nowdb::slice::key::slice_files(dir, "mtc")
            .map_err(|e| DbError::Directory(e.to_string()))?,
    };
    let most = slices.iter().map(|s| s.pieces()).max();
    most.ok_or_else(|| DbError::Missing(format!("{} holds no slice files", dir.display())))
        .map(|m| (kind, m))
}

/// The kind of `dir`, and the directory of the values it is read with.
fn kind_of(dir: &Path) -> (Kind, std::path::PathBuf) {
    match nowdb::db::mtc::is_mtc_dir(dir) {
        true => (Kind::Mtc, dir.join("..")),
        false => (Kind::Wld, dir.to_path_buf()),
    }
}

impl Driver {
    /// Opens every slice of at most `pieces` pieces (all when `pieces` is 0 or less) within
    /// `cache_mb` MiB, telling `say` how it went; `None` after saying why it could not.
    pub fn open(
        dir: &Path,
        layout: Layout,
        pieces: c_int,
        cache_mb: c_int,
        say: Messages,
    ) -> Option<Driver> {
        let fail = |e: &dyn std::fmt::Display| {
            say.line(&format!("nowdb egdb: cannot open {}: {e}", dir.display()));
        };
        let max_pieces = if pieces > 0 { pieces as u32 } else { u32::MAX };
        let (kind, values) = kind_of(dir);
        let mut db = match Database::open(&values, 0) {
            Ok(db) => db,
            Err(e) => {
                fail(&e);
                return None;
            }
        };
        let started = std::time::Instant::now();
        let slices = match db.open_slices(max_pieces) {
            Ok(0) => {
                fail(&format!("no slice of at most {pieces} pieces there"));
                return None;
            }
            Ok(n) => n,
            Err(e) => {
                fail(&e);
                return None;
            }
        };
        if kind == Kind::Mtc {
            let listed = match nowdb::slice::key::slice_files(dir, "mtc") {
                Ok(l) => l,
                Err(e) => {
                    fail(&e);
                    return None;
                }
            };
            for s in listed.iter().filter(|s| s.pieces() <= max_pieces) {
                if let Err(e) = db.mtc_slice(s) {
                    fail(&e);
                    return None;
                }
            }
        }
        let opened = db.open_slices_list();
        let most = opened
            .iter()
            .map(|s| s.file.slice.pieces())
            .max()
            .unwrap_or(0);
        let positions: u64 = opened.iter().map(|s| s.file.count).sum();
        let index = db.index_bytes();
        let budget = (cache_mb.max(0) as usize) << 20;
        let cache = budget.saturating_sub(index + UNCOUNTED_BYTES);
        if cache < MIN_CACHE_BYTES {
            say.line(&format!(
                "nowdb egdb: cache_mb {cache_mb} leaves {} KiB for blocks beside {} KiB of \
                 indexes and {} KiB of other memory; using a {} KiB cache",
                cache >> 10,
                index >> 10,
                UNCOUNTED_BYTES >> 10,
                MIN_CACHE_BYTES >> 10
            ));
        }
        db.set_cache_bytes(cache.max(MIN_CACHE_BYTES));
        say.line(&format!(
            "nowdb egdb {}: {}: {slices} slices of up to {most} pieces{}, {positions} positions; \
             {:.1} MiB of indexes, {:.1} MiB block cache; opened in {:.2} s",
            env!("CARGO_PKG_VERSION"),
            dir.display(),
            match kind {
                Kind::Wld => "",
                Kind::Mtc => " with moves to conversion (MTC)",
            },
            index as f64 / (1 << 20) as f64,
            db.cache_bytes() as f64 / (1 << 20) as f64,
            started.elapsed().as_secs_f64()
        ));
        Some(Driver {
            db,
            kind,
            layout,
            max_pieces: most,
            say,
            counts: Default::default(),
            reset_at: Mutex::new((Stats::default(), 0, 0)),
            stats: Mutex::new(Box::default()),
            read_error_said: AtomicBool::new(false),
        })
    }

    /// `lookup`: the value of `b` for `color` to move, as the interface's number.
    #[inline]
    pub fn lookup(&self, b: &Bitboard, color: c_int, cl: c_int) -> c_int {
        let slot = &self.counts[thread_slot()];
        slot.requests.fetch_add(1, Relaxed);
        let Some(pos) = internal_position(self.layout, b, color) else {
            return EGDB_UNKNOWN;
        };
        if (pos.black | pos.white).count_ones() > self.max_pieces {
            slot.unavailable.fetch_add(1, Relaxed);
            return EGDB_SUBDB_UNAVAILABLE;
        }
        let fetch = if cl != 0 {
            Fetch::CachedOnly
        } else {
            Fetch::Load
        };
        let v = match self.kind {
            Kind::Wld => self.db.probe_from(&pos, fetch).map(|v| match v {
                Value::Win => EGDB_WIN,
                Value::Loss => EGDB_LOSS,
                Value::Draw => EGDB_DRAW,
                Value::Unknown => EGDB_UNKNOWN,
            }),
            Kind::Mtc => self.mtc(&pos, fetch),
        };
        let v = match v {
            Ok(v) => v,
            Err(DbError::NotInCache) => return EGDB_NOT_IN_CACHE,
            Err(DbError::Position(_) | DbError::Missing(_)) => {
                slot.unavailable.fetch_add(1, Relaxed);
                return EGDB_SUBDB_UNAVAILABLE;
            }
            Err(e) => {
                if !self.read_error_said.swap(true, Relaxed) {
                    self.say.line(&format!(
                        "nowdb egdb: lookup failed, answering EGDB_UNKNOWN: {e} (said once)"
                    ));
                }
                return EGDB_UNKNOWN;
            }
        };
        slot.returns.fetch_add(1, Relaxed);
        v
    }

    /// KingsRow's MTC value of `pos`: `MTC_UNKNOWN` (0) for a draw,
    /// `MTC_LESS_THAN_THRESHOLD` (1) below the threshold, else the plies rounded down to even.
    fn mtc(&self, pos: &nowdb::Position, fetch: Fetch) -> Result<c_int, DbError> {
        if self.db.probe_from(pos, fetch)? == Value::Draw {
            return Ok(crate::MTC_UNKNOWN);
        }
        Ok(match self.db.stored_mtc_from(pos, fetch)? {
            nowdb::db::mtc::Stored::Short => crate::MTC_LESS_THAN_THRESHOLD,
            nowdb::db::mtc::Stored::Plies(d) => (d & !1) as c_int,
        })
    }

    fn totals(&self) -> (Stats, u64, u64) {
        let sum = |f: fn(&Slot) -> &AtomicU64| {
            self.counts.iter().map(|s| f(s).load(Relaxed)).sum::<u64>() as u32
        };
        let stats = Stats {
            db_requests: sum(|s| &s.requests),
            db_returns: sum(|s| &s.returns),
            db_not_present_requests: sum(|s| &s.unavailable),
            ..Stats::default()
        };
        (stats, self.db.blocks_hit(), self.db.blocks_read())
    }

    /// `reset_stats`.
    pub fn reset_stats(&self) {
        *self.reset_at.lock().unwrap_or_else(|p| p.into_inner()) = self.totals();
    }

    /// `get_stats`: the counts since the last reset, in the driver's own copy.
    pub fn get_stats(&self) -> *mut Stats {
        let (now, hits, loads) = self.totals();
        let (then, hits0, loads0) = *self.reset_at.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = self.stats.lock().unwrap_or_else(|p| p.into_inner());
        **out = Stats {
            lru_cache_hits: (hits - hits0) as u32,
            lru_cache_loads: (loads - loads0) as u32,
            autoload_hits: 0,
            db_requests: now.db_requests.wrapping_sub(then.db_requests),
            db_returns: now.db_returns.wrapping_sub(then.db_returns),
            db_not_present_requests: now
                .db_not_present_requests
                .wrapping_sub(then.db_not_present_requests),
        };
        &mut **out
    }

    /// `verify`: 0 when every block's CRC is right, 1 otherwise (each damaged file said).
    pub fn verify(&self) -> c_int {
        let bad = self.db.verify_open(|slice, r| {
            if let Err(e) = r {
                self.say.line(&format!(
                    "nowdb egdb: verify: slice {slice} is damaged: {e}"
                ));
            }
        });
        let mut bad = bad;
        for m in self.db.open_mtc_list() {
            if let Some(e) = (0..m.file.blocks()).find_map(|b| m.file.read_block(b).err()) {
                self.say.line(&format!(
                    "nowdb egdb: verify: the moves to conversion of {} are damaged: {e}",
                    m.file.slice
                ));
                bad += 1;
            }
        }
        let n = self.db.open_slices_list().len() + self.db.open_mtc_list().len();
        if bad == 0 {
            self.say.line(&format!(
                "nowdb egdb: verify: all {n} slice files' CRCs are right"
            ));
            0
        } else {
            self.say.line(&format!(
                "nowdb egdb: verify: {bad} of {n} slice files are damaged"
            ));
            1
        }
    }
}

/// A C handle owning `d`.
pub fn into_handle(d: Driver) -> *mut EgdbDriver {
    Box::into_raw(Box::new(EgdbDriver {
        lookup,
        reset_stats,
        get_stats,
        verify,
        close,
        internal_data: Box::into_raw(Box::new(d)).cast(),
    }))
}

/// The driver of a handle from [`into_handle`].
///
/// # Safety
/// `h` is a live handle from [`into_handle`].
#[inline]
unsafe fn driver<'a>(h: *mut EgdbDriver) -> &'a Driver {
    // SAFETY: the caller's contract: internal_data is the Box made in into_handle.
    unsafe { &*((*h).internal_data as *const Driver) }
}

unsafe extern "C" fn lookup(
    h: *mut EgdbDriver,
    b: *mut Bitboard,
    color: c_int,
    cl: c_int,
) -> c_int {
    if h.is_null() || b.is_null() {
        return EGDB_UNKNOWN;
    }
    // SAFETY: a handle from egdb_open, a position the engine owns for the call.
    unsafe { driver(h).lookup(&*b, color, cl) }
}

unsafe extern "C" fn reset_stats(h: *mut EgdbDriver) {
    if !h.is_null() {
        // SAFETY: a handle from egdb_open.
        unsafe { driver(h).reset_stats() }
    }
}

unsafe extern "C" fn get_stats(h: *mut EgdbDriver) -> *mut Stats {
    if h.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: a handle from egdb_open.
    unsafe { driver(h).get_stats() }
}

unsafe extern "C" fn verify(h: *mut EgdbDriver) -> c_int {
    if h.is_null() {
        return 1;
    }
    // SAFETY: a handle from egdb_open.
    unsafe { driver(h).verify() }
}

unsafe extern "C" fn close(h: *mut EgdbDriver) -> c_int {
    if h.is_null() {
        return 1;
    }
    // SAFETY: a handle from egdb_open, closed once, with no other call running (the
    // interface's contract): both boxes made in into_handle are freed.
    unsafe {
        drop(Box::from_raw((*h).internal_data as *mut Driver));
        drop(Box::from_raw(h));
    }
    0
}
