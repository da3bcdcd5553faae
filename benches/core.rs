//! Core speed figures in ns per operation (issue 2 targets on a 2-core machine: index and
//! deindex under 50 ns, enumeration step under 10 ns, move generation under 30 ns per position
//! on random 6-piece positions). Run: `cargo bench --bench core`.

use nowdb::board::{MoveList, generate_moves};
use nowdb::index::SliceIndex;
use nowdb::{Material, Position, Slice};
use std::hint::black_box;
use std::time::Instant;

/// Runs of each measurement; the best one is reported. On the shared VMs this is measured
/// on, neighbours slow down stretches of a few hundred milliseconds by 10-25 %, so a few
/// runs can all land in one; nine rarely do.
const RUNS: usize = 9;

/// Best of [`RUNS`] runs of `f` over `n` operations, in ns per operation.
fn ns_per_op(n: u64, mut f: impl FnMut() -> u64) -> f64 {
    let mut best = f64::MAX;
    for _ in 0..RUNS {
        let t = Instant::now();
        black_box(f());
        best = best.min(t.elapsed().as_nanos() as f64 / n as f64);
    }
    best
}

/// ns per index and per deindex over `(slice, index)` samples, in the samples' order.
fn index_and_deindex_ns(indexers: &[SliceIndex], samples: &[(usize, u64)]) -> (f64, f64) {
    let n = samples.len() as u64;
    let positions: Vec<(usize, Position)> = samples
        .iter()
        .map(|&(k, i)| (k, indexers[k].position_unchecked(i)))
        .collect();
    let index = ns_per_op(n, || {
        positions
            .iter()
            .map(|(k, p)| indexers[*k].index(p))
            .fold(0, u64::wrapping_add)
    });
    let deindex = ns_per_op(n, || {
        samples
            .iter()
            .map(|&(k, i)| indexers[k].position_unchecked(i).black as u64)
            .fold(0, u64::wrapping_add)
    });
    (index, deindex)
}

fn main() {
    // Random 6-piece positions where both sides have pieces, uniform over positions: pick a
    // slice with probability proportional to its size, then an index in it.
    let slices: Vec<Slice> = Material::all_with_pieces(6)
        .iter()
        .filter(|m| m.black() > 0 && m.white() > 0)
        .flat_map(|m| m.slices())
        .collect();
    let indexers: Vec<SliceIndex> = slices.iter().map(|s| SliceIndex::new(*s)).collect();
    let mut cumulative = Vec::with_capacity(indexers.len());
    let mut total = 0u64;
    for ix in &indexers {
        total += ix.count();
        cumulative.push(total);
    }
    let mut rng = nowdb::rng::XorShift::new(0x2545_F491_4F6C_DD1D);
    const N: usize = 1 << 20;
    let samples: Vec<(usize, u64)> = (0..N)
        .map(|_| {
            let r = rng.next() % total;
            let k = cumulative.partition_point(|&c| c <= r);
            let start = if k == 0 { 0 } else { cumulative[k - 1] };
            (k, r - start)
        })
        .collect();
    // The same samples grouped by slice: the solver's pattern (one slice's tables stay hot).
    let mut grouped = samples.clone();
    grouped.sort_unstable();
    let (index_ns, deindex_ns) = index_and_deindex_ns(&indexers, &samples);
    let (index_grouped_ns, deindex_grouped_ns) = index_and_deindex_ns(&indexers, &grouped);
    let positions: Vec<Position> = samples
        .iter()
        .map(|&(k, i)| indexers[k].position_unchecked(i))
        .collect();
    let mut list = MoveList::new();
    let movegen_ns = ns_per_op(N as u64, || {
        let mut n = 0;
        for p in &positions {
            generate_moves(p, &mut list);
            n += list.len() as u64;
        }
        n
    });
    // Enumeration: walk whole slices of several shapes (kings only, men only, mixed).
    let mut walked = 0u64;
    let walk: Vec<&SliceIndex> = ["3300.--", "0033.65", "2211.43", "1122.06", "3201.-5"]
        .iter()
        .map(|n| {
            let k = slices.iter().position(|s| s.to_string() == *n).unwrap();
            walked += indexers[k].count();
            &indexers[k]
        })
        .collect();
    let enum_ns = ns_per_op(walked, || {
        let mut acc = 0u64;
        for ix in &walk {
            let mut e = ix.enumerate_from(0);
            loop {
                acc = acc.wrapping_add(e.position().white as u64);
                if !e.advance() {
                    break;
                }
            }
        }
        acc
    });

    println!("nowdb core benchmark: random 6-piece positions ({N} samples), best of {RUNS}");
    println!(
        "deindexing deposits squares with {}",
        if nowdb::index::uses_pdep() {
            "PDEP"
        } else {
            "byte tables (no fast PDEP here)"
        }
    );
    println!("operation\tns_per_op\ttarget_ns");
    println!("index_random_slices\t{index_ns:.1}\t50");
    println!("index_grouped_by_slice\t{index_grouped_ns:.1}\t50");
    println!("deindex_random_slices\t{deindex_ns:.1}\t50");
    println!("deindex_grouped_by_slice\t{deindex_grouped_ns:.1}\t50");
    println!("enumeration_step\t{enum_ns:.1}\t10\t({walked} positions walked)");
    println!("movegen\t{movegen_ns:.1}\t30");
}
