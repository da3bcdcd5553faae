//! Moves to conversion (docs/FORMAT.md, "Moves to conversion"): for every won or lost
//! position of a solved pair, the plies until a conversion (a capture or a man's move)
//! under best play: the winner converts as soon as it can while keeping the win, the loser
//! puts a conversion off as long as it can. Draws have none.
//!
//! A king's plain move keeps the slice and hands the move to the mirror, so the distances
//! of a pair depend only on the pair's own win/loss/draw values, the values of the positions
//! its conversions reach (final already: every pair below is solved), and each other. They
//! are found in layers, as a breadth-first search backwards over king moves:
//!
//! - round 1 (a scan of each slice, split into page-aligned jobs): a position without moves
//!   has 0; a won position with a winning conversion, or a king move to a lost position
//!   without moves, has 1; a lost position all of whose moves convert has 1;
//! - round `r` (from 2): the predecessors by a king move of the mirror's positions that got
//!   `r - 1` in round `r - 1` (its position queue): a won one not yet valued has `r` when
//!   that mirror position is lost; a lost one has `r` once every king move of it reaches a
//!   position valued below `r` (the mirror's own round `r` may be writing beside it: values
//!   of `r` and more, and none, count as not yet known);
//! - the rounds end when one queues nothing on either slice.
//!
//! Every round writes only its own range of its own slice (`work/<slice>.mtc`, one byte a
//! position in the work-file format of [`super::store`]), checkpoints as the other phases
//! do, and is a pure function of the rounds before it, so the bytes do not depend on how
//! the rounds were split, stopped or resumed. The finished pair is published to
//! `solved/<slice>.mtc`.

pub mod phase;
pub mod play;
pub mod verify;

use super::store::{self, MTC_BITS};
use super::{Result, Site};
use crate::slice::Slice;
use crate::slice::index::SliceIndex;
use crate::solve_err;

/// The most plies a value can hold (a byte holds plies + 1; 0 is "none").
pub const MAX_PLIES: u32 = 254;

/// The byte of a work file for `plies` to conversion.
#[inline]
pub fn encode(plies: u32) -> u8 {
    debug_assert!(plies <= MAX_PLIES);
    (plies + 1) as u8
}

/// The plies of a work file's byte; `None` for a draw (or a value not yet found).
#[inline]
pub fn decode(byte: u8) -> Option<u32> {
    (byte != 0).then(|| byte as u32 - 1)
}

pub use crate::db::mtc_probe::converts;

/// Whether the site builds moves-to-conversion values beside win/loss/draw (its marker
/// `work/mtc`, written by `addq p plan --mtc` and `jobrunner build-local --mtc`).
pub fn wanted(site: &Site) -> bool {
    marker(site).exists()
}

fn marker(site: &Site) -> std::path::PathBuf {
    site.root().join("work/mtc")
}

/// Records that the site builds moves-to-conversion values. The marker is provisional: a
/// command that may still refuse (too little disk) calls [`NewMarker::keep`] once it goes
/// ahead, and a marker this call wrote is removed if it is dropped before, so a refused
/// plan or build leaves the site as it was.
#[must_use = "the marker is removed again unless kept"]
pub fn set_wanted(site: &Site) -> Result<NewMarker> {
    let path = marker(site);
    if path.exists() {
        return Ok(NewMarker { path: None });
    }
    site.create_dirs()?;
    let text = "moves to conversion are built beside win/loss/draw (docs/FORMAT.md)\n";
    crate::files::replace(&path, text.as_bytes(), crate::files::Durability::Data)
        .map_err(|e| solve_err!("{}: {e}", path.display()))?;
    Ok(NewMarker { path: Some(path) })
}

/// The `work/mtc` marker [`set_wanted`] wrote, until the command keeps it.
pub struct NewMarker {
    path: Option<std::path::PathBuf>,
}

impl NewMarker {
    /// The command goes ahead: the site builds distances from now on.
    pub fn keep(mut self) {
        self.path = None;
    }
}

impl Drop for NewMarker {
    fn drop(&mut self) {
        if let Some(path) = &self.path {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// The distances of one finished slice (`solved/<slice>.mtc`), held whole.
pub struct MtcSlice {
    index: SliceIndex,
    data: crate::solve::pool::PagePool,
}

impl MtcSlice {
    /// Reads `solved/<slice>.mtc`, checking its header and length.
    pub fn load(site: &Site, slice: Slice) -> Result<MtcSlice> {
        let path = site.mtc_solved_file(&slice);
        if !path.exists() {
            return Err(solve_err!(
                "slice {slice} has no moves-to-conversion values: {} does not exist",
                path.display()
            ));
        }
        let index = SliceIndex::new(slice);
        let data = store::read_bits(
            &path,
            &slice,
            index.count(),
            MTC_BITS,
            crate::solve::pool::Load::Read,
        )?;
        Ok(MtcSlice { index, data })
    }

    pub fn index(&self) -> &SliceIndex {
        &self.index
    }

    /// Plies to conversion of position `i`; `None` for a draw.
    #[inline]
    pub fn get(&self, i: u64) -> Option<u32> {
        decode(self.data[i as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_hold_plies_and_none() {
        assert_eq!(decode(0), None);
        for d in [0, 1, 2, 99, MAX_PLIES] {
            assert_eq!(decode(encode(d)), Some(d));
        }
    }
}
