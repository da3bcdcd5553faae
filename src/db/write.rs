//! Coding a slice's runs into a compressed slice file (docs/FORMAT.md), and training the
//! built-in codes.

use super::boundaries::place_boundaries;
use super::code::{self, BitWriter, CONTEXTS, Encoder, SYMBOLS, next_in_cycle, state_byte};
use super::container::{BLOCK_BYTES, FIXED_HEADER};
use super::crc32::{Crc32, crc32};
use super::format::{
    CODES, DELTA_BITS, MAGIC, MAX_BLOCK_POSITIONS, OFFSET_BITS, STATE_SHIFT, SYNC_BYTES,
    SYNC_POINTS, UNUSED_SYNC, VERSION, builtin_code, header_bytes_for, nominal_bit, value_code,
};
use super::removed::{Removal, RuleRuns, ValueRun};
use crate::error::Result;
use crate::slice::Slice;
use crate::solve_err;
use crate::value::Value;
use std::fs::File;
use std::path::Path;

/// A slice's threat values are stored (rule [`Removal::Captures`]) when that makes its file
/// at most one bit longer per 16 threat positions: most threats then cost a probe one
/// lookup instead of a search of about four, for about 1 % of the database's bytes
/// (docs/FORMAT.md).
const THREATS_PER_BIT: u64 = 16;
/// Payload bytes per sync point aimed at in a file of one block (so that a probe decodes
/// at most about this much).
const SEGMENT_BYTES: usize = 48;

/// Sync point `k`'s entry for the run boundaries of a block, `(bit, position offset, state)`
/// in order: the first boundary at or after the nominal bit (unused when there is none).
fn sync_entry(
    k: usize,
    payload_bytes: usize,
    sync_points: usize,
    bounds: &[(u64, u64, u8)],
) -> u32 {
    let nominal = nominal_bit(k, payload_bytes, sync_points);
    let at = bounds.partition_point(|b| b.0 < nominal);
    let Some(&(bit, offset, state)) = bounds.get(at) else {
        return UNUSED_SYNC;
    };
    // A boundary lies less than a code word (at most 55 bits) past any bit before it.
    let delta = bit - nominal;
    assert!(delta < 1 << DELTA_BITS && offset <= MAX_BLOCK_POSITIONS);
    offset as u32 | (delta as u32) << OFFSET_BITS | (state as u32) << STATE_SHIFT
}

/// Symbol counts per context of `runs` coded as one stream, added to `freqs`.
pub fn count_symbols(runs: &[(Value, u64)], freqs: &mut [[u64; SYMBOLS]; CONTEXTS]) {
    let (mut cur, mut prev) = (3u8, 3u8);
    for &(v, len) in runs {
        let v = value_code(v);
        let (sym, _, _) = code::symbol_of(v == prev, len);
        if cur < 3 {
            freqs[cur as usize][sym as usize] += 1;
        }
        prev = cur;
        cur = v;
    }
}

/// The code for symbol counts, every symbol counted once more: a block start or a run cut
/// at a block boundary may need a symbol the stream did not.
pub fn code_for_counts(freqs: &[[u64; SYMBOLS]; CONTEXTS]) -> [[u8; SYMBOLS]; CONTEXTS] {
    std::array::from_fn(|c| {
        let smoothed: Vec<u64> = freqs[c].iter().map(|f| f + 1).collect();
        code::code_lengths(&smoothed)
            .try_into()
            .expect("one length per symbol")
    })
}

