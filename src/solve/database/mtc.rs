//! The moves to conversion in the compressed database: `build` writes `db/mtc/<slice>.mtc`
//! from `solved/<slice>.mtc` (one pass over the slice, by whichever job publishes or finds
//! the value file; in the queues when the pair's distances are published), and `mtcver`
//! checks every won and lost position's stored distance against its moves, read from the
//! compressed files only (docs/FORMAT.md, "The compressed MTC file").

use super::ver::{Mirror, stores, successor_value};
use super::ver_exact::ExactValues;
use crate::board::{MAX_MOVES, MoveList, generate_moves, has_capture};
use crate::db::mtc::{MtcRuns, Stored, code_mtc, is_current, mtc_path};
use crate::db::mtc_probe::converts;
use crate::db::probe::{Database, DbLookup};
use crate::db::removed::Kind;
use crate::notation::position_fen;
use crate::slice::Slice;
use crate::slice::index::{QuietChildren, SliceIndex};
use crate::slice::is_conversion;
use crate::solve::running::{
    Outcome, PhaseStats, RunOptions, STOP_CHECK, from_the_start, stop_requested,
};
use crate::solve::solved::{SolvedValues, larger_than_cache};
use crate::solve::store::{MTC_BITS, PAGE_BYTES, sync_dir};
use crate::solve::{Job, Result, Site, Value};
use crate::solve_err;
use std::io::Read;
use std::sync::Arc;

/// Writes `db/mtc/<slice>.mtc` when the slice has distances in `solved/` and its compressed
/// file is missing or of another version. The bytes depend only on the distances, so
/// jobs that write it at once write the same file (each through its own temporary).
pub fn build_mtc(site: &Site, slice: &Slice) -> Result<()> {
    let source = site.mtc_solved_file(slice);
    let path = mtc_path(&site.db_dir(), slice);
    if !source.exists() || is_current(&path) {
        return Ok(());
    }
    // The work file's header and length checked.
    let count = slice.count();
    let file = crate::solve::store::open_work_file(&source, slice, count, MTC_BITS)?;
    let mut reader = std::io::BufReader::with_capacity(1 << 20, file);
    let mut header = vec![0u8; PAGE_BYTES];
    reader
        .read_exact(&mut header)
        .map_err(|e| solve_err!("{}: {e}", source.display()))?;
    // Read in chunks: a 7-piece slice's distances are hundreds of megabytes.
    let mut failed = None;
    let mut chunk = vec![0u8; 1 << 20];
    let (mut at, mut len, mut left) = (0, 0, count);
    let bytes = std::iter::from_fn(|| {
        if at == len {
            if left == 0 {
                return None;
            }
            len = chunk.len().min(left as usize);
            if let Err(e) = reader.read_exact(&mut chunk[..len]) {
                failed = Some(e);
                return None;
            }
            left -= len as u64;
            at = 0;
        }
        at += 1;
        Some(chunk[at - 1])
    });
    let coded = code_mtc(slice, bytes);
    if let Some(e) = failed {
        return Err(solve_err!("reading {}: {e}", source.display()));
    }
    let coded =
        coded.ok_or_else(|| solve_err!("{}: not one distance a position", source.display()))?;
    super::publish::ensure_version_line(
        &crate::db::mtc::mtc_dir(&site.db_dir()),
        crate::db::mtc::MTC_VERSION_LINE,
    )?;
    let parts = site.db_dir().join("parts");
    std::fs::create_dir_all(&parts).map_err(|e| solve_err!("{}: {e}", parts.display()))?;
    let tmp_name = parts.join(format!("{slice}.mtc"));
    crate::files::remove_stale_temporaries(&tmp_name, std::time::Duration::from_secs(3600));
    // Threads of one process may write the same slice at once: each its own temporary.
    let tmp = super::publish::unique_tmp(&parts, &format!("{slice}.mtc"));
    std::fs::write(&tmp, &coded)
        .and_then(|_| std::fs::File::open(&tmp)?.sync_all())
        .and_then(|_| std::fs::rename(&tmp, &path))
        .and_then(|_| sync_dir(&path))
        .map_err(|e| solve_err!("publishing {}: {e}", path.display()))
}

/// What a position's moves say of its distance: between `lo` and `hi` plies (a stored
/// "short" successor is known only to be below its file's threshold).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Bounds {
    lo: u32,
    hi: u32,
}

