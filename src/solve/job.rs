//! A phase job: one phase on a page-aligned range `[first, last)` of one slice.

use super::store::PAGE_POSITIONS;
use crate::slice::Slice;
use std::fmt;
use std::str::FromStr;

/// A job that cannot be: its text does not parse, or its range or round does not fit its
/// phase and slice. The message names the job and the problem.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum JobError {
    /// Text that is not a job (`jobrunner run`'s argument).
    #[error("job {text:?}: {problem}")]
    Syntax { text: String, problem: String },
    /// A job whose range or round does not fit its phase and slice.
    #[error("job {job}: {problem}")]
    Invalid { job: Job, problem: String },
}

impl From<JobError> for crate::error::Error {
    fn from(e: JobError) -> Self {
        crate::error::Error::Failed(e.to_string())
    }
}

impl From<JobError> for crate::cli::CliError {
    fn from(e: JobError) -> Self {
        crate::cli::CliError::Failed(e.to_string())
    }
}

/// The phases of paper Figure 4 (`noiom` is `noio` on the mirror: a job always names the slice
/// it writes, so `noiom 3113.01` is `noio 1331.10`).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, PartialOrd, Ord)]
pub enum Phase {
    /// Capture positions from the smaller databases.
    Cap,
    /// Non-capture predecessors of the mirror's losses are wins.
    WinMove,
    /// Conversion moves (leading-man advances, crownings) from finished slices.
    Lookup,
    /// A forward pass using only this slice pair.
    NoIo,
    /// Re-evaluate the predecessors of the mirror's last resolutions (the position queue).
    Que,
    /// Everything still unknown or "at least a draw" is a draw.
    Fill,
    /// Compress a finished slice into the database (`db/`).
    Build,
    /// Check the compressed values against their successors read from the database.
    Ver,
    /// Moves to conversion of a solved pair: round 1 scans the slice, later rounds follow
    /// the mirror's last round back over king moves (`solve::mtc`).
    Mtc,
    /// Check the compressed moves to conversion against their moves, read from the
    /// database (after `ver`: the values they are checked with are verified).
    MtcVer,
    /// All of the above for a small slice pair, in one job (`pair S` names the pair's first
    /// slice): below about 2 M positions a pair's work takes less time than the queue
    /// traffic of its thirty-odd phase jobs, above all over a network filesystem.
    Pair,
}