/// Symbol counts of many files, grouped into `k` codes: each file goes to the code that
/// codes it shortest, each code is rebuilt from its files' counts, a dozen times over
/// (k-means). Files start spread over the codes in order of their run counts. Returns the
/// codes (what `cargo bench --bench db -- --train-code` prints into `default_code.rs`).
pub fn train_codes(
    files: &[[[u64; SYMBOLS]; CONTEXTS]],
    k: usize,
) -> Vec<[[u8; SYMBOLS]; CONTEXTS]> {
    let runs = |f: &[[u64; SYMBOLS]; CONTEXTS]| f.iter().flatten().sum::<u64>();
    let mut order: Vec<usize> = (0..files.len()).collect();
    order.sort_by_key(|&i| (runs(&files[i]), i));
    let mut group = vec![0usize; files.len()];
    for (rank, &i) in order.iter().enumerate() {
        group[i] = rank * k / files.len().max(1);
    }
    let mut codes = Vec::new();
    for _ in 0..12 {
        let mut sums = vec![[[0u64; SYMBOLS]; CONTEXTS]; k];
        for (f, &g) in files.iter().zip(&group) {
            for (sum, row) in sums[g].iter_mut().zip(f) {
                for (a, b) in sum.iter_mut().zip(row) {
                    *a += b;
                }
            }
        }
        codes = sums.iter().map(code_for_counts).collect();
        for (f, g) in files.iter().zip(group.iter_mut()) {
            *g = (0..k)
                .min_by_key(|&c| code_word_bits(f, &codes[c]))
                .expect("at least one code");
        }
    }
    codes
}

/// Bits of the code words (extra bits aside) of runs with symbol counts `freqs`.
pub fn code_word_bits(freqs: &[[u64; SYMBOLS]; CONTEXTS], code: &[[u8; SYMBOLS]; CONTEXTS]) -> u64 {
    freqs
        .iter()
        .flatten()
        .zip(code.iter().flatten())
        .map(|(&f, &l)| f * l as u64)
        .sum()
}

/// A coded slice, ready to write.
struct Coded {
    code: usize,
    sync_points: usize,
    index: Vec<u64>,
    blocks: Vec<Vec<u8>>,
}

impl Coded {
    fn bytes(&self) -> usize {
        FIXED_HEADER + 4 + 8 * self.index.len() + self.blocks.iter().map(|b| b.len()).sum::<usize>()
    }
}

/// How a slice's runs pack into blocks under one code: all its file's size depends on.
/// Every candidate (code, rule) is laid out this way and only the chosen one coded: a
/// layout skips the bit output, the sync points and the checksums.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Layout {
    code: usize,
    sync_points: usize,
    blocks: usize,
    /// Bytes of the last block (the others are whole).
    last_len: usize,
}

impl Layout {
    /// The file's length ([`Coded::bytes`] of the slice coded this way).
    fn bytes(&self) -> usize {
        FIXED_HEADER
            + 4
            + 8 * self.blocks
            + self.blocks.saturating_sub(1) * BLOCK_BYTES
            + self.last_len
    }
}

/// Codes `runs` (covering `count` positions) as `layout` measured them. The boundaries
/// are placed again for the layout's code rather than kept from measuring: one more pass
/// over the runs, where keeping them held a second copy of the runs in memory beside the
/// candidates' (`build` is the phase with the largest memory).
fn code_layout(layout: Layout, runs: &[ValueRun], count: u64) -> Coded {
    let lengths = builtin_code(layout.code);
    let mut placed = Vec::with_capacity(runs.len());
    place_boundaries(runs, &lengths, &mut placed);
    let packed = pack_blocks::<true>(&Encoder::new(&lengths), &placed, count, layout.sync_points);
    let coded = Coded {
        code: layout.code,
        sync_points: layout.sync_points,
        index: packed.index,
        blocks: packed.blocks,
    };
    // The choice was made on the layout: the file must be the one it measured.
    assert_eq!(
        coded.bytes(),
        layout.bytes(),
        "the layout of code {}",
        layout.code
    );
    coded
}

