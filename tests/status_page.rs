//! The status page (issue 22): `dbstatus html` holds the figures of `dbstatus summary
//! --json`; names and error texts holding `<script>` and quotes stay text; `dbstatus serve`
//! answers `/` and `/status.json`, 404 for anything else, and fails clearly on a port in
//! use; and in Debian's headless chromium the page of a finished 2..5 site, of a 2..5 build
//! in the middle with its runners live, and of a site with a crashed host, a held job and
//! Slurm pilots (one lost)
//! renders the summary's figures with no console error (screenshots in
//! `target/status-page/`).

mod common;

use common::fixture::{self, ADDQ, DBSTATUS, JOBRUNNER, text};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

/// The daemon of host `t` with 2 runners on queues p and m, as the builds here run it.
const DAEMON: [&str; 9] = [
    "daemon",
    "--poll-secs",
    "0.5",
    "--host",
    "t",
    "--queues",
    "pm",
    "--runners",
    "2",
];

/// A 2..5 site, planned and built through the queues once for the whole file (read-only).
fn finished_site() -> &'static Path {
    static SITE: OnceLock<PathBuf> = OnceLock::new();
    SITE.get_or_init(|| {
        let site = fixture::scratch("status_page", "finished");
        fixture::ok(ADDQ, &site, &["p", "plan", "2..5"]);
        let mut args = DAEMON.to_vec();
        args.push("--until-empty");
        let out = fixture::run(JOBRUNNER, &site, &args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        site
    })
}

/// The JSON embedded in a page.
fn embedded(page: &str) -> Value {
    let start = page
        .find("id=\"snapshot\">")
        .expect("the page embeds its snapshot")
        + "id=\"snapshot\">".len();
    let end = start + page[start..].find("</script>").unwrap();
    serde_json::from_str(&page[start..end]).expect("the embedded snapshot is JSON")
}

