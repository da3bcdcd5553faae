//! What a threshold would cost a compressed moves-to-conversion file: over every slice of a
//! site built with `--mtc`, the runs of distances when those below a threshold T are one
//! symbol ("short") and draws are free to continue the run before them (a prober knows them
//! from the win/loss/draw file), and the bytes of a plain run code (a symbol byte and the
//! length in LEB128). Also the distribution of distances and the longest per piece count.
//!
//! `cargo run --release --example mtc_thresholds -- SITE` (docs/PERFORMANCE.md).

fn main() {
    let Some(dir) = std::env::args().nth(1) else {
        eprintln!("usage: mtc_thresholds SITE (a site built with --mtc)");
        std::process::exit(2);
    };
    let site = nowdb::solve::Site::new(dir);
    let ts = [0u32, 2, 4, 6, 8, 10, 12, 16, 20, 32];
    let mut runs = vec![0u64; ts.len()];
    let mut long = vec![0u64; ts.len()];
    let mut bytes = vec![0u64; ts.len()];
    let mut positions = 0u64;
    let mut valued = 0u64;
    let mut hist = vec![0u64; 256];
    let mut longest: std::collections::BTreeMap<u32, (u32, String)> = Default::default();
    for s in site.solved_slices().unwrap() {
        let m = nowdb::solve::mtc::MtcSlice::load(&site, s).unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(1);
        });
        positions += s.count();
        for (k, &t) in ts.iter().enumerate() {
            // Draws are don't-care: they continue the run before them.
            let mut cur: Option<u32> = None;
            let mut len = 0u64;
            let flush = |cur: Option<u32>, len: u64, runs: &mut u64, bytes: &mut u64| {
                if cur.is_some() && len > 0 {
                    *runs += 1;
                    *bytes += 1 + (64 - len.leading_zeros() as u64).div_ceil(7).max(1);
                }
            };
            for i in 0..s.count() {
                let Some(d) = m.get(i) else {
                    len += 1;
                    continue;
                };
                if k == 0 {
                    valued += 1;
                    hist[d as usize] += 1;
                    let e = longest.entry(s.pieces()).or_insert((0, String::new()));
                    if d > e.0 {
                        let pos = nowdb::SliceIndex::new(s).position(i).unwrap();
                        *e = (d, format!("{s} {}", nowdb::notation::position_fen(&pos)));
                    }
                }
                let sym = if d < t { 0 } else { d + 1 };
                if d >= t && t > 0 {
                    long[k] += 1;
                }
                if Some(sym) != cur {
                    flush(cur, len, &mut runs[k], &mut bytes[k]);
                    cur = Some(sym);
                    len = 0;
                }
                len += 1;
            }
            flush(cur, len, &mut runs[k], &mut bytes[k]);
        }
    }
    println!("positions {positions}, won or lost {valued}");
    for (k, t) in ts.iter().enumerate() {
        println!(
            "T {t:>2}: stored {:>12} runs {:>12} avg {:>8.1} bytes {:>12} ({:.1} positions a byte)",
            long[k],
            runs[k],
            positions as f64 / runs[k] as f64,
            bytes[k],
            positions as f64 / bytes[k] as f64
        );
    }
    for (p, (d, what)) in &longest {
        println!("longest of {p} pieces: {d} plies, {what}");
    }
    let mut acc = 0;
    for (d, n) in hist.iter().enumerate().filter(|(_, n)| **n > 0) {
        acc += n;
        println!(
            "d {d:>3}: {n:>12} {:>6.2}%",
            100.0 * acc as f64 / valued as f64
        );
    }
}
