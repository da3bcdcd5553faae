//! The modules depend downwards (rules and indexing at the bottom, then the solver and the
//! database, then queues and runners, then monitors, mail and reports): the imports read off
//! the source (`crate::MODULE` paths) must keep the layers settled so far, and no new pair of
//! modules may import each other. `scripts/module-graph` prints the same graph.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Top-level module -> the top-level modules its source names as `crate::X`.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut modules = BTreeMap::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if name == "lib" || name == "bin" || name == "main" {
            continue;
        }
        let files: Vec<std::path::PathBuf> = if path.is_dir() {
            walk(&path)
        } else {
            vec![path.clone()]
        };
        let text: String = files
            .iter()
            .map(|f| std::fs::read_to_string(f).unwrap())
            .collect();
        modules.insert(name, text);
    }
    let names: BTreeSet<String> = modules.keys().cloned().collect();
    modules
        .iter()
        .map(|(m, text)| {
            let deps = text
                .match_indices("crate::")
                .filter_map(|(i, _)| {
                    let rest = &text[i + 7..];
                    let end = rest
                        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                        .unwrap_or(rest.len());
                    let d = &rest[..end];
                    (names.contains(d) && d != m).then(|| d.to_string())
                })
                .collect();
            (m.clone(), deps)
        })
        .collect()
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out
}

#[test]
fn layers_point_down() {
    let g = graph();
    let never = |m: &str, above: &[&str]| {
        for a in above {
            assert!(
                !g[m].contains(*a),
                "{m} imports {a}, a layer above it ({:?})",
                g[m]
            );
        }
    };
    // Utilities at the bottom import none of the domain.
    let domain = [
        "board", "slice", "notation", "solve", "db", "queue", "runner", "monitor", "watch", "mail",
        "status", "hosts", "cli", "inspect", "progress",
    ];
    for m in [
        "clock", "files", "fault", "rng", "space", "procfs", "lock", "error", "state", "budget",
    ] {
        never(m, &domain);
    }
    never(
        "cli",
        &[
            "solve", "db", "queue", "runner", "monitor", "watch", "mail", "status",
        ],
    );
    never(
        "solve",
        &[
            "queue", "runner", "monitor", "watch", "mail", "status", "hosts",
        ],
    );
    // The probe needs nothing of the solver (an engine links the reader alone).
    never(
        "db",
        &[
            "solve", "queue", "runner", "monitor", "watch", "mail", "status", "hosts",
        ],
    );
    never("queue", &["runner", "monitor", "watch", "mail", "status"]);
    never("runner", &["monitor", "watch", "status"]);
    never(
        "mail",
        &[
            "queue", "runner", "monitor", "watch", "status", "solve", "db",
        ],
    );
    never("monitor", &["watch", "status"]);
    never("watch", &["monitor", "status"]);
}

#[test]
fn the_only_modules_that_import_each_other_are_the_known_ones() {
    let g = graph();
    let mut pairs = Vec::new();
    for (a, deps) in &g {
        for b in deps {
            if a < b && g[b].contains(a) {
                pairs.push(format!("{a} <-> {b}"));
            }
        }
    }
    // None: the slices and their indexing, which name each other (a slice is counted by its
    // index), are one module (`slice::index`). A new pair is a design question, not a
    // shortcut.
    assert!(pairs.is_empty(), "{pairs:?}\n{g:#?}");
}
