//! The run code of docs/FORMAT.md: each run is one symbol (hit or miss of the predicted
//! value, and a length class) of a canonical prefix code chosen by the context (the value of
//! the previous run), followed by raw extra bits for long runs.

/// Symbols per context: 64 exact lengths and 41 length classes, for hits and for misses.
pub const SYMBOLS: usize = 210;
/// One code per value of the previous run (win, loss, draw).
pub const CONTEXTS: usize = 3;
/// Longest code word.
pub const MAX_CODE_LEN: u32 = 15;
/// Runs up to this length have a symbol of their own; longer ones share one per class of
/// lengths `EXACT + 2^j ..`.
pub(super) const EXACT: u64 = 64;

/// The first length of class `j` (coded with `j` extra bits).
#[inline]
pub(super) const fn class_start(j: u32) -> u64 {
    EXACT + (1u64 << j)
}
const PER_HIT: u16 = 105;
/// Bits looked up at once when decoding; longer codes take the canonical walk.
const PEEK: u32 = 12;
/// Bits a skip step looks at: fewer than `PEEK`, so that the skip tables of every built-in
/// code stay in the processor's nearest caches (a probe takes a few dozen dependent steps).
pub const SKIP_PEEK: u32 = 10;

/// The cycle win -> loss -> draw -> win, on value codes 0..3.
#[inline]
pub const fn next_in_cycle(c: u8) -> u8 {
    (c + 1) % 3
}

/// The third value code.
#[inline]
pub const fn third(a: u8, b: u8) -> u8 {
    3 - a - b
}

/// The prediction state `(cur, prev)` (different value codes) as 0..6.
#[inline]
pub const fn state_byte(cur: u8, prev: u8) -> u8 {
    2 * cur + (prev != next_in_cycle(cur)) as u8
}

/// `AFTER[state][hit]`: the state after a run that was a hit (1) or a miss (0) from
/// `state`; the run's value is the new state's `cur`, its number halved. Decoding keeps the
/// state as this number and never splits it.
pub const AFTER: [[u8; 2]; 6] = {
    let mut table = [[0u8; 2]; 6];
    let mut s = 0;
    while s < 6 {
        let Some((cur, prev)) = state_of(s as u8) else {
            unreachable!()
        };
        // A hit repeats `prev`, a miss is the third value; the old `cur` becomes `prev`.
        table[s][1] = state_byte(prev, cur);
        table[s][0] = state_byte(third(cur, prev), cur);
        s += 1;
    }
    table
};

/// The state `(cur, prev)` of a state number, or `None` past 5.
#[inline]
pub const fn state_of(byte: u8) -> Option<(u8, u8)> {
    let cur = byte / 2;
    if cur > 2 {
        return None;
    }
    let prev = if byte.is_multiple_of(2) {
        next_in_cycle(cur)
    } else {
        third(cur, next_in_cycle(cur))
    };
    Some((cur, prev))
}

/// The symbol, extra-bit count and extra-bit value coding a run of `len` (>= 1).
#[inline]
pub fn symbol_of(hit: bool, len: u64) -> (u16, u32, u64) {
    debug_assert!(len >= 1);
    let h = if hit { 0 } else { PER_HIT };
    if len <= EXACT {
        (h + (len - 1) as u16, 0, 0)
    } else {
        let n = len - EXACT; // >= 1
        let j = 63 - n.leading_zeros();
        (h + EXACT as u16 + j as u16, j, n - (1u64 << j))
    }
}

/// Whether `sym` is a hit, its extra-bit count, and its length before the extra bits.
#[inline]
fn meaning(sym: u16) -> (bool, u32, u64) {
    let hit = sym < PER_HIT;
    let c = (sym % PER_HIT) as u64;
    if c < EXACT {
        (hit, 0, c + 1)
    } else {
        let j = (c - EXACT) as u32;
        (hit, j, class_start(j))
    }
}

/// Code lengths (0 = unused) of a prefix code for `freqs`, no longer than [`MAX_CODE_LEN`]:
/// Huffman's construction, with the counts halved until the longest code fits.
pub fn code_lengths(freqs: &[u64]) -> Vec<u8> {
    let mut f: Vec<u64> = freqs.to_vec();
    loop {
        let lengths = huffman_lengths(&f);
        if lengths.iter().all(|&l| l as u32 <= MAX_CODE_LEN) {
            return lengths;
        }
        for x in f.iter_mut().filter(|x| **x > 0) {
            *x = (*x >> 1).max(1);
        }
    }
}

