//! Compressed database figures (issue 4) on a site whose database is built:
//! positions per byte by piece count and for the 2v2, 3v2, 3v3 and 4v3 splits (with the same
//! runs coded by the 2003 paper's scheme for comparison), probe rates with a warm and a cold
//! block cache, and the `ver` rate.
//!
//! Run: `cargo bench --bench db -- SITE` (e.g. after
//! `jobrunner --site SITE build-local --pieces 6`). Other modes, each on a built SITE:
//! `--probe-rates` (warm probe rates, best of five), `--probe-only N` (for callgrind),
//! `--train-code K` (the built-in codes), `--rle-1994` (the 1994 paper's run-length scheme
//! on the same solved values), `--one-side` (what storing one slice of each mirror pair
//! would give, and what its one-move search costs a probe).

use nowdb::db::Database;
use nowdb::db::format::SliceFile;
use nowdb::db::probe::{list_slices, slice_path};
use nowdb::db::removed::{Kind, RangeRuns, Removal, classify, removed_threat_children};
use nowdb::db::write::write_slice;
use nowdb::solve::running::{Outcome, RunOptions};
use nowdb::solve::{Job, Phase, Site, Value};
use nowdb::{MoveList, Position, Slice, SliceIndex};
use std::collections::{BTreeMap, HashMap};
use std::hint::black_box;
use std::time::Instant;

/// Bits of a Huffman code (no length limit) for these symbol counts.
fn huffman_bits(freqs: &HashMap<u64, u64>) -> f64 {
    let counts: Vec<u64> = freqs.values().copied().collect();
    let lengths = nowdb::db::code::code_lengths(&counts);
    // code_lengths limits codes to 15 bits; the 2003 coder allowed 20, which matters little.
    counts
        .iter()
        .zip(&lengths)
        .map(|(&c, &l)| (c * l as u64) as f64)
        .sum()
}

#[derive(Default)]
struct Group {
    positions: u64,
    bytes: u64,
    /// The 2003 scheme on the same runs: symbol counts and escape bits.
    symbols: HashMap<u64, u64>,
    escape_bits: u64,
}

impl Group {
    fn add_runs(&mut self, runs: &[(Value, u64)]) {
        let (mut prev, mut cur) = (Value::Unknown, Value::Unknown);
        for (k, &(v, len)) in runs.iter().enumerate() {
            if k >= 2 && v != prev {
                *self.symbols.entry(0).or_default() += 1; // the miss symbol
            }
            if len < 10_000 {
                *self.symbols.entry(len).or_default() += 1;
            } else {
                *self.symbols.entry(10_000).or_default() += 1;
                self.escape_bits += 32;
            }
            prev = cur;
            cur = v;
        }
    }
}

/// Random positions without a capture for the side to move, split by what a probe does.
struct Sample {
    /// All of them.
    quiet: Vec<Position>,
    /// Those whose value is stored (threats are, in slices that keep them).
    stored: Vec<Position>,
    /// The rest: threats the probe searches.
    searched: Vec<Position>,
}

/// `n` random non-capture positions of `pieces` pieces.
fn sample_positions(db: &Database, slices: &[Slice], pieces: u32, n: usize) -> Sample {
    let big: Vec<SliceIndex> = slices
        .iter()
        .filter(|s| s.pieces() == pieces)
        .map(|s| SliceIndex::new(*s))
        .collect();
    let total: u64 = big.iter().map(|ix| ix.count()).sum();
    let mut rng = nowdb::rng::XorShift::new(0x2545_F491_4F6C_DD1D);
    let mut sample = Sample {
        quiet: Vec::new(),
        stored: Vec::new(),
        searched: Vec::new(),
    };
    while sample.quiet.len() < n {
        let mut at = rng.below(total);
        let ix = big
            .iter()
            .find(|ix| {
                if at < ix.count() {
                    true
                } else {
                    at -= ix.count();
                    false
                }
            })
            .unwrap();
        let p = ix.position_unchecked(at);
        let kind = classify(&p);
        if kind == Kind::Capture {
            continue;
        }
        sample.quiet.push(p);
        let removal = db.slice(&Slice::of(&p)).unwrap().file.removal;
        match removal.removes(kind) {
            false => sample.stored.push(p),
            true => sample.searched.push(p),
        }
    }
    sample
}

