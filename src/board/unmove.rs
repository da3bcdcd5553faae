//! Reverse move generation (1994 paper section 3.2): the boards from which a plain step of
//! Black leads to a given board. `SliceIndex::for_each_quiet_predecessor` ranks them in a
//! slice for `winmove`, the position queue, `ver`'s walk of the mirror and `mtc`.

use super::{Position, step};

/// Calls `f` with every board `q` (Black to move) from which Black steps one piece without
/// capturing or crowning and reaches `after` (the board right after Black's move, still seen
/// from Black's side, so White is to move). Kings step back in all four directions, men only
/// downwards. The caller keeps the `q` in the slice it wants and drops those with a capture
/// (a capture would have been compulsory there).
#[inline]
pub fn for_each_unmove(after: &Position, f: impl FnMut(Position)) {
    for_each_unmove_of(after, after.black, f)
}

/// [`for_each_unmove`] restricted to the steps of the Black pieces in `pieces` (a subset of
/// `after.black`): a caller that knows no king step can matter leaves the kings out. One
/// direction at a time for all the pieces at once, so that each step is a constant shift
/// (piece by piece, the direction's `match` cost a tenth of `winmove`).
#[inline(always)]
pub fn for_each_unmove_of(after: &Position, pieces: u32, mut f: impl FnMut(Position)) {
    debug_assert_eq!(pieces & !after.black, 0);
    let empty = after.empty();
    let kings = pieces & after.kings;
    // Men only step upwards, so they came from below (directions 2 and 3).
    unmoves_towards::<0>(after, kings, empty, &mut f);
    unmoves_towards::<1>(after, kings, empty, &mut f);
    unmoves_towards::<2>(after, pieces, empty, &mut f);
    unmoves_towards::<3>(after, pieces, empty, &mut f);
}

/// The boards where a piece of `movers` stood one step in direction `D` from where it is
/// in `after`, on an empty square.
#[inline(always)]
fn unmoves_towards<const D: usize>(
    after: &Position,
    movers: u32,
    empty: u32,
    f: &mut impl FnMut(Position),
) {
    let mut froms = step(movers, D) & empty;
    while froms != 0 {
        let from = froms & froms.wrapping_neg();
        froms &= froms - 1;
        // The opposite direction is 3 - D.
        let moved = step(from, 3 - D) | from;
        f(Position {
            black: after.black ^ moved,
            white: after.white,
            kings: match after.kings & moved != 0 {
                true => after.kings ^ moved,
                false => after.kings,
            },
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::{BLACK_CROWN_RANK, MoveList, WHITE_CROWN_RANK, generate_moves, has_capture};

    /// A sparse random board: no Black man on rank 7, no White man on rank 0.
    fn random_board(rng: &mut crate::rng::XorShift) -> Position {
        let black = (rng.next() & rng.next()) as u32;
        let white = (rng.next() & rng.next()) as u32 & !black;
        let kings = (rng.next() as u32 & (black | white))
            | (black & BLACK_CROWN_RANK)
            | (white & WHITE_CROWN_RANK);
        Position {
            black,
            white,
            kings,
        }
    }

    /// `ver` checks the quiet children of lost and drawn positions from the children's side
    /// with these unmoves, so they must be exactly the plain, uncrowning steps: every such
    /// step of a board without a capture is found back from the board it leads to, and every
    /// board found (without a capture) has that step.
    #[test]
    fn unmoves_are_exactly_the_plain_steps_that_do_not_crown() {
        let mut rng = crate::rng::XorShift::new(0x0DD5);
        let mut moves = MoveList::new();
        let (mut steps, mut found) = (0, 0);
        for _ in 0..100_000 {
            let p = random_board(&mut rng);
            if has_capture(&p) {
                continue;
            }
            generate_moves(&p, &mut moves);
            for m in moves.iter().filter(|m| !m.crowns) {
                let after = p.play(m);
                let mut back = false;
                for_each_unmove(&after, |q| back |= q == p);
                assert!(back, "{p:?} by {m:?}");
                steps += 1;
            }
            for_each_unmove(&p, |q| {
                if has_capture(&q) {
                    return;
                }
                let mut list = MoveList::new();
                generate_moves(&q, &mut list);
                let step = list.iter().any(|m| !m.crowns && q.play(m) == p);
                assert!(step, "{q:?} does not step to {p:?}");
                found += 1;
            });
        }
        assert!(steps > 100_000 && found > 100_000, "{steps} {found}");
    }
}
