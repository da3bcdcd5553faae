//! What `dbprobe` reports about a position before any database exists: perft, the slice and
//! index of a position, its legal moves and where each leads, and the position at an index.

use crate::board::{Color, MoveList, generate_moves, perft::perft};
use crate::cli::{CliError, output_error};
use crate::notation::{Setup, format_fen, position_fen, standard_square};
use crate::slice::index::SliceIndex;
use crate::slice::{Slice, is_conversion};
use std::io::{self, Write};

/// Prints `depth<TAB>nodes` for each depth 1..=`depth` from `setup`.
pub fn write_perft(setup: &Setup, depth: u32, out: &mut dyn Write) -> io::Result<()> {
    let pos = setup.black_to_move();
    for d in 1..=depth {
        writeln!(out, "{d}\t{}", perft(&pos, d))?;
        out.flush()?;
    }
    Ok(())
}

/// A move in PDN notation as seen on the setup's board (`9-13`, `22x15`, `22x15x6`-style
/// captures are written `from x to` since the captured set identifies the path).
pub fn move_text(setup: &Setup, m: &crate::Move) -> String {
    // Moves are generated on the Black-to-move position; map back for White.
    let m = match setup.to_move {
        Color::Black => *m,
        Color::White => m.reversed(),
    };
    let sep = if m.is_capture() { 'x' } else { '-' };
    format!(
        "{}{sep}{}",
        standard_square(m.from as u32),
        standard_square(m.to as u32)
    )
}

/// The setup after `m`, a move generated on `setup.black_to_move()`: the board as it stands
/// (reversed back when White moved), the opponent to move.
pub fn setup_after(setup: &Setup, m: &crate::Move) -> Setup {
    let board = setup.black_to_move().play(m);
    Setup {
        board: match setup.to_move {
            Color::Black => board,
            Color::White => board.reversed(),
        },
        to_move: setup.to_move.opponent(),
    }
}

/// Describes a position: its slice and index, and every legal move with the resulting FEN and
/// whether it is a conversion (leaves the slice pair).
pub fn write_description(setup: &Setup, json: bool, out: &mut dyn Write) -> io::Result<()> {
    let pos = setup.black_to_move();
    let slice = Slice::of(&pos);
    let index = (pos.white != 0 && pos.black != 0).then(|| SliceIndex::new(slice).index(&pos));
    let mut list = MoveList::new();
    generate_moves(&pos, &mut list);
    let moves: Vec<(String, String, bool)> = list
        .iter()
        .map(|m| {
            (
                move_text(setup, m),
                format_fen(&setup_after(setup, m)),
                is_conversion(&pos, m),
            )
        })
        .collect();
    if json {
        let moves_json: Vec<serde_json::Value> = moves
            .iter()
            .map(|(mv, fen, conv)| serde_json::json!({"move": mv, "fen": fen, "conversion": conv}))
            .collect();
        let value = serde_json::json!({
            "fen": format_fen(setup),
            "slice": slice.to_string(),
            "index": index,
            "moves": moves_json,
        });
        write!(out, "{}", crate::cli::json_line(&value))
    } else {
        writeln!(out, "fen\t{}", format_fen(setup))?;
        writeln!(out, "slice\t{slice}")?;
        if let Some(i) = index {
            writeln!(out, "index\t{i}")?;
        }
        for (mv, fen, conv) in &moves {
            let kind = if *conv { "conversion" } else { "in-slice" };
            writeln!(out, "move\t{mv}\t{kind}\t{fen}")?;
        }
        if moves.is_empty() {
            writeln!(out, "no legal move: the side to move has lost")?;
        }
        Ok(())
    }
}

/// Prints the FEN (Black to move) of the position with `index` in `slice`.
pub fn write_position_at(slice: &Slice, index: u64, out: &mut dyn Write) -> Result<(), CliError> {
    let pos = SliceIndex::new(*slice)
        .position(index)
        .map_err(|e| CliError::Failed(e.to_string()))?;
    writeln!(out, "{}", position_fen(&pos)).map_err(output_error)
}
