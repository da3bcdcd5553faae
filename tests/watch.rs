//! wswatch with real processes and an injected clock: activity suspends a public host's job
//! and inactivity resumes it; too little memory, a private host in working hours and a
//! night-only host by day checkpoint and requeue (SIGTERM) and pause the runners; other CPU
//! load counts as activity; runners take nothing while paused; every action is mailed (to a
//! real SMTP server, aiosmtpd, in the suspend/resume and night-only tests).

mod common;

use common::fixture::{self, ADDQ, JOBRUNNER, WSWATCH, text};
use common::smtp::{SmtpServer, free_port};
use nowdb::runner::record::{RunningRecord, process_start};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

/// Monday 2026-11-23 00:00 UTC.
const MONDAY: u64 = 1_795_392_000;
const DAY: u64 = 86_400;
const HOUR: u64 = 3_600;

/// A site whose hosts.toml has one host of each policy, fake devices, CPU and memory files.
fn site(name: &str) -> PathBuf {
    let d = fixture::scratch("watch", name);
    std::fs::create_dir_all(d.join("dev")).unwrap();
    let host = |n: &str, extra: &str| {
        format!(
            "[[host]]\nname = \"{n}\"\nssh = \"{n}\"\nqueue = \"p\"\nplatform = \"x86_64-linux\"\nmemory_mb = 64\n{extra}"
        )
    };
    std::fs::write(
        d.join("hosts.toml"),
        host("pub", "") + &host("priv", "public = false\n") + &host("night", "night_only = true\n"),
    )
    .unwrap();
    std::fs::write(d.join("dev/pts0"), "").unwrap();
    cpu(&d, 100, 1000);
    memory(&d, 900);
    d
}

/// The user last typed at `t`.
fn typed_at(site: &Path, t: u64) {
    let ok = Command::new("touch")
        .args(["-a", "-d", &format!("@{t}")])
        .arg(site.join("dev/pts0"))
        .status()
        .unwrap();
    assert!(ok.success());
}

/// Cumulative CPU jiffies: `other` busy (not nice) out of `total`.
fn cpu(site: &Path, other: u64, total: u64) {
    let idle = total - other;
    std::fs::write(
        site.join("stat"),
        format!("cpu  {other} 0 0 {idle} 0 0 0 0 0 0\n"),
    )
    .unwrap();
}

fn memory(site: &Path, available_kb: u64) {
    std::fs::write(
        site.join("meminfo"),
        format!(
            "MemTotal:       1000 kB\nMemFree:        10 kB\nMemAvailable:   {available_kb} kB\n"
        ),
    )
    .unwrap();
}

fn watch(site: &Path, host: &str, now: u64) -> String {
    let out: Output = fixture::command(WSWATCH, site)
        .env("TZ", "UTC")
        .args(["--host", host, "--once", "--now", &now.to_string()])
        .arg("--devices")
        .arg(format!("{}:pts", site.join("dev").display()))
        .arg("--proc-stat")
        .arg(site.join("stat"))
        .arg("--meminfo")
        .arg(site.join("meminfo"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
}

/// A stand-in job process of `host` (a sleeping child) with its running record.
fn job(site: &Path, host: &str) -> Child {
    let child = Command::new("sleep").arg("300").spawn().unwrap();
    let me = std::process::id();
    RunningRecord {
        host: host.into(),
        boot_id: "b".into(),
        pid: me,
        pid_start: process_start(me).unwrap(),
        child: child.id(),
        child_start: process_start(child.id()).unwrap(),
        queue: "prime".into(),
        line: "cap 1100.-- -max 01 -s 1 -n 00".into(),
        since: 1,
        failed: None,
    }
    .write(&site.join("running").join(format!("{host}-{me}-0")), true)
    .unwrap();
    child
}

fn state(pid: u32) -> char {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.rsplit(')')
        .next()
        .and_then(|r| r.trim().chars().next())
        .unwrap_or('?')
}

fn outbox(site: &Path) -> String {
    let mut all = String::new();
    for e in std::fs::read_dir(site.join("mail/outbox"))
        .into_iter()
        .flatten()
    {
        all += &std::fs::read_to_string(e.unwrap().path()).unwrap();
    }
    all
}

/// A real SMTP server for the site's alerts (a `[mail]` table added to hosts.toml).
fn with_smtp(site: &Path) -> SmtpServer {
    let port = free_port();
    let maildir = site.join("maildir");
    let server = SmtpServer::start(&maildir, port);
    let mut hosts = std::fs::read_to_string(site.join("hosts.toml")).unwrap();
    hosts += &format!(
        "[mail]\ntransport = \"smtp\"\nsecurity = \"none\"\nserver = \"127.0.0.1\"\nport = {port}\n\
         from = \"nowdb@localhost\"\nto = [\"operator@localhost\"]\n"
    );
    std::fs::write(site.join("hosts.toml"), hosts).unwrap();
    server
}

/// Waits until the server has received mail containing every one of `needles`.
fn received(server: &SmtpServer, needles: &[&str]) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let all = server.messages().join("\n");
        if needles.iter().all(|n| all.contains(n)) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "not mailed: {needles:?} in\n{all}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn paused(site: &Path, host: &str) -> bool {
    site.join("pause").join(host).exists()
}

#[test]
fn a_public_host_suspends_on_input_and_resumes_when_idle() {
    let site = site("public");
    let smtp = with_smtp(&site);
    let mut child = job(&site, "pub");
    let t = MONDAY + 2 * DAY + 12 * HOUR;
    typed_at(&site, t - 10);
    assert!(watch(&site, "pub", t).contains("suspended jobs on pub"));
    assert_eq!(state(child.id()), 'T');
    // Idle, but not for long enough yet.
    assert!(watch(&site, "pub", t + 300).starts_with("0 action(s)"));
    assert_eq!(state(child.id()), 'T');
    assert!(watch(&site, "pub", t + 700).contains("resumed jobs on pub"));
    assert_ne!(state(child.id()), 'T');
    received(&smtp, &["suspended jobs on pub", "resumed jobs on pub"]);
    assert_eq!(outbox(&site), "", "everything delivered");
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&site);
}

