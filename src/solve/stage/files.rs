//! The files behind a pair's stages: publication to `solved/`, the position-queue rounds
//! and checkpoints a stage leaves behind, the verified markers, and what the database
//! directory says of a published pair.

use super::Stage;
use super::machine::rounds_kept_from;
use crate::slice::{Slice, SlicePair};
use crate::solve::{Result, Site, posqueue, store};
use crate::solve_err;

/// Entries queued by round `r` on the pair's slices.
pub fn round_changes(site: &Site, slices: &[Slice], round: u32) -> Result<u64> {
    let mut n = 0;
    for s in slices {
        n += posqueue::round_entries(site, s, round)?;
    }
    Ok(n)
}

/// Moves both slices of a filled pair to `solved/` (syncing them first when their pages were
/// written without `fsync`), then drops their position queues and checkpoints.
pub fn publish_pair(site: &Site, slices: &[Slice], sync_first: bool) -> Result<()> {
    publish(site, slices, sync_first, |s| {
        (site.work_file(s), site.solved_file(s))
    })
}

/// Moves each slice's file `paths(s).0` to `paths(s).1` (a slice already moved by an
/// attempt stopped before the other is left as it is), then drops the pair's position
/// queues and checkpoints.
fn publish(
    site: &Site,
    slices: &[Slice],
    sync_first: bool,
    paths: impl Fn(&Slice) -> (std::path::PathBuf, std::path::PathBuf),
) -> Result<()> {
    for s in slices {
        let (from, to) = paths(s);
        if !from.exists() && to.exists() {
            continue;
        }
        if sync_first {
            std::fs::File::open(&from)
                .and_then(|f| f.sync_all())
                .map_err(|e| solve_err!("{}: {e}", from.display()))?;
        }
        move_file(&from, &to).map_err(|e| solve_err!("publishing {}: {e}", from.display()))?;
    }
    // One sync of `solved/` makes both renames durable (a crash between them is finished
    // by the next publication or `finish_interrupted_publish`, whichever of the two
    // survived), before anything the unpublished pair would need is dropped.
    if let Some(s) = slices.first() {
        store::sync_dir(&paths(s).1)?;
    }
    for s in slices {
        let _ = std::fs::remove_dir_all(site.queue_dir(s));
    }
    remove_checkpoints(site, slices)
}

/// Renames `from` to `to`; across filesystems (a pair job's local scratch work file going
/// to the site's `solved/`) copies to a hidden name beside `to`, syncs it and renames that,
/// so `to` still appears whole or not at all.
fn move_file(from: &std::path::Path, to: &std::path::Path) -> std::io::Result<()> {
    match std::fs::rename(from, to) {
        Err(e) if e.raw_os_error() == Some(libc::EXDEV) => {
            // Copies killed before their rename, an hour old: a copy takes seconds.
            crate::files::remove_stale_temporaries(to, std::time::Duration::from_secs(3600));
            let name = to.file_name().expect("a file").to_string_lossy();
            let tmp = to.with_file_name(format!(".{name}.{}", std::process::id()));
            std::fs::copy(from, &tmp)?;
            std::fs::File::open(&tmp)?.sync_all()?;
            std::fs::rename(&tmp, to)?;
            std::fs::remove_file(from)
        }
        other => other,
    }
}

/// Removes the job checkpoints (and local stage records) of the slices.
pub fn remove_checkpoints(site: &Site, slices: &[Slice]) -> Result<()> {
    let dir = site.root().join("work/ckpt");
    let entries = match std::fs::read_dir(&dir) {
        // A site no job has run on yet.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        other => other.map_err(|e| solve_err!("{}: {e}", dir.display()))?,
    };
    for e in entries {
        let e = e?;
        let name = e.file_name().to_string_lossy().into_owned();
        if slices.iter().any(|s| name.contains(&format!("-{s}-"))) {
            std::fs::remove_file(e.path())?;
        }
    }
    Ok(())
}

/// A crash between the renames of a pair's publication leaves one slice in `solved/` and the
/// other filled in `work/`: both fills were complete, so the publication is finished.
pub fn finish_interrupted_publish(site: &Site, slices: &[Slice]) -> Result<()> {
    if !slices.iter().any(|s| site.is_solved(s)) {
        return Ok(());
    }
    for s in slices.iter().filter(|s| !site.is_solved(s)) {
        let from = site.work_file(s);
        std::fs::rename(&from, site.solved_file(s)).map_err(|e| {
            solve_err!(
                "{} is solved but its mirror's work file {} cannot be published: {e}",
                slices[0],
                from.display()
            )
        })?;
        store::sync_dir(&site.solved_file(s))?;
    }
    Ok(())
}

