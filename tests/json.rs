//! Every `--json` output is valid JSON whatever the names and messages hold: the site lives
//! in a directory whose name has a quote, a backslash, a newline and non-ASCII letters, the
//! host is named `ws"1\é`, a job fails with an error naming files there, and each binary's
//! `--json` output is parsed (and its strings compared with what went in).

mod common;

use common::fixture::{self, ADDQ, DBPROBE, DBSTATUS, JOBRUNNER};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

const HOST: &str = "ws\"1\\é";

/// Every line of stdout parses as JSON.
fn json_lines(out: &Output, what: &str) -> Vec<Value> {
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    assert!(
        !text.trim().is_empty(),
        "{what}: no output; stderr {}",
        fixture::stderr(out)
    );
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{what}: {e}: {l}")))
        .collect()
}

fn json(exe: &str, site: &Path, args: &[&str]) -> Value {
    let out = fixture::run(exe, site, args);
    assert!(
        out.status.success() || args.contains(&"daemon"),
        "{args:?}: {}",
        fixture::stderr(&out)
    );
    let mut lines = json_lines(&out, &format!("{args:?}"));
    assert_eq!(lines.len(), 1, "{args:?}: one JSON line");
    lines.remove(0)
}

fn weird_site() -> PathBuf {
    let d = fixture::scratch("json", "base");
    let site = d.join("site \"q\" back\\slash\nnew line é ü");
    std::fs::create_dir_all(&site).unwrap();
    site
}

#[test]
fn every_json_output_stays_valid_with_quotes_backslashes_newlines_and_non_ascii() {
    let site = weird_site();
    std::fs::write(
        site.join("hosts.toml"),
        "[[host]]\nname = 'ws\"1\\é'\nssh = 'ws\"1'\nqueue = \"pm\"\nplatform = \"x86_64-linux\"\n\
         memory_mb = 64\n\n[jobs]\nmax_attempts = 1\n",
    )
    .unwrap();
    // A damaged input makes the first job fail at once, and be held: its records hold the
    // host name, and its messages the site's path.
    std::fs::create_dir_all(site.join("solved")).unwrap();
    for s in ["1100.--", "0011.00"] {
        std::fs::write(site.join(format!("solved/{s}.nwk")), b"damaged").unwrap();
    }
    let added = json(ADDQ, &site, &["--json", "p", "build", "1100"]);
    assert_eq!(added["added"], 1);
    let planned = json(ADDQ, &site, &["--json", "p", "plan", "2..2"]);
    assert_eq!(planned["plan"], "2..2");
    let listed = json(ADDQ, &site, &["--json", "--list", "p"]);
    assert_eq!(listed[0]["job"], "build 1100.-- -max 01 -s 1 -n 00");

    let daemon = json(
        JOBRUNNER,
        &site,
        &[
            "--json",
            "daemon",
            "--host",
            HOST,
            "--until-empty",
            "--poll-secs",
            "0.2",
        ],
    );
    assert_eq!(daemon["host"], HOST);
    // The build job, and the pair job that reads the same damaged files.
    let n = daemon["held"].as_u64().unwrap();
    assert!(n >= 1, "{daemon}");

    let held = json(DBSTATUS, &site, &["--json", "held"]);
    assert_eq!(held["tally"]["held"], n);
    let attempt = &held["jobs"][0]["attempts"][0];
    assert_eq!(attempt["host"], HOST);
    let output = attempt["output"].as_str().unwrap();
    let kept = std::fs::read_to_string(site.join(output)).unwrap();
    assert!(kept.contains(&site.display().to_string()), "{kept}");
    // A damaged record: its error names the file, path and all.
    let key = held["jobs"][0]["job"].as_str().unwrap().to_string();
    std::fs::write(site.join("held").join(&key), "{\"broken").unwrap();
    let held = json(DBSTATUS, &site, &["--json", "held"]);
    let error = held["jobs"][0]["errors"][0].as_str().unwrap();
    assert!(
        error.contains(&site.join("held").join(&key).display().to_string()),
        "{error}"
    );

    let runners = json(DBSTATUS, &site, &["--json", "runners"]);
    assert_eq!(runners["hosts"][0]["name"], HOST);
    assert_eq!(runners["held"], n);
    // The damaged inputs repaired (gone), the other reports.
    for s in ["1100.--", "0011.00"] {
        std::fs::remove_file(site.join(format!("solved/{s}.nwk"))).unwrap();
    }
    for args in [
        vec!["--json", "summary", "--pieces", "3"],
        vec!["--json", "queues"],
        vec!["--json", "slice", "1100"],
        vec!["--json", "counts"],
        vec!["--json", "plan", "--pieces", "3"],
    ] {
        json(DBSTATUS, &site, &args);
    }
    let released = json(ADDQ, &site, &["--json", "--release", "all"]);
    let released = released["released"].as_array().unwrap();
    assert!(
        released
            .iter()
            .any(|r| r.as_str().unwrap().starts_with(&key)),
        "{released:?}"
    );

    // A job in the foreground, and the probe's answers.
    let job = json(JOBRUNNER, &site, &["--json", "run", "cap", "1100"]);
    assert_eq!(job["job"], "cap 1100.-- 0 992");
    // Finish 2..2 (the pair whose files were damaged is planned again now that they are
    // gone), then probe the database, and describe a position without one.
    json(ADDQ, &site, &["--json", "p", "plan", "2..2"]);
    let out = fixture::run(
        JOBRUNNER,
        &site,
        &[
            "daemon",
            "--host",
            HOST,
            "--until-empty",
            "--poll-secs",
            "0.2",
        ],
    );
    assert!(out.status.success(), "{}", fixture::stderr(&out));
    let probe = json(DBPROBE, &site, &["--json", "B:WK18:BK3"]);
    assert!(probe["value"].is_string(), "{probe}");
    let out = fixture::run_plain(DBPROBE, &["--json", "B:W18,K12:B3,5"]);
    json_lines(&out, "dbprobe FEN");
    let _ = std::fs::remove_dir_all(site.parent().unwrap());
}
