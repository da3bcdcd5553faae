//! What `dbserve`'s API accepts, as it arrives: a request's query string (`fen=B%3AW18...`,
//! percent-encoded, `+` for spaces, other parameters around it) decoded as the server
//! decodes it, then parsed as a FEN. It may refuse, never panic; a parameter that decodes
//! is UTF-8, and a FEN that parses prints back to one that parses to the same position.

#![no_main]

use libfuzzer_sys::fuzz_target;
use nowdb::Setup;
use nowdb::http::query_param;

fuzz_target!(|data: &[u8]| {
    // A request target reaches the API as text: hyper refuses bytes that are not.
    let Ok(query) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(fen) = query_param(Some(query), "fen") else {
        return;
    };
    if let Ok(setup) = fen.parse::<Setup>() {
        let again: Setup = nowdb::notation::format_fen(&setup).parse().unwrap();
        assert_eq!(again, setup);
    }
});
