//! `dbprobe --site SITE --ship DIR`: a finished database copied out of a site, to ship.
//! Engines (the egdb library) and the Python module are pointed at a database directory
//! alone, so DIR holds `VERSION`, every slice file and a `MANIFEST` a receiver checks with
//! standard tools. Every file is checked on the copy, read back from the disk it was written
//! to, so that a damaged source and a bad write both show; the copy is assembled in
//! `DIR.partial-<host>-<pid>` and becomes DIR only when all of it checked out; the next ship
//! from the same host removes what an interrupted one left.

use crate::cli::{CliError, json_line, millis, output_error};
use crate::db::DbError;
use crate::db::crc32::{Crc32, crc32};
use crate::db::format::SliceFile;
use crate::db::mtc::{MtcFile, is_mtc_dir, mtc_dir, mtc_path};
use crate::db::probe::{VERSION_LINE, list_slices, slice_path};
use crate::files::FileOp;
use crate::progress::Progress;
use crate::slice::Slice;
use crate::solve::{Result, Site, SolveError};
use crate::solve_err;
use nix::fcntl::{PosixFadviseAdvice, posix_fadvise};
use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What a ship copied.
#[derive(Clone, Debug)]
pub struct Shipped {
    pub slices: usize,
    /// The database holds 2..`pieces` pieces.
    pub pieces: u32,
    /// Bytes of `VERSION` and the slice files (the `MANIFEST` not counted).
    pub bytes: u64,
    pub elapsed: Duration,
    /// Copies this host's interrupted ships left beside DIR, removed first.
    pub leftovers_removed: Vec<PathBuf>,
}

/// One line of the manifest.
struct Entry {
    name: String,
    bytes: u64,
    crc: u32,
}

/// Copies the database of `site` with slices of 2..`pieces` pieces (all it holds when
/// `None`) into `dest`, which must not exist or be empty; refuses an unfinished database.
pub fn ship(
    site: &Site,
    dest: &Path,
    pieces: Option<u32>,
    progress: &mut Progress,
) -> Result<Shipped> {
    let start = Instant::now();
    let db = site.db_dir();
    let version = read_version(&db)?;
    let (slices, pieces) = finished_slices(&db, pieces)?;
    check_destination(dest)?;
    let leftovers_removed = remove_leftovers(dest)?;
    let partial = Partial::create(dest)?;
    let total: u64 = slices
        .iter()
        .flat_map(|s| [slice_path(&db, s), mtc_path(&db, s)])
        .map(|p| std::fs::metadata(p).map_or(0, |m| m.len()))
        .sum();

    let mut entries = vec![copy_file(
        &db.join("VERSION"),
        &partial.path.join("VERSION"),
    )?];
    let mtc = mtc_dir(&db);
    if is_mtc_dir(&mtc) {
        let to = mtc_dir(&partial.path);
        std::fs::create_dir(&to).map_err(|e| SolveError::file(FileOp::Creating, &to, e))?;
        let mut version = copy_file(&mtc.join("VERSION"), &to.join("VERSION"))?;
        version.name = format!("mtc/{}", version.name);
        entries.push(version);
    }
    if entries[0].crc != crc32(version.as_bytes()) {
        return Err(solve_err!(
            "{}: its copy differs",
            db.join("VERSION").display()
        ));
    }
    for (k, s) in slices.iter().enumerate() {
        entries.extend(copy_slice(&db, &partial.path, s)?);
        if progress.due() {
            let done: u64 = entries.iter().map(|e| e.bytes).sum();
            let line = format!(
                "shipped {} of {} slices, {:.1} of {:.1} MB",
                k + 1,
                slices.len(),
                done as f64 / 1e6,
                total as f64 / 1e6
            );
            progress.update(done, total, &line);
        }
    }
    // Written durably, directory included: that also makes the slice files' names durable.
    write_manifest(&partial.path, &entries)?;
    partial.publish(dest)?;
    Ok(Shipped {
        slices: slices.len(),
        pieces,
        bytes: entries.iter().map(|e| e.bytes).sum(),
        elapsed: start.elapsed(),
        leftovers_removed,
    })
}

/// The prefix of this host's partial copies of `dest`: `DIR.partial-<host>-` (the host in
/// the name, so that a ship on another machine sharing the filesystem is never taken for
/// one of ours whose process is gone).
fn partial_prefix(dest: &Path) -> Result<std::ffi::OsString> {
    let Some(name) = dest.file_name() else {
        return Err(solve_err!("{}: not a directory name", dest.display()));
    };
    let host = crate::lock::Machine::current()
        .map_err(|e| SolveError::io("reading this machine's name", e))?
        .host;
    let mut prefix = name.to_os_string();
    prefix.push(format!(".partial-{host}-"));
    Ok(prefix)
}

