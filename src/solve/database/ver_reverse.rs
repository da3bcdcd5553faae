//! `ver`'s check of the quiet children of lost and drawn positions, turned round where that
//! reads less.
//!
//! Every quiet child (in the mirror) of a lost position must be won, and no quiet child of a
//! drawn one lost. Read from the parents, that is every child of 95 % of `2212.66`'s
//! positions; read from the children, it is the same statement about the mirror's positions
//! that are not won: each one's quiet predecessors in the slice must be won (below a lost
//! child) or not lost (below a drawn one). Where the mirror has few positions that are not
//! won (`2221.66`: 5 %) walking those back costs a fraction of reading every child forward.
//! The parents then read only what the walk cannot see: their conversions, and a drawn
//! position its children until the first drawn one.
//!
//! The choice is the slice's, the same for every job of it: from the counts of a fixed
//! sample of both slices' values. Each job walks the share of the mirror proportional to its
//! range, so that the jobs of a slice walk all of the mirror once between them.
//!
//! A value the walk finds wrong is named as the forward reading names it: the slice's
//! position, its index and its board.

use super::exact_children::first_plain_child;
use crate::Position;
use crate::notation::position_fen;
use crate::slice::{QuietConversions, Slice};
use crate::solve::running::{RunOptions, STOP_CHECK, stop_requested};
use crate::solve::solved::{SolvedSlice, SolvedValues};
use crate::solve::{Job, Result, Value};
use crate::solve_err;

/// Whether `ver` of `own` checks the quiet children of its lost and drawn positions by
/// walking `mirror` back: when, by the sampled counts, the mirror's positions that are not won
/// are fewer than the slice's lost positions and half its drawn ones (a drawn parent still
/// reads about half its children forward, for a drawn one).
pub fn walks_the_mirror(own: &SolvedSlice, mirror: &SolvedSlice) -> bool {
    let (o, m) = (own.sampled_counts(), mirror.sampled_counts());
    // Compared as shares of each sample (the two slices' sizes differ).
    let not_won = (m.positions - m.win) as u128 * o.positions as u128 * 2;
    let forward = (2 * o.loss + o.draw) as u128 * m.positions as u128;
    not_won < forward
}

/// The part of the mirror a job walks back: `[first, last)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct MirrorWalk {
    first: u64,
    last: u64,
}

impl MirrorWalk {
    /// `Some` when the job's slice checks its quiet children from the mirror
    /// ([`walks_the_mirror`]): the job's share of the mirror.
    pub(super) fn choose(own: &SolvedSlice, mirror: &SolvedSlice, job: &Job) -> Option<Self> {
        walks_the_mirror(own, mirror)
            .then(|| Self::share(own.index().count(), mirror.index().count(), job))
    }

    /// The job's share of the mirror: its range of the slice scaled to the mirror's count,
    /// so that the shares of a slice's jobs cover the mirror exactly once.
    fn share(count: u64, mirror_count: u64, job: &Job) -> Self {
        let scale = |x: u64| (x as u128 * mirror_count as u128 / count.max(1) as u128) as u64;
        MirrorWalk {
            first: scale(job.first),
            last: scale(job.last),
        }
    }

    /// Walks the share: every quiet predecessor in the slice of a mirror position that is
    /// not won must be won (the mirror's position is lost) or not lost (drawn). False when a
    /// stop was requested.
    pub(super) fn walk(
        &self,
        slice: &Slice,
        own: &SolvedSlice,
        mirror: &SolvedSlice,
        opts: &RunOptions,
    ) -> Result<bool> {
        let mut e = mirror.index().enumerate_from(self.first);
        let mut c = self.first;
        while c < self.last {
            if stop_requested(opts) {
                return Ok(false);
            }
            let end = (c + STOP_CHECK).min(self.last);
            while c < end {
                let v = mirror.get(c);
                if v != Value::Win {
                    e.skip_to(c);
                    check_predecessors(slice, own, &e.position(), v)?;
                }
                c += 1;
            }
        }
        Ok(true)
    }
}

/// Checks the quiet predecessors in `slice` of the mirror's `child` (valued `v`, not won).
#[inline]
fn check_predecessors(slice: &Slice, own: &SolvedSlice, child: &Position, v: Value) -> Result<()> {
    if v == Value::Unknown {
        return Err(solve_err!(
            "ver {slice}: the mirror's solved values hold no value for {} (is it finished?)",
            position_fen(child)
        ));
    }
    let mut wrong = None;
    own.index().for_each_quiet_predecessor(child, |i, q| {
        // The walk leaves out boards with a capture: they cannot make a quiet move.
        if wrong.is_some() {
            return;
        }
        let pv = own.get(i);
        let fits = match v {
            Value::Loss => pv == Value::Win,
            _ => pv != Value::Loss,
        };
        if !fits {
            wrong = Some((i, q, pv));
        }
    });
    match wrong {
        None => Ok(()),
        Some((i, q, pv)) => Err(solve_err!(
            "ver {slice}: position {i} ({}) is solved as {pv} but its move into the mirror's \
             {} ({v} for the side to move there) gives {}",
            position_fen(&q),
            position_fen(child),
            match v {
                Value::Loss => "a win",
                _ => "at least a draw",
            }
        )),
    }
}

/// The value of `pos` (no capture; solved as `exact`, a loss or a draw) from what the
/// mirror's walk does not check: its conversions and, for a draw, its plain children until
/// the first drawn one. `None` when a child's value is unknown (the full reading then
/// names it).
#[inline]
pub(super) fn value_beside_quiet(
    lower: &mut impl SolvedValues,
    mirror: &SolvedSlice,
    pos: &Position,
    exact: Value,
) -> Result<Option<Value>> {
    let mut best = Value::Loss;
    if exact == Value::Draw {
        match first_plain_child(lower, mirror, pos, |v| v != Value::Win)?.map(|(v, _)| v) {
            Some(Value::Draw) => best = Value::Draw,
            Some(Value::Loss) => return Ok(Some(Value::Win)),
            Some(_) => return Ok(None),
            // Every plain child won: a loss, whatever the conversions say beside.
            None => return Ok(Some(Value::Loss)),
        }
    }
    // The conversions before the first drawn child were read above (all won) and are read
    // again: one pass that walks the rest of the plain moves for the conversions costs more
    // (callgrind, `run ver 2301.-6`: +0.3 %).
    for m in QuietConversions::of(pos).as_slice() {
        match lower.value(&pos.successor(m))? {
            Value::Loss => return Ok(Some(Value::Win)),
            Value::Draw => best = Value::Draw,
            Value::Unknown => return Ok(None),
            Value::Win => {}
        }
    }
    Ok(Some(best))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solve::Phase;

    #[test]
    fn the_shares_of_a_slices_jobs_cover_the_mirror_once() {
        let slice: Slice = "2212.66".parse().unwrap();
        let (count, mirror_count) = (10_000_000u64, 7_654_321u64);
        let mut next = 0;
        for (first, last) in [(0, 1 << 20), (1 << 20, 3 << 20), (3 << 20, count)] {
            let job = Job {
                phase: Phase::Ver,
                slice,
                first,
                last,
                round: 0,
            };
            let w = MirrorWalk::share(count, mirror_count, &job);
            assert_eq!(w.first, next);
            assert!(w.last >= w.first);
            next = w.last;
        }
        assert_eq!(next, mirror_count);
    }
}