/// The marker `ver` leaves for a slice whose compressed file it checked. It names the
/// format version, so a database of an older version is built and checked again. The
/// markers have their own directory: `work/ckpt/` is listed whenever a pair is published,
/// and a marker per slice there made that listing grow with the site (6,901 at 2..7).
pub fn verified_marker(site: &Site, s: &Slice) -> std::path::PathBuf {
    let version = crate::db::format::VERSION;
    verified_dir(site).join(format!("{s}.v{version}"))
}

/// The directory of the verified markers.
fn verified_dir(site: &Site) -> std::path::PathBuf {
    site.root().join("work/verified")
}

/// Where sites built before session 20 keep the marker (still read, never written).
fn old_verified_marker(site: &Site, s: &Slice) -> std::path::PathBuf {
    let version = crate::db::format::VERSION;
    site.root()
        .join(format!("work/ckpt/db-{s}.v{version}.verified"))
}

/// Where a slice's marker may be: its place, then where older sites keep it.
pub fn verified_markers(site: &Site, s: &Slice) -> [std::path::PathBuf; 2] {
    [verified_marker(site, s), old_verified_marker(site, s)]
}

/// The marker of a slice whose compressed moves to conversion `ver` checked.
pub fn mtc_verified_marker(site: &Site, s: &Slice) -> std::path::PathBuf {
    let version = crate::db::mtc::MTC_VERSION;
    verified_dir(site).join(format!("{s}.mtc.v{version}"))
}

/// Whether `ver` checked slice `s`'s compressed values (of the current format).
pub fn values_verified(site: &Site, s: &Slice) -> bool {
    verified_markers(site, s).iter().any(|m| m.exists())
}

/// Whether slice `s` has moves to conversion in `solved/`, which its database then holds.
fn has_distances(site: &Site, s: &Slice) -> bool {
    crate::solve::site::finished(&site.mtc_solved_file(s))
}

/// `--release-solved`: removes the verified pair's `solved/` files (values, and distances
/// if any), each after writing the tombstone that keeps the pair solved for the stages; a
/// crash between the two leaves both, and the next call removes the file. Returns the bytes
/// freed.
pub fn release_solved(site: &Site, slices: &[Slice]) -> Result<u64> {
    let mut freed = 0;
    for s in slices {
        for path in [site.solved_file(s), site.mtc_solved_file(s)] {
            let Ok(meta) = std::fs::metadata(&path) else {
                continue;
            };
            let tombstone = crate::solve::site::released_file(&path);
            let text = format!(
                "{} was verified in db/ and removed to free {} bytes (--release-solved)\n",
                path.display(),
                meta.len()
            );
            crate::files::replace(&tombstone, text.as_bytes(), crate::files::Durability::Full)
                .map_err(|e| solve_err!("{}: {e}", tombstone.display()))?;
            std::fs::remove_file(&path).map_err(|e| solve_err!("{}: {e}", path.display()))?;
            freed += meta.len();
        }
    }
    if let Some(s) = slices.first() {
        store::sync_dir(&site.solved_file(s))?;
    }
    Ok(freed)
}

/// Whether `ver` checked slice `s`'s compressed files (of the current format): the values,
/// and the moves to conversion when the slice has them.
pub fn is_verified(site: &Site, s: &Slice) -> bool {
    values_verified(site, s) && (!has_distances(site, s) || mtc_verified_marker(site, s).exists())
}

/// Writes the verified markers of the slices' values.
pub fn mark_verified(site: &Site, slices: &[Slice]) -> Result<()> {
    write_markers(site, slices, verified_marker)
}

/// Writes the verified markers of the slices' moves to conversion.
pub fn mark_mtc_verified(site: &Site, slices: &[Slice]) -> Result<()> {
    write_markers(site, slices, mtc_verified_marker)
}

