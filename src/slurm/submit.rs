//! `dbstart --slurm N`: submits pilots as one Slurm job array. Run again, it tops the pilots
//! of its earlier submissions that Slurm still has (pending, running, requeued) up to N, so
//! nothing is submitted twice; a refusal by `sbatch` is an error with Slurm's own message,
//! and nothing is recorded then.

use super::lost::output_within;
use super::slurm_dir;
use crate::solve::Site;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Why pilots could not be submitted.
#[derive(Debug, thiserror::Error)]
pub enum SubmitError {
    #[error(
        "{program} not found: `dbstart --slurm` runs where Slurm's commands are (a cluster's login node), with sbatch and squeue on the PATH"
    )]
    NoSlurm { program: String },
    #[error("{command} gave no answer within {secs} s (is slurmctld reachable?)")]
    Timeout { command: String, secs: u64 },
    /// sbatch itself did not answer: the pilots may have been submitted all the same.
    #[error(
        "{command} gave no answer within {secs} s and was stopped; Slurm may have taken the pilots all the same: run the same `dbstart --slurm` again once slurmctld answers, it counts the pilots Slurm has for this site (their comment {tag:?}) and submits only the missing ones"
    )]
    Unanswered {
        command: String,
        secs: u64,
        tag: String,
    },
    /// Slurm refused: its own message.
    #[error("Slurm refused the pilots: {command}: {status}: {stderr}")]
    Refused {
        command: String,
        status: String,
        stderr: String,
    },
    #[error("{0}")]
    Bad(String),
    #[error(transparent)]
    Site(#[from] crate::error::Error),
}

impl From<SubmitError> for crate::cli::CliError {
    fn from(e: SubmitError) -> Self {
        crate::cli::CliError::Failed(e.to_string())
    }
}

/// What a cluster user chooses for the pilots.
#[derive(Clone, Debug)]
pub struct SubmitOptions {
    /// Pilots wanted alive (pending or running) after this submission.
    pub pilots: usize,
    pub partition: Option<String>,
    pub account: Option<String>,
    pub qos: Option<String>,
    /// Each pilot's time limit, in sbatch's syntax (`2:00:00`, `1-0`).
    pub time: Option<String>,
    pub cpus_per_pilot: usize,
    /// Each pilot's memory, in sbatch's `--mem` syntax (`8G`, `16000`).
    pub mem: Option<String>,
    /// SIGTERM this many seconds before the time limit (`--signal=B:TERM@secs`).
    pub signal_secs: u64,
    pub job_name: String,
    /// Queue letters the pilots take from.
    pub queues: String,
    pub max_waiting: Option<usize>,
    pub lost_after_secs: u64,
    pub checkpoint_secs: Option<u64>,
    /// The jobrunner every node runs (on the shared filesystem).
    pub jobrunner: Option<PathBuf>,
    /// More sbatch arguments, passed through as they are.
    pub extra: Vec<String>,
    /// The sbatch and squeue programs.
    pub sbatch: String,
    pub squeue: String,
    /// How long a Slurm command may take before it is stopped.
    pub wait: Duration,
}

/// What a submission did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Submitted {
    /// Pilots of earlier submissions that Slurm still has.
    pub alive: usize,
    /// Pilots submitted now, and their array job's id.
    pub submitted: usize,
    pub array_job_id: Option<u64>,
    /// The sbatch command line, as run.
    pub command: String,
}

/// `'text'` for a POSIX shell.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

