//! `nowdb._nowdb`: nowdb's database reader for Python (the `nowdb` package re-exports it).
//!
//! Every probe runs with the GIL released, so Python threads probe one database in parallel
//! (the reader and its block cache are shared and thread-safe).

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use nowdb::Setup;
use nowdb::db::mtc_probe::ExactDistances;
use nowdb::db::{Database as Reader, DbError};
use nowdb::inspect::{move_text, setup_after};
use nowdb::notation::format_fen;
use nowdb::value::Value;
use pyo3::create_exception;
use pyo3::exceptions::{PyFileNotFoundError, PyLookupError, PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;

create_exception!(
    nowdb,
    UnavailableError,
    PyLookupError,
    "The database has no value for the position: it has more pieces than the database \
     holds, or the directory lacks the slice it needs."
);
create_exception!(
    nowdb,
    DatabaseError,
    PyOSError,
    "A database file is damaged (a CRC error, a block that does not decode) or not of the \
     format this nowdb reads."
);

/// The error of opening a directory: a missing directory or version file is Python's
/// `FileNotFoundError`, not the "no slice for this position" it means when probing.
fn open_error(e: DbError) -> PyErr {
    match e {
        DbError::Missing(text) => PyFileNotFoundError::new_err(text),
        e => probe_error(e),
    }
}

/// The error of a probe; each message names the file or directory.
fn probe_error(e: DbError) -> PyErr {
    let text = e.to_string();
    match e {
        // NotInCache only comes of cache-only lookups, which this module never makes.
        DbError::Missing(_) | DbError::Position(_) | DbError::NotInCache => {
            UnavailableError::new_err(text)
        }
        // OSError(errno, text) becomes the matching subclass (PermissionError, ...).
        DbError::Io { source, .. } => match source.raw_os_error() {
            Some(errno) => PyOSError::new_err((errno, text)),
            None => PyOSError::new_err(text),
        },
        DbError::Format { .. } | DbError::Corrupt { .. } | DbError::Directory(_) => {
            DatabaseError::new_err(text)
        }
    }
}

fn parse(fen: &str) -> PyResult<Setup> {
    fen.parse::<Setup>()
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// A value's name; "unknown" is only ever stored by an unfinished or damaged database, so
/// a caller sees "win", "loss" or "draw" or an error, never a fourth answer.
fn name(v: Value, dir: &Path) -> PyResult<&'static str> {
    match v {
        Value::Unknown => Err(DatabaseError::new_err(format!(
            "{}: the database holds an unknown value (unfinished or damaged)",
            dir.display()
        ))),
        v => Ok(v.name()),
    }
}

/// An open nowdb database directory (a site's db/): exact win/loss/draw values of
/// English-checkers positions.
///
/// Database(directory, cache_mb=64) opens it with a block cache of about cache_mb MiB;
/// nowdb.open() does the same. It raises FileNotFoundError when the directory is missing
/// or holds no nowdb database, and nowdb.DatabaseError when it is of another format version.
/// Use it as a context manager, or call close(), to free the cache early.
#[pyclass(module = "nowdb", frozen)]
struct Database {
    directory: PathBuf,
    cache_mb: usize,
    // None once closed; probes clone the Arc, so close() never waits on a running probe.
    reader: RwLock<Option<Arc<Reader>>>,
}

impl Database {
    fn reader(&self) -> PyResult<Arc<Reader>> {
        self.reader
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .ok_or_else(|| PyValueError::new_err("the database is closed"))
    }
}

#[pymethods]
impl Database {
    #[new]
    #[pyo3(signature = (directory, cache_mb = 64))]
    fn new(py: Python<'_>, directory: PathBuf, cache_mb: usize) -> PyResult<Database> {
        let bytes = cache_mb
            .checked_mul(1 << 20)
            .ok_or_else(|| PyValueError::new_err(format!("cache_mb {cache_mb} is too large")))?;
        let reader = py
            .detach(|| Reader::open(&directory, bytes))
            .map_err(open_error)?;
        Ok(Database {
            directory,
            cache_mb,
            reader: RwLock::new(Some(Arc::new(reader))),
        })
    }

    /// The database directory, as given when it was opened.
    #[getter]
    fn directory(&self) -> &Path {
        &self.directory
    }

    /// The value of the position for its side to move: "win", "loss" or "draw".
    ///
    /// fen is a PDN FEN in standard numbering, e.g. "B:W18,K12:B3,5" (Black to move).
    /// Raises ValueError for a bad FEN (the message names it and the bad part),
    /// nowdb.UnavailableError when the database has no slice for the position, and
    /// nowdb.DatabaseError (an OSError) when a file is damaged.
    fn probe(&self, py: Python<'_>, fen: &str) -> PyResult<&'static str> {
        let setup = parse(fen)?;
        let reader = self.reader()?;
        let v = py
            .detach(|| reader.probe_setup(&setup))
            .map_err(probe_error)?;
        name(v, &self.directory)
    }

    /// The values of many positions, in order: like [probe(f) for f in fens], with the
    /// GIL released for the whole batch.
    ///
    /// fens is any iterable of FEN strings (a list, a generator, a file's lines); a bad FEN
    /// raises ValueError before any position is probed.
    fn probe_many(&self, py: Python<'_>, fens: &Bound<'_, PyAny>) -> PyResult<Vec<&'static str>> {
        // A str is an iterable of one-letter "FENs": refuse it rather than fail on "B".
        if fens.is_instance_of::<pyo3::types::PyString>() {
            return Err(PyTypeError::new_err(
                "probe_many takes an iterable of FEN strings, not one FEN (use probe)",
            ));
        }
        let setups = fens
            .try_iter()?
            .map(|item| parse(&item?.extract::<String>()?))
            .collect::<PyResult<Vec<Setup>>>()?;
        let reader = self.reader()?;
        let values = py
            .detach(|| {
                setups
                    .iter()
                    .map(|s| reader.probe_setup(s))
                    .collect::<Result<Vec<_>, _>>()
            })
            .map_err(probe_error)?;
        values
            .into_iter()
            .map(|v| name(v, &self.directory))
            .collect()
    }

    /// Every legal move of the position, in generation order, as (move, fen_after, value)
    /// tuples: the move as "9-14" or "10x17" (a capture by its first and last square), the
    /// FEN after it (the opponent to move), and its value for the side that plays it.
    ///
    /// The position is a "win" iff some move is a "win", and a "loss" iff every move is a
    /// "loss" (or there is none: a side that cannot move has lost). Raises as probe() does.
    fn moves(&self, py: Python<'_>, fen: &str) -> PyResult<Vec<(String, String, &'static str)>> {
        let setup = parse(fen)?;
        let reader = self.reader()?;
        let values = py
            .detach(|| reader.move_values(&setup))
            .map_err(probe_error)?;
        values
            .iter()
            .map(|(m, v)| {
                Ok((
                    move_text(&setup, m),
                    format_fen(&setup_after(&setup, m)),
                    name(*v, &self.directory)?,
                ))
            })
            .collect()
    }

    /// Moves to conversion: the plies until the next capture or man's move under best
    /// play, for the side to move (a won position's fewest, a lost one's most), or None for
    /// a draw. 0 when the game is over (a side without pieces, or no legal move).
    ///
    /// Read from the directory's mtc/ files (a site built with `jobrunner build-local
    /// --mtc`). Below their threshold (10 plies) they store only "short", and the exact
    /// number is found by a search over king moves (about 13 positions on average). Raises
    /// nowdb.UnavailableError when the database has no distances for the position,
    /// otherwise as probe() does.
    fn mtc(&self, py: Python<'_>, fen: &str) -> PyResult<Option<u32>> {
        let setup = parse(fen)?;
        let reader = self.reader()?;
        let (value, plies) = py
            .detach(|| {
                let pos = setup.black_to_move();
                let value = reader.probe(&pos)?;
                if value == Value::Unknown {
                    return Ok((value, None));
                }
                ExactDistances::new()
                    .plies(&reader, &pos, value)
                    .map(|plies| (value, plies))
            })
            .map_err(probe_error)?;
        name(value, &self.directory)?;
        Ok(plies)
    }

    /// Frees the block cache; probing afterwards raises ValueError. Closing twice is fine.
    fn close(&self) {
        *self.reader.write().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// Whether close() has been called.
    #[getter]
    fn closed(&self) -> bool {
        self.reader
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .is_none()
    }

    fn __enter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, _exc: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        self.close();
        false
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let directory = self.directory.to_string_lossy();
        let directory = pyo3::types::PyString::new(py, &directory).repr()?;
        let state = if self.closed() { ", closed" } else { "" };
        Ok(format!(
            "nowdb.Database({directory}, cache_mb={}{state})",
            self.cache_mb
        ))
    }
}

/// Opens the nowdb database in directory (a site's db/) with a block cache of about
/// cache_mb MiB: the same as Database(directory, cache_mb).
#[pyfunction]
#[pyo3(signature = (directory, cache_mb = 64))]
fn open(py: Python<'_>, directory: PathBuf, cache_mb: usize) -> PyResult<Database> {
    Database::new(py, directory, cache_mb)
}

/// Exact English-checkers endgame databases built by nowdb: probe positions by FEN.
#[pymodule]
mod _nowdb {
    #[pymodule_export]
    use super::{Database, DatabaseError, UnavailableError, open};
}
