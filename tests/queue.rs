//! Queue files under concurrent use: `addq` processes appending while runner daemons drain,
//! every job run exactly once and no file ever torn; bad input leaves the queue unchanged.

use nowdb::queue::QueueLine;
use nowdb::queue::file::{Queue, parse_queue_text};

mod common;

use common::fixture::{self, ADDQ, DBSTATUS, JOBRUNNER};

/// 8 concurrent streams of `addq` processes add 500 jobs each (one per process) while 4
/// runner daemons drain the queue: every job runs exactly once (by `done/` and the logs),
/// and every read of the file parses (no torn queue).
#[test]
fn concurrent_addq_and_runners_lose_and_duplicate_nothing() {
    let site = fixture::scratch("queue", "stress");
    let sites = std::slice::from_ref(&site);
    common::queue_stress::addq_streams_against_runners(ADDQ, JOBRUNNER, sites, sites, 500);
    let q = Queue::named(&site, "p").unwrap();
    let left = std::fs::read_to_string(q.path()).unwrap();
    let left = parse_queue_text(&left).unwrap();
    assert!(left.iter().all(|e| e.parse().unwrap().is_none()));
    assert!(!site.join("queues/prime.lock").exists());
}

#[test]
fn bad_input_is_refused_and_the_queue_is_unchanged() {
    let site = fixture::scratch("queue", "bad");
    let out = fixture::run(ADDQ, &site, &["p", "lookup", "3113.01"]);
    assert!(out.status.success());
    let before = std::fs::read(site.join("queues/prime")).unwrap();
    for (args, needle) in [
        (vec!["x", "lookup", "3113.01"], "no queue \"x\""),
        (vec!["p", "lokup", "3113.01"], "unknown job type"),
        (vec!["p", "lookup", "3113.71"], "3113.71"),
        (vec!["p", "cap", "3113.01", "5", "9"], "not page aligned"),
        (
            vec!["p", "cap", "3113.01", "0", "99999999999"],
            "outside slice",
        ),
        (
            vec!["p", "lookup", "3113.01", "-s", "2"],
            "lookup has no rounds",
        ),
    ] {
        let out = fixture::run(ADDQ, &site, &args);
        assert!(!out.status.success(), "{args:?}");
        let err = fixture::stderr(&out);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(std::fs::read(site.join("queues/prime")).unwrap(), before);
    }
    // A corrupted queue file: listing it fails naming the line, and nothing changes.
    let mut text = String::from_utf8(before.clone()).unwrap();
    text.insert_str(0, "# operator note\nlookup 3113.01 -max 02 -n 07\n");
    std::fs::write(site.join("queues/prime"), &text).unwrap();
    let out = fixture::run(ADDQ, &site, &["--list", "p"]);
    assert!(!out.status.success());
    let err = fixture::stderr(&out);
    assert!(err.contains("queues/prime: line 2: -n 7"), "{err}");
    assert_eq!(
        std::fs::read_to_string(site.join("queues/prime")).unwrap(),
        text
    );
    assert!(!site.join("queues/prime.lock").exists());
}

#[test]
fn top_list_and_edit() {
    let site = fixture::scratch("queue", "edit");
    assert!(
        fixture::run(ADDQ, &site, &["n", "noio", "2200", "-s", "2"])
            .status
            .success()
    );
    assert!(
        fixture::run(ADDQ, &site, &["--top", "nonprime", "stop"])
            .status
            .success()
    );
    let out = fixture::run(ADDQ, &site, &["--list", "n"]);
    let list = fixture::text(&out.stdout);
    assert!(list.starts_with("stop\nnoio 2200.-- -max "), "{list}");
    assert!(list.contains(" -s 2 -n 00\n"), "{list}");
    let out = fixture::run(ADDQ, &site, &["--list", "--json", "n"]);
    assert!(fixture::text(&out.stdout).starts_with("[{\"line\":1,\"job\":\"stop\"}"));

    let edit = |editor: &str| {
        fixture::command(ADDQ, &site)
            .args(["--edit", "n"])
            .env("EDITOR", editor)
            .output()
            .unwrap()
    };
    // An "editor" that deletes the first line: saved.
    assert!(edit("sed -i 1d").status.success());
    let q = Queue::named(&site, "n").unwrap();
    let lines = q.read_checked().unwrap();
    assert!(matches!(lines[0].1, Some(QueueLine::Job(_))));
    // An editor that breaks a line: refused, the queue unchanged, the edit kept.
    let before = std::fs::read(q.path()).unwrap();
    let out = edit("sed -i 1s/noio/noyo/");
    assert!(!out.status.success());
    let err = fixture::stderr(&out);
    assert!(
        err.contains("line 1: unknown job type \"noyo\"") && err.contains("your edit is kept"),
        "{err}"
    );
    assert_eq!(std::fs::read(q.path()).unwrap(), before);
}

#[test]
fn dbstatus_reports_queue_lengths() {
    let site = fixture::scratch("queue", "status");
    assert!(
        fixture::run(ADDQ, &site, &["p", "lookup", "2200"])
            .status
            .success()
    );
    assert!(
        fixture::run(ADDQ, &site, &["m", "cap", "1100", "0", "992", "-n", "3"])
            .status
            .success()
    );
    assert!(fixture::run(ADDQ, &site, &["m", "stop"]).status.success());
    let out = fixture::run(DBSTATUS, &site, &["queues"]);
    assert!(out.status.success(), "{}", fixture::stderr(&out));
    let text = fixture::text(&out.stdout);
    let count_2200: u64 = "2200".parse::<nowdb::Slice>().unwrap().count();
    assert!(
        text.starts_with("queue\tletter\tjobs\tstops\tpositions\tfirst\n"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "prime\tp\t1\t0\t{count_2200}\tlookup 2200.-- -max 01 -s 1 -n 00\n"
        )),
        "{text}"
    );
    assert!(
        text.contains("small\tm\t1\t1\t992\tcap 1100.-- 0 992 -n 03\n"),
        "{text}"
    );
    assert!(text.contains("nonprime\tn\t0\t0\t0\t\n"), "{text}");
}
