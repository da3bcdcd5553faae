//! The solver pipeline: published totals, self-consistency, identical results however the
//! work is split, ordered, killed and resumed, and clear errors for bad input.

mod common;

use common::fixture::{self, ADDQ, DBSTATUS, JOBRUNNER, copy_dir, stderr};
use common::site::{assert_same_build, build, sigkill_until_done};
use nowdb::solve::Site;
use nowdb::solve::running::RunOptions;
use nowdb::{Slice, SliceIndex};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

/// A site with every slice of 2..3 pieces solved, built once and copied by the tests.
fn base3() -> &'static Path {
    static BASE: OnceLock<PathBuf> = OnceLock::new();
    BASE.get_or_init(|| {
        let d = fixture::scratch("solver", "base3");
        build(&d, 3, |_| {});
        d
    })
}

/// A clean build of 2201.-6/2210.6- and its dependencies on top of [`base3`], built once:
/// what the interrupted builds are compared with.
fn clean_2201() -> &'static Path {
    static CLEAN: OnceLock<PathBuf> = OnceLock::new();
    CLEAN.get_or_init(|| {
        let d = site_from_base3("clean-2201");
        build(&d, 5, |o| o.only = vec!["2201.-6".parse().unwrap()]);
        d
    })
}

fn site_from_base3(name: &str) -> PathBuf {
    let d = fixture::scratch("solver", name);
    copy_dir(base3(), &d);
    d
}

/// The solved slices and compressed database files of a site, by path.
/// Positions of `pieces` pieces where both sides have a piece, from the published totals
/// (which count one-sided positions too).
fn two_sided_total(pieces: u32) -> u64 {
    let total = nowdb::index::total_positions(pieces);
    let one_sided: u64 = (0..=pieces)
        .map(|kings| {
            // All pieces of one colour: `kings` kings and the rest men, both colours.
            let men = pieces - kings;
            let ways_men = nowdb::index::binomial(28, men);
            let ways_kings = nowdb::index::binomial(32 - men as i32, kings);
            2 * ways_men * ways_kings
        })
        .sum();
    total - one_sided
}

