//! Moves to conversion (issue 34): the distances are the same bytes however their rounds are
//! split, ordered, killed and resumed, and whichever driver ran them (the local build, `pair`
//! jobs, phase jobs of the queue runners); every stored distance equals the one its moves
//! give (`mtc::verify`). Their values against the independent brute-force solver are in
//! tests/pipeline_vs_brute.rs.

mod common;

use common::fixture::{self, ADDQ, JOBRUNNER, copy_dir, stderr};
use common::site::{assert_same_build, build, build_logged, sigkill_until_done};
use nowdb::Slice;
use nowdb::solve::Site;
use nowdb::solve::solved::SolvedStore;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;

/// The pair the tests work on: 5 pieces, several pages, and what it depends on.
const ONLY: &str = "2201.-6";

/// `ONLY` and its dependencies solved and compressed, without distances: built once,
/// copied by the tests.
fn base() -> &'static Path {
    static BASE: OnceLock<PathBuf> = OnceLock::new();
    BASE.get_or_init(|| {
        let d = fixture::scratch("mtc", "base");
        build(&d, 5, |o| o.only = vec![ONLY.parse().unwrap()]);
        d
    })
}

/// [`base`] with distances added by one runner, one range per phase.
fn reference() -> &'static Path {
    static REFERENCE: OnceLock<PathBuf> = OnceLock::new();
    REFERENCE.get_or_init(|| {
        let d = copy_of_base("reference");
        build(&d, 5, |o| {
            o.only = vec![ONLY.parse().unwrap()];
            o.mtc = true;
            o.splits = Some(1);
            o.runners = 1;
        });
        d
    })
}

fn copy_of_base(name: &str) -> PathBuf {
    let d = fixture::scratch("mtc", name);
    copy_dir(base(), &d);
    d
}

#[test]
fn every_distance_equals_what_its_moves_give() {
    let site = Site::new(reference());
    let store = SolvedStore::new(&site, 1 << 30);
    let slices = site.solved_slices().unwrap();
    assert!(slices.len() >= 20, "{} slices", slices.len());
    let mut won = 0;
    for s in &slices {
        assert!(site.mtc_solved_file(s).exists(), "{s} has no distances");
        let sum = nowdb::solve::mtc::verify::check_range(&site, s, 0, s.count(), &store)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(sum.positions, s.count());
        won += sum.won;
    }
    assert!(won > 100_000, "{won} won positions");
    // Nothing is left behind: no work files, position queues or checkpoints of the rounds.
    let work: Vec<_> = std::fs::read_dir(reference().join("work"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".mtc"))
        .collect();
    assert!(work.is_empty(), "{work:?}");
}

/// One range per phase, 3 or 10 ranges in shuffled orders: the same bytes.
#[test]
fn splits_and_orders_give_identical_distances() {
    for (n, seed) in [(3, 7), (10, 99)] {
        let d = copy_of_base(&format!("split{n}"));
        build(&d, 5, |o| {
            o.only = vec![ONLY.parse().unwrap()];
            o.mtc = true;
            o.splits = Some(n);
            o.shuffle = Some(seed);
            // Every pair durable: its rounds checkpoint and record their stage.
            o.small_pair = 0;
        });
        assert_same_build(reference(), &d, &format!("{n} ranges, order {seed}"));
    }
}

/// Distances removed from `solved/` after a build (a disk lost, a file found damaged) are
/// computed again from their first round, to the same bytes. The local build leaves the
/// record of a pair's last round behind it; that record must not send the pair on to
/// publish work files that are gone.
#[test]
fn distances_removed_from_solved_are_computed_again() {
    let d = copy_of_base("removed");
    let with_distances = |o: &mut nowdb::solve::local::BuildOptions| {
        o.only = vec![ONLY.parse().unwrap()];
        o.mtc = true;
        o.small_pair = 0;
    };
    build(&d, 5, with_distances);
    let site = Site::new(&d);
    let slices = site.solved_slices().unwrap();
    for s in &slices {
        std::fs::remove_file(site.mtc_solved_file(s)).unwrap();
    }
    // The compressed files are current and checked already: the progress counts no
    // `build` for them, and ends whole.
    let (_, lines) = build_logged(&d, 5, with_distances);
    let last = lines.lines().last().unwrap_or_default();
    assert!(
        last.contains("moves to conversion 100.0%") && last.contains("database 100.0%"),
        "{lines}"
    );
    assert_same_build(
        reference(),
        &d,
        "distances removed from solved/ and built again",
    );
}