/// A count as the page shows it: `toLocaleString("en-US")`, thousands separated by commas.
fn as_shown(n: &Value) -> String {
    let digits = n
        .as_u64()
        .unwrap_or_else(|| panic!("{n} is a count"))
        .to_string();
    let mut out = String::new();
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

/// A summary without its time stamp (two runs differ in it).
fn without_time(mut v: Value) -> Value {
    v.as_object_mut().unwrap().remove("at");
    v
}

#[test]
fn the_page_of_a_finished_site_holds_the_summary() {
    let site = finished_site();
    let summary: Value =
        serde_json::from_str(&fixture::ok(DBSTATUS, site, &["--json", "summary"])).unwrap();
    let out = site.join("page.html");
    fixture::ok(DBSTATUS, site, &["html", "--out", out.to_str().unwrap()]);
    let page = std::fs::read_to_string(&out).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"));
    // Self-contained: nothing to fetch but its own JSON endpoint when served.
    for outside in ["http://", "https://", "<link", "src="] {
        let hits: Vec<&str> = page
            .match_indices(outside)
            .map(|(i, _)| &page[i..(i + 60).min(page.len())])
            .filter(|h| !h.starts_with("http://www.w3.org/2000/svg"))
            .collect();
        assert!(hits.is_empty(), "{outside}: {hits:?}");
    }
    let snap = embedded(&page);
    assert_eq!(
        without_time(snap["summary"].clone()),
        without_time(summary.clone())
    );
    // Every slice of 2..5 (nowdb::slice::plan(5)) solved, built and verified.
    let slices: u64 = nowdb::slice::plan(5)
        .pairs()
        .map(|p| p.slices().len() as u64)
        .sum();
    for field in ["slices", "solved", "built", "verified"] {
        assert_eq!(summary[field], slices, "{field}");
    }
    assert_eq!(summary["queued_jobs"], 0);
    let pairs = snap["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), nowdb::slice::plan(5).pairs().count());
    assert!(pairs.iter().all(|p| p["stage"] == "done"), "{pairs:?}");
    // The per-pair recent positions add up to the summary's rate (the same 10 minutes).
    let recent: u64 = pairs
        .iter()
        .map(|p| p["recent_positions"].as_u64().unwrap())
        .sum();
    assert_eq!(
        (recent as f64 / 600.0).round(),
        summary["positions_per_second"].as_f64().unwrap()
    );
    let points = snap["throughput"]["points"].as_array().unwrap();
    assert!(!points.is_empty());
    assert_eq!(snap["queues"].as_array().unwrap().len(), 4);
    // The material graph: 2 kings against 1 reads the 1-against-1 kings it captures into.
    assert_eq!(snap["material_deps"]["1200"], serde_json::json!(["1100"]));
    assert_eq!(snap["material_deps"]["1100"], serde_json::json!([]));
    // Standard output when no --out.
    let page2 = fixture::ok(DBSTATUS, site, &["html"]);
    assert_eq!(
        without_time(embedded(&page2)["summary"].clone()),
        without_time(summary)
    );
}

const EVIL: &str = "<script>alert(\"x'1\")</script><!--";

/// A scratch site with `addq p plan 2..PIECES` queued and `hosts` (host entries, joined) as
/// its hosts.toml.
fn planned_site(name: &str, pieces: u32, hosts: &[String]) -> PathBuf {
    let site = fixture::scratch("status_page", name);
    fixture::ok(ADDQ, &site, &["p", "plan", &format!("2..{pieces}")]);
    std::fs::write(site.join("hosts.toml"), hosts.join("\n")).unwrap();
    site
}

/// One `[[host]]` entry of hosts.toml (its ssh address is its name).
fn host_entry(name: &str, memory_mb: u32, runners: u32) -> String {
    format!(
        "[[host]]\nname = {name:?}\nssh = \"a\"\nqueue = \"pm\"\nplatform = \"x86_64-linux\"\n\
         memory_mb = {memory_mb}\nrunners = {runners}\n"
    )
}

/// A planned 2..3 site whose hosts.toml, queue and failed job hold `<script>` and quotes.
fn hostile_site() -> PathBuf {
    // A host name may not hold '/' or white space; this one holds the rest.
    let site = planned_site(
        "hostile",
        3,
        &[host_entry("<script>alert('h\"1')<!--", 2048, 2)],
    );
    let q = nowdb::queue::file::Queue::named(&site, "prime").unwrap();
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(q.path())
        .unwrap();
    writeln!(f, "# {EVIL}").unwrap();
    let line = "pair 1200.-- -max 01 -s 1 -n 00";
    let job = match nowdb::queue::line::parse_line(line) {
        Ok(Some(nowdb::queue::QueueLine::Job(q))) => q.job().unwrap(),
        other => panic!("{other:?}"),
    };
    let s = nowdb::solve::Site::new(&site);
    let attempt = nowdb::queue::held::Attempt {
        attempt: 1,
        host: "t".into(),
        record: "t-1".into(),
        taken: 1_700_000_000,
        ended: 1_700_000_100,
        status: format!("exit status 1: {EVIL}"),
        output: Some(format!("attempts/{EVIL}.out")),
    };
    nowdb::queue::held::write_attempts(&s, &job, &[attempt]).unwrap();
    site
}

#[test]
fn names_and_errors_holding_script_and_quotes_stay_text() {
    let site = hostile_site();
    let page = fixture::ok(DBSTATUS, &site, &["html"]);
    let snap = embedded(&page);
    // The texts reach the page's data whole...
    assert_eq!(
        snap["runners"]["hosts"][0]["name"],
        "<script>alert('h\"1')<!--"
    );
    assert_eq!(snap["queues"][0]["head"][0], format!("# {EVIL}"));
    let attempt = &snap["held"]["jobs"][0]["attempts"][0];
    assert_eq!(attempt["status"], format!("exit status 1: {EVIL}"));
    // ... and none of them appears raw in the page: one <script> element of data, one of
    // code, and no comment opened.
    assert_eq!(page.matches("<script").count(), 2, "{page}");
    assert_eq!(page.matches("</script>").count(), 2);
    assert!(!page.contains("<!--"));
    assert!(page.contains("\\u003cscript\\u003ealert("));
}

/// `dbstatus serve --listen 127.0.0.1:0` in the background and the address it serves.
fn serve(site: &Path) -> (Child, String) {
    let mut child = fixture::command(DBSTATUS, site)
        .args(["serve", "--listen", "127.0.0.1:0"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .split("http://")
        .nth(1)
        .unwrap_or_else(|| panic!("{line}"))
        .trim()
        .trim_end_matches('/')
        .to_string();
    (child, addr)
}

/// A raw HTTP request: status line and body. It asks the server to close the connection
/// after the answer, so that reading to the end ends (the server keeps connections alive).
fn get(addr: &str, method: &str, path: &str) -> (String, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut all = String::new();
    s.read_to_string(&mut all).unwrap();
    let (head, body) = all.split_once("\r\n\r\n").unwrap();
    (head.lines().next().unwrap().to_string(), body.to_string())
}

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn serve_answers_the_page_and_its_json_and_404_otherwise() {
    let site = finished_site();
    let (child, addr) = serve(site);
    let _child = Killed(child);
    let summary: Value =
        serde_json::from_str(&fixture::ok(DBSTATUS, site, &["--json", "summary"])).unwrap();
    let (status, body) = get(&addr, "GET", "/");
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert!(body.contains("const LIVE = true;") && body.contains("/status.json"));
    assert_eq!(
        without_time(embedded(&body)["summary"].clone()),
        without_time(summary.clone())
    );
    let (status, body) = get(&addr, "GET", "/status.json");
    assert_eq!(status, "HTTP/1.1 200 OK");
    let snap: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(without_time(snap["summary"].clone()), without_time(summary));
    for path in ["/other", "/status.json/x", "/../hosts.toml", "/index.html"] {
        let (status, _) = get(&addr, "GET", path);
        assert_eq!(status, "HTTP/1.1 404 Not Found", "{path}");
    }
    let (status, _) = get(&addr, "POST", "/status.json");
    assert_eq!(status, "HTTP/1.1 405 Method Not Allowed");
}

#[test]
fn serve_on_a_port_in_use_fails_naming_the_address() {
    let site = fixture::scratch("status_page", "port");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let out = fixture::run(DBSTATUS, &site, &["serve", "--listen", &addr]);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("cannot listen on {addr}")) && err.contains("in use"),
        "{err}"
    );
}

/// Debian's chromium, which `scripts/test` installs.
fn chromium() -> &'static str {
    let path = "/usr/bin/chromium";
    assert!(
        Path::new(path).exists(),
        "{path} is missing: scripts/test installs it (apt-get install chromium)"
    );
    path
}

/// Where a person can look at the screenshots: `target/status-page/`.
fn screenshot_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("status-page");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs headless chromium on `url` with `args` (`--dump-dom`, `--screenshot=...`): its
/// standard output and the console lines it logged.
fn browse(url: &str, args: &[&str]) -> (String, Vec<String>) {
    // A profile of its own per run: the tests browse side by side, and chromium locks its
    // profile directory.
    static RUNS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let profile = fixture::scratch("status_page", &format!("chromium-profile-{run}"));
    let out = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-quic",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1280,1600",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "chromium: {}", text(&out.stderr));
    let errors = text(&out.stderr)
        .lines()
        // The page logs nothing: any console line (chromium logs console.error at INFO
        // level too) or uncaught exception is a failure.
        .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
        .map(str::to_string)
        .collect();
    (text(&out.stdout), errors)
}

