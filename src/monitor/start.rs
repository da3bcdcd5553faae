//! `dbstart`: starts a host's runner daemon: on this machine directly, on another over ssh.
//! The binary is chosen by the host's platform: `SITE/bin/<platform>/jobrunner` when the
//! site holds one, else the `jobrunner` beside this program.

use crate::files::{FileOp, failed};
use crate::hosts::{Host, Hosts};
use crate::solve::Site;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Why runners could not be started or stopped, or a command not run on a host: each names
/// the program or file and the cause.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// A program that could not be run or waited for: "running ssh: cause".
    #[error("{doing}: {source}")]
    Spawn {
        doing: String,
        source: std::io::Error,
    },
    /// The daemon's output file (a [`crate::files::FileError`]).
    #[error(transparent)]
    File(std::io::Error),
    #[error("an empty ssh command")]
    NoSsh,
    /// A remote command still running after the timeout.
    #[error("{program} {target}: no answer within {secs} s, killed")]
    Timeout {
        program: String,
        target: String,
        secs: u64,
    },
    /// A command that ran and failed: what it was, how it ended, its standard error.
    #[error("{command}: {status}: {stderr}")]
    Failed {
        command: String,
        status: String,
        stderr: String,
    },
    /// `dbstart`: the hosts started (a line each), then each that was not, and why.
    #[error("{}{}", done.iter().map(|d| format!("{d}\n")).collect::<String>(), failed.join("\n"))]
    NotAll {
        done: Vec<String>,
        failed: Vec<String>,
    },
}

impl From<StartError> for crate::cli::CliError {
    fn from(e: StartError) -> Self {
        crate::cli::CliError::Failed(e.to_string())
    }
}

fn spawn_error(doing: String) -> impl FnOnce(std::io::Error) -> StartError {
    move |source| StartError::Spawn { doing, source }
}

#[derive(Clone, Debug)]
pub struct StartOptions {
    /// The ssh program and its options (the host's address is appended).
    pub ssh: Vec<String>,
    /// This machine's name in hosts.toml: its runners start without ssh.
    pub local_host: String,
    /// A remote command still running after this long is killed and reported: a host whose
    /// login hangs (a dead network mount, a stuck login script) must not stall the monitor.
    pub command_timeout: Duration,
}

impl Default for StartOptions {
    fn default() -> Self {
        StartOptions {
            ssh: ["ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10"]
                .map(String::from)
                .to_vec(),
            local_host: nix::unistd::gethostname()
                .map(|h| h.to_string_lossy().into_owned())
                .unwrap_or_default(),
            command_timeout: Duration::from_secs(60),
        }
    }
}

/// The jobrunner binary for `platform`.
pub fn binary_for(site: &Site, platform: &str) -> Result<PathBuf, StartError> {
    crate::runner::host_files::jobrunner_for(site, platform)
        .map_err(spawn_error("finding this program".into()))
}

/// `'text'` for a POSIX shell.
fn quote(p: &Path) -> String {
    format!("'{}'", p.to_string_lossy().replace('\'', r"'\''"))
}

/// Starts `host`'s runner daemon; returns what was done, for the log and mail.
pub fn start_runners(site: &Site, host: &Host, opts: &StartOptions) -> Result<String, StartError> {
    let bin = binary_for(site, &host.platform)?;
    let root = match &host.site {
        Some(p) => p.clone(),
        None => std::path::absolute(site.root())
            .map_err(spawn_error(format!("finding {}", site.root().display())))?,
    };
    let out = root.join("logs").join(format!("{}.daemon.out", host.name));
    if host.name == opts.local_host {
        let log = crate::files::open_append(&out).map_err(StartError::File)?;
        use std::os::unix::process::CommandExt;
        let child = Command::new(&bin)
            .arg("--site")
            .arg(&root)
            .args(["daemon", "--host", &host.name])
            .stdin(Stdio::null())
            .stdout(
                log.try_clone()
                    .map_err(|e| StartError::File(failed(FileOp::Opening, &out, e)))?,
            )
            .stderr(log)
            // Its own process group: it outlives the monitor and its terminal.
            .process_group(0)
            .spawn()
            .map_err(spawn_error(format!("starting {}", bin.display())))?;
        return Ok(format!(
            "started {} daemon --host {} here (pid {})",
            bin.display(),
            host.name,
            child.id()
        ));
    }
    let remote = format!(
        // Only the daemon goes to the background, with every descriptor redirected: nothing
        // may hold the ssh session open after the shell exits.
        "mkdir -p {logs}; nohup {bin} --site {root} daemon --host {name} </dev/null >>{out} 2>&1 &",
        logs = quote(&root.join("logs")),
        bin = quote(&bin),
        root = quote(&root),
        name = quote(Path::new(&host.name)),
        out = quote(&out),
    );
    ssh(host, opts, &remote)?;
    Ok(format!(
        "started {} daemon --host {} over ssh {}",
        bin.display(),
        host.name,
        host.ssh
    ))
}

