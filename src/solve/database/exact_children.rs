//! A position's children read from the solver's exact values (`ver` and its walk of the
//! mirror): a quiet child from the mirror by the incremental index of the position's quiet
//! children, a conversion from the lower slices.

use crate::board::find_plain_move;
use crate::slice::index::QuietChildren;
use crate::slice::is_conversion;
use crate::solve::solved::{SolvedSlice, SolvedValues};
use crate::solve::{Result, Value};
use crate::{Move, Position};

/// The value of the first plain child of `pos` (which has no capture), in move order, for
/// which `stop` says so, and the move to it; `None` when no child stops it.
#[inline(always)]
pub(super) fn first_plain_child(
    lower: &mut impl SolvedValues,
    mirror: &SolvedSlice,
    pos: &Position,
    stop: impl Fn(Value) -> bool,
) -> Result<Option<(Value, Move)>> {
    let mut children = QuietChildren::default();
    let mut failed = None;
    let mut last = None;
    find_plain_move(pos, |m| {
        let child = pos.successor(&m);
        match child_value(lower, mirror, &mut children, pos, &m, &child) {
            Ok(v) => {
                last = stop(v).then_some((v, m));
                last.is_some()
            }
            Err(e) => {
                failed = Some(e);
                true
            }
        }
    });
    match failed {
        Some(e) => Err(e),
        None => Ok(last),
    }
}

/// The exact value of `child`, `pos`'s child by `m`: a conversion's from the lower slices,
/// a quiet child's from the mirror (by the incremental index of `pos`'s quiet children).
#[inline(always)]
pub(super) fn child_value(
    lower: &mut impl SolvedValues,
    mirror: &SolvedSlice,
    children: &mut QuietChildren,
    pos: &Position,
    m: &Move,
    child: &Position,
) -> Result<Value> {
    match is_conversion(pos, m) {
        true => lower.value(child),
        false => Ok(mirror.get(children.of_move(mirror.index(), pos, m, child))),
    }
}