fn write_markers(
    site: &Site,
    slices: &[Slice],
    marker: fn(&Site, &Slice) -> std::path::PathBuf,
) -> Result<()> {
    let dir = verified_dir(site);
    std::fs::create_dir_all(&dir).map_err(|e| solve_err!("{}: {e}", dir.display()))?;
    for s in slices {
        let m = marker(site, s);
        std::fs::write(&m, "").map_err(|e| solve_err!("{}: {e}", m.display()))?;
    }
    Ok(())
}

/// The work of `stage` on slice `s` that is done already ([`super::machine::work`]'s
/// `done`): `build` of a slice with current database files, `ver` of one whose values were
/// verified before its distances came (it goes on to `mtcver` alone).
pub fn stage_done(site: &Site, stage: Stage, s: &Slice) -> bool {
    match stage {
        Stage::Build => is_built(site, s),
        Stage::Ver => values_verified(site, s),
        _ => false,
    }
}

/// Whether slice `s` has a file in `db/` of the current format (its `build` is done), and
/// one of its moves to conversion when it has them.
pub fn is_built(site: &Site, s: &Slice) -> bool {
    built_with(site, s, has_distances(site, s))
}

/// Whether slice `s` has a current file in `db/`, and in `db/mtc/` if `distances`.
fn built_with(site: &Site, s: &Slice, distances: bool) -> bool {
    let db = site.db_dir();
    crate::db::format::is_current(&crate::db::probe::slice_path(&db, s))
        && (!distances || crate::db::mtc::is_current(&crate::db::mtc::mtc_path(&db, s)))
}

/// Where a published pair goes next: compressing, checking, or nothing left to do.
/// A marker counts only while its file is there: a database file deleted or replaced by
/// one of another version is built and checked again.
pub fn database_stage(site: &Site, database: bool, slices: &[Slice]) -> Stage {
    if !database {
        return Stage::Done;
    }
    if !slices.iter().all(|s| is_built(site, s)) {
        Stage::Build
    } else if slices.iter().all(|s| is_verified(site, s)) {
        Stage::Done
    } else {
        Stage::Built
    }
}

/// The database stages' work on the pair in positions passed over (progress), as (done, in
/// all), the way the pair will go: `build` and `ver` of each slice not done yet
/// ([`stage_done`]; once distances still to compute are published, `build` is due for a
/// slice without current compressed files of both), then, when the site builds distances,
/// `mtcver` over the whole pair.
pub fn database_work(site: &Site, database: bool, slices: &[Slice]) -> (u64, u64) {
    if !database {
        return (0, 0);
    }
    let distances = crate::solve::mtc::wanted(site);
    let pending = mtc_pending(site, slices);
    let stage = match pending {
        true => Stage::Build,
        false => database_stage(site, database, slices),
    };
    let passes = 2 + distances as u64;
    slices.iter().fold((0, 0), |(done, all), s| {
        let build = match pending {
            true => !built_with(site, s, true),
            false => stage == Stage::Build && !stage_done(site, Stage::Build, s),
        };
        let ver = stage != Stage::Done && !stage_done(site, Stage::Ver, s);
        let mtcver = stage != Stage::Done && distances;
        let left = build as u64 + ver as u64 + mtcver as u64;
        (done + (passes - left) * s.count(), all + passes * s.count())
    })
}

/// Whether every slice of the pair has its moves to conversion in `solved/`.
pub fn mtc_done(site: &Site, slices: &[Slice]) -> bool {
    slices.iter().all(|s| has_distances(site, s))
}

/// Whether the pair's distance rounds have begun: a slice has its work file (round 1
/// makes both; publishing moves them to `solved/`).
pub fn mtc_started(site: &Site, slices: &[Slice]) -> bool {
    slices.iter().any(|s| site.mtc_work_file(s).exists())
}

/// Whether the site builds moves to conversion and the pair's are not in `solved/` yet.
pub fn mtc_pending(site: &Site, slices: &[Slice]) -> bool {
    crate::solve::mtc::wanted(site) && !mtc_done(site, slices)
}

/// Where a pair goes once it is in `solved/`: its moves to conversion when the site builds
/// them and they are not done, then its database stage.
pub fn solved_stage(site: &Site, database: bool, slices: &[Slice]) -> Stage {
    match mtc_pending(site, slices) {
        true => Stage::Mtc(1),
        false => database_stage(site, database, slices),
    }
}

