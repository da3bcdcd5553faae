//! wsmonitor and dbstart with real processes and sockets: a host that stops answering is
//! retried, then declared crashed (jobs requeued at the top, listed in `crashed`, mailed);
//! one that comes back gets its runners started over ssh; a new boot id is a reboot; this
//! host's runners start without ssh; a bad hosts.toml is a clear error.

mod common;

use common::fixture::{self, DBSTART, WSMONITOR, text};
use common::pool::top_line;
use nowdb::runner::record::{self, RunningRecord};
use nowdb::solve::Site;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// A stand-in for ssh that records its arguments instead of logging in.
fn fake_ssh(site: &Path) -> PathBuf {
    let path = site.join("fake-ssh");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\necho \"$@\" >> {}\n",
            site.join("ssh.log").display()
        ),
    )
    .unwrap();
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&path)
        .status()
        .unwrap();
    path
}

/// One `wsmonitor --once` round at time `now` (10 minutes' grace, 1 s probe timeout)
/// logging in with `ssh`; it must succeed.
fn round_with(site: &Path, now: u64, ssh: &Path) -> Output {
    let out = fixture::command(WSMONITOR, site)
        .args(["--once", "--grace", "600", "--timeout", "1"])
        .args(["--now", &now.to_string()])
        .arg("--ssh")
        .arg(ssh)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    out
}

/// [`round_with`] the stand-in ssh that records its arguments.
fn round(site: &Path, now: u64) -> Output {
    round_with(site, now, &fake_ssh(site))
}

/// [`round`], whose report must say `needle`.
fn round_saying(site: &Path, now: u64, needle: &str) {
    let said = text(&round(site, now).stdout);
    assert!(said.contains(needle), "{needle}: {said}");
}

/// `wsmonitor --once` on a site whose hosts.toml it must refuse: its error.
fn refused(site: &Path) -> String {
    let out = fixture::run(WSMONITOR, site, &["--once"]);
    assert!(!out.status.success());
    text(&out.stderr)
}

fn fake_record(site: &Path, host: &str, boot: &str, line: &str) -> PathBuf {
    let path = site.join("running").join(format!("{host}-999999-0"));
    RunningRecord {
        host: host.into(),
        boot_id: boot.into(),
        pid: 999_999,
        pid_start: 1,
        child: 0,
        child_start: 0,
        queue: "prime".into(),
        line: line.into(),
        since: 1,
        failed: None,
    }
    .write(&path, true)
    .unwrap();
    path
}

fn heartbeat(site: &Path, host: &str, boot: &str, at: u64) {
    nowdb::monitor::write_heartbeat(&Site::new(site), host, boot, at).unwrap();
}

fn mails(site: &Path) -> String {
    let mut all = String::new();
    if let Ok(entries) = std::fs::read_dir(site.join("mail/files")) {
        for e in entries {
            all += &std::fs::read_to_string(e.unwrap().path()).unwrap();
        }
    }
    all
}

/// Hosts w1 and w2 answering on two loopback ports (drop a listener and its host stops
/// answering; bind its port again and it is back), in `hosts.toml` with `more` after them.
fn two_hosts(site: &Path, more: &str) -> (TcpListener, TcpListener, u16, u16) {
    let w1 = TcpListener::bind("127.0.0.1:0").unwrap();
    let w2 = TcpListener::bind("127.0.0.1:0").unwrap();
    let (p1, p2) = (
        w1.local_addr().unwrap().port(),
        w2.local_addr().unwrap().port(),
    );
    std::fs::write(
        site.join("hosts.toml"),
        format!(
            "[[host]]\nname = \"w1\"\nssh = \"127.0.0.1:{p1}\"\nqueue = \"p\"\nplatform = \"x86_64-linux\"\nmemory_mb = 64\n\
             [[host]]\nname = \"w2\"\nssh = \"127.0.0.1:{p2}\"\nqueue = \"p\"\nplatform = \"x86_64-linux\"\nmemory_mb = 64\n{more}"
        ),
    )
    .unwrap();
    (w1, w2, p1, p2)
}

