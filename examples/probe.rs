//! The probe as a game-playing program would embed it: open a site's database once, then ask
//! for the value of positions and pick a move by the values of the positions it leads to.
//!
//! ```sh
//! scripts/build-local --site site --pieces 5          # or any site with a db/ directory
//! cargo run --release --example probe -- site/db "W:W27,19:B18,11,7"
//! ```
//!
//! It prints the position's value for the side to move, then each legal move with the value
//! it gives that side, best first (a win, then a draw, then a loss).

use nowdb::db::Database;
use nowdb::solve::Value;
use nowdb::{MoveList, parse_fen};
use std::path::Path;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir, fens @ ..] = args.as_slice() else {
        return Err("usage: probe DB_DIR FEN...".into());
    };
    // 64 MiB of block cache: probes of nearby positions then cost no disk read.
    let db = Database::open(Path::new(dir), 64 << 20)?;
    for fen in fens {
        let setup = parse_fen(fen)?;
        let pos = setup.black_to_move();
        println!("{fen}: {}", db.probe(&pos)?);
        let mut moves = MoveList::new();
        nowdb::board::generate_moves(&pos, &mut moves);
        let mut scored = Vec::new();
        for m in moves.as_slice() {
            // The position after the move, from the opponent's side; its value for the mover.
            let value = db.probe(&pos.play(m).reversed())?.for_mover();
            scored.push((rank(value), nowdb::inspect::move_text(&setup, m), value));
        }
        scored.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
        for (_, text, value) in scored {
            println!("  {text}\t{value}");
        }
    }
    Ok(())
}

/// Best first: a win, a draw, a loss.
fn rank(v: Value) -> u8 {
    match v {
        Value::Win => 0,
        Value::Draw => 1,
        Value::Loss => 2,
        Value::Unknown => 3,
    }
}
