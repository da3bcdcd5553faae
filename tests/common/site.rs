//! Building a site in the test process, and comparing two sites' results byte for byte.

use nowdb::solve::Site;
use nowdb::solve::local::{BuildOptions, BuildSummary, build_local};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Builds 2..`pieces` in `site` in this process with 2 runners and no progress lines, after
/// `f` has adjusted the options.
pub fn build(site: &Path, pieces: u32, f: impl FnOnce(&mut BuildOptions)) -> BuildSummary {
    build_logged(site, pieces, f).0
}

/// [`build`], with its progress lines (only the closing one, unless `f` asks for more).
pub fn build_logged(
    site: &Path,
    pieces: u32,
    f: impl FnOnce(&mut BuildOptions),
) -> (BuildSummary, String) {
    let mut opts = BuildOptions {
        pieces,
        runners: 2,
        progress_every: Duration::from_secs(3600),
        ..BuildOptions::default()
    };
    f(&mut opts);
    let mut lines = Vec::new();
    let summary = build_local(
        &Site::new(site),
        &opts,
        &mut nowdb::progress::Progress::lines(&mut lines, Duration::MAX),
    )
    .unwrap_or_else(|e| panic!("build of {} failed: {e}", site.display()));
    (summary, String::from_utf8(lines).unwrap())
}

/// A 2..4 site built once per test binary (in the scratch directory of `suite`), for tests
/// that read it or damage copies of it.
pub fn base4(suite: &str) -> &'static Path {
    static BASE: OnceLock<PathBuf> = OnceLock::new();
    BASE.get_or_init(|| {
        let d = super::fixture::scratch_path(suite, "base4");
        build(&d, 4, |_| {});
        d
    })
}

/// A copy of [`base4`] named `name`, to damage.
pub fn copy_of_base4(suite: &str, name: &str) -> PathBuf {
    let d = super::fixture::scratch_path(suite, name);
    let status = std::process::Command::new("cp")
        .args(["-a", base4(suite).to_str().unwrap(), d.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(status.success());
    d
}

/// The files of `solved/` and `db/` of a site, by `dir/name`. Hidden files are left out:
/// they are the temporaries of writers killed before their rename (every reader skips them,
/// and `files::remove_stale_temporaries` removes them once old).
pub fn build_files(site: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    for dir in ["solved", "db"] {
        for e in std::fs::read_dir(site.join(dir)).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_file() && !e.file_name().to_string_lossy().starts_with('.')
            {
                let name = format!("{dir}/{}", e.file_name().to_string_lossy());
                files.insert(name, std::fs::read(e.path()).unwrap());
            }
        }
    }
    files
}

/// Both sites have the same `solved/` and `db/` files with the same bytes.
pub fn assert_same_build(a: &Path, b: &Path, what: &str) {
    let (fa, fb) = (build_files(a), build_files(b));
    assert_eq!(
        fa.keys().collect::<Vec<_>>(),
        fb.keys().collect::<Vec<_>>(),
        "{what}: different sets of files in solved/ and db/"
    );
    for (name, bytes) in &fa {
        assert!(bytes == &fb[name], "{what}: {name} differs");
    }
}

/// SIGKILLs the process `spawn` starts after a random delay of up to `max_delay_ms` (from
/// `seed`), again and again (at most 25 times), until one run ends by itself, which must be
/// a success; the number of kills.
pub fn sigkill_until_done(mut spawn: impl FnMut() -> Child, seed: u64, max_delay_ms: u64) -> u32 {
    let mut rng = nowdb::rng::XorShift::new(seed);
    let mut kills = 0;
    let t0 = Instant::now();
    loop {
        let mut child = spawn();
        let delay = Duration::from_millis(20 + rng.below(max_delay_ms));
        let start = Instant::now();
        let mut finished = None;
        while start.elapsed() < delay || kills >= 25 {
            if let Some(status) = child.try_wait().unwrap() {
                finished = Some(status);
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        match finished {
            Some(_) => {
                // Reaped by `try_wait` already: `wait` gives its status again.
                let status = child.wait().unwrap();
                assert!(status.success(), "resumed run failed: {status}");
                return kills;
            }
            None => {
                child.kill().unwrap();
                child.wait().unwrap();
                kills += 1;
            }
        }
        assert!(t0.elapsed() < Duration::from_secs(600), "never finished");
    }
}