/// SIGKILL the whole build at random moments of its rounds (the values are solved
/// already, so every kill lands in an `mtc` job or between two), checkpointing at every
/// page; each restart resumes, and the distances are the same bytes.
#[test]
fn sigkill_during_the_rounds_resumes_to_identical_distances() {
    let d = copy_of_base("kill");
    let kills = sigkill_until_done(
        || {
            fixture::command(JOBRUNNER, &d)
                .args(["--checkpoint-secs", "0"])
                .args(["build-local", "--pieces", "5", "--only", ONLY, "--mtc"])
                .args(["--small-pair", "0", "--splits", "3", "--runners", "2"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        },
        0x3434_2026,
        400,
    );
    assert!(kills >= 3, "only {kills} kills landed before the end");
    assert_same_build(reference(), &d, &format!("after {kills} SIGKILLs"));
}

/// The watched moves of the rounds (`work/<slice>.mtw`) are hints: the build is stopped at
/// a checkpoint of its rounds again and again, every watch replaced by a random byte (a king
/// move, a converting move, one past the moves, none), and resumed; the distances are the
/// same bytes.
#[test]
fn random_watched_moves_change_no_distance() {
    let d = copy_of_base("watches");
    let mut rng = nowdb::rng::XorShift::new(0x77a7_2026);
    let mut garbled = 0;
    for run in 0.. {
        assert!(run < 400, "the build did not end after {run} stops");
        let out = fixture::command(JOBRUNNER, &d)
            .env(
                "NOWDB_FAULT",
                format!("mtc.checkpoint=exit:7@{}", 1 + rng.below(40)),
            )
            .args(["--checkpoint-secs", "0"])
            .args(["build-local", "--pieces", "5", "--only", ONLY, "--mtc"])
            .args(["--small-pair", "0", "--splits", "2", "--runners", "1"])
            .output()
            .unwrap();
        if out.status.success() {
            break;
        }
        assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
        for entry in std::fs::read_dir(d.join("work")).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "mtw") {
                let mut bytes = std::fs::read(&path).unwrap();
                // After the header page; mostly small, so that many name a real move.
                for b in &mut bytes[8192..] {
                    *b = match rng.below(10) {
                        0 => rng.below(256) as u8,
                        _ => rng.below(16) as u8,
                    };
                }
                std::fs::write(&path, bytes).unwrap();
                garbled += 1;
            }
        }
    }
    assert!(garbled >= 4, "only {garbled} watch files replaced");
    assert_same_build(reference(), &d, "random watched moves between the stops");
}

