//! Distances for `dbprobe`: a position's moves to conversion and each move's, and a won or
//! lost position played out by the databases (the winner converts as soon as it can while
//! keeping the win, the loser puts it off as long as it can), printed as PDN.

use super::converts;
use crate::board::{MoveList, generate_moves};
use crate::db::mtc::Stored;
use crate::db::mtc_probe::ExactDistances;
use crate::db::probe::Database;
use crate::inspect::{move_text, setup_after};
use crate::notation::{Setup, format_fen};
use crate::solve::{Result, Value};
use crate::{Color, Move, Position, solve_err};

/// Exact distances from a database's compressed files (`db/<slice>.mtc`): stored ones as
/// they are, short ones (below the files' threshold) found by a small search.
pub struct Distances<'a> {
    db: &'a Database,
    exact: ExactDistances,
}

impl<'a> Distances<'a> {
    pub fn new(db: &'a Database) -> Distances<'a> {
        Distances {
            db,
            exact: ExactDistances::new(),
        }
    }

    /// Plies to conversion of `pos` (Black to move) valued `value`; `None` for a draw.
    pub fn plies(&mut self, pos: &Position, value: Value) -> Result<Option<u32>> {
        Ok(self.exact.plies(self.db, pos, value)?)
    }

    /// What the file stores for `pos` (Black to move): exact, or short.
    pub fn stored(&self, pos: &Position) -> Result<Stored> {
        Ok(self.db.stored_mtc(pos)?)
    }
}

/// One move of a position, for the side that plays it: its value and the plies to the
/// next conversion if it is played (1 for a conversion; `None` when it draws).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveDistance {
    pub mv: Move,
    pub value: Value,
    pub plies: Option<u32>,
}

/// The value and distance of `pos` (Black to move) and of each of its moves.
pub fn move_distances(
    db: &Database,
    dist: &mut Distances,
    pos: &Position,
) -> Result<(Value, Option<u32>, Vec<MoveDistance>)> {
    let value = db.probe(pos)?;
    let here = dist.plies(pos, value)?;
    let mut moves = MoveList::new();
    generate_moves(pos, &mut moves);
    let mut out = Vec::with_capacity(moves.len());
    for m in moves.iter() {
        let child = pos.successor(m);
        let child_value = db.probe(&child)?;
        let value = child_value.for_mover();
        let plies = match (value, converts(pos, m)) {
            (Value::Draw, _) => None,
            (_, true) => Some(1),
            (_, false) => match dist.plies(&child, child_value)? {
                Some(d) => Some(d + 1),
                None => {
                    return Err(solve_err!(
                        "{} reaches {} ({value} for the mover) which has no distance",
                        crate::notation::position_fen(pos),
                        crate::notation::position_fen(&child)
                    ));
                }
            },
        };
        out.push(MoveDistance {
            mv: *m,
            value,
            plies,
        });
    }
    Ok((value, here, out))
}

/// The move the databases play in a won or lost position: the winner the shortest way to
/// a conversion that keeps the win, the loser the longest; the first such in move order.
pub fn best_move(value: Value, moves: &[MoveDistance]) -> Option<MoveDistance> {
    let mut best: Option<MoveDistance> = None;
    for m in moves {
        let better = match (value, best, m.plies) {
            (_, _, None) => false,
            (Value::Win, _, _) if m.value != Value::Win => false,
            (_, None, _) => true,
            (Value::Win, Some(b), Some(d)) => d < b.plies.expect("a winning move"),
            (_, Some(b), Some(d)) => d > b.plies.expect("a counted move"),
        };
        if better {
            best = Some(*m);
        }
    }
    best
}

/// One ply of a played-out game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ply {
    /// The position before the move.
    pub before: Setup,
    pub mv: Move,
    /// The move as PDN (`9-14`, `22x15`).
    pub text: String,
    /// Plies to the next conversion before the move (1: this move converts).
    pub plies: u32,
    pub converts: bool,
}

/// A game played out from a won or lost position.
#[derive(Clone, Debug)]
pub struct Game {
    pub start: Setup,
    pub value: Value,
    pub plies: Vec<Ply>,
    /// The last position: its side to move has no move (or no piece) left.
    pub end: Setup,
    /// The side that won.
    pub winner: Color,
}

/// The most plies a game may take before it is called a fault of the databases: every
/// conversion shrinks the material or moves a man forward, and each takes at most 254.
const MAX_GAME_PLIES: usize = 10_000;

/// Plays `start` out by the databases. A draw is refused: the databases give it no line.
pub fn play(db: &Database, dist: &mut Distances, start: &Setup) -> Result<Game> {
    let mut setup = *start;
    let mut plies = Vec::new();
    let first_value = db.probe_setup(start)?;
    if first_value == Value::Draw {
        return Err(solve_err!(
            "{} is a draw: --play needs a won or lost position",
            format_fen(start)
        ));
    }
    loop {
        let pos = setup.black_to_move();
        let (value, here, moves) = move_distances(db, dist, &pos)?;
        if moves.is_empty() {
            return Ok(Game {
                start: *start,
                value: first_value,
                plies,
                end: setup,
                winner: setup.to_move.opponent(),
            });
        }
        let Some(m) = best_move(value, &moves) else {
            return Err(solve_err!(
                "{} ({value}) has no move the distances can follow",
                format_fen(&setup)
            ));
        };
        let want = here.ok_or_else(|| solve_err!("{} has no distance", format_fen(&setup)))?;
        let got = m.plies.expect("a counted move");
        if got != want {
            return Err(solve_err!(
                "{}: stored {want} plies to conversion, its best move gives {got}",
                format_fen(&setup)
            ));
        }
        plies.push(Ply {
            before: setup,
            mv: m.mv,
            text: move_text(&setup, &m.mv),
            plies: got,
            converts: converts(&pos, &m.mv),
        });
        if plies.len() > MAX_GAME_PLIES {
            return Err(solve_err!(
                "{}: no end after {MAX_GAME_PLIES} plies",
                format_fen(start)
            ));
        }
        setup = setup_after(&setup, &m.mv);
    }
}

/// The game as PDN: tags (the start as FEN, the result) and the moves numbered from 1,
/// each with its plies to conversion as a comment.
pub fn pdn(game: &Game) -> String {
    let result = match game.winner {
        Color::Black => "1-0",
        Color::White => "0-1",
    };
    let mut t = format!(
        "[Event \"nowdb --play\"]\n[SetUp \"1\"]\n[FEN \"{}\"]\n[Result \"{result}\"]\n\n",
        format_fen(&game.start)
    );
    let mut words: Vec<String> = Vec::new();
    let mut number = 1;
    for (k, p) in game.plies.iter().enumerate() {
        match p.before.to_move {
            Color::Black => words.push(format!("{number}.")),
            Color::White if k == 0 => words.push(format!("{number}...")),
            Color::White => {}
        }
        words.push(p.text.clone());
        words.push(format!("{{{}}}", p.plies));
        if p.before.to_move == Color::White {
            number += 1;
        }
    }
    words.push(result.to_string());
    let mut line = String::new();
    for w in words {
        if !line.is_empty() && line.len() + w.len() >= 80 {
            t += line.trim_end();
            t.push('\n');
            line.clear();
        }
        line += &w;
        line.push(' ');
    }
    t += line.trim_end();
    t.push('\n');
    t
}
