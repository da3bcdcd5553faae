//! The compressed moves to conversion of a built site (`db/mtc/`): bytes and positions a
//! byte per piece count, beside the values' files; warm probe rates of the values, of the
//! stored distances and of both (`Database::probe_mtc`), best of five, one thread, on
//! 1 M positions drawn evenly over the largest piece count; and the exact distance of
//! short positions by search (`ExactDistances`), per position searched.
//!
//! Run: `cargo run --release --example mtc_probe -- SITE` on a site built with `--mtc`.

use nowdb::db::Database;
use nowdb::db::mtc::{Stored, mtc_path};
use nowdb::db::mtc_probe::ExactDistances;
use nowdb::db::probe::{list_slices, slice_path};
use nowdb::rng::XorShift;
use nowdb::solve::Value;
use nowdb::{Position, SliceIndex};
use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::Instant;

fn best_rate(n: usize, mut f: impl FnMut()) -> f64 {
    (0..5)
        .map(|_| {
            let t = Instant::now();
            f();
            n as f64 / t.elapsed().as_secs_f64()
        })
        .fold(0.0, f64::max)
}

fn main() {
    let root = std::env::args().nth(1).expect("usage: mtc_probe SITE");
    let dir = std::path::Path::new(&root).join("db");
    let slices = list_slices(&dir).expect("a built database");
    // Bytes per piece count.
    let mut sizes: BTreeMap<u32, (u64, u64, u64)> = BTreeMap::new();
    for s in &slices {
        let e = sizes.entry(s.pieces()).or_default();
        e.0 += s.count();
        e.1 += std::fs::metadata(slice_path(&dir, s)).map_or(0, |m| m.len());
        e.2 += std::fs::metadata(mtc_path(&dir, s))
            .expect("a database built with --mtc")
            .len();
    }
    let (mut all_p, mut all_v, mut all_m) = (0, 0, 0);
    for (pieces, (p, v, m)) in &sizes {
        println!(
            "{pieces} pieces: {p} positions; values {v} bytes ({:.1} positions/byte), distances {m} bytes ({:.1} positions/byte)",
            *p as f64 / *v as f64,
            *p as f64 / *m as f64
        );
        (all_p, all_v, all_m) = (all_p + p, all_v + v, all_m + m);
    }
    println!(
        "all: values {all_v} bytes ({:.1} positions/byte), distances {all_m} bytes ({:.1} positions/byte)",
        all_p as f64 / all_v as f64,
        all_p as f64 / all_m as f64
    );

    // 1 M positions of the largest piece count, drawn evenly.
    let most = sizes.keys().max().copied().unwrap();
    let big: Vec<(SliceIndex, u64)> = slices
        .iter()
        .filter(|s| s.pieces() == most)
        .map(|s| (SliceIndex::new(*s), s.count()))
        .collect();
    let total: u64 = big.iter().map(|b| b.1).sum();
    let mut rng = XorShift::new(0x3434);
    let sample: Vec<Position> = (0..1_000_000)
        .map(|_| {
            let mut r = rng.below(total);
            let (ix, _) = big
                .iter()
                .find(|(_, c)| {
                    let hit = r < *c;
                    if !hit {
                        r -= c;
                    }
                    hit
                })
                .unwrap();
            ix.position_unchecked(r)
        })
        .collect();
    let db = Database::open(&dir, 4 << 30).unwrap();
    // Warm: every block the sample needs in the cache.
    for p in &sample {
        black_box(db.probe_mtc(p).unwrap());
    }
    let values = best_rate(sample.len(), || {
        for p in &sample {
            black_box(db.probe(p).unwrap());
        }
    });
    let stored = best_rate(sample.len(), || {
        for p in &sample {
            black_box(db.stored_mtc(p).unwrap());
        }
    });
    let both = best_rate(sample.len(), || {
        for p in &sample {
            black_box(db.probe_mtc(p).unwrap());
        }
    });
    println!(
        "warm cache (1 thread), {most}-piece positions: values {:.2} M probes/s, stored distances {:.2} M/s, both (probe_mtc) {:.2} M/s",
        values / 1e6,
        stored / 1e6,
        both / 1e6
    );

    // Exact distances of short won or lost positions.
    let short: Vec<(Position, Value)> = sample
        .iter()
        .filter_map(|p| match db.probe_mtc(p).unwrap() {
            (v, Some(Stored::Short)) => Some((*p, v)),
            _ => None,
        })
        .take(20_000)
        .collect();
    let mut exact = ExactDistances::new();
    let t = Instant::now();
    let mut histogram = [0u64; 10];
    for (p, v) in &short {
        let d = exact.plies(&db, p, *v).unwrap().unwrap();
        histogram[d as usize] += 1;
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "exact distance of {} short positions: {:.1} us each, {:.1} positions searched each; plies 0..9: {histogram:?}",
        short.len(),
        secs * 1e6 / short.len() as f64,
        exact.searched as f64 / short.len() as f64
    );
}