fn shown(cmd: &Command) -> String {
    std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `program` can be run: a path, or a name on the PATH.
fn findable(program: &str) -> Result<(), SubmitError> {
    match program.contains('/') || crate::files::find_on_path(program).is_some() {
        true => Ok(()),
        false => Err(SubmitError::NoSlurm {
            program: program.to_string(),
        }),
    }
}

/// Runs a Slurm command for at most `wait`: its standard output, or why not.
fn slurm(cmd: &mut Command, wait: Duration) -> Result<String, SubmitError> {
    let command = shown(cmd);
    findable(&cmd.get_program().to_string_lossy())?;
    let out = output_within(cmd, wait).ok_or(SubmitError::Timeout {
        command: command.clone(),
        secs: wait.as_secs(),
    })?;
    if !out.status.success() {
        return Err(SubmitError::Refused {
            command,
            status: out.status.to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `slurm/submitted`: a line per submission, `<array job id> <pilots> <time>`.
fn submitted_path(site: &Site) -> PathBuf {
    slurm_dir(site).join("submitted")
}

fn submitted_arrays(site: &Site) -> Result<Vec<u64>, SubmitError> {
    let path = submitted_path(site);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(
                crate::error::Error::io(format_args!("reading {}", path.display()), e).into(),
            );
        }
    };
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            l.split_whitespace()
                .next()
                .and_then(|w| w.parse().ok())
                .ok_or_else(|| {
                    SubmitError::Bad(format!("{}: not a submission: {l:?}", path.display()))
                })
        })
        .collect()
}

/// The comment every pilot of the site is submitted with (`sbatch --comment`): Slurm keeps
/// it, so the pilots of a submission whose sbatch did not answer are counted too.
fn site_tag(root: &Path) -> String {
    format!("nowdb-site:{}", root.display())
}

/// The pilots of the site that Slurm still has in any state but ended: those of `arrays`
/// (the recorded submissions) and those with the site's comment `tag`.
fn alive_pilots(o: &SubmitOptions, arrays: &[u64], tag: &str) -> Result<usize, SubmitError> {
    // By name, not by id: squeue -j fails whole when one id has left slurmctld's memory.
    let text = slurm(
        Command::new(&o.squeue).args(["-h", "-r", "--name", &o.job_name, "-o", "%F|%T|%k"]),
        o.wait,
    )?;
    Ok(text
        .lines()
        .filter_map(|l| {
            let mut w = l.splitn(3, '|');
            let array = w.next()?.trim().parse::<u64>().ok()?;
            Some((array, w.next()?.trim(), w.next().unwrap_or("").trim()))
        })
        .filter(|(a, state, comment)| {
            (arrays.contains(a) || *comment == tag) && !super::states::ended(state)
        })
        .count())
}

/// The batch script every pilot runs: the jobrunner with the site, by absolute paths (the
/// shared filesystem has the same paths on every node). `exec`, so that the signal Slurm
/// sends the batch shell before the time limit reaches the pilot itself.
fn pilot_script(root: &Path, jobrunner: &Path, o: &SubmitOptions) -> String {
    let mut args = vec![
        quote(&jobrunner.to_string_lossy()),
        "--site".into(),
        quote(&root.to_string_lossy()),
    ];
    if let Some(c) = o.checkpoint_secs {
        args.push(format!("--checkpoint-secs {c}"));
    }
    args.push(format!("pilot --queues {}", quote(&o.queues)));
    args.push(format!("--lost-after-secs {}", o.lost_after_secs));
    if let Some(m) = o.max_waiting {
        args.push(format!("--max-waiting {m}"));
    }
    format!(
        "#!/bin/sh\n# A nowdb pilot (written by dbstart --slurm): a runner daemon for this Slurm job.\nexec {}\n",
        args.join(" ")
    )
}

/// The sbatch command for `count` pilots.
fn sbatch_command(root: &Path, script: &Path, count: usize, o: &SubmitOptions) -> Command {
    let mut c = Command::new(&o.sbatch);
    c.arg("--parsable")
        .arg(format!("--job-name={}", o.job_name))
        .arg(format!("--array=0-{}", count - 1))
        .arg("--requeue")
        .arg(format!("--signal=B:TERM@{}", o.signal_secs))
        .arg("--ntasks=1")
        .arg(format!("--cpus-per-task={}", o.cpus_per_pilot))
        .arg(format!("--output={}/logs/slurm-%A_%a.out", root.display()))
        .arg("--open-mode=append")
        .arg(format!("--chdir={}", root.display()))
        .arg(format!("--comment={}", site_tag(root)));
    for (flag, v) in [
        ("--partition", &o.partition),
        ("--account", &o.account),
        ("--qos", &o.qos),
        ("--time", &o.time),
        ("--mem", &o.mem),
    ] {
        if let Some(v) = v {
            c.arg(format!("{flag}={v}"));
        }
    }
    c.args(&o.extra).arg(script);
    c
}

/// Submits pilots up to `o.pilots` alive (see the module).
pub fn submit(site: &Site, o: &SubmitOptions) -> Result<Submitted, SubmitError> {
    if o.pilots == 0 || o.cpus_per_pilot == 0 {
        return Err(SubmitError::Bad(
            "--slurm and --cpus-per-pilot must be at least 1".into(),
        ));
    }
    if o.max_waiting == Some(0) {
        return Err(SubmitError::Bad(
            "--max-waiting must be at least 1 (a waiting pilot recovers lost ones)".into(),
        ));
    }
    // Both, before anything is read or written.
    findable(&o.sbatch)?;
    findable(&o.squeue)?;
    let root = std::path::absolute(site.root()).map_err(|e| {
        crate::error::Error::io(format_args!("finding {}", site.root().display()), e)
    })?;
    if !root.join("queues").is_dir() {
        return Err(SubmitError::Bad(format!(
            "{}: not a site (no queues/): queue the plan first, e.g. `addq --site {} p plan 2..8`",
            root.display(),
            root.display()
        )));
    }
    let jobrunner = match &o.jobrunner {
        Some(p) => std::path::absolute(p)
            .map_err(|e| crate::error::Error::io(format_args!("finding {}", p.display()), e))?,
        None => crate::runner::host_files::jobrunner_for(site, "")
            .map_err(|e| crate::error::Error::io("finding this program", e))?,
    };
    if !jobrunner.is_file() {
        return Err(SubmitError::Bad(format!(
            "{}: no jobrunner there (give --jobrunner, a path every node sees)",
            jobrunner.display()
        )));
    }
    let tag = site_tag(&root);
    let alive = alive_pilots(o, &submitted_arrays(site)?, &tag)?;
    let wanted = o.pilots.saturating_sub(alive);
    if wanted == 0 {
        return Ok(Submitted {
            alive,
            submitted: 0,
            array_job_id: None,
            command: String::new(),
        });
    }
    std::fs::create_dir_all(root.join("logs")).map_err(|e| {
        crate::error::Error::io(format_args!("creating {}/logs", root.display()), e)
    })?;
    let script = root.join("slurm/pilot.sh");
    let text = pilot_script(&root, &jobrunner, o);
    crate::files::replace(&script, text.as_bytes(), crate::files::Durability::Data)
        .map_err(|e| crate::error::Error::io(format_args!("writing {}", script.display()), e))?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).map_err(|e| {
        crate::error::Error::io(format_args!("making {} executable", script.display()), e)
    })?;
    let mut cmd = sbatch_command(&root, &script, wanted, o);
    let command = shown(&cmd);
    let out = slurm(&mut cmd, o.wait).map_err(|e| match e {
        SubmitError::Timeout { command, secs } => SubmitError::Unanswered { command, secs, tag },
        e => e,
    })?;
    // `--parsable`: `<job id>` or `<job id>;<cluster>`.
    let id: u64 = out
        .trim()
        .split(';')
        .next()
        .and_then(|w| w.parse().ok())
        .ok_or_else(|| {
            SubmitError::Bad(format!("{command}: unexpected answer {:?}", out.trim()))
        })?;
    let path = submitted_path(site);
    let mut f = crate::files::open_append(&path).map_err(crate::error::Error::from)?;
    use std::io::Write;
    writeln!(f, "{id} {wanted} {}", crate::clock::now_secs())
        .map_err(|e| crate::error::Error::io(format_args!("appending to {}", path.display()), e))?;
    Ok(Submitted {
        alive,
        submitted: wanted,
        array_job_id: Some(id),
        command,
    })
}

