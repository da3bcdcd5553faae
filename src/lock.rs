//! Lock files that exclude across machines on NFS and sshfs (DESIGN.md section 7).
//!
//! `flock` does not exclude across hosts there, and the classic `link()` + link-count test
//! does not work on sshfs (the count reads 1). What does work on both is creating the lock
//! file with `O_CREAT|O_EXCL`. The file names its owner (host, pid, boot id, time), so a lock
//! left by a dead owner can be broken, but only when the owner is provably gone: the same
//! boot id and a dead pid (whatever host name the owner used), or the same host and a
//! different boot id. A lock of another host is broken only by the monitor, once it has
//! declared that host crashed or rebooted ([`break_host_locks`]), and every break is
//! reported to the caller to log.

use crate::files::{FileOp, failed};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Who and where we are: the identity written into lock files. The boot id is injectable
/// because test "hosts" in network namespaces share one kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Machine {
    pub host: String,
    pub boot_id: String,
}

impl Machine {
    /// This machine: its hostname (`NOWDB_HOST` overrides it) and the kernel's boot id (`NOWDB_BOOT_ID` overrides it:
    /// test hosts in network namespaces share one kernel, and a "reboot" there is a new id).
    pub fn current() -> io::Result<Machine> {
        // `NOWDB_HOST`: a Slurm pilot's name, which its job processes take too, so that
        // the pilot's recovery by the others breaks every lock the node left.
        let host = match std::env::var("NOWDB_HOST") {
            Ok(h) if !h.is_empty() => h,
            _ => nix::unistd::gethostname()
                .map_err(io::Error::from)?
                .to_string_lossy()
                .into_owned(),
        };
        let boot_id = match std::env::var("NOWDB_BOOT_ID") {
            Ok(id) if !id.is_empty() => id,
            _ => std::fs::read_to_string("/proc/sys/kernel/random/boot_id")?
                .trim()
                .to_string(),
        };
        Ok(Machine { host, boot_id })
    }
}

/// The owner recorded in a lock file.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LockOwner {
    #[serde(deserialize_with = "crate::state::text")]
    pub host: String,
    pub pid: u32,
    /// When `pid` started (clock ticks since boot, as in running records): a pid reused
    /// by another process since has another start. 0 in lock files written before.
    #[serde(default)]
    pub pid_start: u64,
    #[serde(deserialize_with = "crate::state::text")]
    pub boot_id: String,
    /// Seconds since the epoch when the lock was taken.
    pub since: u64,
}

impl LockOwner {
    fn to_text(&self) -> String {
        crate::state::to_text(self)
    }

    /// Parses a lock file; `None` for a file that is empty or torn (its writer may still be
    /// writing it, so that is never a reason to break it).
    pub fn parse(text: &str) -> Option<LockOwner> {
        crate::state::parse(text, &[]).ok()
    }

    /// The owner named in the lock file at `path`; `None` when there is none or it is torn.
    fn read(path: &Path) -> Option<LockOwner> {
        std::fs::read_to_string(path)
            .ok()
            .and_then(|t| LockOwner::parse(&t))
    }

    /// Whether this owner is provably gone, seen from `here`: this boot of this machine and
    /// a pid that no longer runs (exited, or reused by a process with another start), or
    /// this host under an earlier boot (it rebooted).
    pub fn is_gone(&self, here: &Machine) -> bool {
        // The same boot of the same kernel: its pids are ours to check, whatever name the
        // owner went by (a runner daemon takes locks under its hosts.toml name, `addq` under
        // the hostname).
        if self.boot_id == here.boot_id {
            return match crate::procfs::process_start(self.pid) {
                None => true,
                Some(start) => self.pid_start != 0 && start != self.pid_start,
            };
        }
        // This host under another boot: it rebooted since.
        self.host == here.host
    }
}

/// The longest pause between two tries for a held lock.
const MAX_PAUSE: Duration = Duration::from_millis(50);

/// How often a waiter reads the lock's owner to see whether it is gone.
const OWNER_LOOK: Duration = Duration::from_millis(250);

/// Up to `pause` more, from the clock's nanoseconds (no generator state to share).
fn jitter(pause: Duration) -> Duration {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos() as u64);
    let mut r = crate::rng::XorShift::new(nanos ^ u64::from(std::process::id()) << 32);
    Duration::from_nanos(r.below(pause.as_nanos() as u64 + 1))
}

/// A held lock; dropping it removes the file.
#[derive(Debug)]
pub struct LockFile {
    path: PathBuf,
    released: bool,
}

/// A lock file still empty or torn this long after it was created lost its owner between
/// creating and writing it.
pub const UNWRITTEN_STALE: Duration = Duration::from_secs(20);

