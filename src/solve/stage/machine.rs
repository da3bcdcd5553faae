//! The one pair state machine: from the stage a slice pair has finished and the facts its
//! driver read, the next stage and what must happen on the way; and for a stage, the
//! phase work it needs. Pure: no file is read or written here. The three drivers (the local
//! build, the `pair` job, the queue runners' `advance`) read the facts in their own way and
//! split the work into ranges their own way (the split never changes a byte), but every
//! decision and constant is this module's.

use super::Stage;
use crate::slice::Slice;
use crate::solve::Phase;

/// `noio` passes go on while they resolve at least 1/`QUE_RATIO` of the positions they look
/// at; then the position queue takes over (the decision changes the work, never the values).
/// Whole 7-piece pair jobs (user CPU, session 20) took 4.8 % less in all at 4 than at 16
/// (2311.05 15 %, 1600.-- 10 %, 2410.1- 5 %, 3400.-- 4 %, 1420.6- 3 %); 2 was no better.
pub const QUE_RATIO: u64 = 4;

/// An `mtc` round after the first scans its slice, rather than following the mirror's last
/// round back, when that round valued at least 1/`MTC_SCAN_RATIO` of the slice's positions:
/// a scan skips the positions valued already at a few nanoseconds each, and each queued
/// position costs about a microsecond (unranked, stepped back, its predecessors weighed)
/// in every job of the round. Round 2 values three quarters of the won and lost positions.
pub const MTC_SCAN_RATIO: u64 = 16;

/// Whether `mtc` round `round`, whose mirror valued `input` positions in the round before,
/// scans its slice of `count` positions (round 1 always does).
pub fn mtc_scans(round: u32, input: u64, count: u64) -> bool {
    round == 1 || input.saturating_mul(MTC_SCAN_RATIO) >= count
}

/// Position-queue entries per `que` job when a round is split into jobs.
pub const QUE_ENTRIES_PER_JOB: u64 = 1 << 20;

/// What a driver knows about a pair whose current stage's work is all done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Facts {
    /// Slices in the pair: 2, or 1 for a symmetric slice that is its own mirror.
    pub slices: usize,
    /// For a finished `noio` pass or `que` round: entries it queued (read from its queue
    /// files, never from job statistics: a job resumed after its pages reached the disk
    /// counts fewer) and positions its jobs looked at. Unread for other stages.
    pub changed: u64,
    pub looked: u64,
    /// Passes go on while they resolve at least 1/`que_ratio` of what they look at
    /// ([`QUE_RATIO`] unless the local build's `--que-ratio` says otherwise).
    pub que_ratio: u64,
    /// The local build's optional check of the solved files after `fill`.
    pub verify: bool,
    /// Whether the pair goes on into the compressed database (`build`, `ver`).
    pub database: bool,
    /// Every pair below is verified in `db/` (`ver` reads their compressed files).
    pub below_verified: bool,
    /// Every slice of the pair has a current file in `db/` (its `build` is done).
    pub built: bool,
    /// The site builds moves to conversion ([`crate::solve::mtc::wanted`]).
    pub mtc: bool,
    /// Every slice of the pair has its moves to conversion in `solved/` (read leaving
    /// `fill`, and leaving `ver`: then the database holds them too, for `mtcver`).
    pub mtc_done: bool,
}

impl Facts {
    /// Facts about a pair of `slices` slices with nothing read yet.
    pub fn new(slices: usize) -> Facts {
        Facts {
            slices,
            changed: 0,
            looked: 0,
            que_ratio: QUE_RATIO,
            verify: false,
            database: true,
            below_verified: false,
            built: false,
            mtc: false,
            mtc_done: false,
        }
    }
}

/// What must happen when a pair leaves its stage, before it enters the next one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Move both filled slices to `solved/`.
    Publish,
    /// Write the slices' verified markers.
    MarkVerified,
    /// Write the markers of the slices' checked moves to conversion.
    MarkMtcVerified,
    /// Move both slices' moves to conversion to `solved/`.
    PublishMtc,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transition {
    pub effect: Option<Effect>,
    pub next: Stage,
}

fn to(next: Stage) -> Transition {
    Transition { effect: None, next }
}

