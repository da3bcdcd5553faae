//! The pool for real (issue 6): three hosts as network namespaces, each with its own sshd
//! and its own sshfs mount of the site served by a file server's sshd. Runners on two hosts
//! (started by `dbstart` over ssh) build a node of 5 pieces and what it needs through the
//! queues (`common::pool::NODE`): the pairs under 2 M positions as one `pair` job each, the
//! larger ones as phase jobs of 8 pages;
//! `wsmonitor` runs on the third host with a real SMTP server (aiosmtpd) on its loopback.
//!
//! - Every process of host 1 is killed mid-job (a crash; its sshfs dies with it): wsmonitor
//!   declares it crashed after the grace and requeues its job; when the host is back (new
//!   boot id) wsmonitor starts its runner again.
//! - Host 2 "reboots" (all killed, back at once with a new boot id): wsmonitor sees the new
//!   boot id over ssh, requeues its job and restarts its runner; the job resumes from its
//!   checkpoint.
//! - The database ends byte-identical to the in-process build, and the SMTP server received
//!   the alerts.
//!
//! Needs root, iproute2, sshd, sshfs and aiosmtpd (`.ci/run` installs them).

mod common;

use common::fixture::{self, DBSTART, DBSTATUS, WSMONITOR};
use common::pool::{self, diagnostics, still_running, wait_for_long_job};
use common::site::assert_same_build;
use nowdb::queue::{done, held};
use nowdb::solve::Site;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn run(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{cmd:?}: {e} (.ci/run installs what this test needs)"));
    assert!(out.status.success(), "{cmd:?}: {}", fixture::stderr(&out));
    fixture::text(&out.stdout)
}

/// A bridge with a file server (this namespace) and `n` hosts (network namespaces).
struct Cluster {
    root: PathBuf,
    site: PathBuf,
    tag: String,
    net: String,
    sshd_pids: Vec<PathBuf>,
    background: Vec<Child>,
    /// Each host's boots so far: its current boot id is `boot-<host>-<boots>`.
    boots: Vec<usize>,
}

impl Cluster {
    fn ns(&self, i: usize) -> String {
        format!("{}h{i}", self.tag)
    }

    fn ip(&self, i: usize) -> String {
        format!("{}.{}", self.net, 10 + i)
    }

    fn mount(&self, i: usize) -> PathBuf {
        self.root.join(format!("mnt/h{i}"))
    }

    fn ssh_command(&self) -> String {
        format!(
            "ssh -i {} -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o ConnectTimeout=3 -o LogLevel=ERROR",
            self.root.join("userkey").display()
        )
    }

    /// `cmd` inside host `i`'s network namespace (but this mount namespace).
    fn on(&self, i: usize, program: &str) -> Command {
        let mut c = Command::new("nsenter");
        c.arg(format!("--net=/var/run/netns/{}", self.ns(i)))
            .arg(program);
        c
    }

    fn new(hosts: usize) -> Cluster {
        use common::parts::{Part, require};
        require(&[
            Part::Root,
            Part::Sshd,
            Part::Sshfs,
            Part::Netns,
            Part::Aiosmtpd,
        ]);
        let id = std::process::id() % 200 + 20;
        let tag = format!("nw{id}");
        // Earlier runs' roots are removed (unmounted first) once their process is gone.
        let root = fixture::scratch_path("cluster", "hosts");
        let site = root.join("site");
        std::fs::create_dir_all(&site).unwrap();
        let mut c = Cluster {
            root: root.clone(),
            site,
            tag: tag.clone(),
            net: format!("10.79.{id}"),
            sshd_pids: Vec::new(),
            background: Vec::new(),
            boots: vec![0; hosts + 1],
        };
        for key in ["hostkey", "userkey"] {
            run(Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                .arg(root.join(key)));
        }
        std::fs::copy(root.join("userkey.pub"), root.join("authorized_keys")).unwrap();
        std::fs::create_dir_all("/run/sshd").unwrap();
        let br = format!("{tag}br");
        run(Command::new("ip").args(["link", "add", &br, "type", "bridge"]));
        run(Command::new("ip").args(["addr", "add", &format!("{}.1/24", c.net), "dev", &br]));
        run(Command::new("ip").args(["link", "set", &br, "up"]));
        // The file server: an sshd in this namespace serving the site over sftp.
        c.sshd("fs", &format!("{}.1", c.net), 2222, "", None);
        for i in 1..=hosts {
            let ns = c.ns(i);
            let veth = format!("{tag}v{i}");
            run(Command::new("ip").args(["netns", "add", &ns]));
            run(Command::new("ip").args([
                "link", "add", &veth, "type", "veth", "peer", "name", "eth0", "netns", &ns,
            ]));
            run(Command::new("ip").args(["link", "set", &veth, "master", &br, "up"]));
            run(Command::new("ip").args([
                "-n",
                &ns,
                "addr",
                "add",
                &format!("{}/24", c.ip(i)),
                "dev",
                "eth0",
            ]));
            run(Command::new("ip").args(["-n", &ns, "link", "set", "eth0", "up"]));
            run(Command::new("ip").args(["-n", &ns, "link", "set", "lo", "up"]));
            c.boot(i);
        }
        c
    }