fn huffman_lengths(freqs: &[u64]) -> Vec<u8> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let n = freqs.len();
    let mut lengths = vec![0u8; n];
    let used: Vec<usize> = (0..n).filter(|&i| freqs[i] > 0).collect();
    match used.len() {
        0 => return lengths,
        1 => {
            lengths[used[0]] = 1;
            return lengths;
        }
        _ => {}
    }
    // Nodes 0..n are symbols, later ones internal; ties break on the node number so the
    // code is a pure function of the counts.
    let mut parent = vec![usize::MAX; n];
    let mut heap: BinaryHeap<Reverse<(u64, usize)>> =
        used.iter().map(|&i| Reverse((freqs[i], i))).collect();
    while heap.len() > 1 {
        let Reverse((fa, a)) = heap.pop().expect("two nodes");
        let Reverse((fb, b)) = heap.pop().expect("two nodes");
        let node = parent.len();
        parent.push(usize::MAX);
        parent[a] = node;
        parent[b] = node;
        heap.push(Reverse((fa + fb, node)));
    }
    for &i in &used {
        let mut depth = 0u8;
        let mut j = i;
        while parent[j] != usize::MAX {
            j = parent[j];
            depth = depth.saturating_add(1);
        }
        lengths[i] = depth;
    }
    lengths
}

/// Canonical code words for `lengths`: shorter codes first, then lower symbols.
fn canonical(lengths: &[u8]) -> Vec<u32> {
    let mut order: Vec<usize> = (0..lengths.len()).filter(|&i| lengths[i] > 0).collect();
    order.sort_by_key(|&i| (lengths[i], i));
    let mut codes = vec![0u32; lengths.len()];
    let mut code = 0u32;
    let mut prev_len = 0u8;
    for &i in &order {
        code <<= lengths[i] - prev_len;
        prev_len = lengths[i];
        codes[i] = code;
        code += 1;
    }
    codes
}

/// Whether `lengths` form a complete-or-incomplete prefix code (Kraft sum at most 1) with
/// lengths in range: what a reader checks before building tables from a file.
pub fn lengths_valid(lengths: &[u8]) -> bool {
    let mut kraft = 0u64;
    for &l in lengths {
        if l as u32 > MAX_CODE_LEN {
            return false;
        }
        if l > 0 {
            kraft += 1u64 << (MAX_CODE_LEN - l as u32);
        }
    }
    kraft <= 1u64 << MAX_CODE_LEN
}

/// Code words of every context, for writing.
pub struct Encoder {
    words: Vec<[(u32, u8); SYMBOLS]>,
}

impl Encoder {
    /// `lengths[ctx][sym]`.
    pub fn new(lengths: &[[u8; SYMBOLS]; CONTEXTS]) -> Encoder {
        let words = lengths
            .iter()
            .map(|l| {
                let codes = canonical(l);
                let mut w = [(0u32, 0u8); SYMBOLS];
                for s in 0..SYMBOLS {
                    w[s] = (codes[s], l[s]);
                }
                w
            })
            .collect();
        Encoder { words }
    }

    /// Bits needed for a run in context `ctx`, or `None` when the code has no word for it.
    pub fn bits(&self, ctx: usize, hit: bool, len: u64) -> Option<u32> {
        let (sym, extra, _) = symbol_of(hit, len);
        let (_, l) = self.words[ctx][sym as usize];
        (l > 0).then_some(l as u32 + extra)
    }

    /// Appends a run; the code must have a word for it (see [`Encoder::bits`]).
    pub fn put(&self, out: &mut BitWriter, ctx: usize, hit: bool, len: u64) {
        let (sym, extra, x) = symbol_of(hit, len);
        let (code, l) = self.words[ctx][sym as usize];
        assert!(l > 0, "no code word for symbol {sym} in context {ctx}");
        out.put(code as u64, l as u32);
        if extra > 0 {
            out.put(x, extra);
        }
    }
}

/// Most-significant-bit-first bit output.
#[derive(Default)]
pub struct BitWriter {
    pub bytes: Vec<u8>,
    acc: u64,
    nacc: u32,
    bits: u64,
}

impl BitWriter {
    pub fn put(&mut self, value: u64, n: u32) {
        debug_assert!(n <= 56 && (n == 64 || value >> n == 0));
        self.acc = (self.acc << n) | value;
        self.nacc += n;
        self.bits += n as u64;
        while self.nacc >= 8 {
            self.nacc -= 8;
            self.bytes.push((self.acc >> self.nacc) as u8);
        }
        self.acc &= (1u64 << self.nacc) - 1;
    }

    pub fn bits(&self) -> u64 {
        self.bits
    }

