//! The explorer's answers, apart from HTTP: a position with its moves best first, a
//! mainline, a batch of values. Each is what `dbprobe --site` prints for the same position
//! (`--json`, `--mtc`, `--play`, `--batch`), shaped after lichess' tablebase API.

use super::{Explorer, ExplorerError};
use crate::db::probe::side_name;
use crate::inspect::{move_text, setup_after};
use crate::notation::{Setup, format_fen};
use crate::solve::mtc::play::{Distances, MoveDistance, move_distances, pdn, play};
use crate::value::Value;
use crate::{Color, Slice};
use serde::Serialize;

/// The most FENs one batch may ask.
pub const MAX_BATCH: usize = 1000;

/// `GET /api/position`: a position, its value and distance, and every move.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct PositionAnswer {
    pub fen: String,
    pub to_move: &'static str,
    pub pieces: u32,
    pub slice: String,
    /// For the side to move.
    pub value: &'static str,
    /// Plies to conversion (a capture or a man's move) under best play; `None` for a draw
    /// or when the database has no distances.
    pub mtc: Option<u32>,
    /// The side to move must capture.
    pub capture: bool,
    /// The database has distances: `mtc` is given where the value is not a draw.
    pub distances: bool,
    /// Best first for the side to move: wins soonest, then draws, then losses latest.
    pub moves: Vec<MoveAnswer>,
}

/// One move of a position, for the side that plays it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct MoveAnswer {
    #[serde(rename = "move")]
    pub text: String,
    /// The position after it.
    pub fen: String,
    /// For the side that plays it.
    pub value: &'static str,
    /// Plies to conversion if it is played, counting it (1 when it converts).
    pub mtc: Option<u32>,
    /// A capture or a man's move: it leaves the slice.
    pub converts: bool,
    pub capture: bool,
}

/// `GET /api/mainline`: the game the databases play from a position.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct MainlineAnswer {
    pub fen: String,
    pub value: &'static str,
    /// `None` for a draw, which has no line.
    pub winner: Option<&'static str>,
    pub moves: Vec<MainlinePly>,
    /// The last position (its side to move has lost); `None` for a draw.
    pub end: Option<String>,
    pub pdn: Option<String>,
}

/// One ply of a mainline.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct MainlinePly {
    /// The position before the move.
    pub fen: String,
    #[serde(rename = "move")]
    pub text: String,
    pub mtc: u32,
    pub converts: bool,
}

