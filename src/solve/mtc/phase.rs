//! The `mtc` phase: round 1 scans a range of a slice, round `r` re-evaluates the king-move
//! predecessors, within the range, of the mirror's positions valued `r - 1` (the module
//! documentation of [`super`] has the rules).

use super::{converts, decode, encode};
use crate::board::{MoveList, generate_moves, has_capture, has_moves};
use crate::slice::index::{QuietChildren, SliceIndex};
use crate::solve::checkpoint::{self, Checkpoint};
use crate::solve::pool::Load;
use crate::solve::posqueue::{self, QueueWriter};
use crate::solve::running::{Clock, Outcome, PhaseStats, RunOptions, Tick, check_resume};
use crate::solve::solved::{SolvedSlice, SolvedValues, SolvedWorkFiles};
use crate::solve::stage::machine::mtc_scans;
use crate::solve::store::{MTC_BITS, PageCache};
use crate::solve::{Job, Result, Site, Value};
use crate::{Position, solve_err};
use std::sync::Arc;

type MtcCache = PageCache<MTC_BITS>;

// A watched move is a byte: 1 + its place in the move list.
const _: () = assert!(crate::board::MAX_MOVES < 256);

/// What an `mtc` job works with.
struct Work {
    job: Job,
    own: MtcCache,
    /// The watched king move of each lost position of the range not yet valued, a hint
    /// (`work/<slice>.mtw`; [`Work::lost_settles`]).
    watch: MtcCache,
    own_ix: SliceIndex,
    /// The mirror's distances, read only; `None` when the slice is its own mirror.
    mirror: Option<MtcCache>,
    mirror_ix: SliceIndex,
    /// The pair's final win/loss/draw values.
    own_wld: Arc<SolvedSlice>,
    mirror_wld: Arc<SolvedSlice>,
    /// Every finished slice, for the values conversions reach.
    solved: SolvedWorkFiles,
    queue: QueueWriter,
    moves: MoveList,
    /// The mirror indexes of a position's king moves' children
    /// ([`Work::index_king_children`]).
    king_children: [u64; crate::board::MAX_MOVES],
    /// Their places in the move list.
    king_moves: [u8; crate::board::MAX_MOVES],
    stats: PhaseStats,
    durable: bool,
    /// Resumed from a checkpoint (the fault point `mtc.checkpoint` is a fresh job's).
    resumed: bool,
    /// How what the job reads widely comes into memory: [`Load::Map`] in a round that
    /// follows the mirror's queue, which reads a small part of it; [`Load::Read`] (huge
    /// pages) in a scan, which reads all of it, most of it at random.
    load: Load,
}

impl Work {
    fn open(site: &Site, job: &Job, opts: &RunOptions, load: Load) -> Result<Work> {
        let s = job.slice;
        let m = s.mirror();
        for slice in [s, m] {
            if !site.is_solved(&slice) {
                return Err(solve_err!(
                    "job {job}: slice {slice} is not solved (moves to conversion need the \
                     pair's final win/loss/draw values)"
                ));
            }
        }
        let path = site.mtc_work_file(&s);
        let watch_path = site.mtc_watch_file(&s);
        for path in [&path, &watch_path] {
            if job.round == 1 {
                crate::solve::store::ensure_file(site, path, &s, MTC_BITS, opts.durable)?;
            } else if !path.exists() {
                return Err(solve_err!(
                    "job {job}: work file {} does not exist (round 1 creates it)",
                    path.display()
                ));
            }
        }
        let own_ix = SliceIndex::new(s);
        let mirror_ix = SliceIndex::new(m);
        // A round reads the mirror's distances at random (the replies of lost positions): a
        // cache smaller than the mirror re-reads a page from the OS for most of them, which
        // made 7-piece rounds crawl with the local build's 2,048 buffers. So it holds the
        // whole mirror: a byte a position (at most 178 MB at 7 pieces), its pages allocated
        // only as they are read. A slice that is its own mirror reads it through `own`.
        let mirror_buffers = opts
            .buffers
            .max(mirror_ix.count().div_ceil(MtcCache::PER_PAGE) as usize);
        let own_buffers = match job.round > 1 && s.is_own_mirror() {
            true => mirror_buffers,
            false => opts.buffers,
        };
        let mut own =
            MtcCache::open_write(&path, &s, own_ix.count(), own_buffers, job.first..job.last)?;
        own.reserve_writable(&format!("job {job}"))?;
        let watch = MtcCache::open_write(
            &watch_path,
            &s,
            own_ix.count(),
            own_buffers,
            job.first..job.last,
        )?;
        watch.reserve_writable(&format!("job {job}"))?;
        // Round 1 writes its whole range in order; later rounds touch the pages their
        // predecessors are on, read when needed (most rounds are short).
        if job.round == 1 {
            own.preload(
                job.first / MtcCache::PER_PAGE,
                job.last.div_ceil(MtcCache::PER_PAGE),
                Load::Read,
            )?;
        }
        let mirror = match job.round > 1 && !s.is_own_mirror() {
            true => Some(MtcCache::open_read(
                &site.mtc_work_file(&m),
                &m,
                mirror_ix.count(),
                mirror_buffers,
            )?),
            false => None,
        };
        // The pair's values: a round that follows the queue reads a few of them, and in its
        // own process they are not worth fresh memory (a shared store has them already).
        let store = opts.solved_store_as(site, load);
        Ok(Work {
            job: *job,
            own,
            watch,
            own_ix,
            mirror,
            mirror_ix,
            own_wld: store.get(s)?,
            mirror_wld: store.get(m)?,
            solved: SolvedWorkFiles::new(store),
            queue: QueueWriter::new(&site.queue_file(&s, job.round, job.first)),
            moves: MoveList::new(),
            king_children: [0; crate::board::MAX_MOVES],
            king_moves: [0; crate::board::MAX_MOVES],
            stats: PhaseStats::default(),
            durable: opts.durable,
            resumed: false,
            load,
        })
    }

