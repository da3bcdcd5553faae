//! The phases of paper Figure 4 / Appendix A on a page-aligned range of one slice.
//!
//! Every job writes only positions of its own range of its own slice; everything else (the
//! mirror, other ranges, finished slices) is read from disk. Values only move towards
//! certainty, so reading a neighbour's older page is safe: anything it resolves later is in
//! its position queue and reaches us in the next round.

use super::checkpoint::{self, Checkpoint};
use super::pool::Load;
use super::posqueue::{self, QueueWriter};
use super::running::{Clock, Outcome, PhaseStats, RunOptions, Tick, check_resume};
use super::solved::{
    Located, LowerSlices, SolvedValues, best_move_value, best_of, best_of_located,
    larger_than_cache,
};
use super::store::{self, PAGE_POSITIONS, PageCache, Wanted, ensure_work_file};
use super::{Job, Phase, Result, Site, Value};
use crate::board::{MoveList, generate_moves, has_capture};
use crate::slice::index::{NearMemo, QuietChildren, SliceIndex};
use crate::slice::{QuietConversions, is_conversion};
use crate::{Position, solve_err};

/// Capture positions `cap` values together: enough to keep many of their lower slices'
/// memory round trips in flight.
const CAPTURE_BATCH: usize = 32;

/// The caches and indexing a job works with.
struct Work {
    job: Job,
    own: PageCache,
    own_ix: SliceIndex,
    /// The mirror's work file, read only; `None` when the slice is its own mirror.
    mirror: Option<PageCache>,
    mirror_ix: SliceIndex,
    /// `que` reads the mirror's queued positions in rising order: the last one's men and
    /// black kings, kept for the next.
    near: NearMemo,
    solved: Option<LowerSlices>,
    queue: Option<QueueWriter>,
    moves: MoveList,
    stats: PhaseStats,
    durable: bool,
    /// `cap` batches its captures, and `lookup` its conversions, once a lower slice the job
    /// read is larger than the cache (decided at page starts).
    batch_lower: bool,
    /// `noio` asks memory for all quiet children of a position before reading any, once the
    /// mirror is larger than the cache; their indexes wait here (one array for the job:
    /// filling a fresh one per position costs more than reading it).
    prefetch_children: bool,
    quiet: [u64; crate::board::MAX_MOVES],
    lookups: Vec<(u64, Position, QuietConversions, Located)>,
    /// `cap`'s capture positions waiting for [`Work::flush_captures`], each one's first
    /// capture located (`ends[k]`: where position `k`'s other captures end in `batch_moves`).
    captures: Vec<(u64, Position)>,
    located: Vec<Located>,
    /// The other captures of each batched position, back to back.
    batch_moves: Vec<crate::Move>,
    ends: Vec<usize>,
}