#[test]
fn build_2_to_4_is_complete_and_consistent() {
    let d = fixture::scratch("solver", "build4");
    copy_dir(base3(), &d);
    let s = build(&d, 4, |o| o.verify = true);
    assert_eq!(
        s.verified,
        two_sided_total(4),
        "every new 4-piece position verified"
    );
    let out = fixture::run(DBSTATUS, &d, &["counts", "--by", "material"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "slice\tpieces\tbk\twk\tbm\twm\trb\trw\tpositions\twin\tloss\tdraw"
    );
    let mut per_pieces = BTreeMap::new();
    for l in lines {
        let f: Vec<&str> = l.split('\t').collect();
        let n: u64 = f[8].parse().unwrap();
        let (w, lo, dr): (u64, u64, u64) = (
            f[9].parse().unwrap(),
            f[10].parse().unwrap(),
            f[11].parse().unwrap(),
        );
        assert_eq!(w + lo + dr, n, "{l}");
        assert_eq!(f[6], "-");
        *per_pieces.entry(f[1].to_string()).or_insert(0) += n;
    }
    for p in 2..=4u32 {
        assert_eq!(per_pieces[&p.to_string()], two_sided_total(p), "{p} pieces");
    }
}

/// Splitting every phase into 1, 3 or 10 ranges and running the ready jobs in different
/// orders gives byte-identical solved slices (including the multi-page 5-piece pairs
/// 2300.--/3200.-- and 2201.-6/2210.6-, and the self-mirrored 2200.--).
#[test]
fn splits_and_orders_give_identical_files() {
    let only: Vec<Slice> = ["2201.-6", "2200"]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect();
    let reference = site_from_base3("split1");
    build(&reference, 5, |o| {
        o.only = only.clone();
        o.splits = Some(1);
        o.runners = 1;
    });
    assert!(reference.join("solved/2300.--.nwk").exists());
    for (n, seed) in [(3, 7), (10, 99)] {
        let d = site_from_base3(&format!("split{n}"));
        build(&d, 5, |o| {
            o.only = only.clone();
            o.splits = Some(n);
            o.shuffle = Some(seed);
        });
        assert_same_build(&reference, &d, &format!("{n} ranges, order {seed}"));
    }
}

/// The position queue against the passes: `que` rounds from the third pass on (each queued
/// resolution re-evaluating its predecessors: a lost child makes them wins, a won child
/// completes their loss only when every child is won), split into 3 ranges in a shuffled
/// order, and `noio` passes alone until nothing changes, give the same bytes as the default
/// hand-over. `que_rounds` proves each build took the way it names.
#[test]
fn que_rounds_and_noio_passes_give_identical_files() {
    let only = vec!["2201.-6".parse::<Slice>().unwrap()];
    for (name, ratio, splits) in [("que-early", 1, Some(3)), ("passes-only", 1 << 40, None)] {
        let d = site_from_base3(name);
        let s = build(&d, 5, |o| {
            o.only = only.clone();
            o.que_ratio = ratio;
            o.splits = splits;
            o.shuffle = splits.map(|_| 5);
        });
        assert_eq!(
            s.que_rounds > 0,
            ratio == 1,
            "{name}: {} que rounds",
            s.que_rounds
        );
        assert_same_build(clean_2201(), &d, name);
    }
}

/// SIGKILL the whole build at random moments (checkpointing at every page, every pair
/// durable), restart it each time, and the result is byte-identical to a clean build.
#[test]
fn sigkill_and_resume_give_identical_files() {
    let clean = clean_2201();
    let d = site_from_base3("kill");
    let kills = sigkill_until_done(
        || {
            fixture::command(JOBRUNNER, &d)
                .args(["--checkpoint-secs", "0"])
                .args(["build-local", "--pieces", "5", "--only", "2201.-6"])
                .args(["--small-pair", "0", "--splits", "3", "--runners", "2"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        },
        0x2545_F491_4F6C_DD1D,
        610,
    );
    assert!(
        kills >= 3,
        "only {kills} kills landed before the build finished"
    );
    assert_same_build(clean, &d, &format!("after {kills} SIGKILLs"));
}

/// SIGTERM makes a running build checkpoint its jobs and stop with a message; the same
/// command then resumes and the result equals a clean build.
#[test]
fn sigterm_stops_the_build_at_a_checkpoint_and_it_resumes() {
    let clean = clean_2201();
    let d = site_from_base3("term");
    let args = [
        "build-local",
        "--pieces",
        "5",
        "--only",
        "2201.-6",
        "--small-pair",
        "0",
    ];
    let child = fixture::command(JOBRUNNER, &d)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(400));
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert!(
        !out.status.success(),
        "the build should have been stopped: {err}"
    );
    assert!(err.contains("stopped at a checkpoint"), "{err}");
    let o = fixture::run(JOBRUNNER, &d, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_same_build(clean, &d, "after SIGTERM and resume");
}

/// One job stopped by its deadline checkpoints (exit 3) and the rerun resumes from there.
#[test]
fn a_stopped_job_resumes_from_its_checkpoint() {
    let d = site_from_base3("deadline");
    let only = vec!["2200".parse().unwrap()];
    build(&d, 4, |o| o.only = only);
    // 2300.-- needs only 2..4-piece slices; its cap job covers 62 pages.
    let o = fixture::run(
        JOBRUNNER,
        &d,
        &["run", "--deadline-secs", "0", "cap", "2300.--"],
    );
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let text = fixture::text(&o.stdout);
    assert!(text.contains("stopped at checkpoint 32768"), "{text}");
    let ckpt = std::fs::read_to_string(d.join("work/ckpt/cap-2300.---r0-0-2013760.ckpt")).unwrap();
    assert!(
        ckpt.starts_with("next = 32768\ncomplete = false\n"),
        "{ckpt}"
    );
    let o = fixture::run(JOBRUNNER, &d, &["--json", "run", "cap 2300.--"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = fixture::text(&o.stdout);
    assert!(
        text.contains("\"resumed_from\":32768,\"complete\":true"),
        "{text}"
    );
    // A clean run of the same job over a fresh work file gives the same bytes.
    let fresh = site_from_base3("deadline-clean");
    build(&fresh, 4, |o| o.only = vec!["2200".parse().unwrap()]);
    let o = fixture::run(JOBRUNNER, &fresh, &["run", "cap", "2300.--"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let a = std::fs::read(d.join("work/2300.--.nwk")).unwrap();
    let b = std::fs::read(fresh.join("work/2300.--.nwk")).unwrap();
    assert!(a == b, "resumed cap differs from a clean cap");
}

#[test]
fn bad_ranges_and_missing_slices_are_clear_errors() {
    let d = site_from_base3("bad");
    let cases: &[(&[&str], &str)] = &[
        (
            &["run", "cap", "2300.--", "100", "32768"],
            "not page aligned",
        ),
        (
            &["run", "cap", "2300.--", "0", "99999999"],
            "outside slice 2300.--",
        ),
        (&["run", "cap", "2300.--", "32768", "32768"], "empty range"),
        (&["run", "noio", "2300.--"], "needs a round number"),
        (
            &["run", "cap", "2300.--", "-r", "2"],
            "needs no round number",
        ),
        (&["run", "flip", "2300.--"], "unknown phase \"flip\""),
        (&["run", "cap", "2300.7-"], "2300.7-"),
        // The lower slices of 2300.-- (4 pieces) are not solved in a 2..3 site.
        (&["run", "cap", "2300.--"], "missing lower slice"),
        (&["run", "lookup", "2201.-6"], "does not exist"),
    ];
    for (args, want) in cases {
        let o = fixture::run(JOBRUNNER, &d, args);
        assert!(!o.status.success(), "{args:?} succeeded");
        let e = stderr(&o);
        assert!(e.contains(want), "{args:?}: {e:?} lacks {want:?}");
        assert!(!e.contains("panicked"), "{args:?}: {e}");
    }
}

#[test]
fn corrupt_or_truncated_work_files_are_refused_and_left_alone() {
    let d = site_from_base3("corrupt");
    build(&d, 4, |o| o.only = vec!["2200".parse().unwrap()]);
    let o = fixture::run(JOBRUNNER, &d, &["run", "cap", "2300.--", "0", "32768"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let work = d.join("work/2300.--.nwk");
    let good = std::fs::read(&work).unwrap();
    // Truncated.
    std::fs::write(&work, &good[..good.len() - 100]).unwrap();
    let o = fixture::run(JOBRUNNER, &d, &["run", "cap", "2300.--", "32768", "65536"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("2300.--.nwk") && stderr(&o).contains("truncated"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        std::fs::read(&work).unwrap().len(),
        good.len() - 100,
        "file left alone"
    );
    // Wrong header (another slice's file, or garbage).
    let mut bad = good.clone();
    bad[20] ^= 0xFF;
    std::fs::write(&work, &bad).unwrap();
    let o = fixture::run(JOBRUNNER, &d, &["run", "cap", "2300.--", "32768", "65536"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("bad header"), "{}", stderr(&o));
    assert!(std::fs::read(&work).unwrap() == bad, "file left alone");
    // A corrupt checkpoint record.
    std::fs::write(&work, &good).unwrap();
    let ck = d.join("work/ckpt/cap-2300.---r0-32768-65536.ckpt");
    std::fs::write(&ck, "next banana\n").unwrap();
    let o = fixture::run(JOBRUNNER, &d, &["run", "cap", "2300.--", "32768", "65536"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("corrupt checkpoint"), "{}", stderr(&o));
}

/// A disk too full for the pages a job will write refuses the job before it writes one (exit
/// 4, a message with the sizes, no checkpoint); once space is back the job completes and the
/// result equals an undisturbed run. The disk is a small
/// tmpfs mounted over the site's `work/` in a private mount namespace (needs root, as in CI).
#[test]
fn a_full_disk_is_refused_before_the_job_writes() {
    let d = site_from_base3("full");
    build(&d, 4, |o| o.only = vec!["2200".parse().unwrap()]);
    let clean = fixture::scratch("solver", "full-clean");
    copy_dir(&d, &clean);
    let o = fixture::run(JOBRUNNER, &clean, &["run", "cap", "2300.--"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let uid = Command::new("id").arg("-u").output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&uid.stdout).trim(),
        "0",
        "this test mounts a tmpfs and must run as root (CI does)"
    );
    let site = d.display();
    let script = format!(
        r#"set -u
mount -t tmpfs -o size=160k tmpfs {site}/work || exit 90
{JOBRUNNER} --site {site} --checkpoint-secs 0 run cap 2300.-- 2> {site}/err1; echo "exit1 $?"
echo "ckpt1 $(head -1 {site}/work/ckpt/cap-2300.---r0-0-2013760.ckpt 2>/dev/null || echo none)"
mount -o remount,size=16m {site}/work || exit 91
{JOBRUNNER} --site {site} run cap 2300.-- > /dev/null 2> {site}/err2; echo "exit2 $?"
cp {site}/work/2300.--.nwk {site}/result.nwk
mkdir -p {site}/small && mount -t tmpfs -o size=1m tmpfs {site}/small || exit 92
{JOBRUNNER} --site {site}/small/b build-local --pieces 4 2> {site}/err3; echo "exit3 $?"
echo "left3 $(ls -A {site}/small | wc -l)"
mkdir {site}/small/c
{ADDQ} --site {site}/small/c p plan 2..4 2> {site}/err4; echo "exit4 $? $(ls -A {site}/small/c | wc -l)"
{ADDQ} --site {site}/small/c p plan 2..4 --no-space-check > /dev/null 2>&1; echo "exit5 $?"
{ADDQ} --site {site}/small/c p plan 2..4 2> {site}/err6; echo "exit6 $?"
"#
    );
    let o = Command::new("unshare")
        .args(["-m", "sh", "-c", &script])
        .output()
        .unwrap();
    let out = fixture::text(&o.stdout);
    let err1 = std::fs::read_to_string(d.join("err1")).unwrap_or_default();
    // Refused before writing a page: exit 4 (too little space, no attempt used), a message
    // naming the job, the directory and both sizes, and no checkpoint.
    assert!(
        out.contains("exit1 4"),
        "first run should find too little space: {out} {}",
        stderr(&o)
    );
    let needs = format!("job cap 2300.-- 0 2013760: needs 507.9 kB in {site}/work, ");
    assert!(
        err1.contains(&needs) && err1.trim_end().ends_with(" kB free"),
        "error should name the job, the directory and both sizes: {err1}"
    );
    assert!(out.contains("ckpt1 none"), "{out}");
    assert!(
        out.contains("exit2 0"),
        "{out} {}",
        std::fs::read_to_string(d.join("err2")).unwrap_or_default()
    );
    // A build that cannot fit is refused before it writes anything, with the sizes.
    let err3 = std::fs::read_to_string(d.join("err3")).unwrap_or_default();
    assert!(
        out.contains("exit3 4") && out.contains("left3 0"),
        "{out} {err3}"
    );
    assert!(
        err3.contains("build 2..4 pieces: needs ")
            && err3.contains(&format!(" in {site}/small/b, "))
            && err3.trim_end().ends_with(" free"),
        "{err3}"
    );
    // So is a plan queued for it, unless told to go ahead.
    let err4 = std::fs::read_to_string(d.join("err4")).unwrap_or_default();
    assert!(
        out.contains("exit4 4 0") && out.contains("exit5 0"),
        "{out} {err4}"
    );
    assert!(
        err4.contains("addq plan 2..4: needs ") && err4.contains("--no-space-check"),
        "{err4}"
    );
    // The same plan again adds nothing, but what is queued still needs the room: a build
    // resumed with its plan is refused too.
    let err6 = std::fs::read_to_string(d.join("err6")).unwrap_or_default();
    assert!(
        out.contains("exit6 4") && err6.contains("addq plan 2..4: needs "),
        "{out} {err6}"
    );
    let a = std::fs::read(d.join("result.nwk")).unwrap();
    let b = std::fs::read(clean.join("work/2300.--.nwk")).unwrap();
    assert!(a == b, "the completed job differs from an undisturbed one");
}

/// The slice indexing of the work file agrees with the slice count.
#[test]
fn work_file_size_follows_the_slice() {
    let s: Slice = "2300.--".parse().unwrap();
    let count = SliceIndex::new(s).count();
    assert_eq!(
        nowdb::solve::store::file_len(count),
        8192 * (count.div_ceil(32768) + 1)
    );
    let _ = RunOptions::default();
}

/// The full 2..6-piece build with its database (about 30 minutes on 2 cores, so not in the
/// default run): `cargo test --release --test solver -- --ignored six_pieces`. Checks the
/// published position totals, the win/loss/draw figures quoted in docs/TESTING.md, that
/// every value of every slice agrees with its successors (in the work files here, in the
/// compressed files by the build's `ver`), and the database size quoted in
/// docs/PERFORMANCE.md.
#[test]
#[ignore]
fn six_pieces_build_verifies_and_matches_the_documented_figures() {
    let d = fixture::scratch("solver", "six");
    build(&d, 6, |_| {});
    let site = Site::new(&d);
    let mut per_pieces: BTreeMap<u32, [u64; 4]> = BTreeMap::new();
    for (s, c) in nowdb::status::solved_counts(&site).unwrap() {
        let e = per_pieces.entry(s.pieces()).or_default();
        e[0] += c.positions;
        e[1] += c.win;
        e[2] += c.loss;
        e[3] += c.draw;
    }
    for p in 2..=6 {
        assert_eq!(per_pieces[&p][0], two_sided_total(p), "{p} pieces");
    }
    assert_eq!(
        per_pieces[&6],
        [2_426_085_676, 1_154_792_344, 848_750_789, 422_542_543]
    );
    let n = nowdb::solve::verify::verify_site(
        &site,
        2,
        &mut nowdb::progress::Progress::lines(&mut std::io::sink(), std::time::Duration::MAX),
    )
    .unwrap();
    assert_eq!(n, 2_571_945_320);
    let db: Vec<u64> = std::fs::read_dir(site.db_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "ndb"))
        .map(|p| std::fs::metadata(p).unwrap().len())
        .collect();
    assert_eq!((db.len(), db.iter().sum::<u64>()), (3919, 31_067_453));
    std::fs::remove_dir_all(&d).unwrap();
}