    fn resolve(&mut self, index: u64, value: Value, plies: u32, queued: bool) -> Result<()> {
        if plies > super::MAX_PLIES {
            return Err(solve_err!(
                "job {}: position {index} is {plies} plies from a conversion, more than the \
                 {} a work file holds",
                self.job,
                super::MAX_PLIES
            ));
        }
        self.own.set_byte(index, encode(plies))?;
        match value {
            Value::Win => self.stats.win += 1,
            _ => self.stats.loss += 1,
        }
        if queued {
            self.queue.push(index);
        }
        Ok(())
    }

    /// Round 1 for position `index`: 0 without moves; 1 for a win by a conversion (or by a
    /// king move to a position without moves) and for a loss whose moves all convert.
    fn first(&mut self, index: u64, pos: &Position) -> Result<()> {
        let value = self.own_wld.get(index);
        if !matches!(value, Value::Win | Value::Loss) {
            return Ok(());
        }
        self.stats.looked += 1;
        // Every move of a capture position converts, and a won one has a winning move among
        // them: 1 either way, without generating the capture sequences or reading what they
        // reach (more than half of the round's instructions in `3300.--`, kings only).
        if has_capture(pos) {
            return self.resolve(index, value, 1, true);
        }
        // Without a king every move is a man's, which converts: the same, or 0 without moves.
        if pos.black_kings() == 0 {
            return match has_moves(pos) {
                true => self.resolve(index, value, 1, true),
                false => self.resolve(index, value, 0, false),
            };
        }
        generate_moves(pos, &mut self.moves);
        if self.moves.is_empty() {
            return self.resolve(index, value, 0, false);
        }
        let one = match value {
            Value::Loss => self.moves.iter().all(|m| converts(pos, m)),
            _ => self.wins_at_once(pos)?,
        };
        if one {
            self.resolve(index, value, 1, true)?;
        }
        Ok(())
    }

    /// Whether a won position without a capture (its moves in `self.moves`) wins in one ply:
    /// by a man's move to a lost position, read from the slice it reaches (most do, so these
    /// are read first), or by a king move to a position without moves, which is lost by the
    /// rules and needs no read.
    fn wins_at_once(&mut self, pos: &Position) -> Result<bool> {
        for k in 0..self.moves.len() {
            let m = self.moves.as_slice()[k];
            if converts(pos, &m) && self.solved.value(&pos.successor(&m))? == Value::Loss {
                return Ok(true);
            }
        }
        Ok(self
            .moves
            .iter()
            .any(|m| !converts(pos, m) && !has_moves(&pos.successor(m))))
    }

    /// Round `r` (from 2) for position `index`, won or lost and without a distance, by its
    /// moves: a won one with a king move to a lost position valued `r - 1` (none is valued
    /// less: it would have been valued before), a lost one whose king moves all reach
    /// positions valued below `r`.
    fn later(&mut self, index: u64, pos: &Position) -> Result<()> {
        let round = self.job.round;
        self.stats.looked += 1;
        let value = self.own_wld.get(index);
        if value == Value::Loss {
            if self.lost_settles(index, pos, None)? {
                self.resolve(index, Value::Loss, round, true)?;
            }
            return Ok(());
        }
        let nearer = self.any_king_child(pos, |w, i| {
            let lost = w.mirror_wld.get(i) == Value::Loss;
            Ok(lost && decode(w.mirror_byte(i)?).is_some_and(|d| d < round))
        })?;
        if nearer {
            self.resolve(index, Value::Win, round, true)?;
        }
        Ok(())
    }