    /// The bytes written, the last one zero padded.
    pub fn finish(mut self) -> Vec<u8> {
        if self.nacc > 0 {
            self.bytes.push((self.acc << (8 - self.nacc)) as u8);
        }
        self.bytes
    }
}

/// One decoded run: hit or miss, and its length.
pub struct Run {
    pub hit: bool,
    pub len: u64,
    /// Bits the run took (code word and extra bits).
    pub bits: u32,
}

/// Decoding tables of one context.
struct Table {
    /// Indexed by the next [`PEEK`] bits: `len | hit << 4 | extra << 5 | base << 11` (the
    /// run length before extra bits, for symbols without any), or 0 when the code word is
    /// longer than [`PEEK`] bits.
    fast: [u32; 1 << PEEK],
    /// Canonical walk: per length, the first code word, the number of words, and where its
    /// symbols start in `sorted`.
    first: [u32; MAX_CODE_LEN as usize + 1],
    count: [u16; MAX_CODE_LEN as usize + 1],
    start: [u16; MAX_CODE_LEN as usize + 1],
    sorted: Vec<u16>,
}

/// Decoding tables of every context of one file.
pub struct Decoder {
    tables: Vec<Table>,
    /// For each state and next [`SKIP_PEEK`] bits: a [`Skip`] entry. Two bytes each (12 KB a
    /// code), so that a probe's dependent skip steps mostly hit the nearest cache.
    skip: Vec<[Skip; 1 << SKIP_PEEK]>,
}

/// A skip-table entry: the runs wholly coded in a window of [`SKIP_PEEK`] bits (lets a probe
/// pass several runs at once), or where none fits, a long run whose code word does, so that
/// its length is read without the general decoder. Packed in 16 bits: runs (0 for a long
/// run, 1, or 2 for several) in bits 0..2, bits used (a long run's code bits) in 2..6, the
/// state after them in 6..9, their total length (a long run's extra bits) in 9..16. An
/// entry covers only as many runs as keep the total within [`Skip::MAX_LEN`]; 0 is a window
/// holding neither.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub struct Skip(u16);

impl Skip {
    /// The largest total length an entry holds.
    pub const MAX_LEN: u32 = 127;

    fn new(runs: u32, bits: u32, state: u32, len: u32) -> Skip {
        debug_assert!(runs <= 2 && bits < 16 && state < 8 && len <= Skip::MAX_LEN);
        Skip((runs | bits << 2 | state << 6 | len << 9) as u16)
    }

    /// 0 (a long run or nothing), 1, or 2 for several runs.
    #[inline(always)]
    pub fn runs(self) -> u32 {
        self.0 as u32 & 3
    }

    /// Bits of the runs; of a long run, its code word's bits (0: nothing in the window).
    #[inline(always)]
    pub fn bits(self) -> u32 {
        (self.0 as u32 >> 2) & 15
    }

    /// The prediction state after the runs.
    #[inline(always)]
    pub fn state(self) -> u8 {
        ((self.0 >> 6) & 7) as u8
    }

    /// The runs' total length; of a long run, the number of extra bits after its code word.
    #[inline(always)]
    pub fn length(self) -> u32 {
        self.0 as u32 >> 9
    }
}

impl Decoder {
    /// Tables for valid `lengths` (see [`lengths_valid`]); a few milliseconds to build, once
    /// per built-in code.
    pub fn new(lengths: &[[u8; SYMBOLS]; CONTEXTS]) -> Decoder {
        let tables: Vec<Table> = lengths.iter().map(Table::new).collect();
        let skip = skip_tables(&tables);
        Decoder { tables, skip }
    }

    /// The [`Skip`] entry of the top [`SKIP_PEEK`] bits of `window` after state `state` (an
    /// empty one for a state past 5).
    #[inline(always)]
    pub fn skip(&self, state: u8, window: u64) -> Skip {
        match self.skip.get(state as usize) {
            Some(row) => row[(window >> (64 - SKIP_PEEK)) as usize],
            None => Skip::default(),
        }
    }

    /// Decodes the run whose code word starts in the top bits of `window` (at least 55
    /// valid bits), or `None` for a bit string that is no code word.
    #[inline]
    pub fn run(&self, ctx: usize, window: u64) -> Option<Run> {
        let t = &self.tables[ctx];
        let e = t.fast[(window >> (64 - PEEK)) as usize];
        let (hit, extra, base, l) = if e != 0 {
            let extra = (e >> 5) & 63;
            let base = if extra == 0 {
                (e >> 11) as u64
            } else {
                class_start(extra)
            };
            (e & 16 != 0, extra, base, e & 15)
        } else {
            let (sym, l) = t.slow(window)?;
            let (hit, extra, base) = meaning(sym);
            (hit, extra, base, l)
        };
        let len = if extra == 0 {
            base
        } else {
            base + ((window << l) >> (64 - extra))
        };
        Some(Run {
            hit,
            len,
            bits: l + extra,
        })
    }
}

