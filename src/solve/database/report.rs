//! What `dbprobe --site` prints: a position's value and its moves' values, batch answers,
//! and database checks.

use super::check::{CheckReport, check_every_position, check_random};
use crate::cli::{CliError, output_error};
use crate::db::mtc::Stored;
use crate::db::probe::{Database, side_name};
use crate::inspect::move_text;
use crate::notation::{Setup, format_fen};
use crate::solve::Site;
use std::io::{BufRead, Write};

fn failed(e: impl std::fmt::Display) -> CliError {
    CliError::Failed(e.to_string())
}

/// Opens `<site>/db`.
pub fn open_database(site: &Site, cache_mb: usize) -> Result<Database, CliError> {
    Database::open(&site.db_dir(), cache_mb << 20).map_err(failed)
}

/// `dbprobe --site DIR FEN`: the value for the side to move and each move's value for
/// the side that plays it.
pub fn write_probe(
    db: &Database,
    setup: &Setup,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let value = db.probe_setup(setup).map_err(failed)?;
    let moves: Vec<(String, &str)> = db
        .move_values(setup)
        .map_err(failed)?
        .iter()
        .map(|(m, v)| (move_text(setup, m), v.name()))
        .collect();
    let fen = format_fen(setup);
    let text = if json {
        let list: Vec<serde_json::Value> = moves
            .iter()
            .map(|(m, v)| serde_json::json!({"move": m, "value": v}))
            .collect();
        crate::cli::json_line(&serde_json::json!({
            "fen": fen,
            "to_move": side_name(setup.to_move),
            "value": value.to_string(),
            "moves": list,
        }))
    } else {
        let mut t = format!(
            "fen\t{fen}\nto_move\t{}\nvalue\t{value}\n",
            side_name(setup.to_move)
        );
        for (m, v) in &moves {
            t += &format!("move\t{m}\t{v}\n");
        }
        if moves.is_empty() {
            t += "no legal move: the side to move has lost\n";
        }
        t
    };
    out.write_all(text.as_bytes()).map_err(output_error)
}

/// `dbprobe --site DIR --batch`: one FEN per input line, `FEN<TAB>value` per output line.
/// A bad line is reported on stderr with its number and the exit is non-zero; the other
/// lines are still answered.
pub fn write_batch(
    db: &Database,
    input: &mut dyn BufRead,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let mut bad = 0;
    for (n, line) in input.lines().enumerate() {
        let line = line.map_err(|e| failed(format!("reading stdin: {e}")))?;
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        let answer = text
            .parse::<Setup>()
            .map_err(|e| e.to_string())
            .and_then(|s| db.probe_setup(&s).map_err(|e| e.to_string()));
        match answer {
            Ok(v) if json => write!(
                out,
                "{}",
                crate::cli::json_line(&serde_json::json!({"fen": text, "value": v.to_string()}))
            ),
            Ok(v) => writeln!(out, "{text}\t{v}"),
            Err(e) => {
                bad += 1;
                eprintln!("dbprobe: stdin line {}: {e}", n + 1);
                Ok(())
            }
        }
        .map_err(output_error)?;
    }
    out.flush().map_err(output_error)?;
    if bad > 0 {
        return Err(failed(format!("{bad} input line(s) could not be answered")));
    }
    Ok(())
}

/// `dbprobe --site DIR --check`: every position of the slices of `pieces` pieces (all
/// built pieces when `None`), or `random` random positions of `pieces` pieces.
pub fn write_check(
    site: &Site,
    db: &Database,
    pieces: Option<u32>,
    random: Option<u64>,
    threads: usize,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let mut progress = crate::progress::Progress::stderr(std::time::Duration::from_secs(5));
    // Listed here, not when the database is opened: a job process opens it for a few
    // slices, and parsing every file name of a 2..6 directory cost a small job about as
    // much as its own work.
    let built = crate::db::probe::list_slices(db.dir()).map_err(failed)?;
    let report: CheckReport = match random {
        Some(n) => {
            let most = built.iter().map(|s| s.pieces()).max().unwrap_or(0);
            let p = pieces.unwrap_or(most);
            check_random(site, db, p, n, 0x9E37_79B9_7F4A_7C15, &mut progress).map_err(failed)?
        }
        None => {
            let slices: Vec<_> = built
                .into_iter()
                .filter(|s| pieces.is_none_or(|p| s.pieces() == p))
                .collect();
            check_every_position(site, db, &slices, threads, &mut progress).map_err(failed)?
        }
    };
    progress.finish();
    let secs = report.elapsed.as_secs_f64();
    let rate = report.positions as f64 / secs.max(1e-9);
    let per_probe = report.blocks_read as f64 / report.positions.max(1) as f64;
    let text = if json {
        crate::cli::json_line(&serde_json::json!({
            "slices": report.slices,
            "positions": report.positions,
            "seconds": crate::cli::millis(secs),
            "probes_per_second": rate.round(),
            "blocks_read": report.blocks_read,
            "equal": true,
        }))
    } else {
        format!(
            "checked {} positions of {} slices against solved/: all equal\n{secs:.2} s, {:.0} probes/s, {} blocks read ({per_probe:.4} per probe)\n",
            report.positions, report.slices, rate, report.blocks_read
        )
    };
    out.write_all(text.as_bytes()).map_err(output_error)
}

