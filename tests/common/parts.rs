//! The parts of the machine some tests need beyond Rust (a real sshd, sshfs, network
//! namespaces, an SMTP server, root). A test asks for them first, so that on a machine
//! without them it fails at once with one line that names the part and how to install it,
//! before it has set anything up that a destructor would have to tear down.
//! `scripts/test` installs them all.

use std::path::Path;

/// What a test may need.
#[derive(Clone, Copy, Debug)]
pub enum Part {
    Root,
    Sshd,
    Sshfs,
    Netns,
    Aiosmtpd,
    /// Slurm's daemons and client commands, and munge.
    Slurm,
    /// gcc and g++ as `cc` and `c++`: engines' compilers, for the egdb library.
    Gcc,
    /// clang and clang++.
    Clang,
    /// The nowdb Python module (built by scripts/python-wheel) and pytest.
    PythonModule,
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    uid == 0
}

fn missing(part: Part) -> Option<(&'static str, &'static str)> {
    let there = match part {
        Part::Root => is_root(),
        Part::Sshd => Path::new("/usr/sbin/sshd").is_file() && on_path("ssh-keygen"),
        Part::Sshfs => on_path("sshfs") && on_path("fusermount3"),
        Part::Netns => on_path("ip") && on_path("nsenter"),
        Part::Aiosmtpd => std::process::Command::new("python3")
            .args(["-c", "import aiosmtpd"])
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success()),
        Part::Slurm => {
            ["sbatch", "squeue", "scontrol", "scancel", "sinfo"]
                .iter()
                .all(|p| on_path(p))
                && [
                    "/usr/sbin/slurmctld",
                    "/usr/sbin/slurmd",
                    "/usr/sbin/munged",
                ]
                .iter()
                .all(|p| Path::new(p).is_file())
        }
        Part::Gcc => on_path("cc") && on_path("c++"),
        Part::Clang => on_path("clang") && on_path("clang++"),
        Part::PythonModule => std::process::Command::new("python3")
            .args(["-c", "import nowdb, pytest"])
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success()),
    };
    if there {
        return None;
    }
    Some(match part {
        Part::Root => (
            "root (it mounts filesystems and makes network namespaces)",
            "run the tests as root, as CI does",
        ),
        Part::Sshd => (
            "an OpenSSH server (/usr/sbin/sshd, ssh-keygen)",
            "apt-get install openssh-server",
        ),
        Part::Sshfs => ("sshfs and fusermount3", "apt-get install sshfs"),
        Part::Netns => ("ip and nsenter", "apt-get install iproute2 util-linux"),
        Part::Aiosmtpd => (
            "the SMTP server aiosmtpd for python3",
            "python3 -m pip install aiosmtpd",
        ),
        Part::Slurm => (
            "Slurm (slurmctld, slurmd, sbatch, squeue, scontrol, scancel, sinfo) and munged",
            "apt-get install slurmctld slurmd slurm-client munge",
        ),
        Part::Gcc => ("a C and C++ compiler (cc, c++)", "apt-get install gcc g++"),
        Part::Clang => ("clang and clang++", "apt-get install clang"),
        Part::PythonModule => (
            "the nowdb Python module and pytest for python3",
            "scripts/python-wheel",
        ),
    })
}

/// Fails the test at once, in one line, when a part is missing.
pub fn require(parts: &[Part]) {
    let absent: Vec<String> = parts
        .iter()
        .filter_map(|p| missing(*p))
        .map(|(what, how)| format!("{what} (install: {how})"))
        .collect();
    if !absent.is_empty() {
        panic!(
            "this test needs {}; scripts/test installs everything the tests need",
            absent.join(", ")
        );
    }
}