/// [`two_hosts`] with no more config in a scratch site named `name`, both hosts' runners
/// beating with `boot-A` at `t0` (returned) and a first round seen at `t0`.
fn two_hosts_beating(name: &str) -> (PathBuf, TcpListener, TcpListener, u64) {
    let site = fixture::scratch("monitor", name);
    let (w1, w2, _, _) = two_hosts(&site, "");
    let t0 = 1_800_000_000;
    heartbeat(&site, "w1", "boot-A", t0);
    heartbeat(&site, "w2", "boot-A", t0);
    round(&site, t0);
    (site, w1, w2, t0)
}

#[test]
fn crash_return_and_reboot_are_handled_and_mailed() {
    let site = fixture::scratch("monitor", "crash");
    let (w1, w2, _, p2) = two_hosts(
        &site,
        "[mail]\ntransport = \"file\"\ndir = \"mail/files\"\nfrom = \"nowdb@localhost\"\nto = [\"op@localhost\"]\n",
    );
    let t0 = 1_800_000_000;
    heartbeat(&site, "w1", "boot-A", t0);
    heartbeat(&site, "w2", "boot-A", t0);
    let job = fake_record(&site, "w2", "boot-A", "cap 1100.-- -max 01 -s 1 -n 00");
    let out = round(&site, t0);
    assert!(
        text(&out.stdout).starts_with("0 action(s)"),
        "{}",
        text(&out.stdout)
    );

    // w2 stops answering: retried, nothing requeued within the grace.
    drop(w2);
    let out = round(&site, t0 + 60);
    assert!(
        text(&out.stderr).contains("host w2 does not answer"),
        "{}",
        text(&out.stderr)
    );
    round(&site, t0 + 400);
    assert!(job.exists());

    // After the grace it has crashed: its job is back at the top, it is listed, mailed.
    round_saying(&site, t0 + 700, "host w2 crashed");
    assert!(!job.exists());
    assert_eq!(top_line(&site), "cap 1100.-- 0 992 -n 00");
    assert_eq!(nowdb::monitor::crashed_hosts(&site), vec!["w2".to_string()]);
    assert!(mails(&site).contains("host w2 crashed"), "{}", mails(&site));
    let quiet = round(&site, t0 + 760);
    assert!(text(&quiet.stdout).starts_with("0 action(s)"));

    // It answers again, with the same boot (its runners' heartbeat is fresh): it was only cut
    // off, so its old runners are stopped before new ones start; no longer crashed.
    heartbeat(&site, "w2", "boot-A", t0 + 790);
    let _w2 = TcpListener::bind(("127.0.0.1", p2)).unwrap();
    let out = round(&site, t0 + 800);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("host w2 is back") && stdout.contains("started runners on w2"),
        "{stdout}"
    );
    assert!(nowdb::monitor::crashed_hosts(&site).is_empty());
    let ssh = std::fs::read_to_string(site.join("ssh.log")).unwrap();
    assert!(
        ssh.contains(&format!("-p {p2} 127.0.0.1")) && ssh.contains("daemon --host 'w2'"),
        "{ssh}"
    );
    assert!(stdout.contains("stopped the old runners on w2"), "{stdout}");
    assert!(ssh.contains("pkill -TERM -f 'daemon --host w2$'"), "{ssh}");

    // w1 reboots between two rounds (its runners' heartbeat shows a new boot id): its jobs
    // of the old boot are requeued and its runners started.
    let job1 = fake_record(&site, "w1", "boot-A", "lookup 1100.-- -max 01 -s 1 -n 00");
    heartbeat(&site, "w1", "boot-B", t0 + 890);
    round_saying(&site, t0 + 900, "host w1 rebooted");
    assert!(!job1.exists());
    assert_eq!(top_line(&site), "lookup 1100.-- 0 992 -n 00");
    assert!(mails(&site).contains("host w1 rebooted"));
    let log = std::fs::read_to_string(site.join("logs/wsmonitor.log")).unwrap();
    for needle in [
        "does not answer",
        "crashed",
        "is back",
        "rebooted",
        "started runners",
    ] {
        assert!(log.contains(needle), "{needle}: {log}");
    }
    drop(w1);
    let _ = std::fs::remove_dir_all(&site);
}