/// Codes a slice both ways (threat values removed and stored) and writes the file of the
/// rule `THREATS_PER_BIT` picks to `path` (the caller publishes it by rename). Returns
/// the file's length and the rule. The stored way is only measured as a layout, and coded
/// when chosen; the removed way is coded at once, so that its runs are not held beside the
/// other's.
pub fn write_best_slice(
    path: &Path,
    slice: &Slice,
    count: u64,
    runs: RuleRuns,
) -> Result<(u64, Removal)> {
    let removed = {
        let r = runs.threats_removed.into_runs();
        code_layout(best_layout(slice, count, &r), &r, count)
    };
    let stored = runs.threats_stored.map(|r| r.into_runs()).and_then(|r| {
        let s = best_layout(slice, count, &r);
        let extra = s.bytes().saturating_sub(removed.bytes());
        (8 * extra as u64 * THREATS_PER_BIT <= runs.threats).then(|| code_layout(s, &r, count))
    });
    let (coded, removal) = match stored {
        Some(s) => (s, Removal::Captures),
        None => (removed, Removal::CapturesAndThreats),
    };
    Ok((write_coded(path, slice, count, &coded, removal)?, removal))
}

/// Codes the refilled `runs` (covering exactly `count` positions) of `slice`, removed
/// positions as `removal` says, and writes the file to `path`. Returns the file's length.
pub fn write_slice(
    path: &Path,
    slice: &Slice,
    count: u64,
    runs: &[ValueRun],
    removal: Removal,
) -> Result<u64> {
    let coded = code_layout(best_layout(slice, count, runs), runs, count);
    write_coded(path, slice, count, &coded, removal)
}

/// The layout of whichever built-in code gives the smaller file (the first of equals); a
/// file of one block has only the sync points its length needs.
fn best_layout(slice: &Slice, count: u64, runs: &[ValueRun]) -> Layout {
    assert_eq!(
        runs.iter().map(|r| r.len).sum::<u64>(),
        count,
        "runs must cover {slice}"
    );
    let mut best: Option<Layout> = None;
    // One buffer for every code: a fresh one each time faulted its pages in again.
    let mut placed = Vec::with_capacity(runs.len());
    for code in 0..CODES {
        let lengths = builtin_code(code);
        let enc = Encoder::new(&lengths);
        place_boundaries(runs, &lengths, &mut placed);
        let layout = |sync_points| {
            let p = pack_blocks::<false>(&enc, &placed, count, sync_points);
            Layout {
                code,
                sync_points,
                blocks: p.index.len(),
                last_len: p.last_len,
            }
        };
        let mut l = layout(SYNC_POINTS);
        if l.blocks == 1 {
            let payload = l.last_len - header_bytes_for(SYNC_POINTS);
            l = layout(payload.div_ceil(SEGMENT_BYTES).clamp(1, SYNC_POINTS));
        }
        if best.is_none_or(|b| l.bytes() < b.bytes()) {
            best = Some(l);
        }
    }
    best.expect("a built-in code")
}

fn write_coded(
    path: &Path,
    slice: &Slice,
    count: u64,
    coded: &Coded,
    removal: Removal,
) -> Result<u64> {
    let mut out = Vec::with_capacity(coded.bytes());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&(removal as u16).to_le_bytes());
    out.extend_from_slice(&(coded.code as u16).to_le_bytes());
    let mut name = [0u8; 16];
    name[..slice.to_string().len()].copy_from_slice(slice.to_string().as_bytes());
    out.extend_from_slice(&name);
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&(coded.index.len() as u32).to_le_bytes());
    out.extend_from_slice(&(coded.sync_points as u16).to_le_bytes());
    let last_len = coded.blocks.last().map_or(0, |b| b.len());
    out.extend_from_slice(&(last_len as u16).to_le_bytes());
    let index_bytes: Vec<u8> = coded.index.iter().flat_map(|p| p.to_le_bytes()).collect();
    let mut crc = Crc32::default();
    crc.update(&out);
    crc.update(&index_bytes);
    out.extend_from_slice(&crc.finish().to_le_bytes());
    out.extend_from_slice(&index_bytes);
    for b in &coded.blocks {
        out.extend_from_slice(b);
    }
    debug_assert_eq!(out.len(), coded.bytes());
    let err = |e: std::io::Error| solve_err!("writing {}: {e}", path.display());
    let mut f = File::create(path).map_err(err)?;
    std::io::Write::write_all(&mut f, &out).map_err(err)?;
    f.sync_all().map_err(err)?;
    Ok(out.len() as u64)
}