/// The skip tables: for each state and window, the runs decoded one by one while they lie
/// wholly in the window and their total stays within [`Skip::MAX_LEN`]; where there is
/// none, the long run whose code word is in the window.
fn skip_tables(tables: &[Table]) -> Vec<[Skip; 1 << SKIP_PEEK]> {
    (0..6u8)
        .map(|state| {
            let mut row = [Skip::default(); 1 << SKIP_PEEK];
            for (window, e) in row.iter_mut().enumerate() {
                let window = window as u32;
                let (mut st, mut used, mut total, mut runs) = (state, 0, 0, 0);
                loop {
                    // The bits after those used, at the top of a PEEK-bit table index; the
                    // context is the state's `cur`.
                    let rest = SKIP_PEEK - used;
                    let bits = window & ((1 << rest) - 1);
                    let f = tables[st as usize / 2].fast[(bits << (PEEK - rest)) as usize];
                    let (l, extra) = (f & 15, (f >> 5) & 63);
                    if f == 0 || l + extra > rest {
                        break;
                    }
                    let len = match extra {
                        0 => f >> 11,
                        _ => {
                            let x = (bits >> (rest - l - extra)) & ((1 << extra) - 1);
                            class_start(extra) as u32 + x
                        }
                    };
                    if total + len > Skip::MAX_LEN {
                        break;
                    }
                    st = AFTER[st as usize][(f & 16 != 0) as usize];
                    (used, total, runs) = (used + l + extra, total + len, runs + 1);
                }
                *e = if runs > 0 {
                    Skip::new(runs.min(2), used, st as u32, total)
                } else {
                    // No whole run: the long run whose code word is in the window.
                    let f =
                        tables[state as usize / 2].fast[(window << (PEEK - SKIP_PEEK)) as usize];
                    let (l, extra) = (f & 15, (f >> 5) & 63);
                    if f != 0 && l <= SKIP_PEEK && extra > 0 {
                        let after = AFTER[state as usize][(f & 16 != 0) as usize];
                        Skip::new(0, l, after as u32, extra)
                    } else {
                        Skip::default()
                    }
                };
            }
            row
        })
        .collect()
}

impl Table {
    fn new(lengths: &[u8; SYMBOLS]) -> Table {
        let codes = canonical(lengths);
        let mut t = Table {
            fast: [0; 1 << PEEK],
            first: [0; MAX_CODE_LEN as usize + 1],
            count: [0; MAX_CODE_LEN as usize + 1],
            start: [0; MAX_CODE_LEN as usize + 1],
            sorted: Vec::new(),
        };
        let mut order: Vec<usize> = (0..SYMBOLS).filter(|&i| lengths[i] > 0).collect();
        order.sort_by_key(|&i| (lengths[i], i));
        for &s in &order {
            let l = lengths[s] as usize;
            if t.count[l] == 0 {
                t.first[l] = codes[s];
                t.start[l] = t.sorted.len() as u16;
            }
            t.count[l] += 1;
            t.sorted.push(s as u16);
            if l as u32 <= PEEK {
                let (hit, extra, base) = meaning(s as u16);
                let small_base = if extra == 0 { base as u32 } else { 0 };
                let entry = l as u32 | (hit as u32) << 4 | extra << 5 | small_base << 11;
                let shift = PEEK - l as u32;
                let base = (codes[s] << shift) as usize;
                for e in &mut t.fast[base..base + (1 << shift)] {
                    *e = entry;
                }
            }
        }
        t
    }

