//! One line of a queue file, in the 1994 paper's two forms (section 5.1):
//!
//! ```text
//! lookup 3113.01 -max 02 -s 1 -n 00          mini-slice 00 of 02 of the slice, round 1
//! cap 2123.66 230445242 241002422 -n 20      an explicit page-aligned range
//! stop                                       the runner that takes it exits
//! # a comment, and blank lines
//! ```
//!
//! Phases are the paper's (`cap winmove lookup noio noiom que build ver`) plus nowdb's
//! `fill`, `pair` and `mtc`. `-s R` is the round (pass) of `noio`/`noiom`/`que`/`mtc` and
//! must be 1 (or absent) for
//! the others; `-n N` numbers the mini-slice. A line is data: it is parsed strictly here and
//! never handed to a shell.

use crate::slice::Slice;
use crate::solve::store::PAGE_POSITIONS;
use crate::solve::{Job, JobError, Phase};
use std::fmt;

/// A queue line that is not one: the words are no queue line (the message names the bad
/// word), or the job they name does not fit its slice.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    #[error("{0}")]
    Syntax(String),
    /// `-max` mini-slices of a slice with fewer full pages.
    #[error("{line}: slice {slice} has {pages} full pages, too few for {max} mini-slices")]
    TooManyMiniSlices {
        line: QueuedJob,
        slice: Slice,
        pages: u64,
        max: u32,
    },
    #[error(transparent)]
    Job(#[from] JobError),
}

impl From<LineError> for crate::error::Error {
    fn from(e: LineError) -> Self {
        crate::error::Error::Failed(e.to_string())
    }
}

impl From<LineError> for crate::cli::CliError {
    fn from(e: LineError) -> Self {
        crate::cli::CliError::Failed(e.to_string())
    }
}

/// Which positions of the slice a queued job covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Range {
    /// Mini-slice `n` of `max` (the paper's `-max` arithmetic, see [`QueuedJob::job`]).
    MiniSlice { max: u32 },
    /// Positions `first..last`.
    Explicit { first: u64, last: u64 },
}

/// A job line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueuedJob {
    pub phase: Phase,
    /// `noiom`: the phase runs on the mirror of `slice`.
    pub mirror: bool,
    pub slice: Slice,
    pub range: Range,
    /// `-s`: the round of noio/que (1 for the other phases).
    pub round: u32,
    /// `-n`: the mini-slice number.
    pub n: u32,
}

/// A queue line that is not a comment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueLine {
    Job(QueuedJob),
    Stop,
}

fn phase_word(phase: Phase, mirror: bool) -> &'static str {
    match (phase, mirror) {
        (Phase::NoIo, true) => "noiom",
        (p, _) => p.name(),
    }
}

impl QueuedJob {
    /// The phase job this line stands for: the range computed from `-max` and `-n` as the
    /// paper does (`offset = (pages / max) * 32768`, mini-slice `n` is
    /// `[n * offset, (n + 1) * offset)`, the last one running to the end of the slice).
    pub fn job(&self) -> Result<Job, LineError> {
        let slice = if self.mirror {
            self.slice.mirror()
        } else {
            self.slice
        };
        let count = slice.count();
        let (first, last) = match self.range {
            Range::Explicit { first, last } => (first, last),
            Range::MiniSlice { max } => {
                let pages = count / PAGE_POSITIONS;
                let offset = (pages / max as u64) * PAGE_POSITIONS;
                if max > 1 && offset == 0 {
                    return Err(LineError::TooManyMiniSlices {
                        line: *self,
                        slice,
                        pages,
                        max,
                    });
                }
                let first = self.n as u64 * offset;
                let last = if self.n + 1 == max {
                    count
                } else {
                    (self.n as u64 + 1) * offset
                };
                (first, last)
            }
        };
        let round = if self.phase.has_round() {
            self.round
        } else {
            0
        };
        Ok(Job::new(self.phase, slice, first, last, round)?)
    }

    /// The same work as an explicit range (how a stopped job's rest is requeued).
    pub fn explicit(job: &Job, n: u32) -> QueuedJob {
        QueuedJob {
            phase: job.phase,
            mirror: false,
            slice: job.slice,
            range: Range::Explicit {
                first: job.first,
                last: job.last,
            },
            round: job.round.max(1),
            n,
        }
    }
}

impl fmt::Display for QueuedJob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", phase_word(self.phase, self.mirror), self.slice)?;
        match self.range {
            Range::MiniSlice { max } => write!(f, " -max {max:02} -s {}", self.round)?,
            Range::Explicit { first, last } => {
                write!(f, " {first} {last}")?;
                if self.round != 1 {
                    write!(f, " -s {}", self.round)?;
                }
            }
        }
        write!(f, " -n {:02}", self.n)
    }
}

impl fmt::Display for QueueLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueueLine::Job(j) => j.fmt(f),
            QueueLine::Stop => f.write_str("stop"),
        }
    }
}

