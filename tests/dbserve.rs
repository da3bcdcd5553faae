//! `dbserve` (issue 46), a real server process asked over real TCP connections:
//!
//! - its answers equal `dbprobe --batch`, `--mtc --json` and `--play --json` on random
//!   positions of a 2..5 site with distances (an ignored test does 100,000 on 2..6);
//! - bad input gets a JSON error with a fitting status, and the server goes on serving:
//!   malformed, oversized and non-UTF-8 FENs, too many pieces, a side without pieces, a
//!   10 MB body, a header flood, `..` in the path, a client sending a byte a second,
//!   more idle connections than it takes;
//! - 64 clients at once get the same answers as one;
//! - an unfinished site is refused, naming the missing slices; a site without distances
//!   answers values and no mainline; SIGTERM stops it cleanly.

mod common;

use common::fixture::{self, DBPROBE, DBSERVE, text};
use common::http::{Client, Server, encode};
use common::sample::random_fens;
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A finished 2..5 site with distances, built once.
fn site5() -> &'static Path {
    static SITE: OnceLock<PathBuf> = OnceLock::new();
    SITE.get_or_init(|| {
        let d = fixture::scratch("dbserve", "site5");
        common::site::build(&d, 5, |o| o.mtc = true);
        d
    })
}

/// A finished 2..4 site without distances, built once.
fn site4_values() -> &'static Path {
    static SITE: OnceLock<PathBuf> = OnceLock::new();
    SITE.get_or_init(|| {
        let d = fixture::scratch("dbserve", "site4");
        common::site::build(&d, 4, |_| {});
        d
    })
}

fn start(site: &Path, args: &[&str]) -> Server {
    let log = site.join(format!("access-{}.log", std::process::id()));
    let mut all = vec!["--access-log", log.to_str().unwrap()];
    all.extend_from_slice(args);
    Server::start(DBSERVE, site, &all).unwrap_or_else(|e| panic!("dbserve did not start: {e}"))
}

/// `dbprobe --site SITE --batch` on `fens`: their values in order.
fn dbprobe_batch(site: &Path, fens: &[String]) -> Vec<String> {
    let mut child = Command::new(DBPROBE)
        .arg("--site")
        .arg(site)
        .arg("--batch")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let lines = fens.join("\n") + "\n";
    let writer = std::thread::spawn(move || input.write_all(lines.as_bytes()).unwrap());
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(
        out.status.success(),
        "dbprobe --batch: {}",
        text(&out.stderr)
    );
    text(&out.stdout)
        .lines()
        .map(|l| l.rsplit('\t').next().unwrap().to_string())
        .collect()
}

/// `dbprobe --site SITE ARGS... FEN --json`.
fn dbprobe_json(site: &Path, args: &[&str], fen: &str) -> Option<Value> {
    let out = Command::new(DBPROBE)
        .arg("--site")
        .arg(site)
        .args(args)
        .args(["--json", fen])
        .output()
        .unwrap();
    out.status
        .success()
        .then(|| serde_json::from_slice(&out.stdout).unwrap())
}

/// A position's moves as (move, value, plies), sorted: the API lists them best first,
/// dbprobe in the move generator's order.
fn move_set(moves: &Value, plies: &str) -> Vec<(String, String, Value)> {
    let mut v: Vec<_> = moves
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["move"].as_str().unwrap().to_string(),
                m["value"].as_str().unwrap().to_string(),
                m[plies].clone(),
            )
        })
        .collect();
    v.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
    v
}

/// Best first: every win before every draw before every loss; wins by plies rising,
/// losses by plies falling.
fn assert_best_first(fen: &str, moves: &Value) {
    let key = |m: &Value| {
        let d = m["mtc"].as_i64().unwrap_or(0);
        match m["value"].as_str().unwrap() {
            "win" => (0, d),
            "draw" => (1, 0),
            _ => (2, -d),
        }
    };
    let keys: Vec<_> = moves.as_array().unwrap().iter().map(key).collect();
    assert!(keys.is_sorted(), "{fen}: moves not best first: {moves}");
}