/// The stage after a finished `noio` pass or `que` round (paper Figure 4): the first two
/// passes of a pair cover both slices; passes go on while they resolve enough; then `que`
/// rounds until a round queues nothing; then `fill`.
fn after_round(stage: Stage, f: &Facts) -> Stage {
    match stage {
        Stage::NoIo(1) if f.slices == 2 => Stage::NoIo(2),
        Stage::NoIo(_) | Stage::Que(_) if f.changed == 0 => Stage::Fill,
        Stage::NoIo(p) if f.changed * f.que_ratio < f.looked => Stage::Que(p + 1),
        Stage::NoIo(p) => Stage::NoIo(p + 1),
        Stage::Que(r) => Stage::Que(r + 1),
        _ => unreachable!("a round stage"),
    }
}

/// Where the pair goes once the work of `stage` is all done. `Built` stays `Built` until
/// the pairs below are verified; `Waiting` and `Done` do not move.
pub fn after(stage: Stage, f: &Facts) -> Transition {
    let database = |built: bool| match (f.database, built) {
        (false, _) => Stage::Done,
        (true, false) => Stage::Build,
        (true, true) => Stage::Built,
    };
    // Once the values are final: moves to conversion first, when the site builds them.
    let solved = |built: bool| match f.mtc && !f.mtc_done {
        true => Stage::Mtc(1),
        false => database(built),
    };
    match stage {
        Stage::Waiting | Stage::Done => to(stage),
        Stage::Cap => to(Stage::WinMove),
        Stage::WinMove => to(Stage::Lookup),
        Stage::Lookup => to(Stage::NoIo(1)),
        Stage::NoIo(_) | Stage::Que(_) => to(after_round(stage, f)),
        Stage::Fill => Transition {
            effect: Some(Effect::Publish),
            next: match f.verify {
                true => Stage::Verify,
                false => solved(f.built),
            },
        },
        Stage::Verify => to(solved(f.built)),
        // A round that queues nothing on either slice ends the search (round 1 too: every
        // later distance descends from a distance of 1). The distances go into the database
        // too: `build` writes their compressed files (and leaves current value files as
        // they are), `ver` checks them.
        Stage::Mtc(_) if f.changed == 0 => Transition {
            effect: Some(Effect::PublishMtc),
            next: database(false),
        },
        Stage::Mtc(r) => to(Stage::Mtc(r + 1)),
        Stage::Build => to(Stage::Built),
        Stage::Built if f.below_verified => to(Stage::Ver),
        Stage::Built => to(Stage::Built),
        Stage::Ver => Transition {
            effect: Some(Effect::MarkVerified),
            next: match f.mtc_done {
                true => Stage::MtcVer,
                false => Stage::Done,
            },
        },
        Stage::MtcVer => Transition {
            effect: Some(Effect::MarkMtcVerified),
            next: Stage::Done,
        },
    }
}

/// One phase's work on one whole slice; drivers split it into ranges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Work {
    pub phase: Phase,
    pub slice: Slice,
    /// The `noio` pass or `que` round; 0 for the other phases.
    pub round: u32,
    /// For `que`: the entries of the mirror's previous round it reads (0: nothing to do,
    /// the round is complete on this slice as it stands).
    pub entries: u64,
}

impl Work {
    /// Whether the work follows the mirror's position queue (a `que` round, an `mtc` round
    /// after the first) rather than scanning the slice.
    pub fn reads_queue(&self) -> bool {
        let mtc_queue = !mtc_scans(self.round, self.entries, self.slice.count());
        self.phase == Phase::Que || (self.phase == Phase::Mtc && mtc_queue)
    }

    /// Whether there is nothing to run (a round with no input on this slice).
    pub fn is_empty(&self) -> bool {
        self.reads_queue() && self.entries == 0
    }

    /// Jobs a round that reads the queue is split into (1 for the other phases, which
    /// drivers split by positions). Every job of a round reads all of its input, so an
    /// `mtc` round, whose input may be a sixteenth of the slice (above that it scans), is
    /// one job per slice.
    pub fn que_jobs(&self) -> u64 {
        match self.phase {
            Phase::Mtc => 1,
            _ => self.entries.div_ceil(QUE_ENTRIES_PER_JOB).max(1),
        }
    }
}

/// The slice a `noio` pass runs on: passes alternate between the slice and its mirror.
pub fn noio_slice(slices: &[Slice], pass: u32) -> Slice {
    slices[(pass as usize - 1) % slices.len()]
}