    /// An sshd with its own config and log. Sessions whose client vanished without closing
    /// the connection (a crashed host, a deleted namespace) end within 15 s
    /// (`ClientAlive*`) instead of outliving the test for hours.
    fn sshd(&mut self, name: &str, addr: &str, port: u16, env: &str, ns: Option<usize>) {
        let r = self.root.display();
        let cfg = self.root.join(format!("sshd-{name}.conf"));
        let pid = self.root.join(format!("sshd-{name}.pid"));
        std::fs::write(
            &cfg,
            format!(
                "Port {port}\nListenAddress {addr}\nHostKey {r}/hostkey\n\
                 AuthorizedKeysFile {r}/authorized_keys\nPermitRootLogin prohibit-password\n\
                 PasswordAuthentication no\nStrictModes no\nSubsystem sftp internal-sftp\n\
                 ClientAliveInterval 5\nClientAliveCountMax 3\nPidFile {}\n{env}",
                pid.display()
            ),
        )
        .unwrap();
        let mut cmd = match ns {
            Some(i) => self.on(i, "/usr/sbin/sshd"),
            None => Command::new("/usr/sbin/sshd"),
        };
        run(cmd
            .arg("-f")
            .arg(&cfg)
            .arg("-E")
            .arg(self.root.join(format!("sshd-{name}.log"))));
        self.sshd_pids.push(pid);
    }

    /// Host `i` (re)starts: its sshd with a new boot id (as a real reboot has: CI met a test
    /// that rebooted with the same id, and a lock of the killed boot's runner was then
    /// nobody's to break), and its sshfs mount of the site.
    ///
    /// Each host has a home directory of its own, as real machines do. Sharing this
    /// machine's made a crash (kill -9 of everything on the host) able to kill a login
    /// script holding a lock in that home (pyenv's rehash lock), and every later ssh command
    /// of every host then waited a minute for it.
    fn boot(&mut self, i: usize) {
        self.boots[i] += 1;
        let boot_id = self.boot_id(i);
        let addr = self.ip(i);
        let home = self.root.join(format!("home-h{i}"));
        std::fs::create_dir_all(&home).unwrap();
        self.sshd(
            &format!("h{i}-{boot_id}"),
            &addr,
            22,
            &format!("SetEnv NOWDB_BOOT_ID={boot_id} HOME={}\n", home.display()),
            Some(i),
        );
        let m = self.mount(i);
        let _ = Command::new("fusermount3")
            .arg("-uz")
            .arg(&m)
            .stderr(Stdio::null())
            .status();
        std::fs::create_dir_all(&m).unwrap();
        let opts = common::sshfs::mount_options(&self.root);
        common::sshfs::mount(|| {
            let mut c = self.on(i, "sshfs");
            c.args(["-p", "2222", "-o", &opts])
                .arg(format!("root@{}.1:{}", self.net, self.site.display()))
                .arg(&m);
            c
        });
    }

    /// Host `i`'s current boot id.
    fn boot_id(&self, i: usize) -> String {
        format!("boot-{i}-{}", self.boots[i])
    }

