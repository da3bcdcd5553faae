//! Perft: the number of distinct move paths of a given depth, the standard check of a move
//! generator. Moves leading to the same position count once (see [`super::generate_moves`]).

use super::{MoveList, Position, generate_moves};

/// Leaf count at `depth` plies from `pos` (Black to move). Depth 0 is 1.
pub fn perft(pos: &Position, depth: u32) -> u64 {
    let mut list = MoveList::new();
    generate_moves(pos, &mut list);
    if depth <= 1 {
        return if depth == 0 { 1 } else { list.len() as u64 };
    }
    list.iter()
        .map(|m| perft(&pos.successor(m), depth - 1))
        .sum()
}
