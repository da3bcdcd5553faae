//! Perft: the number of distinct move paths of a given depth, the standard check of a move
//! generator. Moves leading to the same position count once (see [`super::generate_moves`]).

use super::{MoveList, Position, generate_move_paths, generate_moves};

/// Leaf count at `depth` plies from `pos` (Black to move), moves to the same position counted
/// once. Depth 0 is 1.
pub fn perft(pos: &Position, depth: u32) -> u64 {
    count(pos, depth, generate_moves)
}

/// Leaf count counting every capture path, as Aart Bik's published 8x8 figures do ("the move
/// generator does not eliminate duplicate captures"); they first differ at depth 12.
pub fn perft_paths(pos: &Position, depth: u32) -> u64 {
    count(pos, depth, generate_move_paths)
}

fn count(pos: &Position, depth: u32, generate: fn(&Position, &mut MoveList)) -> u64 {
    let mut list = MoveList::new();
    generate(pos, &mut list);
    if depth <= 1 {
        return if depth == 0 { 1 } else { list.len() as u64 };
    }
    list.iter()
        .map(|m| count(&pos.successor(m), depth - 1, generate))
        .sum()
}
