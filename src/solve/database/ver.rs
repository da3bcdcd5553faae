//! The `ver` phase from the compressed database alone, for a pair whose `solved/` files
//! are gone (else [`super::ver_exact`] checks it for less): every stored value of a range
//! checked against its successors (2003 paper, Table 3).
//!
//! Most successors of a slice's positions are quiet positions of its mirror (a king move,
//! or a man move that keeps its leading rank, answered by the other side). Those are read
//! straight from the mirror decoded whole, their index computed the way `noio` does (the
//! children of one position's king moves share all of it but one king's rank), rather
//! than through a general probe that finds the slice, its block and the full index of each.
//! Every other successor (a capture, a promotion, a new leading rank, a removed position)
//! goes through the probe, which searches what the file does not store. The mirror's
//! positions that are searched (captures, removed threats) are remembered by index for the
//! whole job: at 7 pieces each is the successor of two or three positions of a range, more
//! than the probe's cache-sized capture memo keeps.

use crate::board::{MoveList, generate_moves, has_capture, plain_move, white_has_capture};
use crate::db::decoded::DecodedSlice;
use crate::db::probe::{Database, DbLookup, OpenSlice};
use crate::db::removed::{Kind, threat_is_removed};
use crate::notation::position_fen;
use crate::slice::Slice;
use crate::slice::index::QuietChildren;
use crate::slice::is_conversion;
use crate::solve::running::{
    Outcome, PhaseStats, RunOptions, STOP_CHECK, from_the_start, stop_requested,
};
use crate::solve::{Job, Result, Value};
use crate::solve_err;
use crate::{Move, Position};
use std::sync::Arc;

/// The job's slice's mirror, decoded, for reading quiet successors directly (`ver` and
/// `mtcver`).
pub(super) struct Mirror<'a> {
    pub(super) slice: &'a OpenSlice,
    values: Arc<DecodedSlice>,
    /// Whether the mirror stores the values of capture threats (then a quiet successor
    /// that the other side threatens is stored too).
    keeps_threats: bool,
    /// The values of the mirror's positions searched so far, by index ([`Value::Unknown`]:
    /// not searched yet; a search always finds a value), when the budget holds the mirror
    /// twice (the memo is as large as the decoded mirror).
    searched: Option<DecodedSlice>,
}