/// `addq p plan --mtc` through a runner daemon: small pairs as `pair` jobs (values and
/// distances in one process), the others as phase jobs whose rounds the runners queue;
/// then a site solved without distances gets them from a second plan. Both equal the
/// local build's bytes.
#[test]
fn the_queues_build_the_same_distances_as_the_local_build() {
    let local = fixture::scratch("mtc", "local4");
    build(&local, 4, |o| o.mtc = true);
    let run_daemon = |site: &Path| {
        let out = fixture::daemon(site, 2).output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    };
    let queued = fixture::scratch("mtc", "queued4");
    let plan = [
        "--pair-below",
        "20000",
        "--positions",
        "65536",
        "p",
        "plan",
        "2..4",
        "--mtc",
    ];
    fixture::ok(ADDQ, &queued, &plan);
    run_daemon(&queued);
    assert_same_build(&local, &queued, "plan --mtc through the queues");
    // Distances removed from solved/ after the build: the plan added again drops the done
    // records of their rounds (else the old ones judge the new rounds complete) and the
    // runners compute them again, to the same bytes.
    let site = Site::new(&queued);
    for s in site.solved_slices().unwrap() {
        std::fs::remove_file(site.mtc_solved_file(&s)).unwrap();
    }
    let again = fixture::run(ADDQ, &queued, &plan);
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(
        stderr(&again).contains("they are computed again from round 1"),
        "{}",
        stderr(&again)
    );
    run_daemon(&queued);
    assert_same_build(&local, &queued, "distances removed and planned again");
    // Every slice's values and distances checked (`ver`, `mtcver`), by pair jobs and by
    // phase jobs alike.
    let all_verified = |site: &Path| {
        let site = Site::new(site);
        for s in site.solved_slices().unwrap() {
            assert!(nowdb::solve::stage::is_verified(&site, &s), "{s}");
            let marker = nowdb::solve::stage::files::mtc_verified_marker(&site, &s);
            assert!(marker.exists(), "{}", marker.display());
        }
    };
    all_verified(&queued);
    // dbstatus counts the distances and their check.
    let summary: serde_json::Value = serde_json::from_str(&fixture::ok(
        common::fixture::DBSTATUS,
        &queued,
        &["--json", "summary"],
    ))
    .unwrap();
    let slices = Site::new(&queued).solved_slices().unwrap().len() as u64;
    assert_eq!(summary["distances"], slices, "{summary}");
    assert_eq!(summary["verified"], slices, "{summary}");
    let text = fixture::ok(common::fixture::DBSTATUS, &queued, &["summary"]);
    assert!(
        text.contains(&format!(", moves to conversion of {slices}, built")),
        "{text}"
    );
    // A site whose values were built without distances: the plan queues their first rounds.
    let later = fixture::scratch("mtc", "later4");
    build(&later, 4, |_| {});
    assert!(!later.join("solved/2200.--.mtc").exists());
    fixture::ok(ADDQ, &later, &["p", "plan", "2..4", "--mtc"]);
    // (Pairs under 2 M positions go to the small queue.)
    let lines = fixture::ok(ADDQ, &later, &["--list", "m"]);
    assert!(lines.contains("mtc 2200.--"), "{lines}");
    run_daemon(&later);
    assert_same_build(&local, &later, "distances added to a finished site");
    all_verified(&later);
    let stage = std::fs::read_to_string(later.join("done/2200.--.stage")).unwrap();
    assert_eq!(stage.trim(), "done");
}

