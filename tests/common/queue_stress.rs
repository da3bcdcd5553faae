//! The queue stress shared by tests/queue.rs and tests/sshfs.rs: streams of `addq`
//! processes adding jobs while takers drain the queue.

use nowdb::queue::{Machine, Queue};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// 8 streams of `addq` processes (stream `p` on site `adder_sites[p % len]`) add
/// `per_stream` jobs each, one per process, every other one at the top, while 4 takers
/// (taker `k` on `taker_sites[k % len]`) drain queue `p`. Asserts that every job was taken
/// exactly once and that no lock event (a broken lock) happened in the takers.
pub fn addq_streams_against_takers(
    addq: &str,
    adder_sites: &[PathBuf],
    taker_sites: &[PathBuf],
    per_stream: u64,
) {
    let here = Machine::current().unwrap();
    let adders_done = Arc::new(AtomicBool::new(false));
    let taken: Arc<Mutex<Vec<String>>> = Arc::default();
    let takers: Vec<_> = (0..4)
        .map(|k| {
            let q = Queue::named(&taker_sites[k % taker_sites.len()], "p").unwrap();
            let (here, done, taken) = (here.clone(), adders_done.clone(), taken.clone());
            std::thread::spawn(move || {
                let mut log = |m: String| panic!("unexpected lock event: {m}");
                loop {
                    let finished = done.load(Ordering::SeqCst);
                    match q.take(&here, &mut log, |_| true).unwrap() {
                        Some(line) => taken.lock().unwrap().push(line.to_string()),
                        None if finished => return,
                        None => std::thread::sleep(std::time::Duration::from_millis(2)),
                    }
                }
            })
        })
        .collect();
    let adders: Vec<_> = (0..8u64)
        .map(|p| {
            let site = adder_sites[p as usize % adder_sites.len()].clone();
            let addq = addq.to_string();
            std::thread::spawn(move || {
                for k in 0..per_stream {
                    // Unique -n numbers tell the lines apart.
                    let n = (p * per_stream + k).to_string();
                    let mut args = vec!["p", "cap", "2200", "0", "32768", "-n", &n];
                    if k % 2 == 1 {
                        args.insert(0, "--top");
                    }
                    let out = Command::new(&addq)
                        .arg("--site")
                        .arg(&site)
                        .args(&args)
                        .output()
                        .unwrap();
                    assert!(
                        out.status.success(),
                        "{}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                }
            })
        })
        .collect();
    for a in adders {
        a.join().unwrap();
    }
    adders_done.store(true, Ordering::SeqCst);
    for t in takers {
        t.join().unwrap();
    }
    let taken = taken.lock().unwrap();
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for t in taken.iter() {
        *counts.entry(t.as_str()).or_default() += 1;
    }
    assert_eq!(
        taken.len() as u64,
        8 * per_stream,
        "every added line is taken"
    );
    assert!(counts.values().all(|&c| c == 1), "a line was taken twice");
}