    /// Whether `hit` holds for the mirror index of some position a king move of `pos`
    /// reaches (stopping at the first). `hit` reads the child's value as well as its
    /// distance, so both are asked of memory before the first is read.
    fn any_king_child(
        &mut self,
        pos: &Position,
        mut hit: impl FnMut(&mut Self, u64) -> Result<bool>,
    ) -> Result<bool> {
        generate_moves(pos, &mut self.moves);
        let n = self.index_king_children(pos, &mut QuietChildren::default(), 0, None);
        for &i in &self.king_children[..n] {
            self.mirror_wld.prefetch(i);
        }
        for k in 0..n {
            if hit(self, self.king_children[k])? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Puts the mirror indexes of the children of `pos`'s king moves (`self.moves`, its
    /// moves) in `king_children` and their places in the move list in `king_moves`, from
    /// move `from` on and round to the ones before it, leaving out move `skip`; returns how
    /// many. The indexes first, each byte asked of memory as soon as it is known, then the
    /// caller's reads: the mirror is read at random and is larger than the cache at 7
    /// pieces, so the misses overlap instead of following each other.
    fn index_king_children(
        &mut self,
        pos: &Position,
        children: &mut QuietChildren,
        from: usize,
        skip: Option<usize>,
    ) -> usize {
        let n = self.moves.len();
        let mut found = 0;
        for k in (from..n).chain(0..from.min(n)) {
            let m = self.moves.as_slice()[k];
            if Some(k) == skip || converts(pos, &m) {
                continue;
            }
            let i = children.index(&self.mirror_ix, &pos.successor(&m), true);
            self.mirror_cache().prefetch(i);
            self.king_children[found] = i;
            self.king_moves[found] = k as u8;
            found += 1;
        }
        found
    }

    /// The mirror's distances (this slice's when it is its own mirror).
    #[inline(always)]
    fn mirror_cache(&self) -> &MtcCache {
        self.mirror.as_ref().unwrap_or(&self.own)
    }

    /// [`Work::mirror_cache`], to read pages into.
    #[inline(always)]
    fn mirror_cache_mut(&mut self) -> &mut MtcCache {
        self.mirror.as_mut().unwrap_or(&mut self.own)
    }

    /// Brings in at once ([`Work::load`]), rather than a page at a time, what a round from 2
    /// reads widely:
    /// - the whole mirror, when the round scans or its `input` entries are at least as many
    ///   as the mirror's pages (each entry's predecessors read a few dozen bytes of it at
    ///   random, and their bytes can then be asked of memory ahead);
    /// - the range's distances and watched moves, when the round scans or its input has an
    ///   entry for each of the range's pages (an entry brings back about ten predecessors).
    ///
    /// The short rounds of a long pair's tail, which touch a few pages, read only those.
    fn preload(&mut self, scans: bool, input: u64) -> Result<()> {
        if self.job.round == 1 {
            return Ok(());
        }
        let pages = self.mirror_ix.count().div_ceil(MtcCache::PER_PAGE);
        if scans || input >= pages {
            let load = self.load;
            self.mirror_cache_mut().preload(0, pages, load)?;
        }
        let first = self.job.first / MtcCache::PER_PAGE;
        let last = self.job.last.div_ceil(MtcCache::PER_PAGE);
        if scans || input >= last - first {
            self.own.preload(first, last, self.load)?;
            self.watch.preload(first, last, self.load)?;
        }
        Ok(())
    }

    /// The mirror's distance byte of position `i` (this slice's when it is its own mirror).
    fn mirror_byte(&mut self, i: u64) -> Result<u8> {
        Ok(self.mirror_cache_mut().get_byte(i)?)
    }

    /// Round `r` for position `i` of the range, a king-move predecessor of the mirror's
    /// position `child_index` (valued `r - 1`; `child_lost` when it is lost).
    fn predecessor(&mut self, i: u64, child_index: u64, child_lost: bool) -> Result<()> {
        if self.own.get_byte(i)? != 0 {
            return Ok(());
        }
        let round = self.job.round;
        match self.own_wld.get(i) {
            Value::Win if child_lost => {
                self.stats.looked += 1;
                self.resolve(i, Value::Win, round, true)?;
            }
            Value::Loss => {
                self.stats.looked += 1;
                let pos = self.own_ix.position_unchecked(i);
                if self.lost_settles(i, &pos, Some(child_index))? {
                    self.resolve(i, Value::Loss, round, true)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Whether every king move of lost `pos` (position `index`, not valued yet) reaches a
    /// position valued below this round (rounds before it are complete; its own values, and
    /// none, count as open).
    ///
    /// A lost position is brought back by each of its children as they are valued, a dozen
    /// times for a kings-only one, and reading every child each time made the kings-only
    /// pairs' rounds quadratic in the moves. So it remembers one king move whose child was
    /// open when last looked at (`watch`: 1 + its place in the move list, 0 before the
    /// first look) and reads that child first: while it is open (it is not `trigger`, the
    /// child that brought the position back, valued in the round before), nothing else is
    /// read. Otherwise the other king moves are read from the one after it, until an open
    /// child, which is watched from then on.
    ///
    /// The watch is a hint: whatever it holds, the answer is the same, so the watches need
    /// no `fsync` and the bytes do not change with the split, stops and resumes of the
    /// rounds.
    fn lost_settles(&mut self, index: u64, pos: &Position, trigger: Option<u64>) -> Result<bool> {
        let round = self.job.round;
        let open = |byte: u8| decode(byte).is_none_or(|d| d >= round);
        generate_moves(pos, &mut self.moves);
        let n = self.moves.len();
        // A watch is only a hint: one that is not a king move of the position (a page
        // written before a crash and lost after it, or worse) is no watch.
        let watched = match self.watch.get_byte(index)? as usize {
            0 => 0,
            w if w > n || converts(pos, &self.moves.as_slice()[w - 1]) => 0,
            w => w,
        };
        let mut children = QuietChildren::default();
        if watched != 0 {
            let m = self.moves.as_slice()[watched - 1];
            let i = children.index(&self.mirror_ix, &pos.successor(&m), true);
            if trigger != Some(i) && open(self.mirror_byte(i)?) {
                return Ok(false);
            }
        }
        // The other king children, from the one after the watched move.
        let found = self.index_king_children(pos, &mut children, watched, watched.checked_sub(1));
        for j in 0..found {
            if open(self.mirror_byte(self.king_children[j])?) {
                self.watch.set_byte(index, self.king_moves[j] + 1)?;
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Whether the dirty pages fill most of a cache (dirty pages are never evicted).
    fn wants_flush(&self) -> bool {
        self.own.wants_flush() || self.watch.wants_flush()
    }

    /// Makes everything up to `next` durable: queue entries, then pages, then the record.
    fn checkpoint(&mut self, site: &Site, next: u64, complete: bool) -> Result<()> {
        self.queue.flush(self.durable)?;
        self.own.flush(self.durable)?;
        // Hints ([`Work::lost_settles`]): one lost in a crash costs reads, never a value.
        self.watch.flush(false)?;
        if !self.durable {
            return Ok(());
        }
        let record = Checkpoint {
            next,
            complete,
            stats: self.stats,
        };
        checkpoint::save(site, &self.job, &record, self.durable)
    }

    /// Checkpoints or stops when the clock says; true to stop.
    fn tick(&mut self, site: &Site, clock: &mut Clock, next: u64) -> Result<bool> {
        match clock.tick(self.wants_flush()) {
            Tick::Go => Ok(false),
            Tick::Checkpoint => {
                self.checkpoint(site, next, false)?;
                if !self.resumed {
                    crate::fault::point("mtc.checkpoint");
                }
                Ok(false)
            }
            Tick::Stop => self.checkpoint(site, next, false).map(|_| true),
        }
    }
}

/// The positions of `job`'s slice, inside its range, from which a king's plain move leads
/// to the mirror's position `child` (Black to move there).
fn king_predecessors(ix: &SliceIndex, job: &Job, child: &Position, out: &mut Vec<u64>) {
    out.clear();
    ix.for_each_king_predecessor(child, |i, q| {
        if !has_capture(&q) && (job.first..job.last).contains(&i) {
            out.push(i);
        }
    });
}

/// Runs an `mtc` job (resuming from its checkpoint) and checkpoints at the end.
pub fn run_mtc_job(site: &Site, job: &Job, opts: &RunOptions) -> Result<Outcome> {
    let saved = checkpoint::load(site, job)?;
    if let Some(c) = saved
        && c.complete
    {
        return Ok(Outcome::Done(c.stats));
    }
    let input = match job.round {
        1 => 0,
        r => posqueue::round_entries(site, &job.slice.mirror(), r - 1)?,
    };
    let scans = mtc_scans(job.round, input, job.slice.count());
    let load = match scans {
        true => Load::Read,
        false => Load::Map,
    };
    let mut w = Work::open(site, job, opts, load)?;
    if let Some(c) = saved {
        w.stats = c.stats;
        w.resumed = true;
    }
    let mut clock = Clock::new(opts);
    let resume = saved.map(|c| c.next);
    w.preload(scans, input)?;
    let end = if scans {
        let start = resume.unwrap_or(job.first);
        check_resume(job, start, job.first, job.last)?;
        scan(site, &mut w, &mut clock, start)?
    } else {
        let items = posqueue::read_round(site, &job.slice.mirror(), job.round - 1)?;
        let start = resume.unwrap_or(0);
        check_resume(job, start, 0, items.len() as u64)?;
        follow_queue(site, &mut w, &mut clock, &items, start as usize)?
    };
    Outcome::after_scan(end, w.stats, || w.checkpoint(site, u64::MAX, true))
}

/// Entries of the mirror's queue taken at a time by a round that follows it back (a job
/// checkpoints between batches). Their predecessors in the range are sorted by index and
/// their bytes asked of memory [`PREFETCH_AHEAD`] predecessors ahead, so that the reads
/// of the range's distances, watched moves and values overlap: two thirds of a kings-only
/// round waited on them one by one. Batches of 1,024 to 65,536 entries gave the same time
/// (`run mtc 3400.-- -r 5`).
const QUEUE_BATCH: usize = 4096;

/// How many predecessors ahead of the one looked at its bytes are asked of memory.
const PREFETCH_AHEAD: usize = 16;

/// A round that follows the mirror's position queue (`items`, the mirror's positions valued
/// in the round before) back from entry `start`; the entry it stopped at, or `None` when
/// done. The order the predecessors are looked at in changes no value.
fn follow_queue(
    site: &Site,
    w: &mut Work,
    clock: &mut Clock,
    items: &[u64],
    start: usize,
) -> Result<Option<u64>> {
    let mut preds = Vec::with_capacity(64);
    // (predecessor, child) with the child's loss in the top bit: indexes are below 2^40.
    const LOST: u64 = 1 << 63;
    let mut pairs: Vec<(u64, u64)> = Vec::new();
    let mut k = start;
    while k < items.len() {
        if k > start && w.tick(site, clock, k as u64)? {
            return Ok(Some(k as u64));
        }
        let end = (k + QUEUE_BATCH).min(items.len());
        pairs.clear();
        for &c in &items[k..end] {
            let child = w.mirror_ix.position_unchecked(c);
            let lost = match w.mirror_wld.get(c) {
                Value::Loss => LOST,
                _ => 0,
            };
            king_predecessors(&w.own_ix, &w.job, &child, &mut preds);
            pairs.extend(preds.iter().map(|&p| (p, c | lost)));
        }
        radsort::sort_by_key(&mut pairs, |p| p.0);
        for j in 0..pairs.len() {
            // Sorted, yet hundreds of bytes apart: asked ahead, the reads overlap.
            if let Some(&(ahead, _)) = pairs.get(j + PREFETCH_AHEAD) {
                w.own.prefetch(ahead);
                w.watch.prefetch(ahead);
                w.own_wld.prefetch(ahead);
            }
            let (p, c) = pairs[j];
            w.predecessor(p, c & !LOST, c & LOST != 0)?;
            // Dirty pages are never evicted: a batch that fills the cache writes them out,
            // its checkpoint at the batch's start (a resume looks at the batch again, and
            // what it valued already is passed over).
            if w.wants_flush() {
                w.checkpoint(site, k as u64, false)?;
            }
        }
        k = end;
    }
    Ok(None)
}

/// A round as a scan of the job's range from index `start` (round 1, and a round whose
/// input is a large part of the slice); the index it stopped at, or `None` when done.
fn scan(site: &Site, w: &mut Work, clock: &mut Clock, start: u64) -> Result<Option<u64>> {
    let ix = w.own_ix.clone();
    let mut e = ix.enumerate_from(start);
    let page = MtcCache::PER_PAGE;
    let round = w.job.round;
    for i in start..w.job.last {
        if i > start && i.is_multiple_of(page) {
            w.own.done_with_page(i / page - 1);
            w.watch.done_with_page(i / page - 1);
            if w.tick(site, clock, i)? {
                return Ok(Some(i));
            }
        }
        // Only won and lost positions without a distance are looked at.
        let open = matches!(w.own_wld.get(i), Value::Win | Value::Loss)
            && (round == 1 || w.own.get_byte(i)? == 0);
        if !open {
            continue;
        }
        e.skip_to(i);
        match round {
            1 => w.first(i, &e.position())?,
            _ => w.later(i, &e.position())?,
        }
    }
    Ok(None)
}