/// What happened while taking a lock, for the caller's log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LockEvent {
    /// A lock whose owner was provably gone was removed.
    BrokeStale { path: PathBuf, owner: LockOwner },
}

impl LockFile {
    /// Tries once to create `path` exclusively. `Ok(None)` when someone else holds it.
    pub fn try_acquire(path: &Path, here: &Machine) -> io::Result<Option<LockFile>> {
        let pid = std::process::id();
        let owner = LockOwner {
            host: here.host.clone(),
            pid,
            pid_start: crate::procfs::process_start(pid).unwrap_or(0),
            boot_id: here.boot_id.clone(),
            since: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
        };
        let mut lost_races = 0;
        loop {
            match crate::files::create_new(path) {
                Ok(mut f) => {
                    let lock = LockFile {
                        path: path.to_path_buf(),
                        released: false,
                    };
                    // If writing the owner fails the lock is dropped (and removed) on return.
                    // No fsync: the name only serves to break the lock of a dead owner, and
                    // a crash that loses it leaves an empty or torn file, which is broken
                    // once `UNWRITTEN_STALE` old. Locks are taken several times per job.
                    f.write_all(owner.to_text().as_bytes())
                        .map_err(|e| failed(FileOp::Writing, path, e))?;
                    return Ok(Some(lock));
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Ok(None),
                // sshfs reports a lost O_EXCL race as EPERM (SFTP's generic failure): held
                // if the file is there, and if it is gone already, try again; a real
                // permission problem fails every time with no file behind it.
                Err(e) if e.kind() == io::ErrorKind::PermissionDenied && lost_races < 20 => {
                    if path.exists() {
                        return Ok(None);
                    }
                    lost_races += 1;
                }
                Err(e) => return Err(failed(FileOp::Creating, path, e)),
            }
        }
    }

    /// Takes the lock, retrying every few milliseconds for up to `wait`; breaks a lock whose
    /// owner is provably gone (reported in `events`). Times out with an error naming the
    /// current owner.
    pub fn acquire(
        path: &Path,
        here: &Machine,
        wait: Duration,
        events: &mut Vec<LockEvent>,
    ) -> io::Result<LockFile> {
        let start = Instant::now();
        let mut pause = Duration::from_millis(1);
        let mut next_look = start;
        loop {
            if let Some(l) = Self::try_acquire(path, here)? {
                return Ok(l);
            }
            // The owner is read at the first failed try and then every `OWNER_LOOK`, not at
            // every try: on a network filesystem each read is three round trips to the file
            // server, which the holder's own work waits behind.
            let timed_out = start.elapsed() >= wait;
            if timed_out || Instant::now() >= next_look {
                next_look = Instant::now() + OWNER_LOOK;
                let owner = LockOwner::read(path);
                if let Some(o) = &owner
                    && o.is_gone(here)
                {
                    Self::break_stale(path, o, here, events)?;
                    continue;
                }
                if owner.is_none() && Self::break_unwritten(path, here, events)? {
                    continue;
                }
                if timed_out {
                    let who = owner.map_or("an unreadable owner".to_string(), |o| {
                        format!("pid {} on {} since {}", o.pid, o.host, o.since)
                    });
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!(
                            "{}: still held by {who} after {:.1}s",
                            path.display(),
                            wait.as_secs_f64()
                        ),
                    ));
                }
            }
            // Jittered, so that waiters who started together do not keep colliding. Capped
            // at 50 ms: on a network filesystem each try is several round trips to the file
            // server, which the lock's holder waits behind (8 ms starved holders over sshfs).
            std::thread::sleep(pause + jitter(pause));
            pause = (pause * 2).min(MAX_PAUSE);
        }
    }

    /// Removes the lock at `path` if it still belongs to `stale`, a gone owner. The removal
    /// happens under a second lock (`path` with extension `break`) and after a second read:
    /// a lock is removed only when its current content names the gone owner, so a live lock
    /// taken meanwhile is never touched (renaming it away, even to put it back, would leave a
    /// moment with no lock). A breaker that died in its few microseconds leaves a `break`
    /// file that is itself removed once its owner is provably gone.
    fn break_stale(
        path: &Path,
        stale: &LockOwner,
        here: &Machine,
        events: &mut Vec<LockEvent>,
    ) -> io::Result<()> {
        let breaker_path = path.with_extension("break");
        match Self::try_acquire(&breaker_path, here)? {
            Some(breaker) => {
                if LockOwner::read(path).as_ref() == Some(stale) {
                    remove_broken(path, stale, events)?;
                }
                breaker.release()
            }
            None => {
                if let Some(b) = LockOwner::read(&breaker_path)
                    && b.is_gone(here)
                {
                    let _ = std::fs::remove_file(&breaker_path);
                }
                Ok(())
            }
        }
    }

    /// Removes a lock file that has stayed empty or torn for [`UNWRITTEN_STALE`]: its owner
    /// writes its name within moments of creating it, so it died in between (a SIGKILL, a
    /// power cut). Under the `break` lock, and only if it is still unwritten and old.
    fn break_unwritten(
        path: &Path,
        here: &Machine,
        events: &mut Vec<LockEvent>,
    ) -> io::Result<bool> {
        let unwritten_since = |p: &Path| -> Option<SystemTime> {
            let text = std::fs::read_to_string(p).ok()?;
            if LockOwner::parse(&text).is_some() {
                return None;
            }
            let modified = std::fs::metadata(p).ok()?.modified().ok()?;
            (modified.elapsed().ok()? >= UNWRITTEN_STALE).then_some(modified)
        };
        if unwritten_since(path).is_none() {
            return Ok(false);
        }
        let Some(breaker) = Self::try_acquire(&path.with_extension("break"), here)? else {
            return Ok(false);
        };
        let mut broke = false;
        if let Some(t) = unwritten_since(path) {
            let owner = LockOwner {
                host: "(an owner that died before writing its name)".into(),
                pid: 0,
                pid_start: 0,
                boot_id: String::new(),
                since: t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()),
            };
            broke = remove_broken(path, &owner, events)?;
        }
        breaker.release()?;
        Ok(broke)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Removes the lock file.
    pub fn release(mut self) -> io::Result<()> {
        self.released = true;
        crate::files::remove(&self.path).map_err(|e| failed(FileOp::Removing, &self.path, e))
    }
}

