//! Lookups per second per core through the C interface (`egdb_open`, then the handle's
//! `lookup` function pointer, as an engine calls it), beside nowdb's own probe
//! (`Database::probe`) on the same positions: warm (every block cached, best of 5 passes)
//! and cold (a fresh handle's first pass, best of 3; the files stay in the OS page cache).
//!
//! Run: `cargo bench -p nowdb-egdb --bench lookup -- SITE` on a built site (e.g.
//! `jobrunner build-local --site /tmp/s5 --pieces 5`). The positions are random positions
//! of the database's largest piece count, Black to move, each equally likely: "quiet" ones
//! (neither side can capture: where engines probe), "stored" ones (value stored), all
//! non-capture ones (some threats are searched), capture positions (searched), and all.

use egdb::{Bitboard, EgdbDriver, NormalBitboard, RowReversedBitboard};
use nowdb::board::white_has_capture;
use nowdb::db::Database;
use nowdb::db::probe::list_slices;
use nowdb::db::removed::{Kind, classify};
use nowdb::{Position, Slice, SliceIndex};
use std::ffi::CString;
use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

const SAMPLE: usize = 1_000_000;
const CACHE_MB: i32 = 1024;

struct Sample {
    /// Neither side can capture: where an engine probes.
    quiet: Vec<Position>,
    stored: Vec<Position>,
    non_capture: Vec<Position>,
    capture: Vec<Position>,
    all: Vec<Position>,
}

/// `SAMPLE` random positions of `pieces` pieces, each equally likely, sorted by kind.
fn sample(db: &Database, slices: &[Slice], pieces: u32) -> Sample {
    let ixs: Vec<SliceIndex> = slices
        .iter()
        .filter(|s| s.pieces() == pieces)
        .map(|s| SliceIndex::new(*s))
        .collect();
    let mut cumulative = Vec::new();
    let mut total = 0;
    for ix in &ixs {
        total += ix.count();
        cumulative.push(total);
    }
    let mut rng = nowdb::rng::XorShift::new(0x6567_6462);
    let mut s = Sample {
        quiet: Vec::new(),
        stored: Vec::new(),
        non_capture: Vec::new(),
        capture: Vec::new(),
        all: Vec::new(),
    };
    while s.all.len() < SAMPLE {
        let at = rng.below(total);
        let k = cumulative.partition_point(|&c| c <= at);
        let p = ixs[k].position_unchecked(at - (cumulative[k] - ixs[k].count()));
        let kind = classify(&p);
        s.all.push(p);
        if kind == Kind::Capture {
            s.capture.push(p);
            continue;
        }
        s.non_capture.push(p);
        if !white_has_capture(&p) {
            s.quiet.push(p);
        }
        if !db.slice(&Slice::of(&p)).unwrap().file.removal.removes(kind) {
            s.stored.push(p);
        }
    }
    s
}

/// A position in the layout an engine hands over.
fn bitboard(p: &Position, row_reversed: bool) -> Bitboard {
    if row_reversed {
        Bitboard {
            row_reversed: RowReversedBitboard {
                black_man: p.black & !p.kings,
                black_king: p.black & p.kings,
                white_man: p.white & !p.kings,
                white_king: p.white & p.kings,
            },
        }
    } else {
        let n = egdb::reverse_rows;
        Bitboard {
            normal: NormalBitboard {
                black: n(p.black),
                white: n(p.white),
                king: n(p.kings),
            },
        }
    }
}