    /// Every process of host `i` dies at once (its sshd, runner, job and sshfs).
    fn crash(&self, i: usize) {
        // Not `run`: this also runs in Drop, where a panic would abort the test binary.
        let pids = Command::new("ip")
            .args(["netns", "pids", &self.ns(i)])
            .stderr(Stdio::null())
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        for pid in pids.split_whitespace() {
            let _ = Command::new("kill")
                .args(["-9", pid])
                .stderr(Stdio::null())
                .status();
        }
        // Quiet: the mount is often gone already (its sshfs was killed with the host).
        let _ = Command::new("fusermount3")
            .arg("-uz")
            .arg(self.mount(i))
            .stderr(Stdio::null())
            .status();
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for c in &mut self.background {
            let _ = c.kill();
            let _ = c.wait();
        }
        for i in 1..=3 {
            self.crash(i);
            let _ = Command::new("ip")
                .args(["netns", "del", &self.ns(i)])
                .status();
        }
        for p in &self.sshd_pids {
            if let Ok(pid) = std::fs::read_to_string(p) {
                let _ = Command::new("kill")
                    .arg(pid.trim())
                    .stderr(Stdio::null())
                    .status();
            }
        }
        let _ = Command::new("ip")
            .args(["link", "del", &format!("{}br", self.tag)])
            .status();
    }
}

fn maildir_text(dir: &Path) -> String {
    let mut all = String::new();
    for sub in ["new", "cur"] {
        for e in std::fs::read_dir(dir.join(sub)).into_iter().flatten() {
            all += &std::fs::read_to_string(e.unwrap().path()).unwrap_or_default();
        }
    }
    all
}