impl<'a> Mirror<'a> {
    /// The mirror of `slice` decoded; `None` without room to decode it (then every
    /// successor is probed: same values, slower).
    pub(super) fn open(db: &'a Database, slice: &Slice) -> Result<Option<Mirror<'a>>> {
        let mirror_slice = db.slice(&slice.mirror())?;
        let count = mirror_slice.file.count;
        Ok(db.decoded(mirror_slice)?.map(|values| Mirror {
            slice: mirror_slice,
            values,
            keeps_threats: !mirror_slice.file.removal.removes(Kind::Threat),
            searched: (db.decoding_budget() as u64 >= count.div_ceil(4) * 2)
                .then(|| DecodedSlice::unknown(count)),
        }))
    }

    /// The value of `child`, a quiet successor at index `i` of the mirror.
    #[inline]
    pub(super) fn value_at(
        &mut self,
        lookup: &mut DbLookup,
        i: u64,
        child: &Position,
    ) -> Result<Value> {
        if stores(self.keeps_threats, child) {
            return Ok(self.values.get(i));
        }
        let Some(searched) = self.searched.as_mut() else {
            return Ok(lookup.probe(child)?);
        };
        Ok(match searched.get(i) {
            Value::Unknown => {
                let v = lookup.probe(child)?;
                searched.set(i, v);
                v
            }
            v => v,
        })
    }
}

/// The value of `child`, reached from `pos` by `m`: a quiet successor from the decoded
/// mirror, anything else (a capture, a promotion, a new leading rank) by a probe.
#[inline]
pub(super) fn successor_value(
    lookup: &mut DbLookup,
    mirror: Option<&mut Mirror>,
    children: &mut QuietChildren,
    pos: &Position,
    m: &Move,
    child: &Position,
) -> Result<Value> {
    match mirror {
        Some(mirror) if !is_conversion(pos, m) => {
            let i = children.of_move(&mirror.slice.index, pos, m, child);
            mirror.value_at(lookup, i, child)
        }
        _ => Ok(lookup.probe(child)?),
    }
}

/// Whether `witness`, the move that found the last won position's lost child, is a plain
/// move of `pos` (which has no capture) to a child that `value` finds lost: positions next
/// to each other in a slice differ by one piece and are mostly won by the same move.
#[inline]
pub(super) fn witness_wins(
    pos: &Position,
    witness: Option<Move>,
    mut value: impl FnMut(&Move, &Position) -> Result<Value>,
) -> Result<bool> {
    match witness.and_then(|w| plain_move(pos, w.from, w.to)) {
        Some(m) => Ok(value(&m, &pos.successor(&m))? == Value::Loss),
        None => Ok(false),
    }
}

/// Checks every stored value of the job's range against its successors, read from the
/// compressed database.
pub fn verify_range(db: &Arc<Database>, job: &Job, opts: &RunOptions) -> Result<Outcome> {
    let s = db.slice(&job.slice)?;
    let mut mirror = Mirror::open(db, &job.slice)?;
    let mut lookup = DbLookup::new(db.clone());
    let mut moves = MoveList::new();
    let mut e = s.index.enumerate_from(job.first);
    let mut stats = PhaseStats::default();
    let removes_threats = s.file.removal.removes(Kind::Threat);
    // The move to the last won position's losing child, tried first on the next (as
    // `ver_exact` does).
    let mut witness: Option<Move> = None;
    // In chunks, so that a stop request is seen within a fraction of a second.
    let mut at = job.first;
    while at < job.last {
        if stop_requested(opts) {
            return Ok(from_the_start(job));
        }
        let end = (at + STOP_CHECK).min(job.last);
        s.file.for_each_run(at, end, |first, len, stored| {
            for i in first..first + len {
                debug_assert_eq!(e.index(), i);
                let pos = e.position();
                e.advance();
                if has_capture(&pos) {
                    continue; // never stored
                }
                // A slice that keeps its threats stores every quiet position: no need to
                // ask which threats the rule would remove.
                if removes_threats && threat_is_removed(&pos) {
                    continue;
                }
                // Stored positions have no capture: every move is a plain move.
                if stored == Value::Win
                    && witness_wins(&pos, witness, |m, child| {
                        let mut children = QuietChildren::default();
                        successor_value(&mut lookup, mirror.as_mut(), &mut children, &pos, m, child)
                    })?
                {
                    check_position(&job.slice, i, &pos, stored, Value::Win, &mut stats)?;
                    continue;
                }
                generate_moves(&pos, &mut moves);
                let (derived, by) =
                    best_value(&mut lookup, mirror.as_mut(), &pos, moves.as_slice())?;
                if by.is_some() {
                    witness = by;
                }
                check_position(&job.slice, i, &pos, stored, derived, &mut stats)?;
            }
            Ok::<_, crate::solve::SolveError>(())
        })?;
        at = end;
    }
    Ok(Outcome::Done(stats))
}

/// Counts position `i` of `slice` as checked, or names it when the value it holds (`stored`)
/// is not what its moves give (`derived`). Inlined, with the message in a cold function:
/// called for each position, a call cost 28 instructions (callgrind `ver 2301.-6`).
#[inline(always)]
pub(super) fn check_position(
    slice: &Slice,
    i: u64,
    pos: &Position,
    stored: Value,
    derived: Value,
    stats: &mut PhaseStats,
) -> Result<()> {
    if derived != stored {
        return Err(wrong_value(slice, i, pos, stored, derived));
    }
    stats.looked += 1;
    stats.count(stored);
    Ok(())
}

/// The error naming a position whose stored value is not what its moves give.
#[cold]
#[inline(never)]
fn wrong_value(
    slice: &Slice,
    i: u64,
    pos: &Position,
    stored: Value,
    derived: Value,
) -> crate::error::Error {
    solve_err!(
        "ver {slice}: position {i} ({}) is stored as {stored} but its moves give {derived}",
        position_fen(pos)
    )
}

/// The best value among `moves` of `pos` (a loss without moves), stopping at the first win,
/// and for a win the move to the lost child.
#[inline]
fn best_value(
    lookup: &mut DbLookup,
    mut mirror: Option<&mut Mirror>,
    pos: &Position,
    moves: &[Move],
) -> Result<(Value, Option<Move>)> {
    let mut best = Value::Loss;
    let mut children = QuietChildren::default();
    for m in moves {
        let child = pos.successor(m);
        match successor_value(lookup, mirror.as_deref_mut(), &mut children, pos, m, &child)? {
            Value::Loss => return Ok((Value::Win, Some(*m))),
            Value::Draw => best = Value::Draw,
            _ => {}
        }
    }
    Ok((best, None))
}

/// Whether a slice stores the value of its position `p` (no capture for its side to move,
/// and not a removed capture threat); `keeps_threats` when the slice stores its threats.
#[inline(always)]
pub(super) fn stores(keeps_threats: bool, p: &Position) -> bool {
    !has_capture(p) && (keeps_threats || !white_has_capture(p))
}
