//! nowdb's databases behind the egdb driver interface (`include/egdb.h`): the C functions
//! `egdb_identify` and `egdb_open`, and the handle's `lookup`, `reset_stats`, `get_stats`,
//! `verify` and `close`. Built as `libegdb.so` and `libegdb.a`; the work is nowdb's
//! [`Database`](nowdb::db::Database), this crate only translates layouts, values and errors.
//!
//! The names of the C interface are kept as they are published (`EGDB_DRIVER`, `lookup`,
//! `cl`), so that an engine author finds here what the header says.

mod driver;
mod layout;

pub use layout::reverse_rows;

use driver::Driver;
use layout::Layout;

use std::ffi::{c_char, c_int, c_uint, c_void};

/// `EGDB_BLACK`, `EGDB_WHITE`.
pub const EGDB_BLACK: c_int = 0;
pub const EGDB_WHITE: c_int = 1;

/// What `lookup` returns.
pub const EGDB_SUBDB_UNAVAILABLE: c_int = -2;
pub const EGDB_NOT_IN_CACHE: c_int = -1;
pub const EGDB_UNKNOWN: c_int = 0;
pub const EGDB_WIN: c_int = 1;
pub const EGDB_LOSS: c_int = 2;
pub const EGDB_DRAW: c_int = 3;

/// `EGDB_KINGSROW32_WLD`: what `egdb_identify` reports for a nowdb database.
pub const EGDB_KINGSROW32_WLD: c_int = 4;
/// `EGDB_KINGSROW32_MTC`: what it reports for the `mtc/` directory of one.
pub const EGDB_KINGSROW32_MTC: c_int = 5;

/// What `lookup` returns on an MTC handle besides the plies (even, from `MTC_THRESHOLD`).
pub const MTC_UNKNOWN: c_int = 0;
pub const MTC_LESS_THAN_THRESHOLD: c_int = 1;

/// `EGDB_NORMAL_BITBOARD`: bit n-1 for square n.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct NormalBitboard {
    pub black: c_uint,
    pub white: c_uint,
    pub king: c_uint,
}

/// `EGDB_ROW_REVERSED_BITBOARD`: Cake's layout.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct RowReversedBitboard {
    pub black_man: c_uint,
    pub black_king: c_uint,
    pub white_man: c_uint,
    pub white_king: c_uint,
}

/// `EGDB_BITBOARD`.
#[repr(C)]
#[derive(Clone, Copy)]
pub union Bitboard {
    pub normal: NormalBitboard,
    pub row_reversed: RowReversedBitboard,
}

/// `EGDB_STATS`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub lru_cache_hits: c_uint,
    pub lru_cache_loads: c_uint,
    pub autoload_hits: c_uint,
    pub db_requests: c_uint,
    pub db_returns: c_uint,
    pub db_not_present_requests: c_uint,
}

/// `msg_fn`: takes a NUL-terminated line.
pub type MsgFn = unsafe extern "C" fn(*mut c_char);

/// `EGDB_DRIVER`: the function pointers an engine calls, and the driver behind them.
#[repr(C)]
pub struct EgdbDriver {
    pub lookup: unsafe extern "C" fn(*mut EgdbDriver, *mut Bitboard, c_int, c_int) -> c_int,
    pub reset_stats: unsafe extern "C" fn(*mut EgdbDriver),
    pub get_stats: unsafe extern "C" fn(*mut EgdbDriver) -> *mut Stats,
    pub verify: unsafe extern "C" fn(*mut EgdbDriver) -> c_int,
    pub close: unsafe extern "C" fn(*mut EgdbDriver) -> c_int,
    pub internal_data: *mut c_void,
}

/// `egdb_version`: major * 10000 + minor * 100 + patch.
#[unsafe(no_mangle)]
pub static egdb_version: c_uint = version();

const fn version() -> c_uint {
    const fn number(s: &str) -> c_uint {
        let b = s.as_bytes();
        let (mut i, mut n) = (0, 0);
        while i < b.len() {
            n = n * 10 + (b[i] - b'0') as c_uint;
            i += 1;
        }
        n
    }
    number(env!("CARGO_PKG_VERSION_MAJOR")) * 10000
        + number(env!("CARGO_PKG_VERSION_MINOR")) * 100
        + number(env!("CARGO_PKG_VERSION_PATCH"))
}

/// The directory a C caller named, or `None` for NULL or a name that is not UTF-8 (paths are
/// taken as bytes on Unix, so any name works there).
///
/// # Safety
/// `directory` is NULL or a NUL-terminated string.
unsafe fn path_of(directory: *const c_char) -> Option<std::path::PathBuf> {
    if directory.is_null() {
        return None;
    }
    // SAFETY: the caller's contract.
    let bytes = unsafe { std::ffi::CStr::from_ptr(directory) }.to_bytes();
    use std::os::unix::ffi::OsStrExt;
    Some(std::ffi::OsStr::from_bytes(bytes).into())
}

/// `egdb_identify`: 0 with the type and the most pieces of any slice, or non-zero (and
/// nothing written) when `directory` holds no nowdb database.
///
/// # Safety
/// `directory` is NULL or a NUL-terminated string; `egdb_type` and `max_pieces` are NULL or
/// point to writable ints.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn egdb_identify(
    directory: *const c_char,
    egdb_type: *mut c_int,
    max_pieces: *mut c_int,
) -> c_int {
    // SAFETY: the caller's contract.
    let Some(dir) = (unsafe { path_of(directory) }) else {
        return 1;
    };
    match driver::identify(&dir) {
        Ok((kind, pieces)) => {
            // SAFETY: the caller's contract; NULL pointers are skipped.
            unsafe {
                if !egdb_type.is_null() {
                    *egdb_type = match kind {
                        driver::Kind::Wld => EGDB_KINGSROW32_WLD,
                        driver::Kind::Mtc => EGDB_KINGSROW32_MTC,
                    };
                }
                if !max_pieces.is_null() {
                    *max_pieces = pieces as c_int;
                }
            }
            0
        }
        Err(_) => 1,
    }
}

/// `egdb_open`: a handle on the database in `directory`, or NULL with the reason sent to
/// `msg_fn`.
///
/// # Safety
/// `directory` is NULL or a NUL-terminated string; `msg_fn` is NULL or a function that takes
/// a NUL-terminated string and may be called from any thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn egdb_open(
    bitboard_type: c_int,
    pieces: c_int,
    cache_mb: c_int,
    directory: *const c_char,
    msg_fn: Option<MsgFn>,
) -> *mut EgdbDriver {
    let say = driver::Messages::new(msg_fn);
    // SAFETY: the caller's contract.
    let Some(dir) = (unsafe { path_of(directory) }) else {
        say.line("nowdb egdb: egdb_open: the directory is NULL");
        return std::ptr::null_mut();
    };
    let Some(layout) = Layout::from_c(bitboard_type) else {
        say.line(&format!(
            "nowdb egdb: egdb_open: bitboard type {bitboard_type} is neither EGDB_NORMAL (0) \
             nor EGDB_ROW_REVERSED (1)"
        ));
        return std::ptr::null_mut();
    };
    match Driver::open(&dir, layout, pieces, cache_mb, say) {
        Some(d) => driver::into_handle(d),
        None => std::ptr::null_mut(),
    }
}
