//! Appendix-B indexing: a bijection between each slice and 0..count, checked against a
//! brute-force placement of pieces, plus round trips on random slices up to 10 pieces and the
//! in-order enumerator agreeing with deindexing.

use nowdb::index::SliceIndex;
use nowdb::{Material, Position, Slice};
use proptest::prelude::*;

/// Calls `f` with every legal placement of `m` (Black to move), by brute force: choose the
/// squares of each piece kind in increasing order, skipping occupied and forbidden squares.
fn for_each_placement(m: Material, f: &mut dyn FnMut(Position)) {
    fn place(
        kinds: &[(u8, u32)],
        sets: &mut [u32; 4],
        kind: usize,
        left: u8,
        from: u32,
        f: &mut dyn FnMut(Position),
    ) {
        if kind == kinds.len() {
            f(Position {
                black: sets[0] | sets[2],
                white: sets[1] | sets[3],
                kings: sets[2] | sets[3],
            });
            return;
        }
        if left == 0 {
            let next = kinds.get(kind + 1).map_or(0, |k| k.0);
            place(kinds, sets, kind + 1, next, 0, f);
            return;
        }
        let occupied = sets.iter().fold(0, |a, b| a | b);
        for s in from..32 {
            let bit = 1u32 << s;
            if occupied & bit != 0 || kinds[kind].1 & bit == 0 {
                continue;
            }
            sets[kind] |= bit;
            place(kinds, sets, kind, left - 1, s + 1, f);
            sets[kind] &= !bit;
        }
    }
    // Black men never on rank 7, white men never on rank 0.
    let kinds = [
        (m.bm, 0x0FFF_FFFFu32),
        (m.wm, 0xFFFF_FFF0),
        (m.bk, u32::MAX),
        (m.wk, u32::MAX),
    ];
    place(&kinds, &mut [0; 4], 0, kinds[0].0, 0, f);
}

#[test]
fn index_is_a_bijection_for_every_slice_up_to_4_pieces() {
    for pieces in 1..=4 {
        for m in Material::all_with_pieces(pieces) {
            let slices = m.slices();
            let mut seen: Vec<Vec<bool>> = slices
                .iter()
                .map(|s| vec![false; s.count() as usize])
                .collect();
            let indexers: Vec<SliceIndex> = slices.iter().map(|s| SliceIndex::new(*s)).collect();
            let mut placements = 0u64;
            for_each_placement(m, &mut |pos| {
                placements += 1;
                let s = Slice::of(&pos);
                let k = slices.iter().position(|x| *x == s).expect("slice listed");
                let i = indexers[k].index(&pos);
                assert!(!seen[k][i as usize], "{s}: index {i} given twice");
                seen[k][i as usize] = true;
                assert_eq!(indexers[k].position_unchecked(i), pos, "{s} index {i}");
            });
            let total: u64 = slices.iter().map(|s| s.count()).sum();
            assert_eq!(placements, total, "node {m}");
            assert!(seen.iter().flatten().all(|x| *x), "node {m} has gaps");
        }
    }
}

/// Walks `len` positions from `start` with the enumerator, checking each against deindexing.
fn check_enumeration(ix: &SliceIndex, start: u64, len: u64) {
    let mut e = ix.enumerate_from(start);
    let end = (start + len).min(ix.count());
    for i in start..end {
        assert!(e.valid());
        assert_eq!(e.index(), i);
        let p = e.position();
        assert_eq!(p, ix.position_unchecked(i), "{} at {i}", ix.slice());
        assert_eq!(ix.index(&p), i);
        e.advance();
    }
    if end == ix.count() {
        assert!(!e.valid());
    }
}

#[test]
fn enumeration_walks_every_slice_up_to_4_pieces_in_index_order() {
    for pieces in 2..=4 {
        for m in Material::all_with_pieces(pieces) {
            for s in m.slices() {
                let ix = SliceIndex::new(s);
                check_enumeration(&ix, 0, ix.count());
            }
        }
    }
}

#[test]
fn enumeration_agrees_on_sampled_ranges_of_larger_slices() {
    let mut rng = nowdb::rng::XorShift::new(0x9E37_79B9_7F4A_7C15);
    let mut rand = move || rng.next();
    for pieces in 5..=8 {
        let slices: Vec<Slice> = Material::all_with_pieces(pieces)
            .iter()
            .flat_map(|m| m.slices())
            .collect();
        for _ in 0..60 {
            let s = slices[(rand() % slices.len() as u64) as usize];
            let ix = SliceIndex::new(s);
            // Sometimes run into the end of the slice.
            let start = if rand() % 4 == 0 {
                ix.count().saturating_sub(2_000)
            } else {
                rand() % ix.count()
            };
            check_enumeration(&ix, start, 3_000);
        }
    }
}

#[test]
fn bad_index_input_is_an_error() {
    let ix = SliceIndex::for_name("1100").unwrap();
    assert_eq!(ix.count(), 992);
    let e = ix.position(992).unwrap_err().to_string();
    assert!(e.contains("992") && e.contains("1100.--"), "{e}");
    let other = SliceIndex::for_name("1111.00")
        .unwrap()
        .position(0)
        .unwrap();
    let e = ix.index_checked(&other).unwrap_err().to_string();
    assert!(e.contains("1111.00") && e.contains("not 1100.--"), "{e}");
}

/// A random slice with 2..=10 pieces (sometimes with one side empty).
fn any_slice() -> impl Strategy<Value = Slice> {
    (1u32..=10, any::<u64>()).prop_filter_map("slice holds positions", |(pieces, r)| {
        let materials = Material::all_with_pieces(pieces);
        let m = materials[(r % materials.len() as u64) as usize];
        let slices = m.slices();
        (!slices.is_empty()).then(|| slices[((r >> 20) % slices.len() as u64) as usize])
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn index_deindex_round_trip(slice in any_slice(), r in any::<u64>()) {
        let ix = SliceIndex::new(slice);
        let i = r % ix.count();
        let pos = ix.position(i).unwrap();
        prop_assert!(pos.validate().is_ok());
        prop_assert_eq!(Slice::of(&pos), slice);
        prop_assert_eq!(ix.index(&pos), i);
        prop_assert_eq!(ix.index_checked(&pos), Ok(i));
    }

    #[test]
    fn slice_names_round_trip(slice in any_slice()) {
        let name = slice.to_string();
        prop_assert_eq!(name.parse::<Slice>().unwrap(), slice);
        prop_assert_eq!(slice.mirror().mirror(), slice);
        prop_assert_eq!(slice.mirror().count(), slice.count());
    }
}

/// The solver's shortcut for king moves: the index split into the part without White's
/// kings and the white kings' rank adds up to the full index.
#[test]
fn index_without_white_kings_plus_their_rank_is_the_index() {
    let mut rng = nowdb::rng::XorShift::new(0x9E37_79B9_7F4A_7C15);
    for name in [
        "2300.--", "1212.33", "0132.41", "2221.52", "1122.06", "3003.-2",
    ] {
        let ix = SliceIndex::for_name(name).unwrap();
        for _ in 0..2000 {
            let i = rng.below(ix.count());
            let pos = ix.position(i).unwrap();
            let base = ix.index_without_white_kings(&pos);
            assert_eq!(base.1 & (pos.black | pos.white_men()), 0, "{name} {i}");
            assert_eq!(
                ix.index_from_white_kings(base, pos.white_kings()),
                i,
                "{name} {i}"
            );
        }
    }
}