/// The work of `stage` for the pair `slices`. `que_input(s, r)` is the number of entries
/// slice `s`'s mirror queued in round `r` (read only for `que`); `done(s)` whether the
/// stage's work on `s` is done already (read only for `build`: a current database file;
/// and `ver`: values verified before the pair's distances came).
pub fn work<E>(
    stage: Stage,
    slices: &[Slice],
    mut que_input: impl FnMut(&Slice, u32) -> Result<u64, E>,
    done: impl Fn(&Slice) -> bool,
) -> Result<Vec<Work>, E> {
    let each = |phase: Phase| {
        slices.iter().map(move |s| Work {
            phase,
            slice: *s,
            round: 0,
            entries: 0,
        })
    };
    Ok(match stage {
        Stage::Cap => each(Phase::Cap).collect(),
        Stage::WinMove => each(Phase::WinMove).collect(),
        Stage::Lookup => each(Phase::Lookup).collect(),
        Stage::Fill => each(Phase::Fill).collect(),
        Stage::Build => each(Phase::Build).filter(|w| !done(&w.slice)).collect(),
        Stage::Ver => each(Phase::Ver).filter(|w| !done(&w.slice)).collect(),
        Stage::MtcVer => each(Phase::MtcVer).collect(),
        Stage::NoIo(pass) => vec![Work {
            phase: Phase::NoIo,
            slice: noio_slice(slices, pass),
            round: pass,
            entries: 0,
        }],
        Stage::Que(round) | Stage::Mtc(round) => {
            let phase = match stage {
                Stage::Que(_) => Phase::Que,
                _ => Phase::Mtc,
            };
            let mut all = Vec::new();
            for s in slices {
                let entries = match phase == Phase::Mtc && round == 1 {
                    true => 0,
                    false => que_input(&s.mirror(), round - 1)?,
                };
                all.push(Work {
                    phase,
                    slice: *s,
                    round,
                    entries,
                });
            }
            all
        }
        Stage::Waiting | Stage::Verify | Stage::Built | Stage::Done => Vec::new(),
    })
}

/// Whether `addq plan` queues the stage's work up front (the stages whose work is known
/// before the pair starts); the queue runners queue the others as the pair enters them.
pub fn queued_by_plan(stage: Stage, slices: usize) -> bool {
    match stage {
        Stage::Cap | Stage::WinMove | Stage::Lookup | Stage::Build | Stage::Ver => true,
        Stage::NoIo(pass) => pass == 1 || (pass == 2 && slices == 2),
        _ => false,
    }
}