/// `dbstart --slurm N`: submits, then says what was done (a JSON line with `json`), and
/// warns when no job is queued or running (the pilots would end at once).
pub fn submit_command(
    site: &Site,
    o: &SubmitOptions,
    json: bool,
    out: &mut dyn std::io::Write,
) -> Result<(), crate::cli::CliError> {
    let s = submit(site, o)?;
    let root = site.root().display();
    let text = if json {
        crate::cli::json_line(&serde_json::json!({
            "alive": s.alive,
            "submitted": s.submitted,
            "array_job_id": s.array_job_id,
            "sbatch": (!s.command.is_empty()).then_some(&s.command),
        }))
    } else {
        match s.array_job_id {
            Some(id) => format!(
                "submitted {} pilot(s) as Slurm job array {id} (0-{}){}: {}\nlogs: {root}/logs/slurm-{id}_<index>.out and {root}/logs/slurm-{id}_<index>.log; watch them with `dbstatus --site {root} runners`\n",
                s.submitted,
                s.submitted - 1,
                match s.alive {
                    0 => String::new(),
                    n => format!(" beside {n} still pending or running"),
                },
                s.command
            ),
            None => format!(
                "{} pilot(s) of earlier submissions are pending or running (--slurm {}): nothing submitted\n",
                s.alive, o.pilots
            ),
        }
    };
    out.write_all(text.as_bytes())
        .map_err(crate::cli::output_error)?;
    if s.submitted > 0 && nothing_to_do(site) {
        crate::cli::stderr_line(&format!(
            "dbstart: warning: no job is queued or running on {root}: the pilots will end at once (queue the plan first: addq --site {root} p plan 2..N)"
        ));
    }
    Ok(())
}