impl Work {
    /// Opens the job's work files and reads the pages it will touch in bulk (its own range,
    /// and the whole mirror that noio, que and winmove look up at random), unless `queued`,
    /// the item count of a `que` round, says the round is too short for that to pay.
    fn open(site: &Site, job: &Job, opts: &RunOptions, queued: Option<usize>) -> Result<Work> {
        let s = job.slice;
        let m = s.mirror();
        let path = site.work_file(&s);
        if !path.exists() {
            if site.is_solved(&s) {
                return Err(solve_err!("job {job}: slice {s} is already solved"));
            }
            return Err(solve_err!(
                "job {job}: work file {} does not exist (the slice's cap jobs create it)",
                path.display()
            ));
        }
        let own_ix = SliceIndex::new(s);
        let own =
            PageCache::open_write(&path, &s, own_ix.count(), opts.buffers, job.first..job.last)?;
        own.reserve_writable(&format!("job {job}"))?;
        let mirror_ix = SliceIndex::new(m);
        // 4 positions a byte.
        let prefetch_children = mirror_ix.count() / 4 > larger_than_cache() as u64;
        let needs_mirror = matches!(job.phase, Phase::WinMove | Phase::NoIo | Phase::Que);
        let mirror = if needs_mirror && !s.is_own_mirror() {
            let mp = site.work_file(&m);
            Some(PageCache::open_read(
                &mp,
                &m,
                mirror_ix.count(),
                opts.buffers,
            )?)
        } else {
            None
        };
        let mut own = own;
        let mut mirror = mirror;
        if queued.is_none_or(|n| preload_pays(n as u64, mirror_ix.count())) {
            own.preload(
                job.first / PAGE_POSITIONS,
                job.last.div_ceil(PAGE_POSITIONS),
                Load::Read,
            )?;
            if let Some(m) = &mut mirror {
                m.preload(0, m.count().div_ceil(PAGE_POSITIONS), Load::Read)?;
            }
        }
        let solved = match job.phase.reads_solved() {
            true => Some(opts.lower_slices(site)?),
            false => None,
        };
        let queue = (job.phase.has_round())
            .then(|| QueueWriter::new(&site.queue_file(&s, job.round, job.first)));
        Ok(Work {
            job: *job,
            own,
            own_ix,
            mirror,
            mirror_ix,
            near: NearMemo::default(),
            solved,
            queue,
            moves: MoveList::new(),
            stats: PhaseStats::default(),
            durable: opts.durable,
            batch_lower: false,
            prefetch_children,
            quiet: [0; crate::board::MAX_MOVES],
            lookups: Vec::with_capacity(CAPTURE_BATCH),
            captures: Vec::with_capacity(CAPTURE_BATCH),
            located: Vec::with_capacity(CAPTURE_BATCH),
            batch_moves: Vec::new(),
            ends: Vec::with_capacity(CAPTURE_BATCH),
        })
    }

    /// Page `page` of the mirror's values (this slice's own when it is its own mirror).
    fn mirror_page(&mut self, page: u64) -> Result<&[u8]> {
        Ok(match &mut self.mirror {
            Some(m) => m.page(page)?,
            None => self.own.page(page)?,
        })
    }

    #[inline(always)]
    fn mirror_value(&mut self, index: u64) -> Result<Value> {
        Ok(match &mut self.mirror {
            Some(m) => m.get(index)?,
            None => self.own.get(index)?,
        })
    }

    /// Sets a resolution of this job and queues it when the phase keeps a queue.
    #[inline]
    fn resolve(&mut self, index: u64, v: Value) -> Result<()> {
        self.own.set(index, v)?;
        self.stats.count(v);
        if let Some(q) = &mut self.queue {
            q.push(index);
        }
        Ok(())
    }

    /// `DoCaptures`: a capture position takes the best value among its captures. Taken in
    /// batches ([`Work::flush_captures`]), so that the lower slices' memory is asked for
    /// many captures at once.
    fn cap(&mut self, index: u64, pos: &Position) -> Result<()> {
        if self.own.get(index)? != Value::Unknown || !has_capture(pos) {
            return Ok(());
        }
        self.stats.looked += 1;
        let solved = self.solved.as_mut().expect("cap reads finished slices");
        if !self.batch_lower {
            // Lower slices that fit the cache are read as fast one capture at a time.
            let best = best_move_value(solved, pos, &mut self.moves)?;
            return self.resolve(index, best);
        }
        self.captures.push((index, *pos));
        if self.captures.len() == CAPTURE_BATCH {
            self.flush_captures()?;
        }
        Ok(())
    }

