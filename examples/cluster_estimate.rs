//! A paper estimate of a build of 2..N pieces on a cluster: from a measured per-core rate
//! (positions of the plan per job-second) and the plan's critical path.
//!
//! ```sh
//! cargo run --release --example cluster_estimate -- 8 10 -- 16 64 -- 32 -- 3.05 -- 1000
//! #                              pieces...  nodes...  cores/node  M positions per
//! #                                                               job-second per core
//! #                                                               M positions per job
//! ```
//!
//! For each piece count, node count and cores per node it prints:
//! - the work: every position of the plan (both sides of each slice) over the rate;
//! - the critical path: the longest chain of slice pairs through their dependencies, each
//!   pair taking its work over the cores it can use at once (its positions in mini-slices of
//!   the given size, `addq --positions`; all cores at most), plus the wait between its
//!   phases (a pilot on another node sees new jobs only at its next poll);
//! - the wall time between `max(work / cores, critical path)` and their sum (Brent's bound),
//!   the jobs taken per second (the queue lock's load), the shared filesystem's traffic
//!   (each phase pass reads and writes two bits a position, about ten passes: 5 bytes a
//!   position) and the bytes of the largest pair (what one job must hold: a slice and its
//!   mirror at two bits a position).

use nowdb::slice::{SlicePair, plan};
use std::collections::BTreeMap;

/// Phase jobs per mini-slice of a pair (build, cap, lookup, noio passes, que, winmove, ver).
const PHASES: u64 = 10;
/// Seconds between two phases of a pair on the critical path: a pilot on another node sees
/// the next phase's jobs at its next look at the queues (inotify does not see other
/// machines' writes; `--poll-secs` 5 s, half of it on average).
const PHASE_LATENCY_SECS: f64 = 2.5;
/// Bytes the shared filesystem moves per position of the plan (two bits read and written
/// by each of the phase passes).
const BYTES_PER_POSITION: f64 = 5.0;

fn groups(args: &[String]) -> Vec<Vec<f64>> {
    args.split(|a| a == "--")
        .map(|g| g.iter().map(|a| a.parse().expect("a number")).collect())
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let g = groups(&args);
    let [pieces, nodes, cores, rate, job] = g.as_slice() else {
        eprintln!(
            "usage: cluster_estimate PIECES... -- NODES... -- CORES_PER_NODE -- M_POSITIONS_PER_JOB_SECOND_PER_CORE -- M_POSITIONS_PER_JOB"
        );
        std::process::exit(2);
    };
    let (cores_per_node, rate) = (cores[0], rate[0] * 1e6);
    let job_positions = (job[0] * 1e6) as u64;
    println!(
        "pieces\tnodes\tcores\tpositions\twork (core-h)\tcritical path (h)\twall (h)\tjobs/s\tfilesystem (GB/s)\tlargest pair (GB)"
    );
    for &n in pieces {
        let p = plan(n as u32);
        let pairs: Vec<SlicePair> = p.pairs().copied().collect();
        let positions: u64 = pairs.iter().map(|x| x.count()).sum();
        let largest = pairs.iter().map(|x| x.count()).max().unwrap_or(0);
        let jobs: u64 = pairs
            .iter()
            .map(|x| x.count().div_ceil(job_positions) * PHASES)
            .sum();
        for &k in nodes {
            let total_cores = k * cores_per_node;
            // The longest chain, in the plan's order (every pair after its dependencies).
            let mut finish: BTreeMap<SlicePair, f64> = BTreeMap::new();
            for x in &pairs {
                let width = (x.count().div_ceil(job_positions) as f64).min(total_cores);
                let own =
                    x.count() as f64 / rate / width.max(1.0) + PHASES as f64 * PHASE_LATENCY_SECS;
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
                "2..{n}\t{k}\t{total_cores}\t{:.3e}\t{:.0}\t{:.2}\t{:.1}-{:.1}\t{:.0}\t{:.1}\t{:.1}",
                positions as f64,
                work / 3600.0,
                path / 3600.0,
                low / 3600.0,
                high / 3600.0,
                jobs as f64 / low,
                positions as f64 * BYTES_PER_POSITION / low / 1e9,
                largest as f64 / 4.0 / 1e9,
            );
        }
    }
}
