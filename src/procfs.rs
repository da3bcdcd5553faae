//! What this machine's kernel says about its processes (`/proc`), in one place: a process's
//! start time (its identity beside the pid), its activity (CPU time, I/O, state: a hung job
//! has none), the job processes of a site found by their command lines, peak memory.
//!
//! Read by hand, not through `sysinfo`, where sysinfo does not give what is needed (measured
//! in `cargo bench --bench procfs`, figures in docs/ARCHITECTURE.md's dependency table):
//! - start time: sysinfo gives whole seconds since the epoch; running records keep the exact
//!   clock ticks since boot, so a pid reused within the same second is never taken for the
//!   process it replaced, and records written before stay valid;
//! - I/O: sysinfo's disk usage is `read_bytes`/`write_bytes`, bytes that reached a block
//!   device; a job reading its work files from sshfs, NFS or the page cache moves only
//!   `rchar`/`wchar`, and must not look hung;
//! - peak RSS (`VmHWM`) is not in sysinfo.

/// When process `pid` started, in clock ticks since boot; `None` when there is no such
/// process or it has exited. An exited process may stay in the table as a zombie until its
/// parent reaps it, and orphans are reaped by init, which in a container is often a program
/// that never does: a killed runner must not look alive for ever (CI met a lock held so).
pub fn process_start(pid: u32) -> Option<u64> {
    let fields = stat_fields(pid)?;
    if matches!(fields.first().map(String::as_str), Some("Z" | "X")) {
        return None;
    }
    fields.get(19)?.parse().ok()
}

/// Whether no live process `pid` is on this machine (never was, or has exited).
pub fn process_is_gone(pid: u32) -> bool {
    process_start(pid).is_none()
}

/// The CPU time process `pid` has used, user and system, in clock ticks
/// (`sysconf(_SC_CLK_TCK)` a second); `None` when there is no such process.
pub fn cpu_ticks(pid: u32) -> Option<u64> {
    stat_cpu_ticks(&stat_fields(pid)?)
}

/// utime + stime (fields 14 and 15) of [`stat_fields`].
fn stat_cpu_ticks(fields: &[String]) -> Option<u64> {
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

/// The fields of `/proc/<pid>/stat` after the command name (field 3, the state, first).
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count from its end.
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    Some(rest.split_whitespace().map(String::from).collect())
}

/// Bytes the process has read and written (`/proc/<pid>/io` rchar + wchar): a job that
/// waits on a slow disk (its I/O class is idle) still moves these.
fn io_bytes(pid: u32) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/io")).unwrap_or_default();
    text.lines()
        .filter(|l| l.starts_with("rchar:") || l.starts_with("wchar:"))
        .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .sum()
}

/// What a process is doing: the measure that tells a working job from a hung one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Activity {
    /// CPU ticks (user + system) plus bytes of I/O: it moves while the process works.
    pub work: u64,
    /// The state letter (`R`, `S`, `D`, `T` stopped, `Z`).
    pub state: char,
}

/// The activity of process `pid`; `None` when there is no such process.
pub fn activity(pid: u32) -> Option<Activity> {
    let fields = stat_fields(pid)?;
    let state = fields.first()?.chars().next()?;
    let ticks = stat_cpu_ticks(&fields)?;
    Some(Activity {
        work: ticks.wrapping_add(io_bytes(pid)),
        state,
    })
}

/// Whether a process of this machine has every one of `args` among its arguments.
pub fn process_with_args(args: &[&[u8]]) -> bool {
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return false;
    };
    procs.flatten().any(|p| {
        let Ok(cmd) = std::fs::read(p.path().join("cmdline")) else {
            return false;
        };
        let have: Vec<&[u8]> = cmd.split(|&b| b == 0).collect();
        args.iter().all(|a| have.contains(a))
    })
}

/// Peak resident memory of this process so far, in bytes (`VmHWM`), if the kernel tells.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// A field of a `/proc/meminfo` text, in KiB (`MemTotal:`, `MemAvailable:`).
pub fn meminfo_field(text: &str, key: &str) -> Option<u64> {
    text.lines()
        .find(|l| l.starts_with(key))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// This machine's memory in MB (0 when /proc/meminfo cannot be read).
pub fn total_memory_mb() -> u64 {
    let text = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    meminfo_field(&text, "MemTotal:").unwrap_or(0) >> 10
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_seen_as_it_is() {
        let me = std::process::id();
        assert!(process_start(me).is_some_and(|t| t > 0));
        let a = activity(me).unwrap();
        assert!("RS".contains(a.state), "{}", a.state);
        // Work moves with CPU time.
        let mut x = 0u64;
        for i in 0..50_000_000u64 {
            x = std::hint::black_box(x.wrapping_add(i * i));
        }
        assert!(x > 0);
        assert!(activity(me).unwrap().work > a.work);
        assert!(peak_rss_bytes().is_some_and(|b| b > 0));
        let exe = std::fs::read(format!("/proc/{me}/cmdline")).unwrap();
        let first = exe.split(|&b| b == 0).next().unwrap().to_vec();
        assert!(process_with_args(&[&first]));
        assert!(!process_with_args(&[
            &first,
            b"--no-such-argument-anywhere"
        ]));
        assert_eq!(process_start(u32::MAX), None);
        assert!(process_is_gone(u32::MAX));
        assert!(!process_is_gone(me));
    }

    #[test]
    fn a_killed_process_not_yet_reaped_is_gone() {
        let mut child = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .unwrap();
        let pid = child.id();
        assert!(process_start(pid).is_some());
        child.kill().unwrap();
        // Not waited for: a zombie until then, whose pid still answers signal 0.
        let zombie =
            |pid: u32| stat_fields(pid).is_some_and(|f| f.first().is_some_and(|s| s == "Z"));
        let t = std::time::Instant::now();
        while !zombie(pid) {
            assert!(t.elapsed().as_secs() < 10, "no zombie");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), None).is_ok());
        assert_eq!(process_start(pid), None);
        assert!(process_is_gone(pid));
        child.wait().unwrap();
    }
}
