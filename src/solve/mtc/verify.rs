//! Moves to conversion checked against their definition, position by position: a stored
//! distance must equal the one its moves give, with each successor's win/loss/draw value
//! read from the finished slices and each king move's distance from the mirror's
//! `solved/<mirror>.mtc`. This is a forward check of the backward search in
//! [`super::phase`]: an error in either shows up as a mismatch.

use super::{MtcSlice, converts};
use crate::board::{MoveList, generate_moves};
use crate::notation::position_fen;
use crate::slice::Slice;
use crate::solve::solved::{SolvedStore, SolvedValues, SolvedWorkFiles};
use crate::solve::{Result, Site, Value};
use crate::{Position, solve_err};
use std::sync::Arc;

/// What a check of a slice saw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MtcSummary {
    pub positions: u64,
    pub won: u64,
    pub lost: u64,
    /// The largest distance and the first position (index) holding it.
    pub longest: Option<(u32, u64)>,
}

/// The distance `pos` must have, from its value and its moves: `None` for a draw. Its
/// king moves' distances come from `mirror` (the mirror's finished distances).
pub fn derived(
    pos: &Position,
    value: Value,
    solved: &mut impl SolvedValues,
    mirror: &MtcSlice,
    moves: &mut MoveList,
) -> Result<Option<u32>> {
    let winning = match value {
        Value::Win => true,
        Value::Loss => false,
        _ => return Ok(None),
    };
    generate_moves(pos, moves);
    if moves.is_empty() {
        return Ok(Some(0));
    }
    let mut best: Option<u32> = None;
    for m in moves.iter() {
        let child = pos.successor(m);
        let child_value = solved.value(&child)?;
        if winning && child_value != Value::Loss {
            continue;
        }
        let plies = match converts(pos, m) {
            true => 1,
            false => match mirror.get(mirror.index().index(&child)) {
                Some(d) => d + 1,
                None => {
                    return Err(solve_err!(
                        "{}: a king move reaches {} ({child_value}) which has no distance",
                        position_fen(pos),
                        position_fen(&child)
                    ));
                }
            },
        };
        best = Some(match (best, winning) {
            (None, _) => plies,
            (Some(b), true) => b.min(plies),
            (Some(b), false) => b.max(plies),
        });
    }
    Ok(best)
}

/// Checks positions `[first, last)` of the finished slice `slice` against [`derived`].
pub fn check_range(
    site: &Site,
    slice: &Slice,
    first: u64,
    last: u64,
    store: &Arc<SolvedStore>,
) -> Result<MtcSummary> {
    let own = MtcSlice::load(site, *slice)?;
    let mirror = match slice.is_own_mirror() {
        true => None,
        false => Some(MtcSlice::load(site, slice.mirror())?),
    };
    let mirror = mirror.as_ref().unwrap_or(&own);
    let values = store.get(*slice)?;
    let mut solved = SolvedWorkFiles::new(store.clone());
    let mut moves = MoveList::new();
    let mut summary = MtcSummary::default();
    let last = last.min(own.index().count());
    let ix = own.index().clone();
    for (i, pos) in ix.enumerate_from(first).take_while(|(i, _)| *i < last) {
        let value = values.get(i);
        let stored = own.get(i);
        let want = derived(&pos, value, &mut solved, mirror, &mut moves)?;
        if stored != want {
            return Err(solve_err!(
                "moves to conversion of {slice}: position {i} ({}, {value}) is stored as {} \
                 but its moves give {}",
                position_fen(&pos),
                shown(stored),
                shown(want)
            ));
        }
        summary.positions += 1;
        match value {
            Value::Win => summary.won += 1,
            Value::Loss => summary.lost += 1,
            _ => {}
        }
        if let Some(d) = stored
            && summary.longest.is_none_or(|(l, _)| d > l)
        {
            summary.longest = Some((d, i));
        }
    }
    Ok(summary)
}

fn shown(d: Option<u32>) -> String {
    d.map_or("none".into(), |d| format!("{d} plies"))
}