#[test]
fn too_little_memory_requeues_instead_and_pauses_the_runners() {
    let site = site("memory");
    memory(&site, 100);
    let mut child = job(&site, "pub");
    let t = MONDAY + 2 * DAY + 12 * HOUR;
    typed_at(&site, t - 5);
    assert!(watch(&site, "pub", t).contains("requeued jobs on pub"));
    // SIGTERM: the job checkpoints and exits (here: the stand-in dies of it).
    let status = child.wait().unwrap();
    assert!(!status.success());
    assert!(paused(&site, "pub"));
    assert!(watch(&site, "pub", t + 700).contains("runners on pub take jobs again"));
    assert!(!paused(&site, "pub"));
    assert!(outbox(&site).contains("too little free memory"));
    let _ = std::fs::remove_dir_all(&site);
}

#[test]
fn other_cpu_load_counts_as_a_user() {
    let site = site("cpu");
    let mut child = job(&site, "pub");
    let t = MONDAY + 2 * DAY + 12 * HOUR;
    typed_at(&site, t - 10_000);
    cpu(&site, 100, 1000);
    assert!(watch(&site, "pub", t).starts_with("0 action(s)"));
    // Two CPUs' worth of busy time that is not nice time (jobs are nice 19).
    cpu(&site, 100 + 900, 1000 + 1000);
    let out = watch(&site, "pub", t + 30);
    assert!(out.contains("suspended jobs on pub"), "{out}");
    assert!(outbox(&site).contains("other processes keep the CPU busy"));
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&site);
}

#[test]
fn private_hosts_give_way_in_working_hours_and_night_only_hosts_by_day() {
    let site = site("policies");
    let smtp = with_smtp(&site);
    // Private, Wednesday 10:00, its owner types: requeued, paused until idle 10 minutes.
    let mut child = job(&site, "priv");
    let wed10 = MONDAY + 2 * DAY + 10 * HOUR;
    typed_at(&site, wed10 - 5);
    assert!(watch(&site, "priv", wed10).contains("requeued jobs on priv"));
    child.wait().unwrap();
    assert!(paused(&site, "priv"));
    assert!(watch(&site, "priv", wed10 + 300).starts_with("0 action(s)"));
    assert!(paused(&site, "priv"));
    assert!(watch(&site, "priv", wed10 + 700).contains("take jobs again"));
    // The same owner on Saturday: treated as public (suspended, not requeued).
    let mut child = job(&site, "priv");
    let sat = MONDAY + 5 * DAY + 12 * HOUR;
    typed_at(&site, sat - 5);
    assert!(watch(&site, "priv", sat).contains("suspended jobs on priv"));
    let _ = child.kill();
    let _ = child.wait();

    // Night-only, Wednesday noon, nobody there: requeued and paused; at 22:00 it works.
    let mut child = job(&site, "night");
    typed_at(&site, MONDAY);
    let wed12 = MONDAY + 2 * DAY + 12 * HOUR;
    assert!(watch(&site, "night", wed12).contains("requeued jobs on night"));
    child.wait().unwrap();
    assert!(paused(&site, "night"));
    assert!(watch(&site, "night", wed12 + 10 * HOUR).contains("take jobs again"));
    assert!(!paused(&site, "night"));
    received(
        &smtp,
        &[
            "requeued jobs on priv",
            "requeued jobs on night",
            "working hours on a night-only host",
        ],
    );
    let _ = std::fs::remove_dir_all(&site);
}

#[test]
fn paused_runners_take_no_job() {
    let site = site("pause");
    std::fs::create_dir_all(site.join("pause")).unwrap();
    std::fs::write(site.join("pause/pub"), "test\n").unwrap();
    fixture::ok(ADDQ, &site, &["p", "cap", "1100"]);
    let mut runner = fixture::command(JOBRUNNER, &site)
        .args([
            "daemon",
            "--host",
            "pub",
            "--dry-run",
            "--until-empty",
            "--poll-secs",
            "0.1",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        runner.try_wait().unwrap().is_none(),
        "a paused runner waits"
    );
    assert!(
        !site.join("done").join("1100.--").exists(),
        "and takes nothing"
    );
    std::fs::remove_file(site.join("pause/pub")).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(s) = runner.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "the runner did not go on");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success());
    assert!(site.join("done").join("1100.--").exists());
    let _ = std::fs::remove_dir_all(&site);
}