/// Parses one line; `Ok(None)` for a blank line or a comment. The error names the bad token.
pub fn parse_line(text: &str) -> Result<Option<QueueLine>, LineError> {
    let bad = |problem: String| Err(LineError::Syntax(problem));
    let text = text.trim();
    if text.is_empty() || text.starts_with('#') {
        return Ok(None);
    }
    let words: Vec<&str> = text.split_whitespace().collect();
    let (phase, mirror) = match words[0] {
        "stop" if words.len() == 1 => return Ok(Some(QueueLine::Stop)),
        "stop" => {
            return bad(format!(
                "\"stop\" takes nothing after it, found {:?}",
                words[1]
            ));
        }
        "noiom" => (Phase::NoIo, true),
        w => match Phase::from_name(w) {
            Some(p) => (p, false),
            None => {
                return bad(format!(
                    "unknown job type {w:?} (expected {}, noiom or stop)",
                    Phase::names()
                ));
            }
        },
    };
    let slice: Slice = words
        .get(1)
        .ok_or_else(|| LineError::Syntax("missing slice name after the job type".into()))?
        .parse()
        .map_err(|e| LineError::Syntax(format!("{e}")))?;
    let number = |flag: &str, w: Option<&&str>| -> Result<u64, LineError> {
        let w = w.ok_or_else(|| LineError::Syntax(format!("{flag} needs a number")))?;
        w.parse()
            .map_err(|_| LineError::Syntax(format!("{flag} {w:?}: not a number")))
    };
    let mut rest = &words[2..];
    let range = if rest.first() == Some(&"-max") {
        let max = number("-max", rest.get(1))?;
        if !(1..=9999).contains(&max) {
            return bad(format!("-max {max}: must be 1..9999"));
        }
        rest = &rest[2..];
        Range::MiniSlice { max: max as u32 }
    } else {
        let first = number("the range start", rest.first())?;
        let last = number("the range end", rest.get(1))?;
        rest = &rest[2..];
        Range::Explicit { first, last }
    };
    let mut round = 1;
    if rest.first() == Some(&"-s") {
        round = number("-s", rest.get(1))?;
        rest = &rest[2..];
        if round == 0 || round > u32::MAX as u64 {
            return bad(format!("-s {round}: rounds count from 1"));
        }
        if !phase.has_round() && round != 1 {
            return bad(format!(
                "-s {round}: {} has no rounds (use -s 1)",
                phase.name()
            ));
        }
    }
    if rest.first() != Some(&"-n") {
        return bad(match rest.first() {
            Some(w) => format!("unexpected {w:?} (expected -n N)"),
            None => "missing -n N (the mini-slice number)".into(),
        });
    }
    let n = number("-n", rest.get(1))?;
    if let Some(w) = rest.get(2) {
        return bad(format!("unexpected {w:?} after -n"));
    }
    if let Range::MiniSlice { max } = range
        && n >= max as u64
    {
        return bad(format!(
            "-n {n}: mini-slices of -max {max} are numbered 0..{}",
            max - 1
        ));
    }
    let job = QueuedJob {
        phase,
        mirror,
        slice,
        range,
        round: round as u32,
        n: n.min(u32::MAX as u64) as u32,
    };
    job.job()?;
    Ok(Some(QueueLine::Job(job)))
}

/// The `-max` mini-slices of about `positions` each that cover `slice` (at least one; never
/// more than the slice has full pages).
pub fn mini_slices(
    phase: Phase,
    mirror: bool,
    slice: Slice,
    round: u32,
    positions: u64,
) -> Vec<QueuedJob> {
    let target = if mirror { slice.mirror() } else { slice };
    let count = target.count();
    let pages = (count / PAGE_POSITIONS).max(1);
    // A pair job is the whole pair's pipeline: one line, whatever the size.
    let positions = if phase == Phase::Pair {
        u64::MAX
    } else {
        positions
    };
    let max = count.div_ceil(positions.max(1)).clamp(1, pages.min(9999)) as u32;
    (0..max)
        .map(|n| QueuedJob {
            phase,
            mirror,
            slice,
            range: Range::MiniSlice { max },
            round,
            n,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_papers_two_forms_round_trip() {
        for text in [
            "lookup 3113.01 -max 02 -s 1 -n 00",
            "noiom 3113.01 -max 02 -s 3 -n 01",
            "cap 2123.66 229998592 230326272 -n 20",
            "que 2200.-- 0 32768 -s 4 -n 00",
            "stop",
        ] {
            let line = parse_line(text).unwrap().unwrap();
            assert_eq!(line.to_string(), text);
        }
        assert_eq!(parse_line("  # comment").unwrap(), None);
        assert_eq!(parse_line("").unwrap(), None);
    }

    #[test]
    fn mini_slices_follow_the_paper_and_tile_the_slice() {
        let slice: Slice = "3113.01".parse().unwrap();
        let count = slice.count();
        for positions in [1 << 20, 10_000_000, 1 << 40] {
            let jobs: Vec<Job> = mini_slices(Phase::Lookup, false, slice, 1, positions)
                .iter()
                .map(|q| q.job().unwrap())
                .collect();
            assert_eq!(jobs[0].first, 0);
            assert_eq!(jobs.last().unwrap().last, count);
            assert!(jobs.windows(2).all(|w| w[0].last == w[1].first));
        }
    }

    #[test]
    fn bad_lines_name_the_problem() {
        for (text, needle) in [
            ("lokup 3113.01 -max 02 -n 00", "unknown job type \"lokup\""),
            ("lookup 3113.71 -max 02 -n 00", "3113.71"),
            ("lookup 3113.01 -max 02 -n 02", "numbered 0..1"),
            ("lookup 3113.01 -max xx -n 00", "-max \"xx\""),
            ("lookup 3113.01 -max 02 -s 2 -n 00", "lookup has no rounds"),
            ("cap 3113.01 5 32768 -n 00", "not page aligned"),
            ("cap 3113.01 0 32768", "missing -n"),
            ("cap 3113.01 0 32768 -n 1 now", "unexpected \"now\""),
            ("stop now", "takes nothing"),
            ("cap 3113.01 0 999999999999 -n 0", "outside slice"),
        ] {
            let e = parse_line(text).unwrap_err().to_string();
            assert!(e.contains(needle), "{text}: {e}");
        }
    }
}