/// The site remembers `--mtc`: a build without the flag goes on computing distances.
#[test]
fn the_site_remembers_that_it_builds_distances() {
    let d = copy_of_base("remember");
    nowdb::solve::mtc::set_wanted(&Site::new(&d))
        .unwrap()
        .keep();
    let out = fixture::run(
        JOBRUNNER,
        &d,
        &[
            "build-local",
            "--pieces",
            "5",
            "--only",
            ONLY,
            "--runners",
            "2",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_same_build(reference(), &d, "a build of a site that builds distances");
    let slice: Slice = ONLY.parse().unwrap();
    let m = nowdb::solve::mtc::MtcSlice::load(&Site::new(&d), slice).unwrap();
    assert!((0..slice.count()).any(|i| m.get(i).is_some_and(|d| d > 10)));
}

/// `dbprobe --play` on 20 won or lost positions of the pair (the 10 farthest from a
/// conversion and 10 at random): each game ends with the loser unable to move, every move
/// is legal by the reference move generator (independent of the crate's), the distance
/// falls by one each ply down to a conversion, and the first equals `dbprobe --mtc`'s.
#[test]
fn play_ends_in_a_win_by_legal_moves_within_the_stored_distances() {
    use common::reference::{Side, reference_moves};
    use nowdb::notation::parse_fen;
    let site = reference();
    let slice: Slice = ONLY.parse().unwrap();
    let m = nowdb::solve::mtc::MtcSlice::load(&Site::new(site), slice).unwrap();
    let ix = nowdb::SliceIndex::new(slice);
    let mut valued: Vec<(u32, u64)> = (0..slice.count())
        .filter_map(|i| m.get(i).map(|d| (d, i)))
        .collect();
    valued.sort_by_key(|&(d, i)| (std::cmp::Reverse(d), i));
    let mut rng = nowdb::rng::XorShift::new(34);
    let mut picked: Vec<u64> = valued.iter().take(10).map(|&(_, i)| i).collect();
    picked.extend((0..10).map(|_| valued[rng.below(valued.len() as u64) as usize].1));
    let fen = |p: &nowdb::Position| nowdb::notation::position_fen(p);
    let setup = |text: &str| parse_fen(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    let side = |s: &nowdb::Setup| match s.to_move {
        nowdb::Color::Black => Side::Black,
        nowdb::Color::White => Side::White,
    };
    let mut longest = 0;
    for i in picked {
        let start = fen(&ix.position(i).unwrap());
        let probe = fixture::ok(common::fixture::DBPROBE, site, &["--mtc", "--json", &start]);
        let probe: serde_json::Value = serde_json::from_str(&probe).unwrap();
        let out = fixture::ok(
            common::fixture::DBPROBE,
            site,
            &["--play", "--json", &start],
        );
        let game: serde_json::Value = serde_json::from_str(&out).unwrap();
        let plies = game["plies"].as_array().unwrap();
        assert_eq!(plies[0]["plies"], probe["plies"], "{start}");
        let winner = match probe["value"].as_str().unwrap() {
            "win" => "black",
            _ => "white",
        };
        assert_eq!(game["winner"], winner, "{start}");
        let mut fens: Vec<String> = plies
            .iter()
            .map(|p| p["fen"].as_str().unwrap().to_string())
            .collect();
        fens.push(game["end"].as_str().unwrap().to_string());
        for (k, w) in fens.windows(2).enumerate() {
            let (before, after) = (setup(&w[0]), setup(&w[1]));
            let moves = reference_moves(&before.board, side(&before));
            assert!(
                moves.results.contains(&after.board) && after.to_move != before.to_move,
                "{start}: ply {k} {} from {} is not a legal move",
                plies[k]["move"],
                w[0]
            );
            let (d, converts) = (
                plies[k]["plies"].as_u64().unwrap(),
                plies[k]["converts"] == true,
            );
            // At 1 ply: a conversion, or a king move that leaves the loser no move.
            let last = k + 1 == plies.len();
            assert_eq!(d == 1, converts || last, "{start}: ply {k} at {d} plies");
            if !converts {
                assert_eq!(
                    plies[k + 1]["plies"].as_u64().unwrap(),
                    d - 1,
                    "{start}: ply {k}"
                );
            }
        }
        let end = setup(fens.last().unwrap());
        let left = reference_moves(&end.board, side(&end));
        assert!(
            left.results.is_empty(),
            "{start}: the game ends at {}",
            fens.last().unwrap()
        );
        longest = longest.max(plies.len());
        let pdn = game["pdn"].as_str().unwrap();
        assert!(pdn.contains(&format!("[FEN \"{start}\"]")), "{pdn}");
    }
    assert!(longest > 40, "the longest game has {longest} plies");
}

/// The runners' view of killed `mtc` jobs: on a site whose values are solved, `addq plan
/// --mtc` queues the first rounds as phase jobs of 65,536 positions and the runners queue
/// the later rounds; a daemon checkpointing at every page runs them, and every `mtc` job
/// process that starts afresh SIGKILLs itself right after its first checkpoint (the fault
/// point `mtc.checkpoint`). Each kill is a failed attempt, retried from that checkpoint; the
/// build ends by itself with every job done and the local build's bytes.
#[test]
fn killed_mtc_jobs_of_the_runners_resume_to_identical_distances() {
    let site = copy_of_base("kill-queued");
    std::fs::write(
        site.join("hosts.toml"),
        "[jobs]\nmax_attempts = 3\nretry_backoff_secs = 1\n",
    )
    .unwrap();
    fixture::ok(
        ADDQ,
        &site,
        &[
            "--positions",
            "65536",
            "p",
            "plan",
            "2..5",
            "--only",
            ONLY,
            "--mtc",
        ],
    );
    let out = fixture::daemon(&site, 2)
        .args(["--checkpoint-secs", "0"])
        .env("NOWDB_FAULT", "mtc.checkpoint=kill")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_same_build(
        reference(),
        &site,
        "mtc jobs killed at their first checkpoint",
    );
    let states = nowdb::queue::held::list(&Site::new(&site)).unwrap();
    assert!(states.iter().all(|j| j.done), "jobs not done");
    // Every kill was one attempt, and kills hit the first round and later ones.
    let killed: Vec<_> = (states.iter())
        .filter(|s| s.attempts.as_ref().is_ok_and(|a| !a.is_empty()))
        .map(|s| s.job)
        .collect();
    let rounds: std::collections::BTreeSet<u32> = killed.iter().map(|j| j.round).collect();
    eprintln!("{} mtc jobs killed, in rounds {rounds:?}", killed.len());
    assert!(killed.iter().all(|j| j.phase == nowdb::solve::Phase::Mtc));
    assert!(rounds.contains(&1) && rounds.len() >= 3, "{rounds:?}");
}

/// The compressed distances are checked by `mtcver` jobs against their moves: a site built
/// with `--mtc` has them verified; a distance changed in `solved/` and compressed again
/// (one stored exactly, made 2 plies longer; one made short) fails the job, which names the
/// position and both numbers.
#[test]
fn mtcver_finds_a_wrong_compressed_distance() {
    use nowdb::solve::{Job, Phase, RunOptions, run_job};
    let d = fixture::scratch("mtc", "mtcver");
    copy_dir(reference(), &d);
    let site = Site::new(&d);
    let slice: Slice = ONLY.parse().unwrap();
    for s in site.solved_slices().unwrap() {
        assert!(nowdb::solve::stage::is_verified(&site, &s), "{s}");
        assert!(nowdb::db::mtc::mtc_path(&site.db_dir(), &s).exists(), "{s}");
    }
    let source = site.mtc_solved_file(&slice);
    let original = std::fs::read(&source).unwrap();
    let header = nowdb::solve::store::PAGE_BYTES;
    let run = |slice: Slice, bytes: &[u8]| {
        let source = site.mtc_solved_file(&slice);
        let job = Job::whole(Phase::MtcVer, slice, 0);
        std::fs::write(&source, bytes).unwrap();
        std::fs::remove_file(nowdb::db::mtc::mtc_path(&site.db_dir(), &slice)).unwrap();
        nowdb::solve::database::mtc::build_mtc(&site, &slice).unwrap();
        // With the solver's values (the pair's solved files there), and from the compressed
        // files alone with the values decoded and with no room to decode (every value a
        // probe): the same verdict, the same message.
        let exact = run_job(&site, &job, &RunOptions::default());
        // With the mirror's distances held a byte a position once the job has looked up a
        // few of them as runs (the environment makes any runs "larger than the cache"): a
        // job process, whose error names the same position and numbers.
        let flattened = std::process::Command::new(JOBRUNNER)
            .env("NOWDB_CACHE_BYTES", "0")
            .args([
                "--site",
                d.to_str().unwrap(),
                "run",
                "mtcver",
                &slice.to_string(),
            ])
            .output()
            .unwrap();
        match &exact {
            Ok(_) => assert!(flattened.status.success(), "{}", stderr(&flattened)),
            Err(e) => {
                assert!(!flattened.status.success());
                assert!(
                    stderr(&flattened).contains(&e.to_string()),
                    "{}",
                    stderr(&flattened)
                );
            }
        }
        let values: Vec<_> = [slice, slice.mirror()]
            .iter()
            .map(|s| site.solved_file(s))
            .collect();
        for f in &values {
            std::fs::rename(f, f.with_extension("aside")).unwrap();
        }
        let decoded = run_job(&site, &job, &RunOptions::default());
        let probed = run_job(
            &site,
            &job,
            &RunOptions {
                buffers: 0,
                ..RunOptions::default()
            },
        );
        for f in &values {
            std::fs::rename(f.with_extension("aside"), f).unwrap();
        }
        let verdict = |r: &nowdb::solve::Result<_>| {
            r.as_ref()
                .map(|o| format!("{o:?}"))
                .map_err(|e| e.to_string())
        };
        assert_eq!(verdict(&exact), verdict(&decoded));
        assert_eq!(verdict(&exact), verdict(&probed));
        exact
    };
    assert!(run(slice, &original).is_ok());
    let threshold = nowdb::db::mtc::THRESHOLD;
    // A won and a lost position at or above the threshold: `mtcver` reads a won one's
    // winning moves and a lost one's every move, and a short won one by its own shortcut.
    let db = nowdb::db::Database::open(&site.db_dir(), 1 << 20).unwrap();
    let index = nowdb::slice::index::SliceIndex::new(slice);
    for value in [nowdb::solve::Value::Win, nowdb::solve::Value::Loss] {
        let far = (header..original.len())
            .find(|&k| {
                original[k] as u32 > threshold
                    && db
                        .probe(&index.position((k - header) as u64).unwrap())
                        .unwrap()
                        == value
            })
            .unwrap_or_else(|| panic!("a {value} above the threshold"));
        let i = far - header;
        for (changed, says) in [
            (
                original[far] + 2,
                format!("has {} plies stored", original[far] + 1),
            ),
            (3, format!("has fewer than {threshold} plies stored")),
        ] {
            let mut bytes = original.clone();
            bytes[far] = changed;
            let err = run(slice, &bytes).expect_err("a wrong distance must fail mtcver");
            let text = err.to_string();
            assert!(text.contains(&format!("position {i} (")), "{text}");
            assert!(text.contains(&format!(", {value}) has")), "{text}");
            assert!(text.contains(&says), "{text}");
            assert!(
                text.contains(&format!("its moves give {} plies", original[far] - 1)),
                "{text}"
            );
        }
    }
    // A position without a black king converts at its first move, and `mtcver` passes it
    // unread when it stores a short distance; an exact one stored there is still read.
    let kingless = site
        .solved_slices()
        .unwrap()
        .into_iter()
        .filter(|s| s.material.bk == 0 && s.material.bm > 0)
        .max_by_key(|s| s.count())
        .unwrap();
    let source = site.mtc_solved_file(&kingless);
    let original = std::fs::read(&source).unwrap();
    // A byte holds plies + 1: 2 is a won or lost position one ply from a conversion.
    let near = (header..original.len())
        .find(|&k| original[k] == 2)
        .unwrap_or_else(|| panic!("{kingless}: a position 1 ply from a conversion"));
    let mut bytes = original.clone();
    bytes[near] = (threshold + 3) as u8;
    let err = run(kingless, &bytes).expect_err("a wrong distance must fail mtcver");
    let text = err.to_string();
    assert!(
        text.contains(&format!("position {} (", near - header)),
        "{text}"
    );
    assert!(
        text.contains(&format!("has {} plies stored", threshold + 2)),
        "{text}"
    );
    assert!(text.contains("its moves give 1 plies"), "{text}");
    assert!(run(kingless, &original).is_ok());
}

/// A plan or a build with `--mtc` that the disk check refuses leaves no `work/mtc` behind,
/// so a later command without the flag does not start on distances the operator never got
/// (a 1 MB tmpfs in a private mount namespace; needs root, as CI has).
#[test]
fn a_refused_mtc_plan_or_build_leaves_no_marker() {
    let mnt = fixture::scratch("mtc", "full");
    let script = format!(
        r#"set -u
mount -t tmpfs -o size=1m tmpfs {m} || exit 90
{ADDQ} --site {m} p plan 2..6 --mtc; echo "addq $?"
test -e {m}/work/mtc && echo "marker after addq"
{JOBRUNNER} --site {m} build-local --pieces 6 --mtc; echo "build $?"
test -e {m}/work/mtc && echo "marker after build"
{ADDQ} --site {m} p plan 2..6 --mtc --no-space-check > /dev/null; echo "forced $?"
test -e {m}/work/mtc && echo "marker after forced"
"#,
        m = mnt.display()
    );
    let run = std::process::Command::new("unshare")
        .args(["-m", "sh", "-c", &script])
        .output()
        .unwrap();
    let (said, err) = (
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr),
    );
    assert!(run.status.success(), "{said}\n{err}");
    assert_eq!(
        said.lines().collect::<Vec<_>>(),
        ["addq 4", "build 4", "forced 0", "marker after forced"],
        "{err}"
    );
    assert_eq!(err.matches(" free").count(), 2, "{err}");
}
