//! Cross-machine lock files: exclusion, and breaking a stale lock only when its owner is
//! provably gone (same host with a dead pid or a new boot id), never another host's.

mod common;

use common::fixture;
use nowdb::queue::lock::{LockEvent, LockFile, LockOwner, Machine};
use std::path::PathBuf;
use std::time::Duration;

fn here() -> Machine {
    Machine {
        host: "ws1".into(),
        boot_id: "boot-a".into(),
    }
}

fn write_owner(path: &PathBuf, host: &str, pid: u32, boot: &str) {
    let text = format!("host {host}\npid {pid}\nboot_id {boot}\nsince 1700000000\n");
    std::fs::write(path, text).unwrap();
}

/// A pid that is certainly not running: a child that has exited and been reaped.
fn dead_pid() -> u32 {
    let mut c = std::process::Command::new("true").spawn().unwrap();
    let pid = c.id();
    c.wait().unwrap();
    pid
}

#[test]
fn the_lock_excludes_and_no_update_is_lost() {
    let d = fixture::scratch("lock", "excl");
    let lock = d.join("prime.lock");
    let counter = d.join("counter");
    std::fs::write(&counter, "0").unwrap();
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                for _ in 0..50 {
                    let mut ev = Vec::new();
                    let l = LockFile::acquire(&lock, &here(), Duration::from_secs(30), &mut ev)
                        .unwrap();
                    let n: u64 = std::fs::read_to_string(&counter).unwrap().parse().unwrap();
                    std::thread::yield_now();
                    std::fs::write(&counter, (n + 1).to_string()).unwrap();
                    l.release().unwrap();
                    assert!(ev.is_empty(), "no lock was stale");
                }
            });
        }
    });
    assert_eq!(std::fs::read_to_string(&counter).unwrap(), "400");
    assert!(!lock.exists());
}

#[test]
fn the_owner_is_recorded_and_a_live_owner_is_never_broken() {
    let d = fixture::scratch("lock", "live");
    let lock = d.join("q.lock");
    let held = LockFile::try_acquire(&lock, &here()).unwrap().unwrap();
    let owner = LockOwner::parse(&std::fs::read_to_string(&lock).unwrap()).unwrap();
    assert_eq!(owner.host, "ws1");
    assert_eq!(owner.pid, std::process::id());
    assert_eq!(owner.boot_id, "boot-a");
    assert!(LockFile::try_acquire(&lock, &here()).unwrap().is_none());
    let err =
        LockFile::acquire(&lock, &here(), Duration::from_millis(100), &mut Vec::new()).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("q.lock") && msg.contains("still held by pid"),
        "{msg}"
    );
    drop(held);
    assert!(!lock.exists(), "dropping the lock removes the file");
}

#[test]
fn a_dead_pid_or_a_reboot_on_this_host_breaks_the_lock_and_says_so() {
    let d = fixture::scratch("lock", "stale");
    let lock = d.join("q.lock");
    for (pid, boot) in [(dead_pid(), "boot-a"), (std::process::id(), "boot-old")] {
        write_owner(&lock, "ws1", pid, boot);
        let mut ev = Vec::new();
        let l = LockFile::acquire(&lock, &here(), Duration::from_secs(5), &mut ev).unwrap();
        assert_eq!(ev.len(), 1, "pid {pid} boot {boot}");
        let LockEvent::BrokeStale { owner, .. } = &ev[0];
        assert_eq!((owner.pid, owner.boot_id.as_str()), (pid, boot));
        l.release().unwrap();
    }
}

/// CI met this: a killed runner whose parent died too stays a zombie when the machine's
/// init does not reap orphans (containers), and its pid answers signal 0 for ever. Its lock,
/// and the lock of a pid since reused by another process, are broken.
#[test]
fn a_zombie_owner_or_a_reused_pid_breaks_the_lock() {
    let d = fixture::scratch("lock", "zombie");
    let lock = d.join("q.lock");
    let mut child = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .unwrap();
    let zombie = child.id();
    child.kill().unwrap();
    let stat = || std::fs::read_to_string(format!("/proc/{zombie}/stat")).unwrap_or_default();
    while !stat().contains(") Z ") {
        std::thread::sleep(Duration::from_millis(5));
    }
    write_owner(&lock, "ws1", zombie, "boot-a");
    let mut ev = Vec::new();
    let l = LockFile::acquire(&lock, &here(), Duration::from_secs(5), &mut ev).unwrap();
    assert_eq!(ev.len(), 1, "the zombie's lock is broken: {ev:?}");
    l.release().unwrap();
    child.wait().unwrap();

    // This live process, but started at another time than the owner recorded.
    let me = std::process::id();
    let text = format!(
        "host = \"ws1\"\npid = {me}\npid_start = 1\nboot_id = \"boot-a\"\nsince = 1700000000\n"
    );
    std::fs::write(&lock, &text).unwrap();
    assert_eq!(LockOwner::parse(&text).unwrap().pid_start, 1);
    let mut ev = Vec::new();
    let l = LockFile::acquire(&lock, &here(), Duration::from_secs(5), &mut ev).unwrap();
    assert_eq!(ev.len(), 1, "the reused pid's lock is broken: {ev:?}");
    // The lock just taken records this process's real start, so it stands.
    let owner = LockOwner::parse(&std::fs::read_to_string(&lock).unwrap()).unwrap();
    assert!(owner.pid_start > 1);
    assert!(!owner.is_gone(&here()));
    l.release().unwrap();
}

#[test]
fn another_hosts_lock_and_a_torn_lock_file_are_left_alone() {
    let d = fixture::scratch("lock", "other");
    let lock = d.join("q.lock");
    write_owner(&lock, "ws2", dead_pid(), "boot-z");
    let r = LockFile::acquire(&lock, &here(), Duration::from_millis(100), &mut Vec::new());
    assert!(r.unwrap_err().to_string().contains("on ws2"));
    assert!(lock.exists());
    std::fs::write(&lock, "host ws1\npid").unwrap();
    let r = LockFile::acquire(&lock, &here(), Duration::from_millis(100), &mut Vec::new());
    assert!(r.unwrap_err().to_string().contains("unreadable owner"));
    assert!(lock.exists());
    // Still torn (or empty) long after its creation: its owner died between creating and
    // writing it, and the lock is broken, saying so.
    std::fs::write(&lock, "").unwrap();
    let old = std::time::SystemTime::now() - nowdb::queue::lock::UNWRITTEN_STALE * 2;
    std::fs::File::options()
        .write(true)
        .open(&lock)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let mut events = Vec::new();
    let l = LockFile::acquire(&lock, &here(), Duration::from_millis(100), &mut events).unwrap();
    assert_eq!(events.len(), 1, "{events:?}");
    l.release().unwrap();
}

#[test]
fn this_machine_has_a_name_and_a_boot_id() {
    let m = Machine::current().unwrap();
    assert!(!m.host.is_empty());
    assert_eq!(m.boot_id.len(), 36, "{:?}", m.boot_id);
}