/// Position-queue rounds a pair entering `stage` no longer needs: those before this
/// (`Some(r)`: remove rounds below `r`). A round reads only its mirror's previous round.
pub fn rounds_kept_from(stage: Stage) -> Option<u32> {
    match stage {
        Stage::NoIo(r) | Stage::Que(r) | Stage::Mtc(r) => Some(r.saturating_sub(1)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(slices: usize, changed: u64, looked: u64) -> Facts {
        Facts {
            changed,
            looked,
            ..Facts::new(slices)
        }
    }

    #[test]
    fn rounds_follow_the_papers_rule() {
        let next = |s, f: Facts| after(s, &f).next;
        assert_eq!(next(Stage::NoIo(1), facts(2, 0, 9)), Stage::NoIo(2));
        assert_eq!(next(Stage::NoIo(1), facts(1, 0, 9)), Stage::Fill);
        assert_eq!(next(Stage::NoIo(2), facts(2, 1, 100)), Stage::Que(3));
        assert_eq!(next(Stage::NoIo(2), facts(2, 30, 100)), Stage::NoIo(3));
        assert_eq!(next(Stage::Que(3), facts(2, 10, 100)), Stage::Que(4));
        assert_eq!(next(Stage::Que(4), facts(2, 0, 100)), Stage::Fill);
    }

    #[test]
    fn a_pair_walks_from_cap_to_done() {
        let mut f = Facts::new(2);
        let mut stage = Stage::Cap;
        let mut seen = vec![stage];
        let mut effects = Vec::new();
        while stage != Stage::Done {
            // Passes resolve 3 of 10 (enough to go on) until round 3 queues nothing: the
            // iteration ends there.
            f.changed = match stage {
                Stage::NoIo(3) => 0,
                _ => 3,
            };
            f.looked = 10;
            assert!(seen.len() < 20, "no end: {seen:?}");
            let t = after(stage, &f);
            if t.next == Stage::Built {
                assert_eq!(after(Stage::Built, &f).next, Stage::Built, "waits below");
                f.below_verified = true;
            }
            effects.extend(t.effect);
            stage = t.next;
            seen.push(stage);
        }
        use Stage::*;
        assert_eq!(
            seen,
            [
                Cap,
                WinMove,
                Lookup,
                NoIo(1),
                NoIo(2),
                NoIo(3),
                Fill,
                Build,
                Built,
                Ver,
                Done
            ]
        );
        assert_eq!(effects, [Effect::Publish, Effect::MarkVerified]);
    }

    #[test]
    fn after_fill_the_options_and_the_database_decide() {
        let f = Facts::new(2);
        let t = after(Stage::Fill, &f);
        assert_eq!((t.effect, t.next), (Some(Effect::Publish), Stage::Build));
        let built = Facts { built: true, ..f };
        assert_eq!(after(Stage::Fill, &built).next, Stage::Built);
        let no_db = Facts {
            database: false,
            ..f
        };
        assert_eq!(after(Stage::Fill, &no_db).next, Stage::Done);
        let verify = Facts { verify: true, ..f };
        assert_eq!(after(Stage::Fill, &verify).next, Stage::Verify);
        assert_eq!(after(Stage::Verify, &verify).next, Stage::Build);
        assert_eq!(after(Stage::Verify, &no_db).next, Stage::Done);
    }

    #[test]
    fn moves_to_conversion_come_between_the_values_and_the_database() {
        let f = Facts {
            mtc: true,
            ..Facts::new(2)
        };
        assert_eq!(after(Stage::Fill, &f).next, Stage::Mtc(1));
        let verify = Facts { verify: true, ..f };
        assert_eq!(after(Stage::Verify, &verify).next, Stage::Mtc(1));
        let going = Facts { changed: 5, ..f };
        assert_eq!(after(Stage::Mtc(1), &going).next, Stage::Mtc(2));
        let t = after(Stage::Mtc(7), &f);
        assert_eq!((t.effect, t.next), (Some(Effect::PublishMtc), Stage::Build));
        let done = Facts {
            mtc_done: true,
            ..f
        };
        assert_eq!(after(Stage::Fill, &done).next, Stage::Build);
        // A verified pair whose moves to conversion came later is built and checked again
        // (for the distances' files).
        let verified = Facts { built: true, ..f };
        assert_eq!(after(Stage::Mtc(3), &verified).next, Stage::Build);
        let pair = [
            "2211.01".parse::<Slice>().unwrap(),
            "2211.10".parse::<Slice>().unwrap(),
        ];
        // Round 1 scans both slices; later rounds read the mirror's last round.
        let input = |s: &Slice, r: u32| Ok::<_, ()>(if *s == pair[0] { 10 * r as u64 } else { 0 });
        let w = work(Stage::Mtc(1), &pair, input, |_| false).unwrap();
        assert!(w.iter().all(|w| w.phase == Phase::Mtc && !w.reads_queue()));
        assert!(w.iter().all(|w| !w.is_empty() && w.round == 1));
        let w = work(Stage::Mtc(4), &pair, input, |_| false).unwrap();
        assert_eq!((w[0].entries, w[1].entries), (0, 30));
        assert!(w[0].is_empty() && w[1].reads_queue());
        // A round whose input is a large part of the slice scans it instead.
        let many = |s: &Slice, _: u32| Ok::<_, ()>(s.count() / MTC_SCAN_RATIO);
        let w = work(Stage::Mtc(2), &pair, many, |_| false).unwrap();
        assert!(w.iter().all(|w| !w.reads_queue() && !w.is_empty()));
        assert_eq!(rounds_kept_from(Stage::Mtc(4)), Some(3));
        assert!(!queued_by_plan(Stage::Mtc(1), 2));
    }

    #[test]
    fn the_work_of_each_stage() {
        let pair = [
            "2211.01".parse::<Slice>().unwrap(),
            "2211.10".parse::<Slice>().unwrap(),
        ];
        let none = |_: &Slice, _: u32| Ok::<_, ()>(0);
        let w = work(Stage::NoIo(2), &pair, none, |_| false).unwrap();
        assert_eq!((w.len(), w[0].slice, w[0].round), (1, pair[1], 2));
        let w = work(Stage::Build, &pair, none, |s| *s == pair[0]).unwrap();
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].slice, pair[1]);
        // A que round reads its mirror's previous round.
        let input =
            |s: &Slice, r: u32| Ok::<_, ()>(if *s == pair[1] && r == 4 { 3 << 20 } else { 0 });
        let w = work(Stage::Que(5), &pair, input, |_| false).unwrap();
        assert_eq!(w[0].entries, 3 << 20);
        assert_eq!(w[0].que_jobs(), 3);
        assert!(w[1].is_empty());
        assert_eq!(rounds_kept_from(Stage::Que(5)), Some(4));
        assert!(queued_by_plan(Stage::NoIo(2), 2) && !queued_by_plan(Stage::NoIo(2), 1));
    }
}
