//! The header and the library agree: every size, field offset and constant of
//! `include/egdb.h`, as a C compiler sees it, equals the Rust definition behind it.

use egdb::{Bitboard, EgdbDriver, NormalBitboard, RowReversedBitboard, Stats};
use std::mem::{offset_of, size_of};
use std::path::Path;
use std::process::Command;

const PROGRAM: &str = r#"
#include <stddef.h>
#include <stdio.h>
#include "egdb.h"
#define SHOW(x) printf("%s %ld\n", #x, (long)(x))
int main(void)
{
	SHOW(sizeof(EGDB_NORMAL_BITBOARD));
	SHOW(sizeof(EGDB_ROW_REVERSED_BITBOARD));
	SHOW(sizeof(EGDB_BITBOARD));
	SHOW(sizeof(EGDB_STATS));
	SHOW(offsetof(EGDB_STATS, db_not_present_requests));
	SHOW(sizeof(EGDB_DRIVER));
	SHOW(offsetof(EGDB_DRIVER, lookup));
	SHOW(offsetof(EGDB_DRIVER, reset_stats));
	SHOW(offsetof(EGDB_DRIVER, get_stats));
	SHOW(offsetof(EGDB_DRIVER, verify));
	SHOW(offsetof(EGDB_DRIVER, close));
	SHOW(offsetof(EGDB_DRIVER, internal_data));
	SHOW(offsetof(EGDB_ROW_REVERSED_BITBOARD, white_king));
	SHOW(EGDB_BLACK);
	SHOW(EGDB_WHITE);
	SHOW(EGDB_SUBDB_UNAVAILABLE);
	SHOW(EGDB_NOT_IN_CACHE);
	SHOW(EGDB_UNKNOWN);
	SHOW(EGDB_WIN);
	SHOW(EGDB_LOSS);
	SHOW(EGDB_DRAW);
	SHOW(EGDB_KINGSROW32_WLD);
	SHOW(EGDB_NORMAL);
	SHOW(EGDB_ROW_REVERSED);
	SHOW(sizeof(EGDB_BITBOARD_TYPE));
	return 0;
}
"#;

#[test]
fn header_matches_the_library() {
    let dir = std::env::temp_dir().join(format!("nowdb-egdb-abi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (src, exe) = (dir.join("abi.c"), dir.join("abi"));
    std::fs::write(&src, PROGRAM).unwrap();
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    let o = Command::new("cc")
        .args(["-std=c99", "-Wall", "-Werror", "-o"])
        .arg(&exe)
        .arg("-I")
        .arg(&include)
        .arg(&src)
        .output()
        .expect("cc (a C compiler) is needed: apt-get install gcc");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = Command::new(&exe).output().unwrap();
    let c: Vec<(String, i64)> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (k, v) = l.rsplit_once(' ').unwrap();
            (k.to_string(), v.parse().unwrap())
        })
        .collect();
    let rust: Vec<i64> = vec![
        size_of::<NormalBitboard>() as i64,
        size_of::<RowReversedBitboard>() as i64,
        size_of::<Bitboard>() as i64,
        size_of::<Stats>() as i64,
        offset_of!(Stats, db_not_present_requests) as i64,
        size_of::<EgdbDriver>() as i64,
        offset_of!(EgdbDriver, lookup) as i64,
        offset_of!(EgdbDriver, reset_stats) as i64,
        offset_of!(EgdbDriver, get_stats) as i64,
        offset_of!(EgdbDriver, verify) as i64,
        offset_of!(EgdbDriver, close) as i64,
        offset_of!(EgdbDriver, internal_data) as i64,
        offset_of!(RowReversedBitboard, white_king) as i64,
        egdb::EGDB_BLACK as i64,
        egdb::EGDB_WHITE as i64,
        egdb::EGDB_SUBDB_UNAVAILABLE as i64,
        egdb::EGDB_NOT_IN_CACHE as i64,
        egdb::EGDB_UNKNOWN as i64,
        egdb::EGDB_WIN as i64,
        egdb::EGDB_LOSS as i64,
        egdb::EGDB_DRAW as i64,
        egdb::EGDB_KINGSROW32_WLD as i64,
        0,
        1,
        size_of::<std::ffi::c_int>() as i64,
    ];
    assert_eq!(c.len(), rust.len(), "{c:?}");
    for ((name, cv), rv) in c.iter().zip(&rust) {
        assert_eq!(cv, rv, "{name}: C says {cv}, Rust {rv}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
