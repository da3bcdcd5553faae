//! Which positions the database does not store (docs/FORMAT.md "What is stored"), and the
//! refilled runs of values the `build` phase codes.

use crate::Position;
use crate::board::{MoveList, find_plain_move, generate_moves, has_capture, white_has_capture};
use crate::slice::index::SliceIndex;
use crate::value::Value;

/// Why a position's value is or is not stored.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    Stored,
    /// The side to move must capture: the value is the best capture's.
    Capture,
    /// The opponent threatens a capture and every move leads to a capture position or a
    /// stored value: the value is the best move's.
    Threat,
}

/// Which kinds of positions a file leaves out: the removal rule its header names
/// (docs/FORMAT.md "What is stored").
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Removal {
    /// Capture and capture-threat positions (2003 paper 3.3): a threat's probe searches.
    CapturesAndThreats = 1,
    /// Capture positions only: threat values are stored, so no probe of the slice searches
    /// beyond its captures. Chosen where storing them costs the file next to nothing.
    Captures = 2,
}

impl Removal {
    /// The rule with header number `n`.
    pub fn from_number(n: u16) -> Option<Removal> {
        match n {
            1 => Some(Removal::CapturesAndThreats),
            2 => Some(Removal::Captures),
            _ => None,
        }
    }

    /// Whether a position of `kind` has no stored value under this rule.
    #[inline]
    pub fn removes(self, kind: Kind) -> bool {
        match kind {
            Kind::Stored => false,
            Kind::Capture => true,
            Kind::Threat => self == Removal::CapturesAndThreats,
        }
    }
}

/// Classifies `pos` (Black to move).
#[inline]
pub fn classify(pos: &Position) -> Kind {
    if has_capture(pos) {
        Kind::Capture
    } else if threat_is_removed(pos) {
        Kind::Threat
    } else {
        Kind::Stored
    }
}

/// For a position without a capture: whether it is a threat whose value is removed, i.e.
/// its opponent threatens a capture and no move leads to such a threat for the opponent.
/// The threat itself is tested first, so callers need not. The moves are walked without a
/// list, and the walk stops at the first move that keeps the value: `build` asks this of
/// every threat, and the list cost a third of its time on kings-only slices (callgrind,
/// `run build 3300.--`).
#[inline]
pub fn threat_is_removed(pos: &Position) -> bool {
    debug_assert!(!has_capture(pos), "a capture position is no threat");
    white_has_capture(pos)
        && !find_plain_move(pos, |m| {
            let child = pos.play(&m);
            !white_has_capture(&child) && has_capture(&child)
        })
}

/// [`threat_is_removed`] for the probe's search: `Some` bit mask of the moves after which
/// the opponent must capture (bit `k` for move `k`) when the value is removed, else `None`.
/// The other moves lead to stored positions.
#[inline]
pub fn removed_threat_children(pos: &Position, moves: &mut MoveList) -> Option<u128> {
    generate_moves(pos, moves);
    let mut captures = 0u128;
    for (k, m) in moves.iter().enumerate() {
        // The child seen from the mover (White to move in it).
        let child = pos.play(m);
        if white_has_capture(&child) {
            captures |= 1 << k;
        } else if has_capture(&child) {
            // The child is itself such a threat (the mover could capture there): the
            // derivation would be recursive within one material, so this position's value
            // is kept.
            return None;
        }
    }
    Some(captures)
}

/// A run of one value: `len` positions, removed ones continuing the run they interrupt,
/// the last `tail` of them removed positions after its last stored one. Those may as well
/// start the next run; the build chooses (`boundaries.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ValueRun {
    pub value: Value,
    pub len: u64,
    pub tail: u64,
}

impl ValueRun {
    pub const fn new(value: Value, len: u64, tail: u64) -> ValueRun {
        ValueRun { value, len, tail }
    }
}

/// The refilled values of a page-aligned range of a slice as runs: removed positions before
/// the first stored value (`lead_removed`, which the range before continues), then runs of
/// different consecutive values.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RangeRuns {
    pub lead_removed: u64,
    pub runs: Vec<ValueRun>,
}