impl Phase {
    /// Every phase, in pipeline order.
    pub const ALL: [Phase; 11] = [
        Phase::Cap,
        Phase::WinMove,
        Phase::Lookup,
        Phase::NoIo,
        Phase::Que,
        Phase::Fill,
        Phase::Build,
        Phase::Ver,
        Phase::Pair,
        Phase::Mtc,
        Phase::MtcVer,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Phase::Cap => "cap",
            Phase::WinMove => "winmove",
            Phase::Lookup => "lookup",
            Phase::NoIo => "noio",
            Phase::Que => "que",
            Phase::Fill => "fill",
            Phase::Build => "build",
            Phase::Ver => "ver",
            Phase::Pair => "pair",
            Phase::Mtc => "mtc",
            Phase::MtcVer => "mtcver",
        }
    }

    /// The phase called `name` ([`Phase::name`]).
    pub fn from_name(name: &str) -> Option<Phase> {
        Phase::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The phase names, for error messages: `cap, winmove, ..., pair`.
    pub fn names() -> String {
        Phase::ALL.map(Phase::name).join(", ")
    }

    /// Phases that read finished lower slices.
    pub fn reads_solved(self) -> bool {
        matches!(self, Phase::Cap | Phase::Lookup)
    }

    /// Phases that take a round number (the position-queue generation they write or read).
    pub fn has_round(self) -> bool {
        matches!(self, Phase::NoIo | Phase::Que | Phase::Mtc)
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One unit of work: `phase` on positions `[first, last)` of `slice`.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub struct Job {
    pub phase: Phase,
    pub slice: Slice,
    pub first: u64,
    pub last: u64,
    /// noio: pass number (1, 2, ...); que: round number continuing the passes. 0 otherwise.
    pub round: u32,
}

impl Job {
    /// A job, checked by [`Job::validate`].
    pub fn new(
        phase: Phase,
        slice: Slice,
        first: u64,
        last: u64,
        round: u32,
    ) -> Result<Job, JobError> {
        let job = Job {
            phase,
            slice,
            first,
            last,
            round,
        };
        job.validate()?;
        Ok(job)
    }

    /// A job on the whole slice.
    pub fn whole(phase: Phase, slice: Slice, round: u32) -> Job {
        Job {
            phase,
            slice,
            first: 0,
            last: slice.count(),
            round,
        }
    }

    /// Checks the range: page aligned (the end may be the slice's end) and inside the slice.
    pub fn validate(&self) -> Result<(), JobError> {
        let count = self.slice.count();
        let bad = |problem: String| {
            Err(JobError::Invalid {
                job: *self,
                problem,
            })
        };
        if self.first >= self.last {
            return bad(format!("empty range [{}, {})", self.first, self.last));
        }
        if self.last > count {
            return bad(format!(
                "range end {} lies outside slice {} ({count} positions)",
                self.last, self.slice
            ));
        }
        if !self.first.is_multiple_of(PAGE_POSITIONS)
            || (!self.last.is_multiple_of(PAGE_POSITIONS) && self.last != count)
        {
            return bad(format!(
                "range [{}, {}) is not page aligned (pages hold {PAGE_POSITIONS} positions)",
                self.first, self.last
            ));
        }
        if self.phase == Phase::Pair && (self.first, self.last) != (0, count) {
            return bad(format!("a pair job covers its whole slice (0 {count})"));
        }
        if self.phase.has_round() != (self.round > 0) {
            return bad(format!(
                "{} needs {}",
                self.phase,
                if self.phase.has_round() {
                    "a round number 1 or more"
                } else {
                    "no round number"
                }
            ));
        }
        Ok(())
    }

    /// A name usable as a file name.
    pub fn file_stem(&self) -> String {
        format!(
            "{}-{}-r{}-{}-{}",
            self.phase, self.slice, self.round, self.first, self.last
        )
    }

    /// Splits the whole of `slice` into `n` page-aligned ranges (fewer when it has fewer pages).
    pub fn split(phase: Phase, slice: Slice, round: u32, n: u64) -> Vec<Job> {
        let count = slice.count();
        let pages = count.div_ceil(PAGE_POSITIONS);
        let n = n.clamp(1, pages.max(1));
        (0..n)
            .map(|i| Job {
                phase,
                slice,
                first: (pages * i / n) * PAGE_POSITIONS,
                last: ((pages * (i + 1) / n) * PAGE_POSITIONS).min(count),
                round,
            })
            .filter(|j| j.first < j.last)
            .collect()
    }
}

impl fmt::Display for Job {
    /// `noio 3113.01 0 32768 -r 2`: phase, slice, range, round.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {} {}",
            self.phase, self.slice, self.first, self.last
        )?;
        if self.round > 0 {
            write!(f, " -r {}", self.round)?;
        }
        Ok(())
    }
}

impl FromStr for Job {
    type Err = JobError;
    /// Parses the [`Display`](fmt::Display) form; `noiom S` is `noio` on the mirror of `S`,
    /// and a missing range means the whole slice.
    fn from_str(text: &str) -> Result<Job, JobError> {
        let words: Vec<&str> = text.split_whitespace().collect();
        let bad = |problem: String| JobError::Syntax {
            text: text.to_string(),
            problem,
        };
        let (phase, mirror) = match words.first().copied() {
            Some("noiom") => (Phase::NoIo, true),
            Some(w) => match Phase::from_name(w) {
                Some(p) => (p, false),
                None => return Err(bad(format!("unknown phase {w:?}"))),
            },
            None => return Err(bad("empty job".into())),
        };
        let slice: Slice = words
            .get(1)
            .ok_or_else(|| bad("missing slice".into()))?
            .parse()
            .map_err(|e| bad(format!("{e}")))?;
        let slice = if mirror { slice.mirror() } else { slice };
        let mut rest = &words[2..];
        let mut round = 0;
        if let Some(p) = rest.iter().position(|w| *w == "-r") {
            let r = rest
                .get(p + 1)
                .ok_or_else(|| bad("-r needs a round number".into()))?;
            round = r
                .parse()
                .map_err(|_| bad(format!("round {r:?} is not a number")))?;
            if p + 2 != rest.len() {
                return Err(bad("-r ROUND must come last".into()));
            }
            rest = &rest[..p];
        }
        let num = |w: &str| -> Result<u64, JobError> {
            w.parse()
                .map_err(|_| bad(format!("{w:?} is not a position index")))
        };
        let (first, last) = match rest {
            [] => (0, slice.count()),
            [a, b] => (num(a)?, num(b)?),
            _ => {
                return Err(bad(
                    "expected FIRST LAST (or nothing for the whole slice)".into()
                ));
            }
        };
        Job::new(phase, slice, first, last, round)
    }
}