#[test]
fn dbstart_starts_this_hosts_runners_without_ssh_and_names_unknown_hosts() {
    let site = fixture::scratch("monitor", "dbstart");
    let me = nix::unistd::gethostname()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    std::fs::write(
        site.join("hosts.toml"),
        format!("[[host]]\nname = \"{me}\"\nssh = \"localhost\"\nqueue = \"p\"\nplatform = \"x86_64-linux\"\nmemory_mb = 64\n"),
    )
    .unwrap();
    // The runner it starts takes this stop line and exits.
    std::fs::create_dir_all(site.join("queues")).unwrap();
    std::fs::write(site.join("queues/prime"), "stop\n").unwrap();
    let out = fixture::run(DBSTART, &site, &[me.as_str()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("here (pid"));
    let daemon_out = site.join(format!("logs/{me}.daemon.out"));
    let deadline = Instant::now() + Duration::from_secs(30);
    while !std::fs::read_to_string(&daemon_out)
        .unwrap_or_default()
        .contains("daemon ends")
    {
        assert!(Instant::now() < deadline, "the started runner did not run");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(record::read_all(&Site::new(&site)).unwrap().is_empty());

    let out = fixture::run(DBSTART, &site, &["nosuch"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("nosuch: not a [[host]] of hosts.toml"));
    let _ = std::fs::remove_dir_all(&site);
}

#[test]
fn a_bad_hosts_toml_is_a_clear_error() {
    let site = fixture::scratch("monitor", "bad");
    let err = refused(&site);
    assert!(err.contains("hosts.toml"), "{err}");
    std::fs::write(
        site.join("hosts.toml"),
        "[[host]]\nname = \"w1\"\nssh = \"w1\"\nqueue = \"p\"\nplatform = \"x\"\nmemory_mb = 64\nrunners = 0\n",
    )
    .unwrap();
    let err = refused(&site);
    assert!(err.contains("host \"w1\": runners"), "{err}");
    let _ = std::fs::remove_dir_all(&site);
}

/// A host whose sshd stops answering while its runners still write heartbeats through the
/// site is not crashed (its jobs would run twice); once the heartbeats stop, it is, even when
/// the last one came after it stopped answering (it came back between two rounds, its new
/// runners wrote one, and it went down again).
#[test]
fn a_silent_host_is_crashed_once_its_heartbeats_stop() {
    let (site, w1, w2, t0) = two_hosts_beating("beats");
    let job = fake_record(&site, "w2", "boot-B", "cap 1100.-- -max 01 -s 1 -n 00");
    drop(w2);
    round(&site, t0 + 60);
    heartbeat(&site, "w2", "boot-B", t0 + 690);
    let out = round(&site, t0 + 700);
    assert!(
        text(&out.stderr).contains("heartbeat is fresh: not crashed"),
        "{}",
        text(&out.stderr)
    );
    assert!(job.exists());
    round_saying(&site, t0 + 760, "host w2 crashed");
    assert!(!job.exists());
    assert_eq!(top_line(&site), "cap 1100.-- 0 992 -n 00");
    drop(w1);
    let _ = std::fs::remove_dir_all(&site);
}

/// ssh fails when the monitor restarts a returning host's runners: the failure is an action,
/// logged and mailed, and the monitor goes on with its round.
#[test]
fn an_ssh_failure_is_reported_and_the_round_goes_on() {
    let site = fixture::scratch("monitor", "sshfail");
    let (w1, w2, p1, _) = two_hosts(&site, "");
    let failing = site.join("failing-ssh");
    std::fs::write(
        &failing,
        "#!/bin/sh\necho 'ssh: connect to host: No route to host' >&2\nexit 255\n",
    )
    .unwrap();
    Command::new("chmod")
        .arg("+x")
        .arg(&failing)
        .status()
        .unwrap();
    let round = |now: u64| text(&round_with(&site, now, &failing).stdout);
    let t0 = 1_800_000_000;
    round(t0);
    drop(w1);
    round(t0 + 60);
    assert!(round(t0 + 700).contains("host w1 crashed"));
    let _w1 = TcpListener::bind(("127.0.0.1", p1)).unwrap();
    let out = round(t0 + 800);
    assert!(out.contains("could not start runners on w1"), "{out}");
    let log = std::fs::read_to_string(site.join("logs/wsmonitor.log")).unwrap();
    assert!(log.contains("No route to host"), "{log}");
    let alerts: String = std::fs::read_dir(site.join("mail/outbox"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    assert!(alerts.contains("could not start runners on w1"));
    // w2 was checked in every round all the same.
    assert_eq!(
        nowdb::monitor::read_state(&Site::new(&site), "w2").status,
        "up"
    );
    drop(w2);
    let _ = std::fs::remove_dir_all(&site);
}

/// A lock file as a host's process would leave it.
fn lock_of(path: &Path, host: &str, boot: &str, since: u64) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(
        path,
        format!("host {host}\npid 999999\nboot_id {boot}\nsince {since}\n"),
    )
    .unwrap();
}

/// A host that crashed holding the queue's lock (and a pair's, and a breaker's) blocks every
/// other host until someone breaks them, and only the monitor can tell that host is gone: it
/// breaks the locks that host took before it went silent, then settles its jobs (which needs
/// the queue's lock). A lock taken after it went silent (it is alive) and other hosts' locks
/// stay; a reboot breaks the locks of the old boot only.
#[test]
fn a_crashed_or_rebooted_hosts_locks_are_broken_before_its_jobs_are_requeued() {
    let (site, w1, w2, t0) = two_hosts_beating("locks");
    let job = fake_record(&site, "w1", "boot-A", "cap 1100.-- -max 01 -s 1 -n 00");
    let queue_lock = site.join("queues/prime.lock");
    let pair_lock = site.join("done/1100.--.lock");
    let dead_breaker = site.join("done/2100.--.break");
    let late_lock = site.join("done/2200.--.lock");
    let w2_lock = site.join("db/parts/1100.--.lock");
    lock_of(&queue_lock, "w1", "boot-A", t0 - 5);
    lock_of(&pair_lock, "w1", "boot-A", t0 - 5);
    lock_of(&dead_breaker, "w1", "boot-A", t0 - 5);
    lock_of(&late_lock, "w1", "boot-A", t0 + 300);
    lock_of(&w2_lock, "w2", "boot-A", t0 - 5);
    let done_record = site.join("done/1100.--.stage");
    std::fs::write(&done_record, "not a lock\n").unwrap();

    drop(w1);
    round(&site, t0 + 60);
    // Within the grace nothing is broken.
    round(&site, t0 + 400);
    assert!(queue_lock.exists() && pair_lock.exists() && job.exists());
    round_saying(&site, t0 + 700, "host w1 crashed");
    assert!(!job.exists());
    assert_eq!(top_line(&site), "cap 1100.-- 0 992 -n 00");
    for broken in [&queue_lock, &pair_lock, &dead_breaker] {
        assert!(!broken.exists(), "{}", broken.display());
    }
    for kept in [&late_lock, &w2_lock, &done_record] {
        assert!(kept.exists(), "{}", kept.display());
    }
    let log = std::fs::read_to_string(site.join("logs/wsmonitor.log")).unwrap();
    assert!(
        log.contains(&format!(
            "broke {} left by pid 999999 on w1 (boot boot-A",
            queue_lock.display()
        )),
        "{log}"
    );
    assert!(!log.contains("2200.--.lock"), "{log}");

    // w2 reboots: its lock of the old boot goes, one of the new boot stays.
    let new_boot_lock = site.join("queues/small.lock");
    lock_of(&new_boot_lock, "w2", "boot-B", t0 + 790);
    heartbeat(&site, "w2", "boot-B", t0 + 795);
    round_saying(&site, t0 + 800, "host w2 rebooted");
    assert!(!w2_lock.exists());
    assert!(new_boot_lock.exists());
    drop(w2);
    let _ = std::fs::remove_dir_all(&site);
}