/// The API's answers equal dbprobe's on `n_values` random positions of `site` (values,
/// one at a time and in batches), `n_mtc` of them with distances and every move
/// (`--mtc`), and `n_play` won or lost ones played out (`--play`).
fn compare_with_dbprobe(site: &Path, n_values: usize, n_mtc: usize, n_play: usize) {
    let server = start(site, &[]);
    let fens = random_fens(site, n_values, 0x5eed_d85e, true);
    let expected = dbprobe_batch(site, &fens);
    assert_eq!(expected.len(), fens.len());
    // One position at a time, on four kept-alive connections side by side.
    let started = Instant::now();
    let got: Vec<Value> = std::thread::scope(|scope| {
        let chunks: Vec<_> = fens
            .chunks(fens.len().div_ceil(4))
            .map(|chunk| {
                let addr = &server.addr;
                scope.spawn(move || {
                    let mut c = Client::connect(addr);
                    chunk
                        .iter()
                        .map(|f| {
                            let a = c.get(&format!("/api/position?fen={}", encode(f))).unwrap();
                            assert_eq!(a.status, 200, "{f}: {}", a.text());
                            a.json()
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        chunks.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    eprintln!(
        "{} positions over HTTP in {:.1} s",
        fens.len(),
        started.elapsed().as_secs_f64()
    );
    for ((fen, want), a) in fens.iter().zip(&expected).zip(&got) {
        assert_eq!(a["value"], want.as_str(), "{fen}: {a}");
        assert_eq!(a["fen"], fen.as_str());
        assert_best_first(fen, &a["moves"]);
    }
    // In batches of 1000.
    let mut c = server.client();
    for (chunk, want) in fens.chunks(1000).zip(expected.chunks(1000)) {
        let a = c
            .post(
                "/api/batch",
                serde_json::to_string(chunk).unwrap().as_bytes(),
            )
            .unwrap();
        assert_eq!(a.status, 200, "{}", a.text());
        let values: Vec<String> = a
            .json()
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["value"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(values, want);
    }
    // Distances and every move, as `dbprobe --mtc` gives them.
    for (fen, a) in fens.iter().zip(&got).take(n_mtc) {
        let p = dbprobe_json(site, &["--mtc"], fen).unwrap();
        assert_eq!(a["value"], p["value"], "{fen}");
        assert_eq!(a["mtc"], p["plies"], "{fen}");
        assert_eq!(
            move_set(&a["moves"], "mtc"),
            move_set(&p["moves"], "plies"),
            "{fen}"
        );
    }
    // Won and lost positions played out, as `dbprobe --play` plays them.
    // (A new connection: the last one has been idle through the comparisons above, longer
    // than the server keeps an idle connection.)
    let mut c = server.client();
    let decided = fens
        .iter()
        .zip(&expected)
        .filter(|(_, v)| *v != "draw")
        .take(n_play);
    let mut played = 0;
    for (fen, _) in decided {
        let a = c
            .get(&format!("/api/mainline?fen={}", encode(fen)))
            .unwrap();
        assert_eq!(a.status, 200, "{fen}: {}", a.text());
        let (a, p) = (a.json(), dbprobe_json(site, &["--play"], fen).unwrap());
        for k in ["value", "winner", "end", "pdn"] {
            assert_eq!(a[k], p[k], "{fen}: {k}");
        }
        let ours = a["moves"].as_array().unwrap();
        let theirs = p["plies"].as_array().unwrap();
        assert_eq!(ours.len(), theirs.len(), "{fen}");
        for (o, t) in ours.iter().zip(theirs) {
            assert_eq!(
                (&o["fen"], &o["move"], &o["converts"]),
                (&t["fen"], &t["move"], &t["converts"])
            );
            assert_eq!(o["mtc"], t["plies"], "{fen}");
        }
        played += 1;
    }
    assert_eq!(
        played, n_play,
        "too few won or lost positions in the sample"
    );
}

#[test]
fn answers_equal_dbprobe_on_random_positions_of_2_to_5() {
    compare_with_dbprobe(site5(), 20_000, 300, 60);
}

/// `NOWDB_DBSERVE_SITE=SITE` (a finished 2..6 site built with `--mtc`, e.g. `scripts/build-local
/// SITE --pieces 6 --mtc`): 100,000 random positions, each compared with `dbprobe --batch`
/// and `--mtc` (a process each), and 3,000 won or lost ones with `--play`.
#[test]
#[ignore = "needs a 2..6 site with distances (NOWDB_DBSERVE_SITE); about half an hour"]
fn answers_equal_dbprobe_on_100000_random_positions_of_2_to_6() {
    let site = PathBuf::from(std::env::var("NOWDB_DBSERVE_SITE").expect("NOWDB_DBSERVE_SITE"));
    compare_with_dbprobe(&site, 100_000, 100_000, 3_000);
}

/// A request the server must answer with `status` and a JSON error holding `says`.
fn assert_error(c: &mut Client, method: &str, target: &str, body: &[u8], status: u16, says: &str) {
    let a = c.send(method, target, body).unwrap();
    assert_eq!(a.status, status, "{method} {target}: {}", a.text());
    let e = a.json();
    let message = e["error"]
        .as_str()
        .unwrap_or_else(|| panic!("{target}: {e}"));
    assert!(
        message.contains(says),
        "{target}: {message:?} does not say {says:?}"
    );
    assert_eq!(a.headers["cache-control"], "no-store", "{target}");
}

/// The server still answers a plain request on a new connection.
fn assert_serving(server: &Server) {
    let a = server.client().get("/api/position?fen=B:W18:B14").unwrap();
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(a.json()["value"], "win");
}

#[test]
fn bad_requests_get_clear_json_errors_and_the_server_goes_on() {
    let server = start(site5(), &[]);
    let mut c = server.client();
    let position = |fen: &str| format!("/api/position?fen={}", encode(fen));
    for (target, status, says) in [
        (position("B:W18"), 400, "expected 3 fields"),
        (position("B:W18:B14,99"), 400, "outside 1..32"),
        (position("X:W18:B14"), 400, "side to move"),
        (
            position(&format!("B:W18:B{}", "1,".repeat(200))),
            400,
            "at most 256",
        ),
        (
            position("B:W21-32:B1-12"),
            404,
            "24 pieces; this database holds 2..5",
        ),
        (position("W:W:B14"), 400, "white has no piece left"),
        (position("B:W18:B"), 400, "black has no piece left"),
        ("/api/position?fen=%FF%FE".into(), 400, "not UTF-8"),
        (
            "/api/position".into(),
            400,
            "missing query parameter \"fen\"",
        ),
        ("/api/mainline?fen=%C3%28".into(), 400, "not UTF-8"),
        ("/api/../hosts.toml".into(), 404, "no such path"),
        ("/%2e%2e/hosts.toml".into(), 404, "no such path"),
        ("/nothing".into(), 404, "no such path"),
    ] {
        assert_error(&mut c, "GET", &target, b"", status, says);
    }
    assert_error(
        &mut c,
        "POST",
        "/api/position?fen=B:W18:B14",
        b"",
        405,
        "not allowed",
    );
    assert_error(
        &mut c,
        "POST",
        "/api/batch",
        b"{\"fen\": 1}",
        400,
        "JSON array of FEN strings",
    );
    assert_error(
        &mut c,
        "POST",
        "/api/batch",
        b"[\"B:W18:B14\"",
        400,
        "JSON array",
    );
    let many = serde_json::to_string(&vec!["B:W18:B14"; 1001]).unwrap();
    assert_error(
        &mut c,
        "POST",
        "/api/batch",
        many.as_bytes(),
        413,
        "at most 1000",
    );
    // A batch answers each FEN on its own.
    let a = c
        .post(
            "/api/batch",
            br#"["B:W18:B14", "nonsense", "B:W21-32:B1-12"]"#,
        )
        .unwrap();
    assert_eq!(a.status, 200);
    let a = a.json();
    assert_eq!(a[0]["value"], "win");
    assert!(a[1]["error"].as_str().unwrap().contains("nonsense"), "{a}");
    assert!(a[2]["error"].as_str().unwrap().contains("24 pieces"), "{a}");
    // A 10 MB body: refused from its declared length, and the connection closed without
    // reading it (so the refusal is read on a connection of its own).
    let big = vec![b'['; 10 << 20];
    let mut c = server.client();
    let head = format!(
        "POST /api/batch HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n",
        big.len()
    );
    c.write_raw(head.as_bytes()).unwrap();
    let _ = c.write_raw(&big[..1 << 20]);
    let a = c.read_answer().unwrap();
    assert_eq!(a.status, 413, "{}", a.text());
    assert!(
        a.json()["error"]
            .as_str()
            .unwrap()
            .contains("at most 65536")
    );
    // The same without a declared length (chunked): refused once 64 KiB have come.
    let mut c = server.client();
    c.write_raw(b"POST /api/batch HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        .unwrap();
    for _ in 0..40 {
        if c.write_raw(format!("{:x}\r\n{}\r\n", 4096, "[".repeat(4096)).as_bytes())
            .is_err()
        {
            break;
        }
    }
    let a = c.read_answer().unwrap();
    assert_eq!(a.status, 413, "{}", a.text());
    // A header flood: 200 headers, then one header of 40 KB.
    for head in [
        (0..200)
            .map(|i| format!("X-Flood-{i}: {i}\r\n"))
            .collect::<String>(),
        format!("X-Big: {}\r\n", "a".repeat(40 << 10)),
    ] {
        let mut c = server.client();
        let _ = c.write_raw(format!("GET /api/info HTTP/1.1\r\nHost: x\r\n{head}\r\n").as_bytes());
        let a = c.read_answer().unwrap();
        assert_eq!(a.status, 431, "{}", a.text());
    }
    // A request target of 20 KB.
    let mut c = server.client();
    let long = format!("/api/position?fen={}", "1".repeat(20 << 10));
    let _ = c.write_raw(format!("GET {long} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes());
    let a = c.read_answer().unwrap();
    assert!([414, 431].contains(&a.status), "{}: {}", a.status, a.text());
    // Bytes that are not HTTP.
    let mut c = server.client();
    c.write_raw(b"\x00\xff\xfe garbage\r\n\r\n").unwrap();
    let a = c.read_answer().unwrap();
    assert_eq!(a.status, 400);
    assert_serving(&server);
    // Every request is in the access log, one line each, with its status.
    let log = std::fs::read_to_string(site5().join(format!("access-{}.log", std::process::id())))
        .unwrap();
    assert!(
        log.lines()
            .any(|l| l.contains("GET /api/position?fen=%FF%FE 400 ")),
        "{log}"
    );
}

/// Lets this process (and the servers it starts) hold `n` open files.
fn raise_open_files(n: u64) {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit read and write only the struct passed.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim), 0);
        lim.rlim_cur = lim.rlim_max.min(n);
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &lim), 0);
    }
}

#[test]
fn slow_clients_and_idle_kept_alive_connections_are_cut_off() {
    raise_open_files(8192);
    let server = start(
        site5(),
        &["--header-timeout", "2", "--max-connections", "300"],
    );
    // A client that sends a byte a second never finishes its request's head.
    let mut slow = server.client();
    let started = Instant::now();
    let mut cut = false;
    for b in b"GET /api/info HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaa\r\n\r\n" {
        if slow.write_raw(&[*b]).is_err() || slow.closed_within(Duration::from_secs(1)) {
            cut = true;
            break;
        }
    }
    assert!(cut, "a client sending a byte a second was not cut off");
    let took = started.elapsed();
    assert!(took < Duration::from_secs(6), "cut after {took:?}");
    // A kept-alive connection left idle is closed after the same time.
    let mut idle = server.client();
    assert_eq!(idle.get("/api/info").unwrap().status, 200);
    assert!(
        idle.closed_within(Duration::from_secs(5)),
        "an idle connection stayed open"
    );
}

/// A counter of the server's `/metrics`.
fn metric(server: &Server, name: &str) -> u64 {
    let text = server.client().get("/metrics").unwrap().text();
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .unwrap_or_else(|| panic!("no {name} in\n{text}"))
        .parse()
        .unwrap()
}

#[test]
fn thousands_of_idle_connections_do_not_keep_others_out() {
    raise_open_files(8192);
    let server = start(site5(), &["--header-timeout", "30"]);
    let idle: Vec<_> = (0..3000)
        .map(|_| std::net::TcpStream::connect(&server.addr).unwrap())
        .collect();
    // While all of them are held, a new client is served at once.
    let started = Instant::now();
    assert_serving(&server);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert!(metric(&server, "nowdb_http_connections_open") >= 3000);
    assert_eq!(metric(&server, "nowdb_http_connections_refused_total"), 0);
    drop(idle);
    // Past `--max-connections` a connection is closed at once and counted.
    let server = start(
        site5(),
        &["--max-connections", "100", "--header-timeout", "30"],
    );
    let mut held: Vec<_> = (0..100).map(|_| server.client()).collect();
    let mut over = server.client();
    assert!(
        over.closed_within(Duration::from_secs(5)),
        "a connection over the limit was kept"
    );
    assert_eq!(metric_over_limit(&mut held), 1);
    drop(held);
    std::thread::sleep(Duration::from_millis(200));
    assert_serving(&server);
}

/// The refused connections as the server counts them, asked on a connection it holds.
fn metric_over_limit(held: &mut [Client]) -> u64 {
    let text = held[0].get("/metrics").unwrap().text();
    text.lines()
        .find_map(|l| l.strip_prefix("nowdb_http_connections_refused_total "))
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn sixty_four_clients_at_once_get_the_answers_one_client_gets() {
    let server = start(site5(), &[]);
    let fens = random_fens(site5(), 200, 64, true);
    let mut c = server.client();
    let one: Vec<Value> = fens
        .iter()
        .map(|f| {
            c.get(&format!("/api/position?fen={}", encode(f)))
                .unwrap()
                .json()
        })
        .collect();
    let all: Vec<Vec<Value>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..64)
            .map(|_| {
                let (addr, fens) = (&server.addr, &fens);
                scope.spawn(move || {
                    let mut c = Client::connect(addr);
                    fens.iter()
                        .map(|f| {
                            let a = c.get(&format!("/api/position?fen={}", encode(f))).unwrap();
                            assert_eq!(a.status, 200);
                            a.json()
                        })
                        .collect()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for answers in &all {
        assert_eq!(answers, &one);
    }
    let metrics = c.get("/metrics").unwrap().text();
    let line = "nowdb_http_requests_total{route=\"/api/position\",status=\"2xx\"} 13000";
    assert!(metrics.lines().any(|l| l == line), "{metrics}");
}

#[test]
fn answers_carry_caching_headers_and_the_page_is_self_contained() {
    let server = start(site5(), &[]);
    let mut c = server.client();
    let a = c.get("/api/position?fen=B:W18:B14").unwrap();
    assert_eq!(
        a.headers["cache-control"],
        "public, max-age=86400, immutable"
    );
    assert_eq!(a.headers["content-type"], "application/json");
    let page = c.get("/").unwrap();
    assert_eq!(page.status, 200);
    assert!(page.headers["content-type"].starts_with("text/html"));
    assert!(page.headers["content-security-policy"].contains("default-src 'none'"));
    let html = page.text();
    for outside in ["http://", "https://", "//cdn", "<link", "src=\""] {
        let found = html
            .lines()
            .find(|l| l.contains(outside) && !l.contains("http://www.w3.org/2000/svg"));
        assert!(found.is_none(), "the page reaches out: {found:?}");
    }
    let info = c.get("/api/info").unwrap().json();
    assert_eq!(info["pieces"], 5);
    assert_eq!(info["distances"], true);
    assert_eq!(info["plans"], serde_json::json!(["2..5"]));
}

#[test]
fn a_site_without_distances_answers_values_and_no_mainline() {
    let server = start(site4_values(), &[]);
    let mut c = server.client();
    let a = c.get("/api/position?fen=B:W18:B14").unwrap().json();
    assert_eq!(
        (&a["value"], &a["mtc"], &a["distances"]),
        (&"win".into(), &Value::Null, &false.into())
    );
    assert_error(
        &mut c,
        "GET",
        "/api/mainline?fen=B:W18:B14",
        b"",
        404,
        "built without --mtc",
    );
    assert!(
        server.stderr_text().contains("values only"),
        "{}",
        server.stderr_text()
    );
}

#[test]
fn an_unfinished_site_is_refused_naming_the_missing_slices() {
    let site = fixture::scratch("dbserve", "unfinished");
    fixture::copy_dir(site4_values(), &site);
    let gone = site.join("db/2200.--.ndb");
    std::fs::remove_file(&gone).unwrap_or_else(|e| panic!("{}: {e}", gone.display()));
    let out = fixture::run_plain(
        DBSERVE,
        &["--site", site.to_str().unwrap(), "--listen", "127.0.0.1:0"],
    );
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("not finished") && err.contains("1 of ") && err.contains("2200.--"),
        "{err}"
    );
    // Serving fewer pieces leaves the missing slice out.
    let server = start(&site, &["--pieces", "3"]);
    assert_error(
        &mut server.client(),
        "GET",
        "/api/position?fen=B:W18,22:B14,K1",
        b"",
        404,
        "2..3",
    );
}

/// `per_client` mainline requests from each of `clients` clients at once, of a long line
/// (59 plies: a man and two kings against a man and a king); each answer's status and its
/// error with its `Retry-After`.
fn mainline_flood(server: &Server, clients: usize, per_client: usize) -> Vec<(u16, String)> {
    let line = format!("/api/mainline?fen={}", encode("B:W13,K10:B28,11,K18"));
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..clients)
            .map(|_| {
                let (addr, line) = (&server.addr, &line);
                scope.spawn(move || {
                    let mut c = Client::connect(addr);
                    (0..per_client)
                        .map(|_| {
                            let a = c.get(line).unwrap();
                            let said = match a.status {
                                200 => String::new(),
                                _ => format!(
                                    "{} {}",
                                    a.json()["error"].as_str().unwrap(),
                                    a.headers.get("retry-after").map_or("", |r| r.as_str())
                                ),
                            };
                            (a.status, said)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    })
}

#[test]
fn answers_over_the_request_timeout_are_503_and_the_server_goes_on() {
    // One worker and 32 clients: a request queued behind the others' 320 mainlines waits
    // longer than 10 ms (it would wait 60 s for the worker before it were told busy).
    let server = start(
        site5(),
        &[
            "--workers",
            "1",
            "--busy-wait",
            "60",
            "--request-timeout",
            "0.01",
        ],
    );
    let got = mainline_flood(&server, 32, 10);
    let late = got.iter().filter(|(s, _)| *s == 503).count();
    eprintln!("{late} of {} answers late", got.len());
    assert!(late > 0, "no answer was late: {got:?}");
    for (status, said) in &got {
        assert!(
            *status == 200 || (*status == 503 && said.contains("took longer than 0.01 s")),
            "{status} {said}"
        );
    }
    assert_serving(&server);
}

#[test]
fn requests_that_find_every_worker_busy_are_told_503_and_the_rest_answered() {
    let server = start(site5(), &["--workers", "1", "--busy-wait", "0.001"]);
    let got = mainline_flood(&server, 16, 5);
    let busy = got.iter().filter(|(s, _)| *s == 503).count();
    let answered = got.iter().filter(|(s, _)| *s == 200).count();
    assert_eq!(busy + answered, 80, "{got:?}");
    assert!(busy > 0 && answered > 0, "{busy} busy, {answered} answered");
    for (status, said) in &got {
        assert!(
            *status == 200 || said == "busy: every worker is taken; ask again in a moment 1",
            "{status} {said}"
        );
    }
    assert_serving(&server);
}

#[test]
fn sigterm_stops_the_server_cleanly() {
    let mut server = start(site5(), &[]);
    let mut c = server.client();
    assert_eq!(c.get("/api/info").unwrap().status, 200);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(server.child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let status = server.child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert!(c.closed_within(Duration::from_secs(5)));
    std::thread::sleep(Duration::from_millis(100));
    let err = server.stderr_text();
    assert!(
        err.contains("SIGTERM: not taking connections") && err.contains("dbserve: stopped"),
        "{err}"
    );
}
