//! `dbserve` under load on loopback (issue 46): 64 clients, each on its own kept-alive
//! connection, ask single positions (at least 200,000 requests), mainlines and batches of a
//! random sample of a site's positions (single positions twice: the first pass warms the
//! block cache). Prints requests a second, p50/p99/max latency, the
//! errors (there must be none), the server's resident memory through the run, and the
//! rates of the same positions asked in this process without HTTP (the raw probe, and the
//! whole position answer) for comparison.
//!
//! Run: `cargo bench --bench serve -- SITE [REQUESTS]` on a finished site built with
//! `--mtc` (e.g. `scripts/build-local SITE --pieces 6 --mtc`). The clients share the
//! machine's cores with the server.

#[path = "../tests/common/http.rs"]
#[allow(dead_code)]
mod http;
#[path = "../tests/common/sample.rs"]
mod sample;

use http::{Client, Server, encode};
use nowdb::Setup;
use nowdb::explorer::Explorer;
use nowdb::solve::Site;
use std::path::PathBuf;
use std::time::{Duration, Instant};

const CLIENTS: usize = 64;
const SAMPLE: usize = 20_000;

/// One phase's figures.
struct Phase {
    requests: usize,
    errors: usize,
    seconds: f64,
    micros: Vec<u32>,
    rss: Vec<u64>,
    /// The server's CPU time over the phase.
    cpu: f64,
}

impl Phase {
    fn print(&mut self, what: &str) {
        self.micros.sort_unstable();
        let at = |q: f64| self.micros[((self.micros.len() - 1) as f64 * q) as usize] as f64 / 1e3;
        let rss: Vec<String> = self.rss.iter().map(|b| format!("{}", b >> 20)).collect();
        println!(
            "{what}: {} requests by {CLIENTS} clients in {:.1} s: {:.0} requests/s, \
             p50 {:.2} ms, p99 {:.2} ms, max {:.1} ms, {} errors; server CPU {:.0} µs a \
             request; server RSS MiB {}",
            self.requests,
            self.seconds,
            self.requests as f64 / self.seconds,
            at(0.5),
            at(0.99),
            at(1.0),
            self.errors,
            self.cpu / self.requests as f64 * 1e6,
            rss.join(" → ")
        );
    }
}

/// `per_client` requests from each of [`CLIENTS`] clients; `ask(client, i)` makes request
/// `i` and says whether it was answered 200. The server's memory is read five times.
fn load(
    server: &Server,
    per_client: usize,
    ask: impl Fn(&mut Client, usize) -> bool + Sync,
) -> Phase {
    let start = Instant::now();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let total = per_client * CLIENTS;
    let mut rss = vec![server.rss_bytes()];
    let cpu = server.cpu_seconds();
    let (micros, errors) = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..CLIENTS)
            .map(|c| {
                let (ask, done) = (&ask, &done);
                scope.spawn(move || {
                    let mut client = Client::connect(&server.addr);
                    let mut micros = Vec::with_capacity(per_client);
                    let mut errors = 0;
                    for k in 0..per_client {
                        let t = Instant::now();
                        if !ask(&mut client, c * per_client + k) {
                            errors += 1;
                        }
                        micros.push(t.elapsed().as_micros() as u32);
                        done.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    (micros, errors)
                })
            })
            .collect();
        for quarter in 1..4 {
            while done.load(std::sync::atomic::Ordering::Relaxed) < total * quarter / 4 {
                std::thread::sleep(Duration::from_millis(20));
            }
            rss.push(server.rss_bytes());
        }
        let mut all = Vec::with_capacity(total);
        let mut errors = 0;
        for h in handles {
            let (m, e) = h.join().unwrap();
            all.extend(m);
            errors += e;
        }
        (all, errors)
    });
    rss.push(server.rss_bytes());
    Phase {
        requests: total,
        errors,
        seconds: start.elapsed().as_secs_f64(),
        micros,
        rss,
        cpu: server.cpu_seconds() - cpu,
    }
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let Some(site) = args.first().map(PathBuf::from) else {
        eprintln!(
            "usage: cargo bench --bench serve -- SITE [REQUESTS] (a finished site built with --mtc)"
        );
        std::process::exit(2);
    };
    let requests: usize = args
        .get(1)
        .map_or(200_000, |n| n.parse().expect("REQUESTS"));
    let fens = sample::random_fens(&site, SAMPLE, 0x10ad_5eed, false);

    // The same positions in this process, one thread, each timed on a second pass (the
    // first fills the block cache): the raw probe, then the whole answer.
    let explorer = Explorer::open(&Site::new(&site), None, 256).unwrap();
    let setups: Vec<Setup> = fens.iter().map(|f| f.parse().unwrap()).collect();
    for s in &setups {
        explorer.db.probe_setup(s).unwrap();
    }
    let t = Instant::now();
    for _ in 0..5 {
        for s in &setups {
            std::hint::black_box(explorer.db.probe_setup(s).unwrap());
        }
    }
    let raw = 5.0 * setups.len() as f64 / t.elapsed().as_secs_f64();
    for f in &fens {
        explorer.position(f).unwrap();
    }
    let t = Instant::now();
    for f in &fens {
        std::hint::black_box(explorer.position(f).unwrap());
    }
    let whole = fens.len() as f64 / t.elapsed().as_secs_f64();
    println!(
        "in process, one thread, {} positions: raw probe {raw:.0} positions/s; whole answer \
         (value, every move, distances) {whole:.0} positions/s",
        fens.len()
    );
    drop(explorer);

    let server = Server::start(
        env!("CARGO_BIN_EXE_dbserve"),
        &site,
        &["--access-log", "off"],
    )
    .unwrap_or_else(|e| panic!("dbserve: {e}"));
    let targets: Vec<String> = fens
        .iter()
        .map(|f| format!("/api/position?fen={}", encode(f)))
        .collect();
    let per_client = requests.div_ceil(CLIENTS);
    let single = |c: &mut Client, i: usize| {
        c.get(&targets[i % targets.len()])
            .is_ok_and(|a| a.status == 200)
    };
    // The first pass fills the block cache (up to --cache-mb); the second shows whether
    // memory stays flat once it is full.
    load(&server, per_client, single).print("single positions, first pass");
    let mut p = load(&server, per_client, single);
    p.print("single positions, second pass");
    println!(
        "  that is {:.2} of the whole answer's rate in process on one thread",
        p.requests as f64 / p.seconds / whole
    );
    let lines: Vec<String> = fens
        .iter()
        .map(|f| format!("/api/mainline?fen={}", encode(f)))
        .collect();
    load(&server, 200, |c, i| {
        c.get(&lines[i % lines.len()])
            .is_ok_and(|a| a.status == 200)
    })
    .print("mainlines");
    let batches: Vec<Vec<u8>> = fens
        .chunks(100)
        .map(|c| serde_json::to_vec(c).unwrap())
        .collect();
    load(&server, 100, |c, i| {
        c.post("/api/batch", &batches[i % batches.len()])
            .is_ok_and(|a| a.status == 200)
    })
    .print("batches of 100");
}