/// Moves both slices' finished moves to conversion to `solved/` (syncing them first when
/// their pages were written without `fsync`), then drops their position queues and
/// checkpoints (and, first, their watched moves).
pub fn publish_mtc(site: &Site, slices: &[Slice], sync_first: bool) -> Result<()> {
    // The watched moves serve only the rounds, which are over: dropped first, so that no
    // crash leaves them behind a published pair.
    remove_files(slices.iter().map(|s| site.mtc_watch_file(s)))?;
    publish(site, slices, sync_first, |s| {
        (site.mtc_work_file(s), site.mtc_solved_file(s))
    })
}

/// Removes what an earlier attempt at the pair's moves to conversion left (work files,
/// position queues, checkpoints): a pair whose rounds ran without `fsync` starts them again.
pub fn discard_mtc_work(site: &Site, slices: &[Slice]) -> Result<()> {
    let files = slices
        .iter()
        .flat_map(|s| [site.mtc_work_file(s), site.mtc_watch_file(s)]);
    discard(site, slices, files)
}

/// Entries slice `s` queued in round `r` (the input of its mirror's round `r + 1`).
pub fn que_input(site: &Site, s: &Slice, r: u32) -> Result<u64> {
    Ok(posqueue::round_entries(site, s, r)?)
}

/// What a pair entering `stage` does to its files: drop the position-queue rounds it no
/// longer reads.
pub fn enter(site: &Site, slices: &[Slice], stage: Stage) -> Result<()> {
    if let Some(keep) = rounds_kept_from(stage) {
        for s in slices {
            posqueue::remove_rounds_before(site, s, keep)?;
        }
    }
    Ok(())
}

/// Removes the pair's work files, position queues, checkpoints and stage record: what an
/// unsynced or interrupted attempt left cannot be trusted after a crash, and the pair starts
/// again from nothing.
pub fn discard_work(site: &Site, slices: &[Slice]) -> Result<()> {
    let files = slices.iter().map(|s| site.work_file(s));
    discard(
        site,
        slices,
        files.chain([super::record_path(site, slices)]),
    )
}

/// Removes `files` (those that exist) and the pair's position queues and checkpoints.
fn discard(
    site: &Site,
    slices: &[Slice],
    files: impl IntoIterator<Item = std::path::PathBuf>,
) -> Result<()> {
    remove_files(files)?;
    for s in slices {
        let _ = std::fs::remove_dir_all(site.queue_dir(s));
    }
    remove_checkpoints(site, slices)
}

/// Removes `files`, those that exist.
fn remove_files(files: impl IntoIterator<Item = std::path::PathBuf>) -> Result<()> {
    for path in files {
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(solve_err!("removing {}: {e}", path.display()));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Whether every pair below `pair` has its values verified in `db/` (`ver` reads their
/// files; the distances of a pair need only the values below it).
pub fn below_verified(site: &Site, pair: &SlicePair) -> bool {
    pair.dependencies()
        .iter()
        .all(|d| d.slices().iter().all(|s| values_verified(site, s)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verified_marker_without_its_database_file_is_built_again() {
        let root = crate::files::test_dir("stage");
        let site = Site::new(&root);
        std::fs::create_dir_all(root.join("work/ckpt")).unwrap();
        let slices = ["1100.--".parse::<Slice>().unwrap()];
        mark_verified(&site, &slices).unwrap();
        assert_eq!(database_stage(&site, true, &slices), Stage::Build);
        assert_eq!(database_stage(&site, false, &slices), Stage::Done);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn markers_stay_out_of_the_checkpoint_directory_and_old_ones_still_count() {
        let root = crate::files::test_dir("stage-markers");
        let site = Site::new(&root);
        std::fs::create_dir_all(root.join("work/ckpt")).unwrap();
        let [a, b] = ["1100.--", "2100.--"].map(|s| s.parse::<Slice>().unwrap());
        mark_verified(&site, &[a]).unwrap();
        assert!(is_verified(&site, &a) && !is_verified(&site, &b));
        assert_eq!(
            std::fs::read_dir(root.join("work/ckpt")).unwrap().count(),
            0
        );
        // A site verified by an older build keeps its markers in work/ckpt.
        std::fs::write(old_verified_marker(&site, &b), "").unwrap();
        assert!(is_verified(&site, &b));
        std::fs::remove_dir_all(&root).unwrap();
    }
}
