//! What the site was asked to build: every `addq plan` adds its words to `work/plans` (one
//! line each, `2..7` or `2..8 4v4`), so that `dbstatus summary` counts the planned part of a
//! piece count (2..7 and 4 against 4, 148 G positions) and not all of 2..8 (440 G).

use crate::error::{Error, Result};
use crate::slice::{Selection, SlicePair};
use crate::solve::Site;
use std::collections::BTreeSet;
use std::path::PathBuf;

fn plans_file(site: &Site) -> PathBuf {
    site.root().join("work/plans")
}

/// The line of one plan: its piece counts and `--only` words.
fn line(min: u32, max: u32, only: &[String]) -> String {
    std::iter::once(format!("{min}..{max}"))
        .chain(only.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Adds a plan's line, unless the same plan is there already.
pub fn record(site: &Site, min: u32, max: u32, only: &[String]) -> Result<()> {
    let path = plans_file(site);
    let mut text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(Error::io(format_args!("reading {}", path.display()), e)),
    };
    let new = line(min, max, only);
    if text.lines().any(|l| l.trim() == new) {
        return Ok(());
    }
    text.push_str(&new);
    text.push('\n');
    crate::files::replace(&path, text.as_bytes(), crate::files::Durability::Data)
        .map_err(|e| Error::io(format_args!("writing {}", path.display()), e))
}

/// The plans a site was given.
#[derive(Clone, Debug)]
pub struct Planned {
    /// Their lines (`2..7`, `2..8 4v4`).
    pub lines: Vec<String>,
    /// The most pieces of any.
    pub pieces: u32,
    /// The slice pairs they cover, with everything those read.
    pub pairs: BTreeSet<SlicePair>,
}

/// The plans the site was given; `None` before the first plan (a site built by
/// `build-local`).
pub fn planned(site: &Site) -> Result<Option<Planned>> {
    let path = plans_file(site);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(format_args!("reading {}", path.display()), e)),
    };
    let bad = |l: &str, why: String| Error::Failed(format!("{} line {l:?}: {why}", path.display()));
    let (mut lines, mut most, mut pairs) = (Vec::new(), 0, BTreeSet::new());
    for l in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let mut words = l.split_whitespace();
        let range = words.next().unwrap_or_default();
        let max: u32 = match range.split_once("..").map(|(_, b)| b.parse()) {
            Some(Ok(m)) => m,
            _ => return Err(bad(l, "expected MIN..MAX first".into())),
        };
        let mut only = Vec::new();
        for w in words {
            only.extend(w.parse::<Selection>().map_err(|e| bad(l, e.to_string()))?.0);
        }
        match only.is_empty() {
            true => pairs.extend(crate::slice::plan(max).pairs().copied()),
            false => pairs.extend(
                crate::slice::with_dependencies(&only, max).map_err(|e| bad(l, e.to_string()))?,
            ),
        }
        most = most.max(max);
        lines.push(l.to_string());
    }
    Ok((!lines.is_empty()).then_some(Planned {
        lines,
        pieces: most,
        pairs,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_are_kept_once_and_cover_what_they_read() {
        let dir = std::env::temp_dir().join(format!("nowdb-plans-{}", std::process::id()));
        let site = Site::new(&dir);
        assert!(planned(&site).unwrap().is_none());
        record(&site, 2, 4, &[]).unwrap();
        record(&site, 2, 5, &["2300".into()]).unwrap();
        record(&site, 2, 4, &[]).unwrap();
        let Planned {
            lines,
            pieces: most,
            pairs,
        } = planned(&site).unwrap().unwrap();
        assert_eq!(lines, ["2..4", "2..5 2300"]);
        assert_eq!(most, 5);
        let all4: BTreeSet<_> = crate::slice::plan(4).pairs().copied().collect();
        assert!(all4.is_subset(&pairs));
        let kings = |m: crate::slice::Material| m.bm == 0 && m.wm == 0;
        assert!(
            pairs
                .iter()
                .all(|p| p.0.pieces() <= 4 || kings(p.0.material))
        );
        std::fs::write(dir.join("work/plans"), "2..x\n").unwrap();
        let e = planned(&site).unwrap_err().to_string();
        assert!(e.contains("work/plans") && e.contains("2..x"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