/// One answer of `POST /api/batch`: the FEN as given, and its value or why there is none.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct BatchAnswer {
    pub fen: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Explorer {
    /// The setup of `fen` and its slice, once it is a position this database holds.
    pub fn held(&self, fen: &str) -> Result<(Setup, Slice), ExplorerError> {
        if fen.len() > super::MAX_FEN_BYTES {
            return Err(ExplorerError::BadFen(format!(
                "FEN of {} bytes: at most {} are read",
                fen.len(),
                super::MAX_FEN_BYTES
            )));
        }
        let setup: Setup = fen
            .parse()
            .map_err(|e: crate::notation::FenError| ExplorerError::BadFen(e.to_string()))?;
        let pos = setup.board;
        for (side, pieces) in [(Color::Black, pos.black), (Color::White, pos.white)] {
            if pieces == 0 {
                return Err(ExplorerError::GameOver(format!(
                    "{}: {} has no piece left: the game is over, there is nothing to look up",
                    format_fen(&setup),
                    side_name(side)
                )));
            }
        }
        let slice = Slice::of(&setup.black_to_move());
        if !self.slices.contains(&slice) {
            let pieces = slice.pieces();
            return Err(ExplorerError::NotHeld(if pieces > self.most {
                format!(
                    "{}: {pieces} pieces; this database holds 2..{} pieces",
                    format_fen(&setup),
                    self.most
                )
            } else {
                format!(
                    "{}: slice {slice} is not in this database ({})",
                    format_fen(&setup),
                    self.plans.join(", ")
                )
            }));
        }
        Ok((setup, slice))
    }

    /// The position of `fen` with its value, distance and moves, best first.
    pub fn position(&self, fen: &str) -> Result<PositionAnswer, ExplorerError> {
        let (setup, slice) = self.held(fen)?;
        let pos = setup.black_to_move();
        let db = &self.db;
        let (value, mtc, moves) = if self.distances {
            move_distances(db, &mut Distances::new(db), &pos).map_err(ExplorerError::database)?
        } else {
            let moves = db
                .move_values(&setup)
                .map_err(ExplorerError::database)?
                .into_iter()
                .map(|(mv, value)| MoveDistance {
                    mv,
                    value,
                    plies: None,
                })
                .collect();
            let value = db.probe(&pos).map_err(ExplorerError::database)?;
            (value, None, moves)
        };
        let mut answers: Vec<(MoveDistance, MoveAnswer)> = moves
            .iter()
            .map(|m| {
                let after = setup_after(&setup, &m.mv);
                let answer = MoveAnswer {
                    text: move_text(&setup, &m.mv),
                    fen: format_fen(&after),
                    value: m.value.name(),
                    mtc: m.plies,
                    converts: crate::db::mtc_probe::converts(&pos, &m.mv),
                    capture: m.mv.is_capture(),
                };
                (*m, answer)
            })
            .collect();
        answers.sort_by_key(|(m, _)| best_first(m));
        Ok(PositionAnswer {
            fen: format_fen(&setup),
            to_move: side_name(setup.to_move),
            pieces: slice.pieces(),
            slice: slice.to_string(),
            value: value.name(),
            mtc,
            capture: moves.first().is_some_and(|m| m.mv.is_capture()),
            distances: self.distances,
            moves: answers.into_iter().map(|(_, a)| a).collect(),
        })
    }

    /// The game the databases play from `fen`, as `dbprobe --play` plays it.
    pub fn mainline(&self, fen: &str) -> Result<MainlineAnswer, ExplorerError> {
        let (setup, _) = self.held(fen)?;
        if !self.distances {
            return Err(ExplorerError::NoDistances);
        }
        let db = &self.db;
        let value = db.probe_setup(&setup).map_err(ExplorerError::database)?;
        if value == Value::Draw {
            return Ok(MainlineAnswer {
                fen: format_fen(&setup),
                value: value.name(),
                winner: None,
                moves: Vec::new(),
                end: None,
                pdn: None,
            });
        }
        let game = play(db, &mut Distances::new(db), &setup).map_err(ExplorerError::database)?;
        Ok(MainlineAnswer {
            fen: format_fen(&setup),
            value: game.value.name(),
            winner: Some(side_name(game.winner)),
            moves: game
                .plies
                .iter()
                .map(|p| MainlinePly {
                    fen: format_fen(&p.before),
                    text: p.text.clone(),
                    mtc: p.plies,
                    converts: p.converts,
                })
                .collect(),
            end: Some(format_fen(&game.end)),
            pdn: Some(pdn(&game)),
        })
    }

    /// The values of `fens`, each answered on its own (a bad one does not spoil the rest).
    pub fn batch(&self, fens: &[String]) -> Vec<BatchAnswer> {
        fens.iter()
            .map(|fen| {
                let value = self
                    .held(fen)
                    .and_then(|(s, _)| self.db.probe_setup(&s).map_err(ExplorerError::database));
                match value {
                    Ok(v) => BatchAnswer {
                        fen: fen.clone(),
                        value: Some(v.name()),
                        error: None,
                    },
                    Err(e) => BatchAnswer {
                        fen: fen.clone(),
                        value: None,
                        error: Some(e.to_string()),
                    },
                }
            })
            .collect()
    }
}

/// The order a player chooses moves in: wins soonest, draws, losses latest (moves without
/// a distance after those with one); ties keep the move generator's order (a stable sort).
fn best_first(m: &MoveDistance) -> (u8, i64) {
    let d = m.plies.map(i64::from);
    match m.value {
        Value::Win => (0, d.unwrap_or(i64::MAX)),
        Value::Draw => (1, 0),
        _ => (2, d.map_or(0, |d| -d)),
    }
}
