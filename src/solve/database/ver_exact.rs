//! The `ver` phase from the solver's exact values, while the pair's `solved/` files exist
//! (they do until the build releases them).
//!
//! Two checks make the same guarantee as probing every successor in the compressed
//! database ([`super::ver::verify_range`]), without its searches:
//!
//! - every value the database stores equals the exact one (the compressed file is the
//!   solver's values), and
//! - every exact value of the range, captures and removed threats included, is the best
//!   value among its moves: quiet moves read from the mirror's exact values, conversions
//!   from the other finished slices.
//!
//! Probing the database searches whatever it does not store: a mirror's capture or removed
//! threat costs a search into the lower slices each time it is a successor (half a job's
//! instructions at 7 pieces). Here every slice's own captures and threats are checked once,
//! by the job whose range holds them, and read by everyone else as plain values. A wrong
//! capture value cannot hide: its own range's job finds it against its captures.
//!
//! Where the mirror is mostly won, the quiet children of the slice's lost and drawn
//! positions are checked from the children's side instead ([`super::ver_reverse`]).

use super::exact_children::{child_value, first_plain_child};
use super::ver::{check_position, witness_wins};
use super::ver_reverse::{MirrorWalk, value_beside_quiet};
use crate::board::{MoveList, generate_moves, has_capture};
use crate::db::probe::Database;
use crate::db::removed::{Kind, threat_is_removed};
use crate::notation::position_fen;
use crate::slice::Slice;
use crate::slice::index::QuietChildren;
use crate::slice::is_conversion;
use crate::solve::running::{
    Outcome, PhaseStats, RunOptions, STOP_CHECK, from_the_start, stop_requested,
};
use crate::solve::solved::{Located, LowerSlices, SolvedSlice, SolvedValues, larger_than_cache};
use crate::solve::{Job, Result, Site, Value};
use crate::solve_err;
use crate::{Move, Position};
use std::sync::Arc;

/// The solver's values of a pair, and of the slices its conversions reach: every
/// position's value is read, none searched (`ver` and `mtcver`).
pub(super) struct ExactValues {
    pub own: Arc<SolvedSlice>,
    pub mirror: Arc<SolvedSlice>,
    pub lower: LowerSlices,
}

impl ExactValues {
    /// `None` when the solved file of `slice` or of its mirror is gone.
    pub(super) fn open(site: &Site, slice: &Slice, opts: &RunOptions) -> Result<Option<Self>> {
        let mirror = slice.mirror();
        if !site.solved_file(slice).exists() || !site.solved_file(&mirror).exists() {
            return Ok(None);
        }
        let store = opts.solved_store(site);
        Ok(Some(ExactValues {
            own: store.get(*slice)?,
            mirror: store.get(mirror)?,
            lower: opts.lower_slices(site)?,
        }))
    }
}