impl Bounds {
    fn fits(self, stored: Stored, threshold: u32) -> bool {
        match stored {
            Stored::Short => self.lo < threshold,
            Stored::Plies(d) => self.lo <= d && d <= self.hi,
        }
    }
}

/// What one `mtcver` job reads: the values of the slice, its mirror and the slices its
/// conversions reach (the solver's, which `ver` has checked, while the pair's `solved/`
/// files exist; else the compressed files': the slice's and its mirror's decoded when the
/// database has room, everything else probed), and the mirror's distances in memory (every
/// king move reaches the mirror: a byte a position when the job's buffers hold them, else
/// runs, each lookup a search of a group's runs).
struct Successors<'a> {
    lookup: DbLookup,
    mirror: Option<Mirror<'a>>,
    exact: Option<ExactValues>,
    mirror_index: &'a SliceIndex,
    mirror_runs: MtcRuns,
    /// Lookups of `mirror_runs` left before they are held a byte a position
    /// ([`LOOKUPS_TO_FLATTEN`]; `u64::MAX`: never).
    flatten_in: u64,
    mirror_threshold: u32,
    /// [`Successors::king_moves`] of the position looked at.
    kings: [u64; MAX_MOVES],
}

/// A job flattens its mirror's runs ([`MtcRuns::flatten`]), when they are larger than the
/// cache, after a lookup for every this many of the mirror's positions. Such runs take
/// three or four cache misses a lookup, a byte a position one (prefetched) but a pass
/// writing the mirror's positions into fresh memory, the time of some 40 lookups a
/// position. Waiting until the lookups have cost about what the pass costs keeps a job
/// within twice the better of the two. `run mtcver 2410.6- 0 8814592` (millions of lost
/// positions; 43 MB of runs for 44 M positions): 2.5-6.2 s with runs, 0.9-1.15 flat. Runs
/// that fit the cache are not worth it: `2320.6-` (3.6 MB of runs for 145 M positions),
/// 0.55 s with runs, 0.85 flat.
const LOOKUPS_TO_FLATTEN: u64 = 32;