/// Probes every position (not inlined, so that `valgrind --tool=callgrind` reports its cost:
/// `cargo bench --bench db -- --probe-only N SITE`).
#[inline(never)]
fn probe_all(db: &Database, ps: &[Position]) {
    for p in ps {
        black_box(db.probe(p).unwrap());
    }
}

// Two functions, not one called twice, so that callgrind counts them apart (the black_box
// keeps the compiler from merging them).
#[inline(never)]
fn probe_stored_positions(db: &Database, ps: &[Position]) {
    black_box("stored");
    probe_all(db, ps)
}

#[inline(never)]
fn probe_threat_positions(db: &Database, ps: &[Position]) {
    black_box("threats");
    probe_all(db, ps)
}

/// The database of the site named last on the command line, `n` random non-capture
/// positions of its largest piece count, probed once so that the block cache is warm:
/// `(database, pieces, sample)`.
fn warm_database(args: &[String], n: usize) -> (Database, u32, Sample) {
    let root = args
        .iter()
        .skip(1)
        .rfind(|a| !a.starts_with('-'))
        .expect("SITE");
    let dir = Site::new(root).db_dir();
    let slices = list_slices(&dir).unwrap();
    let pieces = slices.iter().map(|s| s.pieces()).max().unwrap();
    let db = Database::open(&dir, 1 << 30).unwrap();
    let sample = sample_positions(&db, &slices, pieces, n);
    probe_all(&db, &sample.quiet);
    (db, pieces, sample)
}

/// The 1994 paper's run-length scheme (section 4) on a solved slice, in bytes: capture and
/// capture-threat positions (every one: the 1994 rule has no condition on the moves) take
/// the slice's dominant value; then each byte is either five values (3^5 = 243 codes) or
/// one of the 13 codes left, runs of the dominant value. The paper gives the 13 lengths
/// only as "10 to 3,200"; these are a geometric series between the two (ratio 1.617),
/// taken greedily, longest first.
fn rle_1994_bytes(site: &Site, slice: Slice) -> u64 {
    const RUNS: [u64; 13] = [
        10, 16, 26, 42, 69, 111, 180, 291, 470, 761, 1230, 1990, 3200,
    ];
    let solved = nowdb::solve::solved::SolvedSlice::load(site, slice).unwrap();
    let ix = SliceIndex::new(slice);
    let mut removed = vec![false; ix.count() as usize];
    let mut counts = [0u64; 4];
    let mut e = ix.enumerate_from(0);
    for (i, r) in removed.iter_mut().enumerate() {
        let p = e.position();
        e.advance();
        *r = nowdb::board::has_capture(&p) || nowdb::board::white_has_capture(&p);
        counts[solved.get(i as u64) as usize] += 1;
    }
    let dominant = (1..4).max_by_key(|&v| counts[v]).unwrap();
    let value = |i: usize| match removed[i] {
        true => dominant,
        false => solved.get(i as u64) as usize,
    };
    let (n, mut i, mut bytes) = (removed.len(), 0, 0);
    while i < n {
        let mut run = 0;
        while i + run < n && run < 3200 && value(i + run) == dominant {
            run += 1;
        }
        i += RUNS
            .iter()
            .rev()
            .find(|&&l| l <= run as u64)
            .map_or(5, |&l| l as usize);
        bytes += 1;
    }
    bytes
}

/// `--rle-1994 SITE`: positions per byte of the 1994 scheme by piece count and split.
fn rle_1994(site: &Site) {
    let slices = nowdb::solve::site::slice_files(&site.solved_dir(), "nwk").unwrap();
    let mut groups: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for s in slices {
        let bytes = rle_1994_bytes(site, s);
        for key in [
            format!("{} pieces", s.pieces()),
            split_name(&s),
            "all".into(),
        ] {
            let g = groups.entry(key).or_default();
            g.0 += s.count();
            g.1 += bytes;
        }
    }
    println!("group\tpositions\t1994 RLE bytes\tpositions/byte");
    for (name, (positions, bytes)) in groups {
        println!(
            "{name}\t{positions}\t{bytes}\t{:.1}",
            positions as f64 / bytes as f64
        );
    }
}