/// The runs of a range under both removal rules, and how many of its positions are
/// removable threats: the build codes the slice both ways and keeps one
/// (`write::write_best_slice`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleRuns {
    /// [`Removal::CapturesAndThreats`].
    pub threats_removed: RangeRuns,
    /// [`Removal::Captures`]; `None` for a range built before threats could be stored
    /// (an older build part), which leaves its slice with the other rule.
    pub threats_stored: Option<RangeRuns>,
    pub threats: u64,
}

/// An empty range, with the runs of both rules (so that appending keeps both).
impl Default for RuleRuns {
    fn default() -> RuleRuns {
        RuleRuns {
            threats_removed: RangeRuns::default(),
            threats_stored: Some(RangeRuns::default()),
            threats: 0,
        }
    }
}

impl RuleRuns {
    /// Appends the runs of the range that follows.
    pub fn append(&mut self, next: RuleRuns) {
        self.threats_removed.append(next.threats_removed);
        self.threats_stored = match (self.threats_stored.take(), next.threats_stored) {
            (Some(mut a), Some(b)) => {
                a.append(b);
                Some(a)
            }
            _ => None,
        };
        self.threats += next.threats;
    }
}

/// The runs of `first..last` of the slice of `ix` under both rules, reading values with
/// `value` (called for stored and threat positions).
pub fn range_runs(
    ix: &SliceIndex,
    first: u64,
    last: u64,
    mut value: impl FnMut(u64) -> Value,
) -> RuleRuns {
    let (mut removed, mut stored) = (RangeRuns::default(), RangeRuns::default());
    let mut threats = 0;
    let mut e = ix.enumerate_from(first);
    for i in first..last {
        let kind = classify(&e.position());
        e.advance();
        if kind == Kind::Capture {
            removed.push_removed();
            stored.push_removed();
            continue;
        }
        let v = value(i);
        debug_assert!(
            v != Value::Unknown,
            "unsolved position {i} of {}",
            ix.slice()
        );
        if kind == Kind::Threat {
            threats += 1;
            removed.push_removed();
        } else {
            removed.push_stored(v);
        }
        stored.push_stored(v);
    }
    RuleRuns {
        threats_removed: removed,
        threats_stored: Some(stored),
        threats,
    }
}

impl RangeRuns {
    /// The next position is stored with value `v`.
    #[inline]
    pub fn push_stored(&mut self, v: Value) {
        match self.runs.last_mut() {
            Some(r) if r.value == v => {
                r.len += 1;
                r.tail = 0;
            }
            _ => self.runs.push(ValueRun::new(v, 1, 0)),
        }
    }

    /// The next position is removed: it continues the run in progress.
    #[inline]
    pub fn push_removed(&mut self) {
        match self.runs.last_mut() {
            Some(r) => {
                r.len += 1;
                r.tail += 1;
            }
            None => self.lead_removed += 1,
        }
    }

    /// Appends the runs of the range that follows: its leading removed positions continue
    /// this range's last run.
    pub fn append(&mut self, next: RangeRuns) {
        let mut runs = next.runs.into_iter();
        match self.runs.last_mut() {
            Some(r) => {
                r.len += next.lead_removed;
                r.tail += next.lead_removed;
            }
            None => {
                self.lead_removed += next.lead_removed;
                self.runs.extend(runs.by_ref().take(1));
            }
        }
        for run in runs {
            match self.runs.last_mut() {
                Some(r) if r.value == run.value => {
                    r.len += run.len;
                    r.tail = run.tail;
                }
                _ => self.runs.push(run),
            }
        }
    }
}