/// Checks the job's range from the exact values of `solved/` and the database's stored
/// values against them; `None` when the solved file of the slice or its mirror is gone
/// (then only [`super::ver::verify_range`] can check the database).
pub fn verify_range_exact(
    site: &Site,
    db: &Arc<Database>,
    job: &Job,
    opts: &RunOptions,
) -> Result<Option<Outcome>> {
    let slice = job.slice;
    let Some(ExactValues {
        own,
        mirror,
        mut lower,
    }) = ExactValues::open(site, &slice, opts)?
    else {
        return Ok(None);
    };
    let file = &db.slice(&slice)?.file;
    let removes_threats = file.removal.removes(Kind::Threat);
    let walk = MirrorWalk::choose(&own, &mirror, job);
    let mut moves = MoveList::new();
    let mut located = Vec::with_capacity(crate::board::MAX_MOVES);
    let mut quiet = [0; crate::board::MAX_MOVES];
    let cache = larger_than_cache();
    let mut e = own.index().enumerate_from(job.first);
    let mut stats = PhaseStats::default();
    // The move to the last won position's losing child, tried first on the next.
    let mut witness = None;
    // In chunks, so that a stop request is seen within a fraction of a second.
    let mut at = job.first;
    while at < job.last {
        if stop_requested(opts) {
            return Ok(Some(from_the_start(job)));
        }
        let end = (at + STOP_CHECK).min(job.last);
        file.for_each_run(at, end, |first, len, stored| {
            for i in first..first + len {
                debug_assert_eq!(e.index(), i);
                let pos = e.position();
                e.advance();
                let exact = own.get(i);
                let capture = has_capture(&pos);
                // Captures and removed threats are not stored: their runs hold fillers.
                if !capture
                    && stored != exact
                    && !(removes_threats && threat_is_removed(&pos))
                {
                    return Err(solve_err!(
                        "ver {slice}: position {i} ({}) is stored in the database as {stored} but solved as {exact}",
                        position_fen(&pos)
                    ));
                }
                // A won position stops at its first losing child (without a capture, before
                // the moves after it are generated); the others read them all.
                if exact == Value::Win
                    && !capture
                    && plain_child_lost(&mut lower, &mirror, &pos, &mut witness)?
                {
                    check_position(&slice, i, &pos, exact, Value::Win, &mut stats)?;
                    continue;
                }
                // Where the mirror is walked back, a lost or drawn position's quiet children
                // are checked there.
                if walk.is_some()
                    && !capture
                    && exact != Value::Win
                    && let Some(derived) = value_beside_quiet(&mut lower, &mirror, &pos, exact)?
                {
                    check_position(&slice, i, &pos, exact, derived, &mut stats)?;
                    continue;
                }
                generate_moves(&pos, &mut moves);
                let derived = match (exact != Value::Win, lower.largest_bytes()) {
                    (true, b) if b > cache => best_value_located(
                        &mut lower,
                        &mirror,
                        &pos,
                        moves.as_slice(),
                        &mut located,
                    )?,
                    (true, _) => best_value_prefetched(
                        &mut lower,
                        &mirror,
                        &pos,
                        moves.as_slice(),
                        &mut quiet,
                    )?,
                    (false, _) => best_value(&mut lower, &mirror, &pos, moves.as_slice())?,
                };
                check_position(&slice, i, &pos, exact, derived, &mut stats)?;
            }
            Ok::<_, crate::solve::SolveError>(())
        })?;
        at = end;
    }
    if let Some(w) = walk
        && !w.walk(&slice, &own, &mirror, opts)?
    {
        return Ok(Some(from_the_start(job)));
    }
    Ok(Some(Outcome::Done(stats)))
}

/// [`best_value`] for a position whose every child is read (solved as a loss or a draw):
/// the quiet children's indexes first, each value asked of memory as soon as it is known,
/// then the values in move order, so that the memory round trips of a mirror larger than
/// the cache overlap (8 pieces). A won position stops at its first losing child instead.
/// `quiet` is the job's: a fresh array per position cost 4.6 % of `ver 2301.-6` in
/// filling it (callgrind); each entry a move uses is written before it is read.
#[inline]
fn best_value_prefetched(
    lower: &mut impl SolvedValues,
    mirror: &SolvedSlice,
    pos: &Position,
    moves: &[Move],
    quiet: &mut [u64; crate::board::MAX_MOVES],
) -> Result<Value> {
    QuietChildren::indexes(mirror.index(), pos, moves, quiet, |i| mirror.prefetch(i));
    let mut best = Value::Loss;
    for (k, m) in moves.iter().enumerate() {
        let v = match quiet[k] {
            u64::MAX => lower.value(&pos.successor(m))?,
            i => mirror.get(i),
        };
        if take_child(&mut best, v, pos, m)? {
            return Ok(Value::Win);
        }
    }
    Ok(best)
}