/// `--one-side SITE`: what storing one slice of each mirror pair would give (the other
/// side's positions answered by a one-move search into it). Per group: positions, bytes,
/// positions per byte as built; if each pair kept only its smaller file; and if each pair
/// kept only its smaller file *with its threat values stored* (rule 2), which is what a
/// sound one-sided database needs: a removed threat's quiet children are on the side not
/// stored, whose search would reach threats again without losing material, so nothing
/// would bound it; and the same with only those threats removed whose every move leads to
/// a capture (sound as well). Then the rate of the one-move search over random non-capture
/// positions of the largest piece count (children probed until a win: an upper bound on
/// its speed, since a child in a slice not stored would search again).
fn one_side(args: &[String]) {
    let root = args.iter().skip(1).rfind(|a| !a.starts_with('-'));
    let site = Site::new(root.expect("--one-side SITE"));
    let dir = site.db_dir();
    let slices = list_slices(&dir).unwrap();
    let size = |s: &Slice| std::fs::metadata(slice_path(&dir, s)).unwrap().len();
    // The file's size with threat values stored (rule 2), and with only the threats removed
    // whose every move leads to a capture of the opponent (sound too: their derivation never
    // reaches the side not stored): both from one pass over the solved slice.
    let tmp = std::env::temp_dir().join(format!("nowdb-one-side-{}.ndb", std::process::id()));
    let sound_sizes = |s: &Slice| {
        let solved = nowdb::solve::solved::SolvedSlice::load(&site, *s).unwrap();
        let ix = SliceIndex::new(*s);
        let (mut stored, mut forced) = (RangeRuns::default(), RangeRuns::default());
        let mut moves = MoveList::new();
        let mut e = ix.enumerate_from(0);
        for i in 0..ix.count() {
            let p = e.position();
            e.advance();
            let kind = classify(&p);
            if kind == Kind::Capture {
                stored.push_removed();
                forced.push_removed();
                continue;
            }
            let v = solved.get(i);
            stored.push_stored(v);
            // classify left a threat's moves in `moves`.
            match kind == Kind::Threat
                && removed_threat_children(&p, &mut moves)
                    .is_some_and(|c| c.count_ones() as usize == moves.len())
            {
                true => forced.push_removed(),
                false => forced.push_stored(v),
            }
        }
        let file_size = |runs: RangeRuns, rule| {
            write_slice(&tmp, s, ix.count(), &runs.into_runs(), rule).unwrap()
        };
        (
            file_size(stored, Removal::Captures),
            file_size(forced, Removal::CapturesAndThreats),
        )
    };
    let mut groups: BTreeMap<String, [u64; 5]> = BTreeMap::new();
    for s in &slices {
        let m = s.mirror();
        let has_mirror = m != *s && slices.binary_search(&m).is_ok();
        // Each pair once, at its smaller name; a slice that is its own mirror stays whole.
        if has_mirror && m < *s {
            continue;
        }
        let (stored, forced) = sound_sizes(s);
        let g = match has_mirror {
            true => {
                let (m_stored, m_forced) = sound_sizes(&m);
                [
                    s.count() + m.count(),
                    size(s) + size(&m),
                    size(s).min(size(&m)),
                    stored.min(m_stored),
                    forced.min(m_forced),
                ]
            }
            false => [s.count(), size(s), size(s), stored, forced],
        };
        let split = match has_mirror && split_name(s) != split_name(&m) {
            true => format!(
                "{}+{}",
                split_name(s).max(split_name(&m)),
                split_name(s).min(split_name(&m))
            ),
            false => split_name(s),
        };
        for key in [format!("{} pieces", s.pieces()), split, "all".into()] {
            let t = groups.entry(key).or_default();
            for k in 0..5 {
                t[k] += g[k];
            }
        }
    }
    let _ = std::fs::remove_file(&tmp);
    println!(
        "group\tpositions\tbytes\tpositions/byte\tone side: bytes\tpositions/byte\t\
         one side, threats stored: bytes\tpositions/byte\t\
         one side, forced threats removed: bytes\tpositions/byte"
    );
    for (name, [positions, both, one, one_stored, one_forced]) in groups {
        let per = |b: u64| positions as f64 / b as f64;
        println!(
            "{name}\t{positions}\t{both}\t{:.1}\t{one}\t{:.1}\t{one_stored}\t{:.1}\t{one_forced}\t{:.1}",
            per(both),
            per(one),
            per(one_stored),
            per(one_forced)
        );
    }
    let (db, pieces, sample) = warm_database(args, 200_000);
    let mut moves = MoveList::new();
    let search = |moves: &mut MoveList| {
        let t = Instant::now();
        for p in &sample.quiet {
            nowdb::board::generate_moves(p, moves);
            let mut best = Value::Loss;
            for m in moves.iter() {
                match db.probe(&p.successor(m)).unwrap() {
                    Value::Loss => {
                        best = Value::Win;
                        break;
                    }
                    Value::Draw if best == Value::Loss => best = Value::Draw,
                    _ => {}
                }
            }
            black_box(best);
        }
        sample.quiet.len() as f64 / t.elapsed().as_secs_f64()
    };
    search(&mut moves);
    println!(
        "one-move search over every child (warm cache, 1 thread), {pieces}-piece non-capture positions: {:.2} M/s (a plain probe: {:.2} M/s)",
        search(&mut moves) / 1e6,
        {
            let t = Instant::now();
            probe_all(&db, &sample.quiet);
            sample.quiet.len() as f64 / t.elapsed().as_secs_f64() / 1e6
        }
    );
}