/// Checks the stored distance of every won and lost position of the job's range against
/// its moves: a won position's winning moves and a lost position's moves, each a
/// conversion (1 ply) or a king move (1 + the stored distance it reaches), give bounds its
/// stored value must lie in (an exact value must equal an exact bound; a short one must be
/// possible below the threshold).
///
/// A position with a capture converts at its first move, so it is valued (probed, a
/// search) only when it stores an exact distance; `looked` counts it, `win`/`loss` count
/// the quiet positions by value. One without a king converts at its first move too: a short
/// distance is all it can store, and its moves are read only when it stores another.
pub fn verify_mtc_range(
    site: &Site,
    db: &Arc<Database>,
    job: &Job,
    opts: &RunOptions,
) -> Result<Outcome> {
    let s = db.mtc_slice(&job.slice)?;
    let threshold = s.file.threshold;
    let values = db.slice(&job.slice)?;
    let exact = ExactValues::open(site, &job.slice, opts)?;
    let own = match exact {
        Some(_) => None,
        None => db.decoded(values)?,
    };
    let own_keeps_threats = !values.file.removal.removes(Kind::Threat);
    let mirror = db.mtc_slice(&job.slice.mirror())?;
    let mirror_runs = mirror.file.runs()?;
    // Runs larger than the cache miss it on every lookup: once it pays, held a byte a
    // position instead, when the job's page buffers would hold that (its work files are
    // all in the database, so the buffers are free).
    let flatten_in = match mirror_runs.memory_bytes() >= larger_than_cache()
        && mirror.file.count <= (opts.buffers * PAGE_BYTES) as u64
    {
        true => (mirror.file.count / LOOKUPS_TO_FLATTEN).max(1),
        false => u64::MAX,
    };
    let mut next = Successors {
        lookup: DbLookup::new(db.clone()),
        mirror: match exact {
            Some(_) => None,
            None => Mirror::open(db, &job.slice)?,
        },
        exact,
        mirror_index: &mirror.index,
        mirror_runs,
        flatten_in,
        kings: [u64::MAX; MAX_MOVES],
        mirror_threshold: mirror.file.threshold,
    };
    let mut moves = MoveList::new();
    let mut e = s.index.enumerate_from(job.first);
    let mut stats = PhaseStats::default();
    let mut at = job.first;
    while at < job.last {
        if stop_requested(opts) {
            return Ok(from_the_start(job));
        }
        let end = (at + STOP_CHECK).min(job.last);
        s.file.for_each_run(at, end, |stored, first, last| {
            for i in first..last {
                debug_assert_eq!(e.index(), i);
                let pos = e.position();
                e.advance();
                let capture = has_capture(&pos);
                if capture {
                    // Every move converts: a won or lost position is 1 ply away.
                    stats.looked += 1;
                    if stored == Stored::Short {
                        continue;
                    }
                }
                let value = match (&next.exact, &own) {
                    (Some(exact), _) => exact.own.get(i),
                    (None, Some(own)) if stores(own_keeps_threats, &pos) => own.get(i),
                    _ => next.lookup.probe(&pos)?,
                };
                if value == Value::Draw {
                    continue;
                }
                // Without a king every move is a man's, which converts: won or lost, at most
                // 1 ply (0 without moves), short under any threshold, as with a capture.
                if stored == Stored::Short && pos.black_kings() == 0 {
                    stats.count(value);
                    stats.looked += 1;
                    continue;
                }
                generate_moves(&pos, &mut moves);
                let fits = match (value, stored) {
                    (Value::Win, Stored::Short) => next.wins_short(&pos, moves.as_slice())?,
                    (Value::Loss, Stored::Short) => {
                        next.loses_short(&pos, moves.as_slice(), threshold)
                    }
                    _ => next
                        .bounds(&pos, value, moves.as_slice())?
                        .fits(stored, threshold),
                };
                if !fits {
                    let b = next.bounds(&pos, value, moves.as_slice())?;
                    return Err(solve_err!(
                        "ver {}: position {i} ({}, {value}) has {} stored, but its moves give {}",
                        job.slice,
                        position_fen(&pos),
                        match stored {
                            Stored::Short => format!("fewer than {threshold} plies"),
                            Stored::Plies(d) => format!("{d} plies"),
                        },
                        match b.lo == b.hi {
                            true => format!("{} plies", b.lo),
                            false => format!("{} to {} plies", b.lo, b.hi),
                        }
                    ));
                }
                if !capture {
                    stats.looked += 1;
                    match value {
                        Value::Win => stats.win += 1,
                        _ => stats.loss += 1,
                    }
                }
            }
            Ok::<_, crate::solve::SolveError>(())
        })?;
        at = end;
    }
    Ok(Outcome::Done(stats))
}

