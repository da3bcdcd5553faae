//! The FEN parser on arbitrary text: it may refuse, never panic, and what it accepts
//! prints back to a FEN that parses to the same position.

#![no_main]

use libfuzzer_sys::fuzz_target;
use nowdb::Setup;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(setup) = text.parse::<Setup>() {
        let again: Setup = nowdb::notation::format_fen(&setup).parse().unwrap();
        assert_eq!(again, setup);
    }
});