/// [`best_value_prefetched`] once the lower slices are larger than the cache
/// ([`crate::solve::solved::LARGER_THAN_CACHE`], 8 pieces): the conversions' values are
/// located and asked of memory in the first pass too (quiet children marked by slice
/// `u32::MAX`). Where the lower slices fit the cache this costs 7 % more than reading them
/// in order.
#[inline]
fn best_value_located(
    lower: &mut impl SolvedValues,
    mirror: &SolvedSlice,
    pos: &Position,
    moves: &[Move],
    at: &mut Vec<Located>,
) -> Result<Value> {
    at.clear();
    let mut children = QuietChildren::default();
    for m in moves {
        let child = pos.successor(m);
        at.push(if is_conversion(pos, m) {
            lower.locate(&child)?
        } else {
            let index = children.of_move(mirror.index(), pos, m, &child);
            mirror.prefetch(index);
            Located::At {
                slice: u32::MAX,
                index,
            }
        });
    }
    let mut best = Value::Loss;
    for (m, &found) in moves.iter().zip(at.iter()) {
        let v = match found {
            Located::At {
                slice: u32::MAX,
                index,
            } => mirror.get(index),
            _ => lower.read(found)?,
        };
        if take_child(&mut best, v, pos, m)? {
            return Ok(Value::Win);
        }
    }
    Ok(best)
}

/// Whether some plain move of `pos` (which has no capture) leads to a lost child: first
/// `witness`, the move that found the last won position's lost child, when it is a move
/// here (positions next to each other in a slice differ by one piece, and are mostly won
/// by the same move: it settles 85 % of the won positions without a capture in `ver
/// 3310.4- 0 9797632`, 8 % fewer instructions for the job), then the moves in order,
/// stopping at the first lost child, which becomes the witness. Which lost child proves the
/// win does not matter. False also when a child's value is unknown; the caller's full
/// reading then names it.
#[inline]
fn plain_child_lost(
    lower: &mut impl SolvedValues,
    mirror: &SolvedSlice,
    pos: &Position,
    witness: &mut Option<Move>,
) -> Result<bool> {
    let by_witness = witness_wins(pos, *witness, |m, child| {
        child_value(lower, mirror, &mut QuietChildren::default(), pos, m, child)
    })?;
    if by_witness {
        return Ok(true);
    }
    // An unknown child stops it too: the full reading then finds and names it.
    let stop = |v| matches!(v, Value::Loss | Value::Unknown);
    Ok(match first_plain_child(lower, mirror, pos, stop)? {
        Some((Value::Loss, m)) => {
            *witness = Some(m);
            true
        }
        _ => false,
    })
}

/// Folds the value `v` of `pos`'s child by `m` into `best`; true when it settles the
/// position as won (a lost child). An unknown value is an unfinished mirror.
#[inline(always)]
fn take_child(best: &mut Value, v: Value, pos: &Position, m: &Move) -> Result<bool> {
    match v {
        Value::Unknown => Err(unfinished_mirror(&pos.successor(m))),
        Value::Loss => Ok(true),
        Value::Draw => {
            *best = Value::Draw;
            Ok(false)
        }
        _ => Ok(false),
    }
}

fn unfinished_mirror(child: &Position) -> crate::solve::SolveError {
    solve_err!(
        "ver: the mirror's solved values hold no value for {} (is it finished?)",
        position_fen(child)
    )
}

/// The best value among `moves` of `pos` (a loss without moves), stopping at the first win:
/// quiet moves from the mirror's exact values (by the incremental index of the quiet
/// children), conversions from `lower`. The same loop as `ver::best_value`'s, written again:
/// one loop over a closure per child (returning a `Result`) made this 3 % slower.
#[inline]
fn best_value(
    lower: &mut impl SolvedValues,
    mirror: &SolvedSlice,
    pos: &Position,
    moves: &[Move],
) -> Result<Value> {
    let mut best = Value::Loss;
    let mut children = QuietChildren::default();
    for m in moves {
        let child = pos.successor(m);
        match child_value(lower, mirror, &mut children, pos, m, &child)? {
            Value::Unknown => return Err(unfinished_mirror(&child)),
            Value::Loss => return Ok(Value::Win),
            Value::Draw => best = Value::Draw,
            _ => {}
        }
    }
    Ok(best)
}