    /// Values the batched capture positions: first each one's first capture is found in its
    /// lower slice (its byte asked of memory), then each position's best in move order,
    /// stopping at a won capture as one at a time does (most positions have one capture).
    fn flush_captures(&mut self) -> Result<()> {
        if !self.batch_lower {
            // Decided at each page: batches once a lower slice read is beyond the cache.
            self.batch_lower = self.reads_beyond_cache();
            return Ok(());
        }
        let solved = self.solved.as_mut().expect("cap reads finished slices");
        self.located.clear();
        self.ends.clear();
        self.batch_moves.clear();
        for (_, pos) in &self.captures {
            generate_moves(pos, &mut self.moves);
            let moves = self.moves.as_slice();
            self.located.push(solved.locate(&pos.successor(&moves[0]))?);
            self.batch_moves.extend_from_slice(&moves[1..]);
            self.ends.push(self.batch_moves.len());
        }
        let captures = std::mem::take(&mut self.captures);
        let mut from = 0;
        for (k, &(index, pos)) in captures.iter().enumerate() {
            let solved = self.solved.as_mut().expect("cap reads finished slices");
            let rest = &self.batch_moves[from..self.ends[k]];
            let best = best_of_located(solved, &pos, self.located[k], rest)?;
            from = self.ends[k];
            self.resolve(index, best)?;
        }
        self.captures = captures;
        self.captures.clear();
        Ok(())
    }

    /// `DoLookups`: conversion moves give a lower bound (or the value when every move
    /// converts); a position without moves is lost.
    fn lookup(&mut self, index: u64, pos: &Position) -> Result<()> {
        if self.own.get(index)? != Value::Unknown {
            return Ok(());
        }
        self.stats.looked += 1;
        // `cap` has resolved every position with a capture; the conversions left are steps of
        // the leading men, found from the bitboards without generating every move.
        let c = QuietConversions::of(pos);
        if self.batch_lower && !c.as_slice().is_empty() {
            return self.lookup_batched(index, pos, c);
        }
        let solved = self.solved.as_mut().expect("lookup reads finished slices");
        let best = best_of(solved, pos, c.as_slice())?;
        self.lookup_result(index, best, pos)
    }

    /// [`Work::lookup`] in `cap`'s way of batches: the first conversion located now, read at
    /// the flush.
    #[inline(never)]
    fn lookup_batched(&mut self, index: u64, pos: &Position, c: QuietConversions) -> Result<()> {
        let solved = self.solved.as_mut().expect("lookup reads finished slices");
        let at = solved.locate(&pos.successor(&c.as_slice()[0]))?;
        self.lookups.push((index, *pos, c, at));
        if self.lookups.len() == CAPTURE_BATCH {
            self.flush_lookups()?;
        }
        Ok(())
    }

    /// Whether a lower slice the job has read is larger than the cache.
    fn reads_beyond_cache(&self) -> bool {
        (self.solved.as_ref()).is_some_and(|s| s.largest_bytes() > larger_than_cache())
    }

    /// A loss is known only when every move converts (or there is none).
    #[inline(always)]
    fn lookup_result(&mut self, index: u64, best: Value, pos: &Position) -> Result<()> {
        match best != Value::Loss || !QuietConversions::others(pos) {
            true => self.resolve(index, best),
            false => Ok(()),
        }
    }

    /// Values the batched `lookup` positions (each one's first conversion located already);
    /// at each page, whether to batch from now on.
    fn flush_lookups(&mut self) -> Result<()> {
        if !self.batch_lower {
            self.batch_lower = self.reads_beyond_cache();
            return Ok(());
        }
        let lookups = std::mem::take(&mut self.lookups);
        for (index, pos, c, at) in &lookups {
            let solved = self.solved.as_mut().expect("lookup reads finished slices");
            let best = best_of_located(solved, pos, *at, &c.as_slice()[1..])?;
            self.lookup_result(*index, best, pos)?;
        }
        self.lookups = lookups;
        self.lookups.clear();
        Ok(())
    }

    /// `DoNoIo`: improve an unknown or "at least a draw" value from the mirror's values of the
    /// non-conversion moves. Returns the new value when it changed.
    fn noio_value(&mut self, pos: &Position, before: Value) -> Result<Option<Value>> {
        if before.is_resolved() || (before == Value::Draw && has_capture(pos)) {
            return Ok(None);
        }
        self.stats.looked += 1;
        generate_moves(pos, &mut self.moves);
        // Unknown: a loss unless some move's value is open; Draw: only a win can improve it.
        let mut all_win = before == Value::Unknown;
        let lost_child = self.read_quiet_children(pos, |v| match v {
            Value::Loss => true,
            Value::Win => false,
            _ => {
                all_win = false;
                false
            }
        })?;
        Ok(match lost_child {
            true => Some(Value::Win),
            false => all_win.then_some(Value::Loss),
        })
    }