/// Removes the partial copies of `dest` that this host's interrupted ships (Ctrl-C, a kill)
/// left: those whose process is gone.
fn remove_leftovers(dest: &Path) -> Result<Vec<PathBuf>> {
    let prefix = partial_prefix(dest)?;
    let prefix = prefix.to_string_lossy();
    let parent = dest
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let Ok(entries) = std::fs::read_dir(parent) else {
        // A missing parent is reported when the copy is created.
        return Ok(Vec::new());
    };
    let mut removed = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix(&*prefix)
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && crate::procfs::process_is_gone(pid) {
            std::fs::remove_dir_all(e.path())
                .map_err(|err| SolveError::file(FileOp::Removing, &e.path(), err))?;
            removed.push(e.path());
        }
    }
    Ok(removed)
}

/// `dbprobe --site SITE --ship DIR [--pieces N] [--json]`: [`ship`], with progress on
/// stderr and a summary on `out`.
pub fn write_ship(
    site: &Site,
    dest: &Path,
    pieces: Option<u32>,
    json: bool,
    out: &mut dyn Write,
) -> std::result::Result<(), CliError> {
    let mut progress = Progress::stderr(Duration::from_secs(5));
    let shipped = ship(site, dest, pieces, &mut progress)?;
    progress.finish();
    for p in &shipped.leftovers_removed {
        eprintln!(
            "dbprobe: removed {}, left by an interrupted ship",
            p.display()
        );
    }
    let secs = shipped.elapsed.as_secs_f64();
    let text = if json {
        json_line(&serde_json::json!({
            "dir": dest.display().to_string(),
            "slices": shipped.slices,
            "pieces": shipped.pieces,
            "bytes": shipped.bytes,
            "seconds": millis(secs),
            "leftovers_removed": shipped
                .leftovers_removed
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>(),
        }))
    } else {
        format!(
            "shipped {} slices of 2..{} pieces to {}: {} bytes, every CRC checked, in {secs:.2} s\n",
            shipped.slices,
            shipped.pieces,
            dest.display(),
            shipped.bytes
        )
    };
    out.write_all(text.as_bytes()).map_err(output_error)
}

/// The text of `db/VERSION`, which must name the format this nowdb writes.
fn read_version(db: &Path) -> Result<String> {
    let path = db.join("VERSION");
    if !db.is_dir() {
        return Err(solve_err!(
            "database directory {} does not exist: nothing to ship",
            db.display()
        ));
    }
    let text =
        std::fs::read_to_string(&path).map_err(|e| SolveError::file(FileOp::Reading, &path, e))?;
    let line = text.lines().next().unwrap_or("").trim();
    if line != VERSION_LINE {
        return Err(solve_err!(
            "{}: database version \"{line}\"; this nowdb ships \"{VERSION_LINE}\"",
            path.display()
        ));
    }
    Ok(text)
}

/// The slice files of at most `pieces` pieces (the most the database holds when `None`),
/// once every slice of the plan of 2..`pieces` is among them.
fn finished_slices(db: &Path, pieces: Option<u32>) -> Result<(Vec<Slice>, u32)> {
    let built = list_slices(db)?;
    let Some(n) = pieces.or_else(|| built.iter().map(|s| s.pieces()).max()) else {
        return Err(solve_err!("{}: no slice files to ship", db.display()));
    };
    if n < 2 {
        return Err(solve_err!(
            "--pieces {n}: a database holds 2 or more pieces"
        ));
    }
    let have: BTreeSet<Slice> = built.iter().copied().collect();
    let missing: BTreeSet<Slice> = crate::slice::plan(n)
        .pairs()
        .flat_map(|p| p.slices())
        .filter(|s| !have.contains(s))
        .collect();
    if !missing.is_empty() {
        let some: Vec<String> = missing.iter().take(5).map(|s| format!("{s}.ndb")).collect();
        let more = if missing.len() > 5 { ", ..." } else { "" };
        return Err(solve_err!(
            "{}: the database of 2..{n} pieces is not finished: {} slice files missing ({}{more}); \
             nothing was shipped",
            db.display(),
            missing.len(),
            some.join(", ")
        ));
    }
    Ok((built.into_iter().filter(|s| s.pieces() <= n).collect(), n))
}

/// `dest` must not exist, or be an empty directory (which the copy then replaces).
fn check_destination(dest: &Path) -> Result<()> {
    let why = match std::fs::symlink_metadata(dest) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(SolveError::file(FileOp::Inspecting, dest, e)),
        Ok(m) if !m.is_dir() => "exists and is not a directory",
        Ok(_) => match std::fs::read_dir(dest).map(|mut entries| entries.next()) {
            Ok(None) => return Ok(()),
            Ok(Some(_)) => "exists and is not empty (ship into a new directory)",
            Err(e) => return Err(SolveError::file(FileOp::Listing, dest, e)),
        },
    };
    Err(solve_err!("{}: {why}; nothing was shipped", dest.display()))
}

