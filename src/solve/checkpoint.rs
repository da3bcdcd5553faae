//! Job checkpoints: the next index to do and the statistics so far, written atomically
//! (temporary file, `fsync`, rename) only after the job's dirty pages and queue entries are
//! on disk. A record with `complete 1` marks a finished job, so running it again is a no-op.

use super::phases::PhaseStats;
use super::{Job, Result, Site};
use crate::solve_err;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Checkpoint {
    /// The next index to process (a slice index, or an entry of the input queue for `que`).
    pub next: u64,
    pub complete: bool,
    pub stats: PhaseStats,
}

impl Checkpoint {
    fn to_text(self) -> String {
        let s = self.stats;
        format!(
            "next {}\ncomplete {}\nlooked {}\nwin {}\nloss {}\ndraw {}\n",
            self.next, self.complete as u8, s.looked, s.win, s.loss, s.draw
        )
    }

    fn parse(text: &str) -> std::result::Result<Checkpoint, String> {
        let mut c = Checkpoint::default();
        let mut seen = 0;
        for line in text.lines() {
            let (k, v) = line
                .split_once(' ')
                .ok_or_else(|| format!("bad line {line:?}"))?;
            let v: u64 = v.parse().map_err(|_| format!("bad number in {line:?}"))?;
            match k {
                "next" => c.next = v,
                "complete" => c.complete = v == 1,
                "looked" => c.stats.looked = v,
                "win" => c.stats.win = v,
                "loss" => c.stats.loss = v,
                "draw" => c.stats.draw = v,
                _ => return Err(format!("unknown key {k:?}")),
            }
            seen += 1;
        }
        if seen != 6 {
            return Err("incomplete record".into());
        }
        Ok(c)
    }
}

/// The job's last checkpoint, if any.
pub fn load(site: &Site, job: &Job) -> Result<Option<Checkpoint>> {
    let path = site.checkpoint_file(job);
    match std::fs::read_to_string(&path) {
        Ok(text) => Checkpoint::parse(&text)
            .map(Some)
            .map_err(|e| solve_err!("{}: corrupt checkpoint: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(solve_err!("{}: {e}", path.display())),
    }
}

/// Records `c` durably.
pub fn save(site: &Site, job: &Job, c: &Checkpoint, durable: bool) -> Result<()> {
    let path = site.checkpoint_file(job);
    // No directory sync: if a crash loses the rename, the older record stands, and resuming
    // from an older checkpoint is always safe (values only move towards certainty, and
    // queue entries reach the disk before the pages).
    use crate::files::Durability;
    let durability = match durable {
        true => Durability::Data,
        false => Durability::Volatile,
    };
    crate::files::replace(&path, c.to_text().as_bytes(), durability)
        .map_err(|e| solve_err!("{}: checkpoint not written: {e}", path.display()))
}