/// Stops `host`'s runner daemons (SIGTERM: their jobs checkpoint and are requeued): the
/// fence for a host that was only cut off while its jobs were given to others.
pub fn stop_runners(host: &Host, opts: &StartOptions) -> Result<String, StartError> {
    // The daemon's command line ends in `daemon --host NAME` (start_runners writes it so).
    let pattern = format!("daemon --host {}$", host.name);
    let command = format!(
        "pkill -TERM -f {}; test $? -le 1",
        quote(Path::new(&pattern))
    );
    if host.name == opts.local_host {
        let out = Command::new("sh")
            .args(["-c", &command])
            .output()
            .map_err(spawn_error("running pkill".into()))?;
        if !out.status.success() {
            return Err(StartError::Failed {
                command: "pkill".into(),
                status: out.status.to_string(),
                stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            });
        }
    } else {
        ssh(host, opts, &command)?;
    }
    Ok(format!(
        "SIGTERM to every `{pattern}` process on {}",
        host.name
    ))
}

/// Runs `command` on `host` over ssh; returns its standard output.
pub fn ssh(host: &Host, opts: &StartOptions, command: &str) -> Result<String, StartError> {
    // user@host:port -> ssh -p port user@host
    let (target, port) = match host.ssh.rsplit_once(':') {
        Some((t, p)) if p.parse::<u16>().is_ok() => (t.to_string(), Some(p.to_string())),
        _ => (host.ssh.clone(), None),
    };
    let (program, args) = opts.ssh.split_first().ok_or(StartError::NoSsh)?;
    let mut cmd = Command::new(program);
    cmd.args(args);
    if let Some(p) = &port {
        cmd.args(["-p", p]);
    }
    let mut child = cmd
        .arg(&target)
        .arg(command)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(spawn_error(format!("running {program}")))?;
    // The pipes are drained beside the wait, so a chatty command cannot block on them.
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut text);
            }
            String::from_utf8_lossy(&text).into_owned()
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let deadline = Instant::now() + opts.command_timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(StartError::Timeout {
                    program: program.clone(),
                    target,
                    secs: opts.command_timeout.as_secs(),
                });
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(spawn_error(format!("waiting for {program}"))(e)),
        }
    };
    let (stdout, stderr) = (
        stdout.join().unwrap_or_default(),
        stderr.join().unwrap_or_default(),
    );
    if !status.success() {
        return Err(StartError::Failed {
            command: format!("{program} {target}"),
            status: status.to_string(),
            stderr: stderr.trim().to_string(),
        });
    }
    Ok(stdout)
}

/// The host's boot id: this machine's own, or asked over ssh (`NOWDB_BOOT_ID` in the remote
/// environment overrides it, as for the runners).
pub fn boot_id(host: &Host, opts: &StartOptions) -> Option<String> {
    if host.name == opts.local_host {
        return crate::lock::Machine::current().ok().map(|m| m.boot_id);
    }
    let out = ssh(
        host,
        opts,
        "echo ${NOWDB_BOOT_ID:-$(cat /proc/sys/kernel/random/boot_id)}",
    )
    .ok()?;
    let id = out.trim();
    (!id.is_empty() && !id.contains(char::is_whitespace)).then(|| id.to_string())
}

/// `dbstart HOST...`: starts the runners of the named hosts; the error lists the failures.
pub fn dbstart(
    site: &Site,
    hosts: &Hosts,
    names: &[String],
    opts: &StartOptions,
) -> Result<Vec<String>, StartError> {
    let mut done = Vec::new();
    let mut failed = Vec::new();
    for n in names {
        let Some(h) = hosts.host(n) else {
            failed.push(format!("{n}: not a [[host]] of hosts.toml"));
            continue;
        };
        match start_runners(site, h, opts) {
            Ok(m) => done.push(m),
            Err(e) => failed.push(format!("{n}: {e}")),
        }
    }
    if failed.is_empty() {
        Ok(done)
    } else {
        Err(StartError::NotAll { done, failed })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remote_command_that_hangs_is_killed_and_reported() {
        let host: Host = toml::from_str(
            "name = \"slow\"\nssh = \"root@slow\"\nqueue = \"p\"\nplatform = \"x\"\nmemory_mb = 1",
        )
        .unwrap();
        // "ssh" here is a shell that ignores the target and the command and sleeps.
        let opts = StartOptions {
            ssh: ["sh", "-c", "sleep 30", "ssh"].map(String::from).to_vec(),
            local_host: "here".into(),
            command_timeout: Duration::from_millis(300),
        };
        let t = Instant::now();
        let err = ssh(&host, &opts, "true").unwrap_err().to_string();
        assert!(err.contains("no answer within"), "{err}");
        assert!(t.elapsed() < Duration::from_secs(10));
        let quick = StartOptions {
            ssh: ["sh", "-c", "echo out; echo err >&2", "ssh"]
                .map(String::from)
                .to_vec(),
            ..opts
        };
        assert_eq!(ssh(&host, &quick, "true").unwrap(), "out\n");
    }
}