    /// Whether every quiet child of `pos` is won, read until the first that is not.
    fn quiet_children_all_win(&mut self, pos: &Position) -> Result<bool> {
        self.stats.looked += 1;
        generate_moves(pos, &mut self.moves);
        Ok(!self.read_quiet_children(pos, |v| v != Value::Win)?)
    }

    /// Reads the mirror's values of the quiet children of `pos` (its moves are in
    /// `self.moves`) in move order until `stop` says so; whether it stopped. Once the
    /// mirror is larger than the cache (8 pieces), every quiet child's index is found, and
    /// its value asked of memory, before any is read: the round trips overlap, at the price
    /// of ranking the children after the one it stops at.
    #[inline(always)]
    fn read_quiet_children(
        &mut self,
        pos: &Position,
        mut stop: impl FnMut(Value) -> bool,
    ) -> Result<bool> {
        if self.prefetch_children {
            let moves = self.moves.as_slice();
            let (mirror, own) = (&self.mirror, &self.own);
            QuietChildren::indexes(
                &self.mirror_ix,
                pos,
                moves,
                &mut self.quiet,
                |i| match mirror {
                    Some(mirror) => mirror.prefetch(i),
                    None => own.prefetch(i),
                },
            );
            for k in 0..self.moves.len() {
                let index = self.quiet[k];
                if index != u64::MAX && stop(self.mirror_value(index)?) {
                    return Ok(true);
                }
            }
            return Ok(false);
        }
        let mut children = QuietChildren::default();
        for i in 0..self.moves.len() {
            let m = self.moves.as_slice()[i];
            if is_conversion(pos, &m) {
                continue;
            }
            let index = children.of_move(&self.mirror_ix, pos, &m, &pos.successor(&m));
            if stop(self.mirror_value(index)?) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn noio(&mut self, index: u64, pos: &Position) -> Result<()> {
        let before = self.own.get(index)?;
        if let Some(v) = self.noio_value(pos, before)? {
            self.resolve(index, v)?;
        }
        Ok(())
    }

    /// Fills page `page` (restricted to `[from, last)`): unknown and "at least a draw" become
    /// draws; counts the final values. Works a byte (4 positions) at a time.
    fn fill_page(&mut self, page: u64, from: u64) -> Result<()> {
        let end = ((page + 1) * PAGE_POSITIONS).min(self.job.last);
        let bytes = self.own.page_mut(page)?;
        let lo = (from % PAGE_POSITIONS) as usize;
        let hi = (end - page * PAGE_POSITIONS) as usize;
        for (k, b) in bytes
            .iter_mut()
            .enumerate()
            .take(hi.div_ceil(4))
            .skip(lo / 4)
        {
            // Positions of this byte that lie inside [lo, hi).
            let first = (k * 4).max(lo) - k * 4;
            let last = (k * 4 + 4).min(hi) - k * 4;
            let keep = (((1u16 << (2 * last)) - 1) & !((1u16 << (2 * first)) - 1)) as u8;
            let low = *b & 0x55;
            let high = (*b >> 1) & 0x55;
            let unknown = !(low | high) & 0x55 & keep;
            *b |= unknown | (unknown << 1);
            let low = *b & 0x55 & keep;
            let high = (*b >> 1) & 0x55 & keep;
            self.stats.win += (low & !high).count_ones() as u64;
            self.stats.loss += (high & !low).count_ones() as u64;
            self.stats.draw += (low & high).count_ones() as u64;
        }
        self.stats.looked += (hi - lo) as u64;
        Ok(())
    }

    /// The boards in this slice, inside this job's range, that step into the mirror's
    /// position `child`, each with its index (`que` reads their moves from the board rather
    /// than unranking the index again), their values asked of memory (the job's range is
    /// read at random; the round trips of one child's predecessors overlap). A board with a
    /// capture cannot make that step. A whole-slice job never sees one; a part of the slice
    /// may, and leaves it alone by its value: `cap` values every capture position (a win, a
    /// loss or a draw), so an unknown one never has a capture, and only a draw asks
    /// [`has_capture`]. Most predecessors are resolved by the time `que` meets them, and
    /// the test cost a fifth of this function. `keep` makes an entry of `out` from a
    /// predecessor's index and board (`winmove` keeps only the index).
    #[inline(always)]
    fn predecessors<T>(
        &self,
        child: &Position,
        out: &mut Vec<T>,
        keep: impl Fn(u64, Position) -> T,
    ) {
        out.clear();
        let own = &self.own;
        let range = self.job.first..self.job.last;
        self.own_ix
            .for_each_quiet_predecessor_in(child, range, |i, q| {
                own.prefetch(i);
                out.push(keep(i, q));
            });
    }

    /// `DoWinningMoves` for the mirror's loss at `child_index`: its predecessors here win.
    /// Only the indexes are kept: a predecessor's board is not read again here.
    fn winmove(&mut self, child: &Position, preds: &mut Vec<u64>) -> Result<()> {
        self.stats.looked += 1;
        self.predecessors(child, preds, |i, _| i);
        for &i in preds.iter() {
            // An unknown board never has a capture: `cap` valued all of those.
            if self.own.get(i)? == Value::Unknown {
                debug_assert!(
                    !has_capture(&self.own_ix.position_unchecked(i)),
                    "cap left a capture position unknown"
                );
                self.resolve(i, Value::Win)?;
            }
        }
        Ok(())
    }

    /// `DoQueue` for one queued resolution of the mirror: re-evaluate its predecessors here.
    /// A lost child makes every open predecessor a win (the move into it wins) without
    /// reading anything else. A won child can only complete a predecessor's loss, so an
    /// unknown predecessor reads its children only until the first that is not won; one
    /// that is at least a draw cannot change. A lost child that such a predecessor has
    /// besides was resolved by the mirror too, so its own entry reaches the predecessor,
    /// in this round or the next: the final values are the same as reading every child.
    fn que(&mut self, child_index: u64, preds: &mut Vec<(u64, Position)>) -> Result<()> {
        let child = self.mirror_ix.position_near(child_index, &mut self.near);
        let resolved = self.mirror_value(child_index)?;
        self.predecessors(&child, preds, |i, q| (i, q));
        for &(i, pos) in preds.iter() {
            let before = self.own.get(i)?;
            // A draw with a capture is `cap`'s final value: it has no quiet move.
            if before.is_resolved() || (before == Value::Draw && has_capture(&pos)) {
                continue;
            }
            let after = match (resolved, before) {
                (Value::Loss, _) => Some(Value::Win),
                (Value::Win, Value::Unknown) => {
                    self.quiet_children_all_win(&pos)?.then_some(Value::Loss)
                }
                (Value::Win, _) => None,
                // Queued entries are resolutions; anything else is read the whole way.
                _ => self.noio_value(&pos, before)?,
            };
            if let Some(v) = after {
                self.resolve(i, v)?;
            }
        }
        Ok(())
    }

    /// Makes everything up to `next` durable: queue entries, then pages, then the record.
    fn checkpoint(&mut self, site: &Site, next: u64, complete: bool) -> Result<()> {
        let durable = self.durable;
        if let Some(q) = &mut self.queue {
            q.flush(durable)?;
        }
        self.own.flush(durable)?;
        if !durable {
            // A record without synced data behind it could not be trusted after a crash;
            // whoever runs jobs without `durable` redoes them from scratch instead.
            return Ok(());
        }
        checkpoint::save(
            site,
            &self.job,
            &Checkpoint {
                next,
                complete,
                stats: self.stats,
            },
            durable,
        )
    }
}

/// Runs a job of a scan phase (`cap`, `lookup`, `noio`, `fill`, `winmove`, `que`; the
/// others are [`super::run::run_job`]'s), resuming from its checkpoint if it has one, and
/// checkpoints at the end.
pub(crate) fn run_scan_job(site: &Site, job: &Job, opts: &RunOptions) -> Result<Outcome> {
    let saved = checkpoint::load(site, job)?;
    if let Some(c) = saved
        && c.complete
    {
        return Ok(Outcome::Done(c.stats));
    }
    if job.phase == Phase::Cap {
        ensure_work_file(site, &job.slice, opts.durable)?;
    }
    // A que round reads the mirror's queue of the round before; a short one (the long tail
    // of rounds) touches a few pages, cheaper read one at a time than every page in bulk.
    let items = match job.phase {
        Phase::Que => posqueue::read_round(site, &job.slice.mirror(), job.round - 1)?,
        _ => Vec::new(),
    };
    let queued = (job.phase == Phase::Que).then_some(items.len());
    let mut w = Work::open(site, job, opts, queued)?;
    let mut clock = Clock::new(opts);
    if let Some(c) = saved {
        w.stats = c.stats;
    }
    let resume = saved.map(|c| c.next);
    let end = match job.phase {
        Phase::Cap | Phase::Lookup | Phase::NoIo | Phase::Fill => {
            let start = resume.unwrap_or(job.first);
            check_resume(job, start, job.first, job.last)?;
            scan_range(site, &mut w, &mut clock, start)?
        }
        Phase::WinMove => {
            let start = resume.unwrap_or(0);
            check_resume(job, start, 0, w.mirror_ix.count())?;
            scan_mirror_losses(site, &mut w, &mut clock, start)?
        }
        Phase::Que => {
            let start = resume.unwrap_or(0);
            check_resume(job, start, 0, items.len() as u64)?;
            scan_queue(site, &mut w, &mut clock, &items, start)?
        }
        Phase::Build | Phase::Ver | Phase::Pair | Phase::Mtc | Phase::MtcVer => {
            unreachable!("not a scan phase: {}", job.phase)
        }
    };
    Outcome::after_scan(end, w.stats, || w.checkpoint(site, u64::MAX, true))
}

/// Pages a queued item of a `que` round is taken to touch: its own page in the mirror, its
/// predecessors' pages here and their children's in the mirror. Most predecessors are
/// resolved by the later rounds, so most items touch far fewer.
const PAGES_AN_ITEM: u64 = 4;

/// Whether a `que` job of `items` queued items, on a mirror of `mirror_count` positions,
/// should read its pages in bulk: when they would touch a good part of them anyway. A page
/// read alone costs a system call, one read in bulk a copy and the faults of its memory, and
/// a late round of a 7-piece pair, a few hundred items, spent 40 ms of its 50 ms reading
/// 28 MB it never looked at.
fn preload_pays(items: u64, mirror_count: u64) -> bool {
    items.saturating_mul(PAGES_AN_ITEM) >= mirror_count / PAGE_POSITIONS
}

/// Walks the job's own positions in index order from `start`. Returns the index it stopped
/// at, or `None` when the range is done.
fn scan_range(site: &Site, w: &mut Work, clock: &mut Clock, start: u64) -> Result<Option<u64>> {
    let phase = w.job.phase;
    let last = w.job.last;
    if phase == Phase::Fill {
        let mut i = start;
        while i < last {
            if i > start && page_boundary(site, w, clock, i)? {
                return Ok(Some(i));
            }
            w.fill_page(i / PAGE_POSITIONS, i)?;
            i = (i / PAGE_POSITIONS + 1) * PAGE_POSITIONS;
        }
        return Ok(None);
    }
    // `cap` is a slice's first pass: everything is unknown.
    let wanted = match phase {
        Phase::Cap => Wanted::Any,
        Phase::Lookup => Wanted::Unknown,
        _ => Wanted::UnknownOrDraw,
    };
    let ix = SliceIndex::new(w.job.slice);
    let mut e = ix.enumerate_from(start);
    let mut i = start;
    while i < last {
        let page = i / PAGE_POSITIONS;
        let page_first = page * PAGE_POSITIONS;
        if i == page_first && i > start {
            // Every value of the pages before is set before a checkpoint may follow.
            w.flush_lookups()?;
            if page_boundary(site, w, clock, i)? {
                return Ok(Some(i));
            }
        }
        let end = (page_first + PAGE_POSITIONS).min(last);
        if wanted == Wanted::Any {
            e.skip_to(i);
            while i < end {
                w.cap(i, &e.position())?;
                e.advance();
                i += 1;
            }
            // Every value of the page is set before its end may be checkpointed.
            w.flush_captures()?;
            continue;
        }
        // Only positions whose value the phase may change are decoded and looked at.
        let bytes = w.own.page(page)?;
        let from = (i - page_first) as usize;
        let Some(p) = store::next_wanted(bytes, from, (end - page_first) as usize, wanted) else {
            i = end;
            continue;
        };
        i = page_first + p as u64;
        e.skip_to(i);
        let pos = e.position();
        match phase {
            Phase::Lookup => w.lookup(i, &pos)?,
            _ => w.noio(i, &pos)?,
        }
        i += 1;
    }
    w.flush_lookups()?;
    Ok(None)
}

/// At the start of page `i / PAGE_POSITIONS` of a scan: the previous page is done (the
/// sequential hint), and maybe checkpoint or stop. Returns true to stop.
fn page_boundary(site: &Site, w: &mut Work, clock: &mut Clock, i: u64) -> Result<bool> {
    w.own.done_with_page(i / PAGE_POSITIONS - 1);
    if let Some(m) = &mut w.mirror {
        m.done_with_page(i / PAGE_POSITIONS - 1);
    }
    tick(site, w, clock, i)
}

/// Asks the clock whether to checkpoint at `next` (the scan's resume point) or stop there;
/// checkpoints when told. Returns true to stop.
fn tick(site: &Site, w: &mut Work, clock: &mut Clock, next: u64) -> Result<bool> {
    match clock.tick(w.own.wants_flush()) {
        Tick::Go => Ok(false),
        Tick::Checkpoint => w.checkpoint(site, next, false).map(|_| false),
        Tick::Stop => w.checkpoint(site, next, false).map(|_| true),
    }
}

/// `winmove` from mirror index `start`: the mirror's losses, found 32 values a step in its
/// pages and decoded by an enumerator (not unranked one by one). Returns the index it
/// stopped at, or `None` when done.
fn scan_mirror_losses(
    site: &Site,
    w: &mut Work,
    clock: &mut Clock,
    start: u64,
) -> Result<Option<u64>> {
    let count = w.mirror_ix.count();
    let ix = w.mirror_ix.clone();
    let mut e = ix.enumerate_from(start);
    let mut preds = Vec::with_capacity(64);
    let mut k = start;
    while k < count {
        let page = k / PAGE_POSITIONS;
        let page_first = page * PAGE_POSITIONS;
        if k > start && (k == page_first || w.own.wants_flush()) && tick(site, w, clock, k)? {
            return Ok(Some(k));
        }
        let end = (page_first + PAGE_POSITIONS).min(count);
        let bytes = w.mirror_page(page)?;
        let from = (k - page_first) as usize;
        let to = (end - page_first) as usize;
        let Some(p) = store::next_wanted(bytes, from, to, Wanted::Loss) else {
            k = end;
            continue;
        };
        k = page_first + p as u64;
        e.skip_to(k);
        w.winmove(&e.position(), &mut preds)?;
        k += 1;
    }
    Ok(None)
}

/// `que` from item `start` of the queued mirror indices. Returns the item it stopped at, or
/// `None` when done.
fn scan_queue(
    site: &Site,
    w: &mut Work,
    clock: &mut Clock,
    items: &[u64],
    start: u64,
) -> Result<Option<u64>> {
    let mut preds = Vec::with_capacity(64);
    for k in start..items.len() as u64 {
        if k > start && (k % 1024 == 0 || w.own.wants_flush()) && tick(site, w, clock, k)? {
            return Ok(Some(k));
        }
        w.que(items[k as usize], &mut preds)?;
    }
    Ok(None)
}