/// The page at `url` as chromium renders it, checked to have logged no console line and
/// to have drawn every section.
fn rendered(url: &str) -> String {
    let (dom, errors) = browse(url, &["--dump-dom"]);
    assert!(errors.is_empty(), "{url}: {errors:?}");
    assert!(
        !dom.contains("class=\"bad render-error\""),
        "{url}: a section failed to render"
    );
    dom
}

/// The rendered page shows the figures of `dbstatus summary --json`.
fn assert_shows_summary(dom: &str, summary: &Value) {
    for (id, field) in [
        ("sum-slices", "slices"),
        ("sum-solved", "solved"),
        ("sum-built", "built"),
        ("sum-verified", "verified"),
        ("sum-queued", "queued_jobs"),
        ("sum-running", "running"),
        ("sum-held", "held"),
    ] {
        let want = format!("id=\"{id}\">{}<", as_shown(&summary[field]));
        assert!(dom.contains(&want), "{want} not in the rendered page");
    }
}

#[test]
fn chromium_renders_the_summary_figures_with_no_console_error() {
    let site = finished_site();
    let summary: Value =
        serde_json::from_str(&fixture::ok(DBSTATUS, site, &["--json", "summary"])).unwrap();
    let (child, addr) = serve(site);
    let _child = Killed(child);
    let url = format!("http://{addr}/");
    let dom = rendered(&url);
    assert_shows_summary(&dom, &summary);
    assert!(dom.contains("id=\"graph\"") && dom.contains("data-pair=\"1100.--\""));
    assert!(dom.contains(">reads from 1100<"), "the material graph");
    // Live: after the page's 5 s poll of /status.json it has drawn itself again, no error.
    let (dom, errors) = browse(&url, &["--virtual-time-budget=12000", "--dump-dom"]);
    assert!(errors.is_empty(), "{errors:?}");
    assert!(
        dom.contains("(live: updates every 5 s)</div>"),
        "the poll failed"
    );
    assert!(!dom.contains("id=\"stamp\">update failed"));
    assert!(!dom.contains("class=\"bad render-error\""));
    let renders = dom
        .split("data-renders=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .and_then(|n| n.parse::<u32>().ok());
    assert!(renders.is_some_and(|n| n >= 2), "drawn {renders:?} times");
    let shot = screenshot_dir().join("finished-2..5.png");
    let _ = browse(&url, &[&format!("--screenshot={}", shot.display())]);
    assert!(
        shot.metadata().unwrap().len() > 10_000,
        "{}",
        shot.display()
    );

    // The hostile site renders too, its names as text.
    let hostile = hostile_site();
    let file = hostile.join("page.html");
    fixture::ok(
        DBSTATUS,
        &hostile,
        &["html", "--out", file.to_str().unwrap()],
    );
    let dom = rendered(&format!("file://{}", file.display()));
    assert!(
        dom.contains("&lt;script&gt;alert(\"x'1\")&lt;/script&gt;&lt;!--"),
        "{dom}"
    );
    let shot = screenshot_dir().join("hostile-names.png");
    let _ = browse(
        &format!("file://{}", file.display()),
        &[&format!("--screenshot={}", shot.display())],
    );
    assert!(shot.exists());
}

#[test]
fn chromium_renders_a_live_runner_a_crashed_host_and_a_held_job() {
    let site = planned_site(
        "faulty",
        3,
        &[host_entry("ws1", 2048, 2), host_entry("ws2", 2048, 1)],
    );
    let s = nowdb::solve::Site::new(&site);
    let now = nowdb::clock::now_secs();
    let crashed = nowdb::monitor::HostState {
        status: "crashed".into(),
        since: now - 300,
        boot_id: "b1".into(),
    };
    nowdb::state::write(
        &site.join("monitor").join("ws1"),
        &crashed,
        nowdb::files::Durability::Volatile,
    )
    .unwrap();
    nowdb::monitor::write_heartbeat(&s, "ws2", "b2", now - 3).unwrap();
    let line = "pair 1200.-- -max 01 -s 1 -n 00";
    let job = match nowdb::queue::line::parse_line(line) {
        Ok(Some(nowdb::queue::QueueLine::Job(q))) => q.job().unwrap(),
        other => panic!("{other:?}"),
    };
    let attempts: Vec<nowdb::queue::held::Attempt> = (1..=3)
        .map(|n| nowdb::queue::held::Attempt {
            attempt: n,
            host: "ws1".into(),
            record: format!("ws1-{n}"),
            taken: now - 1000 + 100 * n as u64,
            ended: now - 950 + 100 * n as u64,
            status: "signal 9 (SIGKILL)".into(),
            output: None,
        })
        .collect();
    nowdb::queue::held::write_attempts(&s, &job, &attempts).unwrap();
    let held = nowdb::queue::held::HeldRecord {
        job: nowdb::queue::held::key(&job),
        queue: "small".into(),
        line: line.into(),
        since: now - 60,
        attempts: 3,
    };
    nowdb::queue::held::write_held(&s, &job, &held).unwrap();
    // A live runner on ws2: a pair job that noted its step.
    let live = "pair 1100.-- -max 01 -s 1 -n 00";
    let live_job = match nowdb::queue::line::parse_line(live) {
        Ok(Some(nowdb::queue::QueueLine::Job(q))) => q.job().unwrap(),
        other => panic!("{other:?}"),
    };
    let note = s.job_note_file(&live_job);
    std::fs::create_dir_all(note.parent().unwrap()).unwrap();
    std::fs::write(
        note,
        format!("step 2 noio 1100.-- round 1 since {}\n", now - 7),
    )
    .unwrap();
    let record = nowdb::runner::record::RunningRecord {
        host: "ws2".into(),
        boot_id: "b2".into(),
        pid: 1,
        pid_start: 1,
        child: 0,
        child_start: 0,
        queue: "small".into(),
        line: live.into(),
        since: now - 9,
        failed: None,
    };
    let path = nowdb::runner::record::running_dir(&s).join("ws2-1-0");
    record.write(&path, false).unwrap();
    // The alerts: one delivery in mail/sent, one alert waiting in the outbox.
    std::fs::create_dir_all(site.join("mail/outbox")).unwrap();
    std::fs::write(
        site.join("mail/sent"),
        format!("{} 2 [nowdb ws1] ws1 crashed\n", now - 30),
    )
    .unwrap();
    std::fs::write(
        site.join(format!("mail/outbox/{now:012}-ws9-1-0.txt")),
        "[nowdb ws9] job 1200.-- held\n\nbody\n",
    )
    .unwrap();
    // A Slurm pilot found lost, and one that runs.
    for (task, state, ended) in [(3, "lost", now - 20), (4, "running", 0)] {
        nowdb::slurm::PilotRecord {
            host: format!("slurm-77_{task}"),
            job_id: 80 + task,
            slurm_job: format!("77_{task}"),
            array_job_id: Some(77),
            array_task_id: Some(task),
            node: format!("node{task}"),
            cpus: 4,
            runners: 4,
            memory_mb: 8000,
            restarts: 1,
            started: now - 600,
            state: state.into(),
            ended,
            exit: None,
            why: (state == "lost").then(|| "no heartbeat for 130s; Slurm no longer runs it".into()),
        }
        .write(&s)
        .unwrap();
    }
    let summary: Value =
        serde_json::from_str(&fixture::ok(DBSTATUS, &site, &["--json", "summary"])).unwrap();
    assert_eq!(summary["held"], 1, "{summary}");
    let file = site.join("page.html");
    fixture::ok(DBSTATUS, &site, &["html", "--out", file.to_str().unwrap()]);
    let url = format!("file://{}", file.display());
    let dom = rendered(&url);
    assert_shows_summary(&dom, &summary);
    assert!(
        dom.contains(">crashed since "),
        "the hosts board shows the crash"
    );
    assert!(dom.contains("heartbeat 3s ago") || dom.contains("heartbeat 4s ago"));
    assert!(dom.contains("attempt 3 on ws1 at ") && dom.contains("signal 9 (SIGKILL)"));
    assert!(
        dom.contains("[nowdb ws1] ws1 crashed") && dom.contains("[nowdb ws9] job 1200.-- held")
    );
    // The pilots: Slurm job, node, and the lost one in red with its reason.
    assert!(
        dom.contains(">Slurm pilots<") && dom.contains(">77_3 (id 83)<") && dom.contains(">node4<")
    );
    assert!(
        dom.contains("class=\"bad\">lost: no heartbeat for 130s; Slurm no longer runs it<"),
        "the lost pilot is marked"
    );
    // The held job's pair is red in the slice graph.
    assert!(dom.contains("stage: held (cap)"), "the held pair is marked");
    let shot = screenshot_dir().join("crashed-host-held-job.png");
    let _ = browse(&url, &[&format!("--screenshot={}", shot.display())]);
    assert!(shot.exists());
}

/// A daemon and its job children in their own process group, stopped (SIGSTOP) and let go
/// (SIGCONT) as one; killed when dropped.
struct Build(Child);

impl Build {
    fn signal(&self, sig: nix::sys::signal::Signal) {
        let group = nix::unistd::Pid::from_raw(self.0.id() as i32);
        nix::sys::signal::killpg(group, sig).unwrap();
    }
}

impl Drop for Build {
    fn drop(&mut self) {
        self.signal(nix::sys::signal::Signal::SIGCONT);
        self.signal(nix::sys::signal::Signal::SIGKILL);
        let _ = self.0.wait();
    }
}

/// A 2..5 build through the queues caught in the middle with its runners live: the daemon
/// and its job children are stopped together, so the site holds still while `dbstatus
/// summary --json`, the served page and chromium look at the same moment; then the build
/// goes on and the page served again shows it further along.
#[test]
fn chromium_renders_a_build_in_progress_at_one_moment() {
    use nix::sys::signal::Signal::{SIGCONT, SIGSTOP};
    use std::os::unix::process::CommandExt;
    let site = planned_site("mid-build", 5, &[host_entry("t", 4096, 2)]);
    let build = Build(
        fixture::command(JOBRUNNER, &site)
            .args(DAEMON)
            .process_group(0)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let summary_now = || -> Value {
        serde_json::from_str(&fixture::ok(DBSTATUS, &site, &["--json", "summary"])).unwrap()
    };
    // Stop the build at a moment when some slices are solved, others not, and a job runs.
    let start = std::time::Instant::now();
    let summary = loop {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(300),
            "no moment with a running job half way"
        );
        std::thread::sleep(std::time::Duration::from_millis(700));
        build.signal(SIGSTOP);
        // Let the stop reach every process of the group before the site is read.
        std::thread::sleep(std::time::Duration::from_millis(100));
        let s = summary_now();
        let solved = s["solved"].as_u64().unwrap();
        if s["running"].as_u64().unwrap() >= 1
            && solved >= 20
            && solved < s["slices"].as_u64().unwrap()
        {
            break s;
        }
        build.signal(SIGCONT);
    };
    let (child, addr) = serve(&site);
    let server = Killed(child);
    let (_, body) = get(&addr, "GET", "/status.json");
    let snap: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        without_time(snap["summary"].clone()),
        without_time(summary.clone())
    );
    let url = format!("http://{addr}/");
    let dom = rendered(&url);
    assert_shows_summary(&dom, &summary);
    // The hosts board: host t with its daemon's heartbeat (no wsmonitor runs here), and
    // each running job by its line.
    assert!(
        dom.contains("not seen by wsmonitor yet, heartbeat "),
        "host t's state"
    );
    let running = snap["runners"]["running"].as_array().unwrap();
    assert_eq!(running.len() as u64, summary["running"].as_u64().unwrap());
    for r in running {
        let line = r["job"].as_str().unwrap();
        assert!(
            dom.contains(&format!("<code>{line}</code>")),
            "{line} on the board"
        );
    }
    // The slice graph holds finished pairs and pairs still to do.
    let stages: std::collections::BTreeSet<&str> = snap["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["stage"].as_str().unwrap().split(' ').next().unwrap())
        .collect();
    assert!(stages.contains("done") && stages.len() >= 2, "{stages:?}");
    let shot = screenshot_dir().join("mid-build-2..5.png");
    let _ = browse(&url, &[&format!("--screenshot={}", shot.display())]);
    assert!(shot.exists());
    // Let the build go on: the same server shows it further along.
    build.signal(SIGCONT);
    let first = summary["solved"].as_u64().unwrap() + summary["built"].as_u64().unwrap();
    let later = loop {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(600),
            "no progress"
        );
        std::thread::sleep(std::time::Duration::from_millis(500));
        let (_, body) = get(&addr, "GET", "/status.json");
        let snap: Value = serde_json::from_str(&body).unwrap();
        let s = &snap["summary"];
        let now = s["solved"].as_u64().unwrap() + s["built"].as_u64().unwrap();
        if now > first {
            break now;
        }
    };
    assert!(later > first);
    drop(server);
    drop(build);
}
