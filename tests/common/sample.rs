//! Random positions of a built database, as FENs: a slice drawn evenly from the slice files
//! of `db/`, an index drawn evenly in it (the tests and the `serve` bench ask these).

use nowdb::notation::format_fen;
use nowdb::rng::XorShift;
use nowdb::{Color, Setup, SliceIndex};
use std::path::Path;

/// `n` random positions of `site`'s database from `seed`: Black to move, or either side
/// drawn evenly when `either_side`.
pub fn random_fens(site: &Path, n: usize, seed: u64, either_side: bool) -> Vec<String> {
    let slices = nowdb::db::probe::list_slices(&site.join("db")).unwrap();
    let indexes: Vec<SliceIndex> = slices.iter().map(|s| SliceIndex::new(*s)).collect();
    let mut rng = XorShift::new(seed);
    (0..n)
        .map(|_| {
            let ix = &indexes[rng.below(indexes.len() as u64) as usize];
            let pos = ix.position_unchecked(rng.below(ix.count()));
            let setup = match either_side && rng.below(2) == 1 {
                false => Setup {
                    board: pos,
                    to_move: Color::Black,
                },
                true => Setup {
                    board: pos.reversed(),
                    to_move: Color::White,
                },
            };
            format_fen(&setup)
        })
        .collect()
}