    #[cold]
    fn slow(&self, window: u64) -> Option<(u16, u32)> {
        // Every word of up to PEEK bits is in the fast table.
        for l in PEEK as usize + 1..=MAX_CODE_LEN as usize {
            let n = self.count[l] as u32;
            if n == 0 {
                continue;
            }
            let code = (window >> (64 - l)) as u32;
            if code >= self.first[l] && code - self.first[l] < n {
                let s = self.sorted[self.start[l] as usize + (code - self.first[l]) as usize];
                return Some((s, l as u32));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_table_follows_the_prediction() {
        for s in 0..6u8 {
            let (cur, prev) = state_of(s).unwrap();
            assert_eq!(AFTER[s as usize][1], state_byte(prev, cur), "hit from {s}");
            assert_eq!(
                AFTER[s as usize][0],
                state_byte(third(cur, prev), cur),
                "miss from {s}"
            );
        }
        assert_eq!(state_of(6), None);
    }

    #[test]
    fn symbols_round_trip_every_length_class() {
        for len in (1..300).chain([1 << 20, (1 << 40) + 12345, u32::MAX as u64 * 300]) {
            for hit in [true, false] {
                let (sym, extra, x) = symbol_of(hit, len);
                let (h, e, base) = meaning(sym);
                assert_eq!((h, e), (hit, extra));
                assert_eq!(base + x, len, "len {len}");
                assert!((sym as usize) < SYMBOLS);
            }
        }
    }

    #[test]
    fn codes_decode_what_they_encode() {
        let mut freqs = [[0u64; SYMBOLS]; CONTEXTS];
        for (c, f) in freqs.iter_mut().enumerate() {
            for (s, x) in f.iter_mut().enumerate() {
                // Skewed counts, some zero, so both table paths are used.
                *x = if s % 7 == c {
                    0
                } else {
                    1 + (1u64 << (40 - (s % 40)))
                };
            }
        }
        let lengths: [[u8; SYMBOLS]; CONTEXTS] =
            std::array::from_fn(|c| code_lengths(&freqs[c]).try_into().unwrap());
        assert!(lengths.iter().all(|l| lengths_valid(l)));
        assert!(lengths.iter().flatten().any(|&l| l as u32 > PEEK));
        let enc = Encoder::new(&lengths);
        let dec = Decoder::new(&lengths);
        let mut runs = Vec::new();
        let mut w = BitWriter::default();
        for i in 0..5000u64 {
            let ctx = (i % 3) as usize;
            let hit = i % 5 != 0;
            let len = 1 + (i * 2654435761 % 1000) * (1 + i % 3) * (i % 11 + 1);
            if enc.bits(ctx, hit, len).is_some() {
                enc.put(&mut w, ctx, hit, len);
                runs.push((ctx, hit, len));
            }
        }
        let mut bytes = w.finish();
        bytes.extend([0u8; 8]);
        let mut bit = 0u64;
        for &(ctx, hit, len) in &runs {
            let i = (bit / 8) as usize;
            let window = u64::from_be_bytes(bytes[i..i + 8].try_into().unwrap()) << (bit % 8);
            let r = dec.run(ctx, window).unwrap();
            assert_eq!((r.hit, r.len), (hit, len));
            bit += r.bits as u64;
        }
    }

    /// Every skip entry of every built-in code says what decoding run by run says: the runs
    /// wholly in the window (their count, bits, total length and the state after them), or
    /// the long run whose code word is in it (its code bits, extra bits and state after).
    #[test]
    fn skip_entries_agree_with_decoding_run_by_run() {
        let (mut normal, mut long) = (0, 0);
        for k in 0..crate::db::format::CODES {
            let dec = Decoder::new(&crate::db::format::builtin_code(k));
            for state in 0..6u8 {
                for top in 0..1u64 << SKIP_PEEK {
                    // The window's first bits, then ones (so no later run fits in zeros).
                    let window = top << (64 - SKIP_PEEK) | ((1 << (64 - SKIP_PEEK)) - 1);
                    let e = dec.skip(state, window);
                    let (mut st, mut used, mut total, mut runs) = (state, 0u32, 0u64, 0u32);
                    while let Some(r) = dec.run((st >> 1) as usize, window << used)
                        && used + r.bits <= SKIP_PEEK
                        && total + r.len <= Skip::MAX_LEN as u64
                    {
                        st = AFTER[st as usize][r.hit as usize];
                        used += r.bits;
                        total += r.len;
                        runs += 1;
                    }
                    if runs > 0 {
                        normal += 1;
                        assert_eq!(e.runs(), runs.min(2), "runs, state {state} bits {top:b}");
                        assert_eq!(e.bits(), used);
                        assert_eq!(e.state(), st);
                        assert_eq!(e.length() as u64, total);
                        continue;
                    }
                    match dec.run((state >> 1) as usize, window) {
                        Some(r) if e != Skip::default() && r.bits - e.length() == e.bits() => {
                            long += 1;
                            assert_eq!(e.runs(), 0);
                            assert_eq!(e.state(), AFTER[state as usize][r.hit as usize]);
                            let extra = e.length();
                            assert!(extra > 0 && r.len >= class_start(extra));
                        }
                        _ => assert_eq!(e, Skip::default(), "state {state} bits {top:b}"),
                    }
                }
            }
        }
        assert!(normal > 0 && long > 0, "{normal} {long}");
    }
}