fn split_name(s: &Slice) -> String {
    let m = s.material;
    format!("{}v{}", m.bk + m.bm, m.wk + m.wm)
}

/// `--train-code K`: the symbol counts of every solved slice's refilled runs, grouped into
/// K codes ([`nowdb::db::write::train_codes`]), printed as the `default_code.rs` table.
fn train_code(site: &Site, k: usize) {
    use nowdb::db::code::{CONTEXTS, SYMBOLS};
    let slices = site.solved_slices().unwrap();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let files = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                while let Some(s) =
                    slices.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                {
                    let solved = nowdb::solve::solved::SolvedSlice::load(site, *s).unwrap();
                    let ix = SliceIndex::new(*s);
                    let rules =
                        nowdb::db::removed::range_runs(&ix, 0, ix.count(), |i| solved.get(i));
                    // The runs of the rule the built file chose (threats removed when there
                    // is none yet).
                    let stored = SliceFile::open(&slice_path(&site.db_dir(), s), s)
                        .is_ok_and(|f| f.removal == nowdb::db::removed::Removal::Captures);
                    let runs = match rules.threats_stored {
                        Some(r) if stored => r,
                        _ => rules.threats_removed,
                    };
                    // Trained on the simple boundaries: where the build places them depends
                    // on the code.
                    let runs: Vec<_> = runs.into_runs().iter().map(|r| (r.value, r.len)).collect();
                    let mut freqs = [[0u64; SYMBOLS]; CONTEXTS];
                    nowdb::db::write::count_symbols(&runs, &mut freqs);
                    files.lock().unwrap().push((*s, freqs));
                }
            });
        }
    });
    // Sorted by slice, so the training does not depend on which thread finished first.
    let mut files = files.into_inner().unwrap();
    files.sort_by_key(|f| f.0);
    let freqs: Vec<_> = files.iter().map(|f| f.1).collect();
    let codes = nowdb::db::write::train_codes(&freqs, k);
    let bits = |code: &[[u8; SYMBOLS]; CONTEXTS]| {
        freqs
            .iter()
            .map(|f| nowdb::db::write::code_word_bits(f, code))
            .collect::<Vec<_>>()
    };
    let per_code: Vec<Vec<u64>> = codes.iter().map(bits).collect();
    let best: u64 = (0..freqs.len())
        .map(|i| per_code.iter().map(|b| b[i]).min().unwrap())
        .sum();
    let own: u64 = freqs
        .iter()
        .map(|f| nowdb::db::write::code_word_bits(f, &nowdb::db::write::code_for_counts(f)))
        .sum();
    eprintln!(
        "{k} codes: {} bytes of code words, {:+.2}% against a code per slice",
        best / 8,
        100.0 * (best as f64 / own as f64 - 1.0)
    );
    println!("pub const DEFAULT_CODES: [[[u8; SYMBOLS]; CONTEXTS]; {k}] = [");
    for code in codes {
        println!("    [");
        for lengths in code {
            println!("        [");
            for row in lengths.chunks(21) {
                let row: Vec<String> = row.iter().map(|l| l.to_string()).collect();
                println!("            {},", row.join(", "));
            }
            println!("        ],");
        }
        println!("    ],");
    }
    println!("];");
}