/// Whether no queue holds a job and no job runs.
fn nothing_to_do(site: &Site) -> bool {
    let running = crate::queue::running::read_all(site).map(|r| r.is_empty());
    let queued = ["p", "n", "s", "m"].iter().try_fold(0, |n, q| {
        crate::queue::Queue::named(site.root(), q)
            .and_then(|q| q.job_count())
            .map(|c| n + c)
    });
    matches!((running, queued), (Ok(true), Ok(0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> SubmitOptions {
        SubmitOptions {
            pilots: 4,
            partition: Some("long".into()),
            account: None,
            qos: Some("low".into()),
            time: Some("2:00:00".into()),
            cpus_per_pilot: 8,
            mem: Some("16G".into()),
            signal_secs: 300,
            job_name: "nowdb".into(),
            queues: "pnsm".into(),
            max_waiting: Some(2),
            lost_after_secs: 120,
            checkpoint_secs: None,
            jobrunner: None,
            extra: vec!["--constraint=avx2".into()],
            sbatch: "sbatch".into(),
            squeue: "squeue".into(),
            wait: Duration::from_secs(60),
        }
    }

    #[test]
    fn the_sbatch_line_carries_what_the_user_chose() {
        let c = sbatch_command(
            Path::new("/shared/s"),
            Path::new("/shared/s/slurm/pilot.sh"),
            3,
            &opts(),
        );
        let line = shown(&c);
        for part in [
            "sbatch --parsable --job-name=nowdb --array=0-2 --requeue --signal=B:TERM@300",
            "--cpus-per-task=8",
            "--output=/shared/s/logs/slurm-%A_%a.out --open-mode=append",
            "--chdir=/shared/s --comment=nowdb-site:/shared/s",
            "--partition=long",
            "--qos=low",
            "--time=2:00:00",
            "--mem=16G",
            "--constraint=avx2 /shared/s/slurm/pilot.sh",
        ] {
            assert!(line.contains(part), "{part:?} not in {line}");
        }
        assert!(!line.contains("--account"), "{line}");
    }

    #[test]
    fn the_script_execs_the_pilot() {
        let s = pilot_script(
            Path::new("/shared/it's"),
            Path::new("/opt/jobrunner"),
            &opts(),
        );
        assert!(s.starts_with("#!/bin/sh\n"), "{s}");
        assert!(
            s.contains("exec '/opt/jobrunner' --site '/shared/it'\\''s' pilot --queues 'pnsm' --lost-after-secs 120 --max-waiting 2"),
            "{s}"
        );
    }

    /// A site, a jobrunner to name, and fake sbatch and squeue sharing a job list (`jobs`,
    /// a line per array task as `squeue -o "%F|%T|%k"` prints it).
    fn fake_slurm(name: &str, sbatch_sleeps: u32) -> (std::path::PathBuf, SubmitOptions) {
        let dir = std::env::temp_dir().join(format!("nowdb-submit-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("site/queues")).unwrap();
        std::fs::write(dir.join("jobrunner"), "").unwrap();
        let jobs = dir.join("jobs");
        let script = |file: &str, body: String| {
            let p = dir.join(file);
            std::fs::write(&p, format!("#!/bin/sh\n{body}")).unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
            p.to_string_lossy().into_owned()
        };
        // Slurm takes the job at once, then the answer is slow.
        let sbatch = script(
            "sbatch",
            format!(
                "n=$(wc -l < {jobs} 2>/dev/null || echo 0); id=$((70 + n))\n\
                 c=$(for a; do case $a in --comment=*) echo \"${{a#--comment=}}\";; esac; done)\n\
                 echo \"$id|PENDING|$c\" >> {jobs}\nsleep {sbatch_sleeps}\necho $id\n",
                jobs = jobs.display()
            ),
        );
        let squeue = script(
            "squeue",
            format!("cat {} 2>/dev/null; true\n", jobs.display()),
        );
        let o = SubmitOptions {
            pilots: 1,
            jobrunner: Some(dir.join("jobrunner")),
            sbatch,
            squeue,
            wait: Duration::from_secs(1),
            ..opts()
        };
        (dir, o)
    }

    #[test]
    fn an_sbatch_that_does_not_answer_submits_nothing_twice() {
        let (dir, o) = fake_slurm("timeout", 5);
        let site = Site::new(dir.join("site"));
        let e = submit(&site, &o).unwrap_err();
        assert!(matches!(e, SubmitError::Unanswered { .. }), "{e}");
        let text = e.to_string();
        assert!(
            text.contains("gave no answer within 1 s")
                && text.contains("Slurm may have taken the pilots all the same"),
            "{text}"
        );
        // Nothing recorded, yet Slurm has the pilot: the same command again submits none.
        assert!(!dir.join("site/slurm/submitted").exists());
        let again = submit(&site, &o).unwrap();
        assert_eq!((again.alive, again.submitted), (1, 0), "{again:?}");
        let jobs = std::fs::read_to_string(dir.join("jobs")).unwrap();
        assert_eq!(jobs.lines().count(), 1, "{jobs}");
        // Once that pilot has ended, one more is submitted and recorded.
        std::fs::write(dir.join("jobs"), jobs.replace("PENDING", "COMPLETED")).unwrap();
        let answer = std::fs::read_to_string(&o.sbatch).unwrap();
        std::fs::write(&o.sbatch, answer.replace("sleep 5", "sleep 0")).unwrap();
        let third = submit(&site, &o).unwrap();
        assert_eq!((third.alive, third.submitted), (0, 1), "{third:?}");
        let recorded = std::fs::read_to_string(dir.join("site/slurm/submitted")).unwrap();
        assert!(recorded.starts_with("71 1 "), "{recorded}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