/// The copy being assembled beside DIR; removed unless it became DIR, so that an error (or
/// a panic) leaves nothing behind.
struct Partial {
    path: PathBuf,
    published: bool,
}

impl Partial {
    fn create(dest: &Path) -> Result<Partial> {
        let mut partial = partial_prefix(dest)?;
        partial.push(std::process::id().to_string());
        let path = dest.with_file_name(partial);
        std::fs::create_dir(&path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => solve_err!(
                "{}: its parent directory does not exist; nothing was shipped",
                dest.display()
            ),
            _ => SolveError::file(FileOp::Creating, &path, e),
        })?;
        Ok(Partial {
            path,
            published: false,
        })
    }

    /// Renames the checked copy to `dest` (replacing it if it is an empty directory).
    fn publish(mut self, dest: &Path) -> Result<()> {
        std::fs::rename(&self.path, dest).map_err(|e| {
            SolveError::io(
                format!("renaming {} to {}", self.path.display(), dest.display()),
                e,
            )
        })?;
        self.published = true;
        crate::solve::store::sync_dir(dest)
            .map_err(|e| SolveError::io(format!("syncing the directory of {}", dest.display()), e))
    }
}

impl Drop for Partial {
    fn drop(&mut self) {
        if !self.published {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// Copies slice `s` and checks the copy's header CRC and every block's CRC.
/// Copies a slice's file, and its moves-to-conversion file when it has one, each read back
/// block by block.
fn copy_slice(db: &Path, to_dir: &Path, s: &Slice) -> Result<Vec<Entry>> {
    let from = slice_path(db, s);
    let to = slice_path(to_dir, s);
    let entry = copy_file(&from, &to)?;
    let damaged = |from: &Path, e: DbError| match e {
        DbError::Corrupt { what, .. } | DbError::Format { what, .. } => solve_err!(
            "{}: {what} (read back from its copy); nothing was shipped",
            from.display()
        ),
        e => e.into(),
    };
    let file = SliceFile::open(&to, s).map_err(|e| damaged(&from, e))?;
    for b in 0..file.blocks() {
        file.read_block(b).map_err(|e| damaged(&from, e))?;
    }
    let mut entries = vec![entry];
    let from = mtc_path(db, s);
    if from.exists() {
        let to = mtc_path(to_dir, s);
        let mut entry = copy_file(&from, &to)?;
        entry.name = format!("mtc/{}", entry.name);
        entries.push(entry);
        let file = MtcFile::open(&to, s).map_err(|e| damaged(&from, e))?;
        for b in 0..file.blocks() {
            file.read_block(b).map_err(|e| damaged(&from, e))?;
        }
    }
    Ok(entries)
}

/// Copies `from` to `to`, writes the copy to its disk and reads it back from there: its name,
/// size and CRC-32 as a receiver will find them.
fn copy_file(from: &Path, to: &Path) -> Result<Entry> {
    std::fs::copy(from, to).map_err(|e| {
        SolveError::io(format!("copying {} to {}", from.display(), to.display()), e)
    })?;
    let mut f = std::fs::File::open(to).map_err(|e| SolveError::file(FileOp::Opening, to, e))?;
    f.sync_all()
        .map_err(|e| SolveError::file(FileOp::Syncing, to, e))?;
    // Written and clean: dropping its cached pages makes the reads below (and the slice
    // checks after them) come from the disk. Only advice: a failure costs that check alone.
    let _ = posix_fadvise(&f, 0, 0, PosixFadviseAdvice::POSIX_FADV_DONTNEED);
    let (mut crc, mut bytes) = (Crc32::default(), 0u64);
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f
            .read(&mut buf)
            .map_err(|e| SolveError::file(FileOp::Reading, to, e))?;
        if n == 0 {
            break;
        }
        crc.update(&buf[..n]);
        bytes += n as u64;
    }
    let name = to.file_name().unwrap_or_default().to_string_lossy();
    Ok(Entry {
        name: name.into_owned(),
        bytes,
        crc: crc.finish(),
    })
}

/// `MANIFEST`: `name<TAB>bytes<TAB>crc32` per file (8 hex digits, zlib's CRC-32), then
/// `total<TAB>bytes<TAB>N files`.
fn write_manifest(dir: &Path, entries: &[Entry]) -> Result<()> {
    let mut text = String::new();
    for e in entries {
        text += &format!("{}\t{}\t{:08x}\n", e.name, e.bytes, e.crc);
    }
    let bytes: u64 = entries.iter().map(|e| e.bytes).sum();
    text += &format!("total\t{bytes}\t{} files\n", entries.len());
    let path = dir.join("MANIFEST");
    crate::files::replace(&path, text.as_bytes(), crate::files::Durability::Full)
        .map_err(|e| SolveError::file(FileOp::Writing, &path, e))
}