#[test]
fn two_hosts_build_through_a_crash_and_a_reboot_byte_identical() {
    let mut c = Cluster::new(3);
    let site = c.site.clone();
    let host = |i: usize, extra: &str| {
        format!(
            "[[host]]\nname = \"h{i}\"\nssh = \"root@{}\"\nqueue = \"pm\"\nplatform = \"x86_64-linux\"\n\
             memory_mb = 256\nrunners = 1\nsite = \"{}\"\n{extra}",
            c.ip(i),
            c.mount(i).display()
        )
    };
    std::fs::write(
        site.join("hosts.toml"),
        host(1, "checkpoint_secs = 0\n")
            + &host(2, "checkpoint_secs = 0\n")
            + &host(3, "")
            + "[mail]\ntransport = \"smtp\"\nsecurity = \"none\"\nserver = \"127.0.0.1\"\nport = 2525\n\
               from = \"nowdb@localhost\"\nto = [\"operator@localhost\"]\n\n\
               [jobs]\nmax_attempts = 5\nretry_backoff_secs = 1\n",
    )
    .unwrap();
    // The node and what it needs through the queues, in phase jobs.
    pool::queue_plan_of_phase_jobs(&site);

    // Host 3: a real SMTP server on its loopback and the monitor.
    let maildir = c.root.join("maildir");
    let smtp = c
        .on(3, "python3")
        .args([
            "-m",
            "aiosmtpd",
            "-n",
            "-l",
            "127.0.0.1:2525",
            "-c",
            "aiosmtpd.handlers.Mailbox",
        ])
        .arg(&maildir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    c.background.push(smtp);
    let monitor = c
        .on(3, WSMONITOR)
        .arg("--site")
        .arg(c.mount(3))
        .args([
            "--interval",
            "1",
            "--grace",
            "4",
            "--timeout",
            "1",
            "--ssh",
            &c.ssh_command(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    c.background.push(monitor);

    // Runners on hosts 1 and 2, started over ssh.
    fixture::ok(DBSTART, &site, &["h1", "h2", "--ssh", &c.ssh_command()]);

    let deadline = Instant::now() + Duration::from_secs(1800);
    // Host 2 reboots mid-job: down and up again at once, with a new boot id (and again with
    // the next long job if the one seen had just ended when the host went down).
    let rebooted = loop {
        let boot = c.boot_id(2);
        let (record, rec) =
            wait_for_long_job(&site, deadline, |r| r.host == "h2" && r.boot_id == boot);
        c.crash(2);
        // Read before the host is back: wsmonitor requeues the record as soon as it is.
        let mid_job = still_running(&site, &record, &rec);
        c.boot(2);
        if mid_job {
            break rec;
        }
    };

    // Host 1 crashes mid-job and comes back later with a new boot id.
    // Killed mid-job: the host's record must still be there (unless the job had just ended,
    // then try again with the next one).
    let (killed, record) = loop {
        let boot = c.boot_id(1);
        let (record, killed) =
            wait_for_long_job(&site, deadline, |r| r.host == "h1" && r.boot_id == boot);
        c.crash(1);
        if still_running(&site, &record, &killed) {
            break (killed, record);
        }
        c.boot(1);
        fixture::ok(DBSTART, &site, &["h1", "--ssh", &c.ssh_command()]);
    };
    let monitor_log = site.join("logs/wsmonitor.log");
    let requeued = |log: &str| {
        log.lines()
            .any(|l| l.contains("host h1 crashed") && l.contains(&killed.line))
    };
    while !requeued(&std::fs::read_to_string(&monitor_log).unwrap_or_default()) {
        assert!(
            Instant::now() < deadline,
            "wsmonitor did not declare h1 crashed\n{}",
            diagnostics(&site)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // Its record is gone: the job went back to the top of its queue, and host 2 runs it
    // while host 1 is down.
    assert!(!record.exists());
    let s = Site::new(&site);
    let (_, killed_job) = killed.job().unwrap();
    while !done::record_path(&s, &killed_job).exists() {
        assert!(
            Instant::now() < deadline,
            "h1's job was not retried\n{}",
            diagnostics(&site)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    c.boot(1);

    // The build finishes: queues empty, nothing running, every slice verified.
    while !pool::build_finished(&site) {
        assert!(
            Instant::now() < deadline,
            "the build did not finish\n{}",
            diagnostics(&site)
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    let log = std::fs::read_to_string(&monitor_log).unwrap();
    for needle in [
        "host h1 crashed",
        "host h1 is back",
        "started runners on h1",
        "host h2 rebooted",
        "started runners on h2",
    ] {
        assert!(log.contains(needle), "{needle}:\n{log}");
    }

    // The job of the rebooted host went on from its checkpoint (whoever ran it next).
    let (_, job) = rebooted.job().unwrap();
    let logs: String = ["h1", "h2"]
        .iter()
        .map(|h| std::fs::read_to_string(site.join(format!("logs/{h}.log"))).unwrap_or_default())
        .collect();
    assert!(
        pool::resumed_in(&logs, &job),
        "{job} was not resumed from its checkpoint\n{}",
        diagnostics(&site)
    );

    // The crashed host's job used an attempt that names the crash, and ran again on h2; the
    // rebooted host's job's attempt names the reboot.
    let attempts = held::read_attempts(&s, &killed_job).unwrap();
    assert!(
        attempts
            .iter()
            .any(|a| a.host == "h1" && a.status.starts_with("host h1 crashed")),
        "{attempts:?}"
    );
    let ran = done::records(&s, &killed_job.slice).unwrap();
    let ran = ran
        .iter()
        .find(|r| {
            (r.phase, r.round, r.first, r.last)
                == (
                    killed_job.phase,
                    killed_job.round,
                    killed_job.first,
                    killed_job.last,
                )
        })
        .unwrap();
    assert_eq!(ran.host, "h2");
    let rebooted_attempts = held::read_attempts(&s, &job).unwrap();
    assert!(
        rebooted_attempts
            .iter()
            .any(|a| a.host == "h2" && a.status == "host h2 rebooted while it ran"),
        "{rebooted_attempts:?}"
    );
    let summary = fixture::run(DBSTATUS, &site, &["--json", "summary"]);
    let summary: serde_json::Value = serde_json::from_slice(&summary.stdout).unwrap();
    // Two jobs retried, or one if host 1 happened to crash in the job host 2's reboot had
    // sent back to the queue (then it holds both attempts).
    let retried_jobs = if job == killed_job { 1 } else { 2 };
    assert!(
        summary["retried"].as_u64().unwrap() >= retried_jobs,
        "{summary}"
    );
    assert_eq!(summary["held"], 0);

    // Byte-identical to the in-process build.
    let reference = c.root.join("reference");
    pool::build_in_process(&reference);
    assert_same_build(&reference, &site, "cluster build");
    // The operator was told, through the real SMTP server.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let mail = maildir_text(&maildir);
        if mail.contains("host h1 crashed") && mail.contains("host h2 rebooted") {
            break;
        }
        assert!(Instant::now() < deadline, "mail not received:\n{mail}");
        std::thread::sleep(Duration::from_millis(500));
    }
    drop(c);
}