/// CRC-32 of the database's bytes in 1 KiB blocks (what every block read checks): ns per
/// block, best of five passes over up to 64 MiB.
fn crc_rate(dir: &std::path::Path) {
    let mut bytes = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if !path.is_file() {
            continue;
        }
        bytes.extend(std::fs::read(path).unwrap());
        if bytes.len() >= 64 << 20 {
            break;
        }
    }
    let blocks = bytes.len() / 1024;
    let mut best = f64::MAX;
    let mut sum = 0u32;
    for _ in 0..5 {
        let t = Instant::now();
        for b in bytes.chunks_exact(1024) {
            sum ^= nowdb::db::crc32::crc32(b);
        }
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!(
        "crc32 of 1 KiB blocks: {:.1} ns per block ({:.2} GB/s, {blocks} blocks, check {sum:08x})",
        best * 1e9 / blocks as f64,
        (blocks * 1024) as f64 / best / 1e9
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(k) = args.iter().position(|a| a == "--probe-only") {
        let n: usize = args[k + 1].parse().expect("--probe-only N");
        let (db, _, sample) = warm_database(&args, n);
        // After the warming pass (so no block is read from disk): callgrind's inclusive
        // counts of these two functions, divided by the counts printed, are the
        // instructions per stored and per searched threat probe.
        probe_stored_positions(&db, &sample.stored);
        probe_threat_positions(&db, &sample.searched);
        println!(
            "{} stored, {} threat positions probed",
            sample.stored.len(),
            sample.searched.len()
        );
        return;
    }
    if args.iter().any(|a| a == "--probe-rates") {
        // Warm-cache rates only, best of five rounds each (this machine's speed varies).
        let (db, pieces, sample) = warm_database(&args, 1_000_000);
        for (what, ps) in [("stored", &sample.stored), ("non-capture", &sample.quiet)] {
            let best = (0..5)
                .map(|_| {
                    let t = Instant::now();
                    probe_all(&db, ps);
                    ps.len() as f64 / t.elapsed().as_secs_f64()
                })
                .fold(0.0, f64::max);
            println!(
                "warm cache (1 thread), {pieces}-piece {what} positions: {:.2} M probes/s (best of 5)",
                best / 1e6
            );
        }
        return;
    }
    if args.iter().any(|a| a == "--one-side") {
        return one_side(&args);
    }
    if let Some(k) = args.iter().position(|a| a == "--rle-1994") {
        return rle_1994(&Site::new(args.get(k + 1).expect("--rle-1994 SITE")));
    }
    if let Some(k) = args.iter().position(|a| a == "--train-code") {
        let codes: usize = args[k + 1].parse().expect("--train-code K SITE");
        let root = args.get(k + 2).expect("--train-code K SITE");
        return train_code(&Site::new(root), codes);
    }
    let root = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .unwrap_or_else(|| "/tmp/s6".into());
    let site = Site::new(&root);
    let dir = site.db_dir();
    let slices = list_slices(&dir).expect("a built database");
    println!("database {}: {} slices", dir.display(), slices.len());

    // Positions per byte, and the 2003 scheme on the same refilled runs.
    let mut groups: BTreeMap<String, Group> = BTreeMap::new();
    let mut threats_stored = 0;
    for s in &slices {
        let path = slice_path(&dir, s);
        let f = SliceFile::open(&path, s).unwrap();
        threats_stored += (f.removal == nowdb::db::removed::Removal::Captures) as usize;
        let mut runs: Vec<(Value, u64)> = Vec::new();
        f.for_each_run::<nowdb::db::DbError>(0, f.count, |_, len, v| {
            match runs.last_mut() {
                Some(r) if r.0 == v => r.1 += len,
                _ => runs.push((v, len)),
            }
            Ok(())
        })
        .unwrap();
        let bytes = std::fs::metadata(&path).unwrap().len();
        for key in [
            format!("{} pieces", s.pieces()),
            split_name(s),
            "all".into(),
        ] {
            let g = groups.entry(key).or_default();
            g.positions += f.count;
            g.bytes += bytes;
            g.add_runs(&runs);
        }
    }
    println!(
        "slices storing their threat values: {threats_stored} of {}",
        slices.len()
    );
    println!("group\tpositions\tbytes\tpositions/byte\t2003 scheme positions/byte");
    for (name, g) in &groups {
        if !(name.contains("pieces")
            || ["2v2", "3v2", "2v3", "3v3", "4v3", "3v4", "all"].contains(&name.as_str()))
        {
            continue;
        }
        let bytes_2003 = (huffman_bits(&g.symbols) + g.escape_bits as f64) / 8.0;
        println!(
            "{name}\t{}\t{}\t{:.1}\t{:.1}",
            g.positions,
            g.bytes,
            g.positions as f64 / g.bytes as f64,
            g.positions as f64 / bytes_2003
        );
    }

    crc_rate(&dir);

    // Probe rates on random non-capture positions of the largest piece count.
    let pieces = slices.iter().map(|s| s.pieces()).max().unwrap();
    let cold = Database::open(&dir, 1 << 30).unwrap();
    let Sample {
        quiet,
        stored,
        searched,
    } = sample_positions(&cold, &slices, pieces, 1_000_000);
    let rate = |db: &Database, ps: &[Position]| {
        let t = Instant::now();
        probe_all(db, ps);
        ps.len() as f64 / t.elapsed().as_secs_f64()
    };
    let r = rate(&cold, &stored[..100_000]);
    println!(
        "cold cache, {pieces}-piece stored positions: {:.3} blocks read per probe ({:.0} probes/s)",
        cold.blocks_read() as f64 / 100_000.0,
        r
    );
    let warm = Database::open(&dir, 1 << 30).unwrap();
    rate(&warm, &quiet);
    println!(
        "warm cache (1 thread), {pieces}-piece non-capture positions ({:.1}% threats searched): {:.2} M probes/s",
        100.0 * searched.len() as f64 / quiet.len() as f64,
        rate(&warm, &quiet) / 1e6
    );
    println!(
        "warm cache (1 thread), {pieces}-piece stored positions (decoded directly): {:.2} M probes/s",
        rate(&warm, &stored) / 1e6
    );

    // ver rate on one core over the largest slices.
    let mut by_size: Vec<Slice> = slices
        .iter()
        .filter(|s| s.pieces() == pieces)
        .copied()
        .collect();
    by_size.sort_by_key(|s| std::cmp::Reverse(s.count()));
    // As a `ver` job opens it: whole slices decoded within the job's memory share.
    let budget = RunOptions::default().decode_budget(1);
    let db = Database::open(&dir, 256 << 20).unwrap().decoding(budget);
    let opts = RunOptions {
        database: Some(std::sync::Arc::new(db)),
        ..RunOptions::default()
    };
    let (mut checked, mut positions) = (0, 0);
    let t = Instant::now();
    for s in by_size.iter().take(4) {
        let job = Job::whole(Phase::Ver, *s, 0);
        match nowdb::solve::run_job(&site, &job, &opts).unwrap() {
            Outcome::Done(st) => checked += st.looked,
            Outcome::Stopped { .. } => unreachable!(),
        }
        positions += s.count();
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "ver (1 thread) on the 4 largest {pieces}-piece slices: {:.0} K positions/s ({} of {} positions checked against their moves: from the solved values, every one)",
        positions as f64 / secs / 1e3,
        checked,
        positions
    );
}
