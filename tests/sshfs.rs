//! Queues on a real network filesystem: one directory served by a real sshd and mounted
//! twice with sshfs (two "machines"). `flock` does not exclude across the mounts; the lock
//! files do, and concurrent `addq` and takers on both mounts lose and duplicate nothing.
//! Needs root, `sshd` and `sshfs` (`.ci/run` installs them).

use nowdb::queue::{LockFile, Machine};
use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

use common::fixture::{self, ADDQ, JOBRUNNER};

/// An sshd on a free loopback port and two sshfs mounts of one directory; torn down on drop.
struct TwoMounts {
    root: PathBuf,
    shared: PathBuf,
    mounts: [PathBuf; 2],
}

fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| {
        panic!("{cmd:?}: {e} (install openssh-server and sshfs; .ci/run does)")
    });
    assert!(out.status.success(), "{cmd:?}: {}", fixture::stderr(&out));
}

impl TwoMounts {
    fn new(name: &str) -> TwoMounts {
        use common::parts::{Part, require};
        require(&[Part::Root, Part::Sshd, Part::Sshfs]);
        // Earlier runs' roots are removed (unmounted first) once their process is gone.
        let root = fixture::scratch_path("sshfs", name);
        let shared = root.join("shared");
        let mounts = [root.join("a"), root.join("b")];
        for d in [&shared, &mounts[0], &mounts[1]] {
            std::fs::create_dir_all(d).unwrap();
        }
        for key in ["hostkey", "userkey"] {
            run(Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                .arg(root.join(key)));
        }
        std::fs::copy(root.join("userkey.pub"), root.join("authorized_keys")).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let r = root.display();
        std::fs::write(
            root.join("sshd_config"),
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {r}/hostkey\n\
                 AuthorizedKeysFile {r}/authorized_keys\nPermitRootLogin prohibit-password\n\
                 PasswordAuthentication no\nStrictModes no\nSubsystem sftp internal-sftp\n\
                 PidFile {r}/sshd.pid\n"
            ),
        )
        .unwrap();
        std::fs::create_dir_all("/run/sshd").unwrap();
        run(Command::new("/usr/sbin/sshd")
            .arg("-f")
            .arg(root.join("sshd_config"))
            .arg("-E")
            .arg(root.join("sshd.log")));
        let opts = common::sshfs::mount_options(&root);
        for m in &mounts {
            common::sshfs::mount(|| {
                let mut c = Command::new("sshfs");
                c.args(["-p", &port.to_string(), "-o", &opts])
                    .arg(format!("root@127.0.0.1:{}", shared.display()))
                    .arg(m);
                c
            });
        }
        TwoMounts {
            root,
            shared,
            mounts,
        }
    }
}

impl Drop for TwoMounts {
    fn drop(&mut self) {
        for m in &self.mounts {
            let _ = Command::new("fusermount3").arg("-uz").arg(m).status();
        }
        if let Ok(pid) = std::fs::read_to_string(self.root.join("sshd.pid")) {
            let _ = Command::new("kill").arg(pid.trim()).status();
        }
    }
}

fn flock_nonblocking(path: &Path) -> bool {
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .unwrap();
    match nix::fcntl::Flock::lock(f, nix::fcntl::FlockArg::LockExclusiveNonblock) {
        Ok(held) => {
            // Keep it held for the rest of the test.
            std::mem::forget(held);
            true
        }
        Err(_) => false,
    }
}

#[test]
fn flock_does_not_exclude_across_sshfs_mounts_but_the_lock_file_does() {
    let t = TwoMounts::new("excl");
    let [a, b] = &t.mounts;
    std::fs::write(a.join("probe"), "x").unwrap();
    assert_eq!(
        std::fs::read_to_string(b.join("probe")).unwrap(),
        "x",
        "one directory"
    );
    assert!(flock_nonblocking(&a.join("f")));
    assert!(
        flock_nonblocking(&b.join("f")),
        "flock excluded across mounts here; the lock file design assumes it does not"
    );
    let here = Machine::current().unwrap();
    let held = LockFile::try_acquire(&a.join("q.lock"), &here).unwrap();
    assert!(held.is_some());
    assert!(
        LockFile::try_acquire(&b.join("q.lock"), &here)
            .unwrap()
            .is_none()
    );
    held.unwrap().release().unwrap();
    let again = LockFile::try_acquire(&b.join("q.lock"), &here).unwrap();
    assert!(again.is_some() && t.shared.join("q.lock").exists());
    again.unwrap().release().unwrap();
    assert!(!t.shared.join("q.lock").exists());
}

/// The queue stress of tests/queue.rs across the two mounts: 8 streams of `addq` processes
/// (4 per mount) add 500 jobs each while 4 runner daemons (2 per mount, as hosts h0 and h1)
/// drain the queue.
#[test]
fn queue_stress_across_two_sshfs_mounts() {
    let t = TwoMounts::new("stress");
    common::queue_stress::addq_streams_against_runners(ADDQ, JOBRUNNER, &t.mounts, &t.mounts, 500);
    let left = std::fs::read_to_string(t.shared.join("queues/prime")).unwrap();
    assert!(left.trim().is_empty(), "left in the queue: {left:?}");
    assert!(!t.shared.join("queues/prime.lock").exists());
}