impl RangeRuns {
    /// The runs of a whole slice: its leading removed positions join the first run.
    pub fn into_runs(mut self) -> Vec<ValueRun> {
        match self.runs.first_mut() {
            Some(r) => r.len += self.lead_removed,
            // Every position is removed: any value will do.
            None if self.lead_removed > 0 => {
                self.runs
                    .push(ValueRun::new(Value::Win, self.lead_removed, 0))
            }
            None => {}
        }
        self.runs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Value::*;

    /// Joins the runs of consecutive ranges into the runs of the whole.
    fn join_runs(parts: impl IntoIterator<Item = RangeRuns>) -> Vec<ValueRun> {
        let mut all = RangeRuns::default();
        for part in parts {
            all.append(part);
        }
        all.into_runs()
    }

    #[test]
    fn a_removed_threat_is_the_probes_removed_threat() {
        // Every threat of slices with men, kings and crowning, each way.
        let mut moves = MoveList::new();
        let (mut removed, mut kept) = (0, 0);
        for slice in ["2101.-5", "1111.56", "2200.--", "0120.6-"] {
            let ix = SliceIndex::new(slice.parse().unwrap());
            for i in 0..ix.count() {
                let pos = ix.position_unchecked(i);
                if has_capture(&pos) || !white_has_capture(&pos) {
                    continue;
                }
                let probe = removed_threat_children(&pos, &mut moves).is_some();
                assert_eq!(threat_is_removed(&pos), probe, "{slice} position {i}");
                match probe {
                    true => removed += 1,
                    false => kept += 1,
                }
            }
        }
        assert!(
            removed > 1000 && kept > 1000,
            "{removed} removed, {kept} kept"
        );
    }

    #[test]
    fn both_rules_runs_do_not_depend_on_the_split() {
        // A slice with captures and threats, values made up per position.
        let ix = SliceIndex::new("2101.-5".parse().unwrap());
        let value = |i: u64| [Win, Loss, Draw][((i * 2_654_435_761) >> 7) as usize % 3];
        let n = ix.count();
        let whole = range_runs(&ix, 0, n, value);
        assert!(
            whole.threats > 0 && whole.threats_removed != whole.threats_stored.clone().unwrap()
        );
        for cuts in [vec![1], vec![n / 3, n / 2], vec![7, 8, 9, n - 1]] {
            let mut joined = RuleRuns::default();
            let mut at = 0;
            for end in cuts.into_iter().chain([n]) {
                joined.append(range_runs(&ix, at, end, value));
                at = end;
            }
            assert_eq!(joined, whole);
        }
        // A range without the stored rule's runs (an older build part) leaves none.
        let mut old = RuleRuns::default();
        old.append(RuleRuns {
            threats_stored: None,
            ..range_runs(&ix, 0, 9, value)
        });
        old.append(range_runs(&ix, 9, n, value));
        assert_eq!(old.threats_stored, None);
        assert_eq!(old.threats_removed, whole.threats_removed);
    }

    #[test]
    fn joining_is_independent_of_the_split() {
        let whole = RangeRuns {
            lead_removed: 3,
            runs: vec![
                ValueRun::new(Win, 5, 1),
                ValueRun::new(Loss, 2, 1),
                ValueRun::new(Win, 9, 2),
            ],
        };
        let split = [
            RangeRuns {
                lead_removed: 3,
                runs: vec![ValueRun::new(Win, 2, 0)],
            },
            RangeRuns {
                lead_removed: 0,
                runs: vec![ValueRun::new(Win, 3, 1), ValueRun::new(Loss, 1, 0)],
            },
            RangeRuns {
                lead_removed: 1,
                runs: vec![],
            },
            RangeRuns {
                lead_removed: 0,
                runs: vec![ValueRun::new(Win, 4, 0)],
            },
            // Removed positions between two stored wins are inside the run, not a tail.
            RangeRuns {
                lead_removed: 2,
                runs: vec![ValueRun::new(Win, 3, 2)],
            },
        ];
        let joined = join_runs(split);
        assert_eq!(join_runs([whole]), joined);
        assert_eq!(joined[0], ValueRun::new(Win, 8, 1));
        assert_eq!(
            join_runs([RangeRuns {
                lead_removed: 9,
                runs: vec![]
            }]),
            vec![ValueRun::new(Win, 9, 0)]
        );
    }
}