impl Successors<'_> {
    /// The value of `child`, reached from `pos` by `m` (a king move: `Some` of its index in
    /// the mirror).
    #[inline]
    fn value(
        &mut self,
        children: &mut QuietChildren,
        pos: &crate::Position,
        m: &crate::Move,
        child: &crate::Position,
        king_move: Option<u64>,
    ) -> Result<Value> {
        if let Some(exact) = &mut self.exact {
            return match king_move {
                Some(i) => Ok(exact.mirror.get(i)),
                None if is_conversion(pos, m) => exact.lower.value(child),
                None => {
                    let i = children.of_move(self.mirror_index, pos, m, child);
                    Ok(exact.mirror.get(i))
                }
            };
        }
        match (king_move, self.mirror.as_mut()) {
            (Some(i), Some(mirror)) => mirror.value_at(&mut self.lookup, i, child),
            _ => successor_value(
                &mut self.lookup,
                self.mirror.as_mut(),
                children,
                pos,
                m,
                child,
            ),
        }
    }

    /// Puts in `kings` the mirror's index of each of `moves` that stays there (a king move;
    /// [`u64::MAX`] for one that converts), its distance (and with `values`, its value)
    /// asked of memory: a position's lookups, each a cache miss at random, then wait for
    /// memory together. (`kings` is the job's: a fresh array a position cost 5 % in
    /// filling it.)
    fn king_moves(
        &mut self,
        children: &mut QuietChildren,
        pos: &crate::Position,
        moves: &[crate::Move],
        values: bool,
    ) {
        for (k, m) in moves.iter().enumerate() {
            self.kings[k] = match converts(pos, m) {
                true => u64::MAX,
                false => {
                    let i = children.index(self.mirror_index, &pos.successor(m), true);
                    self.mirror_runs.prefetch(i);
                    if values && let Some(exact) = &self.exact {
                        exact.mirror.prefetch(i);
                    }
                    i
                }
            };
        }
    }

    /// The mirror index [`Successors::king_moves`] found for move `k`, if a king move.
    #[inline]
    fn king_move(&self, k: usize) -> Option<u64> {
        Some(self.kings[k]).filter(|&i| i != u64::MAX)
    }

    /// The stored distance of the mirror's position `i`.
    #[inline]
    fn stored(&mut self, i: u64) -> Stored {
        self.flatten_in -= 1;
        if self.flatten_in == 0 {
            self.mirror_runs.flatten();
            self.flatten_in = u64::MAX;
        }
        self.mirror_runs.get(i)
    }

    /// Whether a lost position stored as short (below `threshold`) can be: every move is
    /// 1 ply when it converts and 1 more than the distance it reaches otherwise, and the
    /// longest counts. What [`Successors::bounds`] finds, without its values or bounds: a
    /// loser's moves are all read, and only a king move can reach past the threshold.
    fn loses_short(
        &mut self,
        pos: &crate::Position,
        moves: &[crate::Move],
        threshold: u32,
    ) -> bool {
        if moves.is_empty() {
            return true;
        }
        let mut children = QuietChildren::default();
        self.king_moves(&mut children, pos, moves, false);
        for k in 0..moves.len() {
            let Some(i) = self.king_move(k) else {
                continue;
            };
            if let Stored::Plies(e) = self.stored(i)
                && e + 1 >= threshold
            {
                return false;
            }
        }
        // Every other move, and a king move to a short position, is at least 1 ply.
        1 < threshold
    }

    /// Whether a won position stored as short has a winning move below the threshold: a
    /// conversion, or a king move to a short position. The moves that stay in the mirror
    /// are read first; a capture's or a promotion's value is a probe into another slice.
    fn wins_short(&mut self, pos: &crate::Position, moves: &[crate::Move]) -> Result<bool> {
        // Most stop at their first move: no child is indexed or asked of memory ahead.
        let mut children = QuietChildren::default();
        for m in moves.iter().filter(|m| !is_conversion(pos, m)) {
            let child = pos.successor(m);
            let king_move =
                (!converts(pos, m)).then(|| children.index(self.mirror_index, &child, true));
            if king_move.is_some_and(|i| self.stored(i) != Stored::Short) {
                continue;
            }
            if self.value(&mut children, pos, m, &child, king_move)? == Value::Loss {
                return Ok(true);
            }
        }
        for m in moves.iter().filter(|m| is_conversion(pos, m)) {
            let child = pos.successor(m);
            let v = match &mut self.exact {
                Some(exact) => exact.lower.value(&child)?,
                None => self.lookup.probe(&child)?,
            };
            if v == Value::Loss {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The bounds the moves of `pos` (valued `value`, won or lost) give its distance.
    fn bounds(
        &mut self,
        pos: &crate::Position,
        value: Value,
        moves: &[crate::Move],
    ) -> Result<Bounds> {
        if moves.is_empty() {
            return Ok(Bounds { lo: 0, hi: 0 });
        }
        let win = value == Value::Win;
        let mut children = QuietChildren::default();
        self.king_moves(&mut children, pos, moves, win);
        let mut best: Option<Bounds> = None;
        for (k, m) in moves.iter().enumerate() {
            let king_move = self.king_move(k);
            let child = pos.successor(m);
            // The winner's distance counts only its winning moves.
            if win && self.value(&mut children, pos, m, &child, king_move)? != Value::Loss {
                continue;
            }
            let this = match king_move.map(|i| self.stored(i)) {
                None => Bounds { lo: 1, hi: 1 },
                Some(Stored::Plies(e)) => Bounds {
                    lo: e + 1,
                    hi: e + 1,
                },
                Some(Stored::Short) => Bounds {
                    lo: 1,
                    hi: self.mirror_threshold,
                },
            };
            best = Some(match best {
                None => this,
                Some(b) if win => Bounds {
                    lo: b.lo.min(this.lo),
                    hi: b.hi.min(this.hi),
                },
                Some(b) => Bounds {
                    lo: b.lo.max(this.lo),
                    hi: b.hi.max(this.hi),
                },
            });
        }
        best.ok_or_else(|| {
            solve_err!(
                "{} is won but no move wins (the values are not final)",
                position_fen(pos)
            )
        })
    }
}