fn open_handle(dir: &Path, row_reversed: bool) -> *mut EgdbDriver {
    let c = CString::new(dir.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated directory; no message function.
    let h = unsafe { egdb::egdb_open(row_reversed as i32, 0, CACHE_MB, c.as_ptr(), None) };
    assert!(!h.is_null(), "egdb_open({}) failed", dir.display());
    h
}

fn open_rust(dir: &Path) -> Database {
    let mut db = Database::open(dir, (CACHE_MB as usize) << 20).unwrap();
    db.open_slices(u32::MAX).unwrap();
    db
}

/// Lookups per second of one pass over `bbs` through the handle's function pointer.
fn c_pass(h: *mut EgdbDriver, bbs: &mut [Bitboard]) -> f64 {
    let t = Instant::now();
    for b in bbs.iter_mut() {
        // SAFETY: a live handle from egdb_open, a position owned for the call.
        black_box(unsafe { ((*h).lookup)(h, b, 0, 0) });
    }
    bbs.len() as f64 / t.elapsed().as_secs_f64()
}

fn rust_pass(db: &Database, ps: &[Position]) -> f64 {
    let t = Instant::now();
    for p in ps {
        black_box(db.probe(p).unwrap());
    }
    ps.len() as f64 / t.elapsed().as_secs_f64()
}

fn main() {
    let site = std::env::args()
        .skip(1)
        .rfind(|a| !a.starts_with('-'))
        .expect("usage: cargo bench -p nowdb-egdb --bench lookup -- SITE");
    let dir = Path::new(&site).join("db");
    let slices = list_slices(&dir).expect("a built database in SITE/db");
    let pieces = slices.iter().map(|s| s.pieces()).max().unwrap();
    let rust = open_rust(&dir);
    let s = sample(&rust, &slices, pieces);
    println!(
        "{}: {pieces}-piece positions: {} quiet, {} stored, {} non-capture, {} capture, {} in all \
         (1 thread)",
        dir.display(),
        s.quiet.len(),
        s.stored.len(),
        s.non_capture.len(),
        s.capture.len(),
        s.all.len()
    );
    println!(
        "{:<20} {:>6} {:>10} {:>10} {:>8}",
        "positions", "cache", "Rust M/s", "C ABI M/s", "C/Rust"
    );
    for (what, ps) in [
        ("quiet", &s.quiet),
        ("stored", &s.stored),
        ("non-capture", &s.non_capture),
        ("capture", &s.capture),
        ("all", &s.all),
    ] {
        for row_reversed in [true, false] {
            let mut bbs: Vec<Bitboard> = ps.iter().map(|p| bitboard(p, row_reversed)).collect();
            let layout = if row_reversed { "row-rev" } else { "normal" };
            // Cold: fresh handles, their first pass over a fifth of the sample (the rest
            // would find the blocks loaded); best of three, alternating.
            let n = ps.len() / 5;
            let (mut rust_cold, mut c_cold) = (0f64, 0f64);
            for _ in 0..3 {
                let fresh = open_rust(&dir);
                rust_cold = rust_cold.max(rust_pass(&fresh, &ps[..n]));
                drop(fresh);
                let h = open_handle(&dir, row_reversed);
                c_cold = c_cold.max(c_pass(h, &mut bbs[..n]));
                // SAFETY: a live handle, no other call running.
                unsafe { ((*h).close)(h) };
            }
            let h = open_handle(&dir, row_reversed);
            // Warm: every block loaded, best of five passes.
            rust_pass(&rust, ps);
            c_pass(h, &mut bbs);
            // Rounds alternate between the two, so that the machine's drift reaches both.
            let (mut rust_warm, mut c_warm) = (0f64, 0f64);
            for _ in 0..5 {
                rust_warm = rust_warm.max(rust_pass(&rust, ps));
                c_warm = c_warm.max(c_pass(h, &mut bbs));
            }
            // SAFETY: the handle is live and no other call is running.
            unsafe { ((*h).close)(h) };
            for (cache, r, c) in [("cold", rust_cold, c_cold), ("warm", rust_warm, c_warm)] {
                println!(
                    "{:<20} {:>6} {:>10.2} {:>10.2} {:>8.3}",
                    format!("{what} {layout}"),
                    cache,
                    r / 1e6,
                    c / 1e6,
                    c / r
                );
            }
        }
    }
}