impl Drop for LockFile {
    fn drop(&mut self) {
        if !self.released {
            let _ = crate::files::remove(&self.path);
        }
    }
}

/// The owner the monitor found dead: a host that crashed (its locks taken before it stopped
/// answering) or rebooted (its locks of any boot but the new one).
#[derive(Clone, Debug)]
pub struct DeadHost<'a> {
    pub host: &'a str,
    /// The boot that lives on (a reboot): its locks are kept.
    pub keep_boot: Option<&'a str>,
    /// Locks taken after this time (seconds since the epoch) are kept: their owner wrote to
    /// the site after the host went silent, so it is alive.
    pub taken_by: Option<u64>,
}

impl<'a> DeadHost<'a> {
    /// `host` crashed: its locks taken by `silent_since`, when it stopped answering.
    pub fn crashed(host: &'a str, silent_since: u64) -> Self {
        DeadHost {
            host,
            keep_boot: None,
            taken_by: Some(silent_since),
        }
    }

    /// `host` rebooted into `boot`: its locks of every other boot.
    pub fn rebooted(host: &'a str, boot: &'a str) -> Self {
        DeadHost {
            host,
            keep_boot: Some(boot),
            taken_by: None,
        }
    }

    fn owns(&self, o: &LockOwner) -> bool {
        o.host == self.host
            && self.keep_boot.is_none_or(|b| o.boot_id != b)
            && self.taken_by.is_none_or(|t| o.since <= t)
    }
}

/// Breaks the locks in `dirs` (`*.lock` files and the `*.break` files of dead breakers)
/// held by `dead`, a host its monitor declared crashed or rebooted: no process of it can
/// release them, and no other host may break them by itself (it cannot see that host's
/// pids). Each break is reported in `events`. A missing directory has no locks.
pub fn break_host_locks(
    dirs: &[PathBuf],
    dead: &DeadHost,
    here: &Machine,
    events: &mut Vec<LockEvent>,
) -> io::Result<()> {
    for dir in dirs {
        for (_, path) in crate::files::list(dir)? {
            // Only lock files are read: done/ holds thousands of records beside its locks.
            let kind = path.extension().and_then(|e| e.to_str());
            if !matches!(kind, Some("lock" | "break")) {
                continue;
            }
            let Some(owner) = LockOwner::read(&path).filter(|o| dead.owns(o)) else {
                continue;
            };
            match kind {
                Some("lock") => LockFile::break_stale(&path, &owner, here, events)?,
                // A breaker that died holding the `break` lock: nobody else writes this file
                // while it exists.
                _ => {
                    remove_broken(&path, &owner, events)?;
                }
            }
        }
    }
    Ok(())
}

/// Removes the lock file `path` of the gone `owner` and reports it; one removed meanwhile
/// by someone else is no error (and false).
fn remove_broken(path: &Path, owner: &LockOwner, events: &mut Vec<LockEvent>) -> io::Result<bool> {
    let removed =
        crate::files::remove_if_there(path).map_err(|e| failed(FileOp::Removing, path, e))?;
    if removed {
        events.push(LockEvent::BrokeStale {
            path: path.to_path_buf(),
            owner: owner.clone(),
        });
    }
    Ok(removed)
}
