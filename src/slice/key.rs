//! Slices as keys: a slice packed into a `u64`, a cheap hasher for maps keyed by it, and the
//! slices named by the files of a directory (`<slice>.<extension>`: work files, solved
//! slices, database files).

use super::{Slice, SliceError};
use crate::files::{FileOp, failed};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::path::{Path, PathBuf};

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
