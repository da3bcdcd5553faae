//! The database decoder on arbitrary slice files: opening and decoding may fail, never
//! panic or read out of bounds. The first input byte picks the slice the file claims to
//! hold (a small one, so that decoding every position stays fast).

#![no_main]

use libfuzzer_sys::fuzz_target;
use nowdb::db::format::SliceFile;
use nowdb::Slice;

const SLICES: [&str; 4] = ["1100.--", "2101.-5", "1011.06", "0022.33"];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let slice: Slice = SLICES[pick as usize % SLICES.len()].parse().unwrap();
    let path = std::env::temp_dir().join(format!("nowdb-fuzz-decode-{}", std::process::id()));
    std::fs::write(&path, bytes).unwrap();
    let Ok(file) = SliceFile::open(&path, &slice) else {
        return;
    };
    let _ = file.for_each_run(0, file.count, |_, _, _| Ok(()));
    for i in (0..file.count).step_by(61) {
        let b = file.block_of(i);
        if let Ok(block) = file.read_block(b) {
            let _ = file.run_in_block(&block, b, i);
        }
    }
});