/// `dbprobe --site DIR --mtc FEN`: the value and the plies to conversion for the side to
/// move, what the database stores for it (exact, or short), and each move's plies for the
/// side that plays it (`db/<slice>.mtc`; short ones searched).
pub fn write_mtc(
    db: &Database,
    setup: &Setup,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    use crate::solve::mtc::play::{Distances, move_distances};
    let mut dist = Distances::new(db);
    let pos = setup.black_to_move();
    let (value, plies, moves) = move_distances(db, &mut dist, &pos).map_err(failed)?;
    let threshold = db
        .mtc_slice(&crate::slice::Slice::of(&pos))
        .map(|s| s.file.threshold)
        .unwrap_or(crate::db::mtc::THRESHOLD);
    let stored = match value {
        crate::value::Value::Draw => None,
        _ => Some(dist.stored(&pos).map_err(failed)?),
    };
    let fen = format_fen(setup);
    let text = if json {
        let list: Vec<serde_json::Value> = moves
            .iter()
            .map(|m| {
                serde_json::json!({
                    "move": move_text(setup, &m.mv),
                    "value": m.value.name(),
                    "plies": m.plies,
                })
            })
            .collect();
        crate::cli::json_line(&serde_json::json!({
            "fen": fen,
            "to_move": side_name(setup.to_move),
            "value": value.to_string(),
            "plies": plies,
            "stored": match stored {
                None => serde_json::Value::Null,
                Some(Stored::Short) => serde_json::json!("short"),
                Some(Stored::Plies(d)) => serde_json::json!(d),
            },
            "threshold": threshold,
            "moves": list,
        }))
    } else {
        let shown = |p: Option<u32>| p.map_or("-".to_string(), |p| p.to_string());
        let mut t = format!(
            "fen\t{fen}\nto_move\t{}\nvalue\t{value}\nplies\t{}\n",
            side_name(setup.to_move),
            shown(plies)
        );
        match stored {
            None => {}
            Some(Stored::Short) => t += &format!("stored\tshort (below {threshold} plies)\n"),
            Some(Stored::Plies(d)) => t += &format!("stored\t{d}\n"),
        }
        for m in &moves {
            t += &format!(
                "move\t{}\t{}\t{}\n",
                move_text(setup, &m.mv),
                m.value.name(),
                shown(m.plies)
            );
        }
        if moves.is_empty() {
            t += "no legal move: the side to move has lost\n";
        }
        t
    };
    out.write_all(text.as_bytes()).map_err(output_error)
}

/// `dbprobe --site DIR --play FEN`: the game the databases play from a won or lost
/// position, as PDN (with `--json`: the moves, their plies and the PDN).
pub fn write_play(
    db: &Database,
    setup: &Setup,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    use crate::solve::mtc::play::{Distances, pdn, play};
    let game = play(db, &mut Distances::new(db), setup).map_err(failed)?;
    let text = if json {
        let plies: Vec<serde_json::Value> = game
            .plies
            .iter()
            .map(|p| {
                serde_json::json!({
                    "fen": format_fen(&p.before),
                    "move": p.text,
                    "plies": p.plies,
                    "converts": p.converts,
                })
            })
            .collect();
        crate::cli::json_line(&serde_json::json!({
            "fen": format_fen(setup),
            "value": game.value.to_string(),
            "winner": side_name(game.winner),
            "plies": plies,
            "end": format_fen(&game.end),
            "pdn": pdn(&game),
        }))
    } else {
        pdn(&game)
    };
    out.write_all(text.as_bytes()).map_err(output_error)
}
