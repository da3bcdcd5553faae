//! Probing the compressed moves-to-conversion files ([`super::mtc`]) through the same
//! [`Database`] and block cache as the win/loss/draw values, and the exact distance of a
//! position the files only call short (a search over king moves, bounded by the
//! threshold).

use super::cache::SlotHint;
use super::error::{DbError, Result};
use super::mtc::{MtcFile, OpenMtc, Stored, mtc_path};
use super::probe::{Database, Fetch, SliceTable};
use crate::board::{MoveList, generate_moves};
use crate::slice::Slice;
use crate::slice::index::SliceIndex;
use crate::value::Value;
use crate::{Move, Position};
use std::collections::HashMap;

/// Whether `m` converts: a capture or a move of a man (a crowning included). Only a king's
/// plain move does not.
#[inline]
pub fn converts(pos: &Position, m: &Move) -> bool {
    m.captures != 0 || pos.kings & (1 << m.from) == 0
}

impl Database {
    /// The value of `pos` (Black to move) and, when it is won or lost, its stored distance
    /// to conversion.
    pub fn probe_mtc(&self, pos: &Position) -> Result<(Value, Option<Stored>)> {
        let value = self.probe(pos)?;
        if value == Value::Draw {
            return Ok((value, None));
        }
        Ok((value, Some(self.stored_mtc(pos)?)))
    }

    /// The stored distance of `pos` (Black to move), whatever its value (a draw's means
    /// nothing). A game already over (a side without pieces) is short: 0 plies.
    pub fn stored_mtc(&self, pos: &Position) -> Result<Stored> {
        self.stored_mtc_from(pos, Fetch::Load)
    }

    /// [`Database::stored_mtc`] from where `fetch` allows ([`DbError::NotInCache`] when
    /// the file or block it needs is not in memory and may not be read).
    pub fn stored_mtc_from(&self, pos: &Position, fetch: Fetch) -> Result<Stored> {
        if pos.black == 0 || pos.white == 0 {
            return Ok(Stored::Short);
        }
        let slice = Slice::of(pos);
        let opened = self.mtc.get().and_then(|t| t.slot(&slice).get());
        let s = match (opened, fetch) {
            (Some(s), _) => s,
            (None, Fetch::CachedOnly) => return Err(DbError::NotInCache),
            (None, Fetch::Load) => self.mtc_slice(&slice)?,
        };
        let i = s.index.index(pos);
        let b = s.file.block_of(i);
        self.cached_block(
            s.id,
            &s.hints[b],
            b,
            fetch,
            || s.file.read_block(b),
            |block| Ok(s.file.run_in_block(block, b, i)?.0),
        )
    }

    /// The MTC files opened so far.
    pub fn open_mtc_list(&self) -> Vec<&OpenMtc> {
        self.mtc.get().map_or_else(Vec::new, |t| t.all())
    }

    /// The memory of the MTC files' table and open files (a part of
    /// [`Database::index_bytes`]).
    pub(super) fn mtc_index_bytes(&self) -> usize {
        let Some(t) = self.mtc.get() else { return 0 };
        t.table_bytes()
            + t.all()
                .iter()
                .map(|m| {
                    std::mem::size_of::<OpenMtc>()
                        + m.file.memory_bytes()
                        + m.hints.len() * std::mem::size_of::<SlotHint>()
                })
                .sum::<usize>()
    }

    /// The opened MTC file of `slice` (opened on first use).
    pub fn mtc_slice(&self, slice: &Slice) -> Result<&OpenMtc> {
        let slot = self.mtc.get_or_init(SliceTable::new).slot(slice);
        if let Some(s) = slot.get() {
            return Ok(s);
        }
        let path = mtc_path(&self.dir, slice);
        if !path.exists() {
            // A database built without `--mtc` has values and no distances: say which.
            return Err(DbError::Missing(
                match super::probe::slice_path(&self.dir, slice).exists() {
                    true => format!(
                        "slice {slice} has no moves to conversion: {} is missing (a database built without --mtc)",
                        path.display()
                    ),
                    false => format!("slice {slice} is not in {}", self.dir.display()),
                },
            ));
        }
        let file = MtcFile::open(&path, slice)?;
        Ok(slot.get_or_init(|| {
            Box::new(OpenMtc {
                hints: super::probe::hints(file.blocks()),
                file,
                index: SliceIndex::new(*slice),
                id: self.file_id(),
            })
        }))
    }
}

/// Exact distances from a database whose files store short ones as "short": the stored
/// distance where there is one, else the least `k` for which the position's moves prove
/// "at most `k` plies" (the winner needs one move that does, the loser's moves must all),
/// searched over king moves with the values and stored distances of the positions they
/// reach, and remembered.
#[derive(Default)]
pub struct ExactDistances {
    /// `(position, k)`: whether its distance is at most `k`.
    within: HashMap<(Position, u32), bool>,
    /// Positions searched so far (a figure for `dbprobe` and the tests).
    pub searched: u64,
}

impl ExactDistances {
    pub fn new() -> ExactDistances {
        ExactDistances::default()
    }

    /// Plies to conversion of `pos` (Black to move) whose value is `value`; `None` for a
    /// draw.
    pub fn plies(&mut self, db: &Database, pos: &Position, value: Value) -> Result<Option<u32>> {
        if value == Value::Draw {
            return Ok(None);
        }
        if pos.black == 0 || pos.white == 0 {
            return Ok(Some(0));
        }
        if let Stored::Plies(d) = db.stored_mtc(pos)? {
            return Ok(Some(d));
        }
        let threshold = db.mtc_slice(&Slice::of(pos))?.file.threshold;
        for k in 0..threshold {
            if self.at_most(db, pos, value, k)? {
                return Ok(Some(k));
            }
        }
        Err(DbError::corrupt(
            &db.mtc_slice(&Slice::of(pos))?.file.path,
            format!(
                "{} is stored as short (below {threshold} plies), but its moves need more",
                crate::notation::position_fen(pos)
            ),
        ))
    }

    /// Whether the distance of `pos` (valued `value`, won or lost) is at most `k`.
    fn at_most(&mut self, db: &Database, pos: &Position, value: Value, k: u32) -> Result<bool> {
        if let Some(&known) = self.within.get(&(*pos, k)) {
            return Ok(known);
        }
        self.searched += 1;
        let mut moves = MoveList::new();
        generate_moves(pos, &mut moves);
        let win = value == Value::Win;
        // No move: lost at 0. Otherwise every move takes a ply, and the winner needs one
        // move that is quick enough where every move of the loser must be.
        let mut answer = moves.is_empty() || (k > 0 && !win);
        if k > 0 && !moves.is_empty() {
            for m in moves.iter() {
                let child = pos.successor(m);
                let child_value = db.probe(&child)?;
                if win && child_value != Value::Loss {
                    continue;
                }
                let quick = converts(pos, m)
                    || match db.stored_mtc(&child)? {
                        Stored::Plies(e) => e < k,
                        Stored::Short => self.at_most(db, &child, child_value, k - 1)?,
                    };
                if quick == win {
                    answer = win;
                    break;
                }
            }
        }
        self.within.insert((*pos, k), answer);
        Ok(answer)
    }
}
