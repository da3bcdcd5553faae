//! The explorer page (issue 46) in a real Chromium, driven over the DevTools protocol with
//! real mouse clicks and typing, against `dbserve` on a 2..4 site with distances: the page
//! loads, a FEN typed into its field shows the database's value and moves, clicking a
//! winning move (in the list, or the piece and then its square) plays it, back and
//! forward walk the positions, "play it out" reaches the end of the game, and the editor
//! builds a position from an empty board. No console error on the way. Screenshots in
//! `target/explorer-page/`.

mod common;

use common::cdp::Browser;
use common::fixture::{self, DBPROBE, DBSERVE};
use common::http::Server;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A finished 2..4 site with distances.
fn site4() -> PathBuf {
    let d = fixture::scratch("explorer_page", "site4");
    common::site::build(&d, 4, |o| o.mtc = true);
    d
}

fn shots() -> PathBuf {
    let d = Path::new(DBPROBE)
        .ancestors()
        .nth(2)
        .unwrap()
        .join("explorer-page");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `dbprobe --site SITE --mtc --json FEN`.
fn dbprobe(site: &Path, fen: &str) -> Value {
    let out = fixture::ok(DBPROBE, site, &["--mtc", "--json", fen]);
    serde_json::from_str(&out).unwrap()
}

/// What the page shows: its FEN field, value, and moves (text, data-fen, class).
fn shown(b: &mut Browser) -> (String, String, Vec<(String, String, String)>) {
    let v = b.eval(
        "JSON.stringify([document.getElementById('fen').value, \
         (document.getElementById('value') || {}).textContent || '', \
         [...document.querySelectorAll('#moves button')].map(e => \
            [e.dataset.move, e.dataset.fen, e.className])])",
    );
    serde_json::from_str(v.as_str().unwrap()).unwrap()
}

/// Waits for the page to show `fen` with its value from the database.
fn wait_shown(b: &mut Browser, fen: &str) {
    let f = serde_json::to_string(fen).unwrap();
    b.wait_for(
        &format!(
            "document.getElementById('fen').value === {f} && \
             !!document.getElementById('value') && \
             state.answer !== null && state.answer.fen === {f}"
        ),
        &format!("the page to show {fen}"),
    );
}

#[test]
fn chromium_explores_positions_plays_them_out_and_edits_one() {
    let site = site4();
    let server = Server::start(DBSERVE, &site, &["--access-log", "off"]).unwrap();
    let profile = fixture::scratch("explorer_page", "profile");
    let mut b = Browser::start(&profile, 1000, 800);
    b.navigate(&format!("http://{}/", server.addr));
    wait_shown(&mut b, "B:W18,K12:B3,5");
    b.wait_for(
        "document.getElementById('info').textContent.includes('2..4')",
        "the info line",
    );
    let timing = b.eval(
        "JSON.stringify([performance.getEntriesByType('navigation')[0].decodedBodySize, \
         performance.getEntriesByType('navigation')[0].loadEventEnd, \
         performance.getEntriesByName('first-answer')[0].startTime])",
    );
    let timing: Vec<f64> = serde_json::from_str(timing.as_str().unwrap()).unwrap();
    eprintln!(
        "the page: {} bytes, loaded in {:.0} ms, its first answer shown at {:.0} ms",
        timing[0], timing[1], timing[2]
    );
    assert!(timing[0] > 5000.0 && timing[2] > 0.0, "{timing:?}");

    // A position typed into the FEN field: two black kings against a white one.
    let start = "B:WK30:BK1,K10";
    b.type_in("#fen", start);
    wait_shown(&mut b, start);
    let (_, value, moves) = shown(&mut b);
    let want = dbprobe(&site, start);
    assert_eq!(value, want["value"].as_str().unwrap());
    assert_eq!(value, "win");
    assert_eq!(moves.len(), want["moves"].as_array().unwrap().len());
    assert!(
        b.eval("location.search")
            .as_str()
            .unwrap()
            .contains("B%3AWK30%3ABK1%2CK10")
    );
    b.screenshot(&shots().join("typed.png"));

    // The first move listed is the quickest win; clicking it plays it.
    let (first, after, class) = moves[0].clone();
    assert_eq!(class, "win", "{moves:?}");
    b.click("#moves li:first-child button");
    wait_shown(&mut b, &after);
    let (_, value, _) = shown(&mut b);
    assert_eq!(value, dbprobe(&site, &after)["value"].as_str().unwrap());
    assert_eq!(value, "loss");

    // Back and forward.
    b.click("#back");
    wait_shown(&mut b, start);
    b.click("#forward");
    wait_shown(&mut b, &after);
    b.click("#back");
    wait_shown(&mut b, start);

    // The same move by its piece and then its square on the board.
    let (from, to) = first.split_once(['-', 'x']).unwrap();
    b.click(&format!("rect[data-square='{from}']"));
    b.wait_for("state.selected !== null", "the piece to be selected");
    b.click(&format!("rect[data-square='{to}']"));
    wait_shown(&mut b, &after);
    b.click("#back");
    wait_shown(&mut b, start);

    // Played out: the game ends, the last position has no move, back walks the line.
    b.click("#playout");
    b.wait_for(
        "document.getElementById('mainline').textContent.includes('Black wins in')",
        "the mainline",
    );
    b.wait_for(
        "!!document.getElementById('gameover')",
        "the end of the game",
    );
    let end = b.eval("document.getElementById('fen').value");
    let line = fixture::ok(DBPROBE, &site, &["--play", "--json", start]);
    let line: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(end, line["end"]);
    let plies = line["plies"].as_array().unwrap();
    b.screenshot(&shots().join("played-out.png"));
    b.click("#back");
    wait_shown(&mut b, plies.last().unwrap()["fen"].as_str().unwrap());

    // The editor: an empty board, a black king on 1 and a man on 14, a white king on 32,
    // White to move.
    b.click("#edit");
    b.click("#clear");
    b.wait_for(
        "document.querySelectorAll('[data-piece]').length === 0",
        "an empty board",
    );
    for (piece, square) in [("B", 1), ("b", 14), ("W", 32)] {
        b.click(&format!(".put[data-put='{piece}']"));
        b.click(&format!("rect[data-square='{square}']"));
    }
    b.eval("document.getElementById('side').value = 'W'");
    b.click("#done");
    let built = "W:WK32:B14,K1";
    wait_shown(&mut b, built);
    let (_, value, moves) = shown(&mut b);
    let want = dbprobe(&site, built);
    assert_eq!(value, want["value"].as_str().unwrap());
    assert_eq!(moves.len(), want["moves"].as_array().unwrap().len());
    b.screenshot(&shots().join("edited.png"));

    // A FEN the database cannot answer shows its error.
    b.type_in("#fen", "B:W1-12:B21-32");
    b.wait_for(
        "document.getElementById('error').textContent.includes('crowned')",
        "the FEN's error",
    );
    assert!(b.errors.is_empty(), "console errors: {:?}", b.errors);
}
