//! A paper estimate of a build of 2..N pieces on a cluster: from a measured per-core rate
//! (positions of the plan per job-second) and the plan's critical path.
//!
//! ```sh
//! cargo run --release --example cluster_estimate -- 8 10 -- 16 64 -- 32 -- 0.404
//! #                                       pieces...    nodes...   cores  M positions/s/core
//! ```
//!
//! For each piece count, node count and cores per node it prints:
//! - the work: every position of the plan (both sides of each slice) over the rate;
//! - the critical path: the longest chain of slice pairs through their dependencies, each
//!   pair taking its work over the cores it can use at once (its positions in mini-slices of
//!   `addq`'s 10 M positions, all cores at most);
//! - the wall time between `max(work / cores, critical path)` and their sum (Brent's bound),
//!   the jobs taken per second (the queue lock's load) and the bytes of the largest pair
//!   (what one job must hold: a slice and its mirror at two bits a position).

use nowdb::slice::{SlicePair, plan};
use std::collections::BTreeMap;

/// `addq`'s positions per mini-slice.
const JOB_POSITIONS: u64 = 10_000_000;
/// Phase jobs per pair (build, cap, lookup, noio passes, que, winmove, ver): measured on the
/// 2..7 build's done records as about ten per mini-slice.
const PHASES: u64 = 10;

fn groups(args: &[String]) -> Vec<Vec<f64>> {
    args.split(|a| a == "--")
        .map(|g| g.iter().map(|a| a.parse().expect("a number")).collect())
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let g = groups(&args);
    let [pieces, nodes, cores, rate] = g.as_slice() else {
        eprintln!(
            "usage: cluster_estimate PIECES... -- NODES... -- CORES -- M_POSITIONS_PER_SEC_PER_CORE"
        );
        std::process::exit(2);
    };
    let (cores_per_node, rate) = (cores[0], rate[0] * 1e6);
    println!(
        "pieces\tnodes\tcores\tpositions\twork (core-h)\tcritical path (h)\twall (h)\tjobs/s\tlargest pair (GB)"
    );
    for &n in pieces {
        let p = plan(n as u32);
        let pairs: Vec<SlicePair> = p.pairs().copied().collect();
        let positions: u64 = pairs.iter().map(|x| x.count()).sum();
        let largest = pairs.iter().map(|x| x.count()).max().unwrap_or(0);
        let jobs: u64 = pairs
            .iter()
            .map(|x| x.count().div_ceil(JOB_POSITIONS) * PHASES)
            .sum();
        for &k in nodes {
            let total_cores = k * cores_per_node;
            // The longest chain, in the plan's order (every pair after its dependencies).
            let mut finish: BTreeMap<SlicePair, f64> = BTreeMap::new();
            for x in &pairs {
                let width = (x.count().div_ceil(JOB_POSITIONS) as f64).min(total_cores);
                let own = x.count() as f64 / rate / width.max(1.0);
                let start = x
                    .dependencies()
                    .iter()
                    .filter_map(|d| finish.get(d))
                    .fold(0.0, |a: f64, b| a.max(*b));
                finish.insert(*x, start + own);
            }
            let path = finish.values().fold(0.0, |a: f64, b| a.max(*b));
            let work = positions as f64 / rate;
            let low = (work / total_cores).max(path);
            let high = work / total_cores + path;
            println!(
                "2..{n}\t{k}\t{total_cores}\t{positions:.3e}\t{:.0}\t{:.2}\t{:.1}-{:.1}\t{:.0}\t{:.1}",
                work / 3600.0,
                path / 3600.0,
                low / 3600.0,
                high / 3600.0,
                jobs as f64 / low,
                largest as f64 / 4.0 / 1e9,
                positions = positions as f64,
            );
        }
    }
}