/// Blocks packed from the runs: each block's first position, the blocks (when written;
/// the last keeps only the bytes it uses) and the last one's length.
struct Packed {
    index: Vec<u64>,
    blocks: Vec<Vec<u8>>,
    last_len: usize,
}

/// Packs the runs into blocks. Without `WRITE` only the block boundaries are found (the
/// same loop, the bits counted rather than written).
fn pack_blocks<const WRITE: bool>(
    enc: &Encoder,
    runs: &[(Value, u64)],
    count: u64,
    sync_points: usize,
) -> Packed {
    let head = header_bytes_for(sync_points);
    let payload_bits = ((BLOCK_BYTES - head) * 8) as u64;
    let mut index = Vec::new();
    let mut blocks = Vec::new();
    let mut last_len = 0;
    let (mut i, mut done_in_run, mut pos) = (0usize, 0u64, 0u64);
    while pos < count {
        let start = pos;
        index.push(start);
        let v0 = value_code(runs[i].0);
        // The 2003 look-ahead: a state that predicts the first two runs.
        let cur0 = match runs.get(i + 1) {
            Some(&(v1, _)) => value_code(v1),
            None => next_in_cycle(v0),
        };
        let (mut cur, mut prev) = (cur0, v0);
        let mut w = BitWriter::default();
        let mut used = 0u64;
        // Every run boundary of the block, for its sync points once its length is known.
        let mut bounds = Vec::new();
        while i < runs.len() && pos - start < MAX_BLOCK_POSITIONS {
            let v = value_code(runs[i].0);
            let len = (runs[i].1 - done_in_run).min(MAX_BLOCK_POSITIONS - (pos - start));
            let hit = v == prev;
            let bits = enc
                .bits(cur as usize, hit, len)
                .expect("every symbol has a code word");
            if used + bits as u64 > payload_bits {
                break;
            }
            if WRITE {
                bounds.push((used, pos - start, state_byte(cur, prev)));
                enc.put(&mut w, cur as usize, hit, len);
            }
            used += bits as u64;
            prev = cur;
            cur = v;
            pos += len;
            done_in_run += len;
            if done_in_run < runs[i].1 {
                // Cut by the block's position limit: the block ends here.
                break;
            }
            i += 1;
            done_in_run = 0;
        }
        last_len = match pos == count {
            true => head + used.div_ceil(8) as usize,
            false => BLOCK_BYTES,
        };
        if !WRITE {
            continue;
        }
        debug_assert_eq!(w.bits(), used);
        let mut block = vec![0u8; BLOCK_BYTES];
        block[4] = state_byte(cur0, v0);
        let payload = w.finish();
        block[head..head + payload.len()].copy_from_slice(&payload);
        block.truncate(last_len);
        let payload_bytes = block.len() - head;
        for k in 1..sync_points {
            let entry = sync_entry(k, payload_bytes, sync_points, &bounds);
            block[5 + SYNC_BYTES * (k - 1)..][..SYNC_BYTES].copy_from_slice(&entry.to_le_bytes());
        }
        let crc = crc32(&block[4..]);
        block[0..4].copy_from_slice(&crc.to_le_bytes());
        blocks.push(block);
    }
    Packed {
        index,
        blocks,
        last_len,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::format::SliceFile;
    use crate::db::removed::RangeRuns;

    /// Every position's value read back from the file at `path`.
    fn decoded(path: &Path, slice: &Slice) -> Vec<Value> {
        let f = SliceFile::open(path, slice).unwrap();
        let mut values = Vec::new();
        f.for_each_run::<crate::db::DbError>(0, f.count, |_, len, v| {
            values.extend(std::iter::repeat_n(v, len as usize));
            Ok(())
        })
        .unwrap();
        values
    }

    fn runs(values: &[Value]) -> RangeRuns {
        let mut r = RangeRuns::default();
        for &v in values {
            r.push_stored(v);
        }
        r
    }

    #[test]
    fn threat_values_are_stored_only_where_they_cost_next_to_nothing() {
        let slice: Slice = "1100.--".parse().unwrap();
        let count = slice.count() as usize;
        let dir = crate::files::test_dir("write-rules");
        let path = dir.join("s.ndb");
        // Threat values that continue their runs: stored, the file reads them back.
        let mut plain = vec![Value::Win; count];
        plain[count / 2..].fill(Value::Draw);
        let cheap = RuleRuns {
            threats_removed: runs(&plain),
            threats_stored: Some(runs(&plain)),
            threats: 1,
        };
        let (_, removal) = write_best_slice(&path, &slice, count as u64, cheap).unwrap();
        assert_eq!(removal, Removal::Captures);
        assert_eq!(SliceFile::open(&path, &slice).unwrap().removal, removal);
        assert_eq!(decoded(&path, &slice), plain);

        // Every third position a threat of another value: far more than a bit per 16
        // threats, so they stay removed (and the file holds the runs without them).
        let mut with_threats = plain.clone();
        for v in with_threats.iter_mut().step_by(3) {
            *v = Value::Loss;
        }
        let costly = RuleRuns {
            threats_removed: runs(&plain),
            threats_stored: Some(runs(&with_threats)),
            threats: count.div_ceil(3) as u64,
        };
        let (_, removal) = write_best_slice(&path, &slice, count as u64, costly).unwrap();
        assert_eq!(removal, Removal::CapturesAndThreats);
        assert_eq!(decoded(&path, &slice), plain);

        // Runs from an older build part (no threat values): threats stay removed.
        let old = RuleRuns {
            threats_removed: runs(&plain),
            threats_stored: None,
            threats: 0,
        };
        let (_, removal) = write_best_slice(&path, &slice, count as u64, old).unwrap();
        assert_eq!(removal, Removal::CapturesAndThreats);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_layout_measures_the_file_its_code_writes() {
        // Runs of one block, of several, and of blocks cut by their position limit.
        let mut rng = crate::rng::XorShift::new(11);
        let values = [Value::Win, Value::Loss, Value::Draw];
        for (n, longest) in [
            (3, 50),
            (400, 30),
            (20_000, 90),
            (40, 3 * MAX_BLOCK_POSITIONS),
        ] {
            let (mut runs, mut v) = (Vec::new(), 0);
            for _ in 0..n {
                v = (v + 1 + rng.below(2) as usize) % 3;
                runs.push((values[v], 1 + rng.below(longest)));
            }
            let count = runs.iter().map(|r| r.1).sum::<u64>();
            for code in 0..CODES {
                let enc = Encoder::new(&builtin_code(code));
                for sync_points in [1, 7, SYNC_POINTS] {
                    let dry = pack_blocks::<false>(&enc, &runs, count, sync_points);
                    let packed = pack_blocks::<true>(&enc, &runs, count, sync_points);
                    assert_eq!(dry.index, packed.index, "{n} runs, code {code}");
                    assert!(dry.blocks.is_empty());
                    assert_eq!(Some(dry.last_len), packed.blocks.last().map(|b| b.len()));
                    let layout = Layout {
                        code,
                        sync_points,
                        blocks: dry.index.len(),
                        last_len: dry.last_len,
                    };
                    let coded = Coded {
                        code,
                        sync_points,
                        index: packed.index,
                        blocks: packed.blocks,
                    };
                    assert_eq!(layout.bytes(), coded.bytes(), "{n} runs, code {code}");
                }
            }
        }
    }
}
