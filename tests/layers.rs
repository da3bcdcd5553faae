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
        "status", "hosts", "cli", "inspect", "progress", "http", "explorer",
    ];
    for m in [
        "clock", "files", "fault", "rng", "space", "procfs", "lock", "error", "state", "budget",
        "mem",
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
    // The pilots recover lost pilots with the runners' own recovery, not wsmonitor's.
    never("slurm", &["monitor", "watch", "status"]);
    never("watch", &["monitor", "status"]);
    // The HTTP server knows no domain: the explorer and the status page hand it routes.
    never(
        "http",
        &[
            "board", "slice", "notation", "solve", "db", "queue", "runner", "monitor", "watch",
            "mail", "status", "hosts", "inspect", "explorer",
        ],
    );
    // The explorer reads a finished database (and the plans that say what is finished),
    // nothing of the runners, their suppliers or the status reports; no one imports it.
    never(
        "explorer",
        &[
            "runner", "monitor", "watch", "mail", "status", "slurm", "hosts",
        ],
    );
    for (m, deps) in &g {
        assert!(
            !deps.contains("explorer"),
            "{m} imports explorer, the top of the stack"
        );
    }
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

/// Every module file of `src` (`a/b.rs` and `a/b/mod.rs` are `["a", "b"]`), with its text
/// outside comments and its unit tests.
fn module_files() -> BTreeMap<Vec<String>, String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = BTreeMap::new();
    for f in walk(&src) {
        let rel = f.strip_prefix(&src).unwrap().with_extension("");
        let mut path: Vec<String> = rel
            .iter()
            .map(|c| c.to_string_lossy().into_owned())
            .collect();
        if path[0] == "bin" {
            continue;
        }
        if path.last().is_some_and(|l| l == "mod" || l == "lib") {
            path.pop();
        }
        let text = std::fs::read_to_string(&f).unwrap();
        let text = text.split("#[cfg(test)]").next().unwrap();
        let code: String = text
            .lines()
            .map(|l| l.split("//").next().unwrap())
            .collect::<Vec<_>>()
            .join("\n");
        out.insert(path, code);
    }
    out
}

/// The paths a `use` tree or a path in code names, from `at` (just after `crate::`,
/// `super::` or `self::`), each as its segments after `prefix`.
fn path_tree(text: &[u8], at: &mut usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let skip = |at: &mut usize| {
        while *at < text.len() && b" \n\t,".contains(&text[*at]) {
            *at += 1;
        }
    };
    if text.get(*at) == Some(&b'{') {
        *at += 1;
        loop {
            skip(at);
            match text.get(*at) {
                Some(b'}') | None => {
                    *at += 1;
                    return;
                }
                _ => path_tree(text, at, prefix.clone(), out),
            }
        }
    }
    let start = *at;
    while *at < text.len() && (text[*at].is_ascii_alphanumeric() || text[*at] == b'_') {
        *at += 1;
    }
    let mut path = prefix;
    if *at > start {
        path.push(String::from_utf8_lossy(&text[start..*at]).into_owned());
        if text[*at..].starts_with(b"::") {
            *at += 2;
            return path_tree(text, at, path, out);
        }
    } else {
        // `self` or `*` in a tree, or something else: names the prefix itself.
        *at += 1;
    }
    out.push(path);
}

/// Module file -> the module files it names (by the longest module path each path starts
/// with; its own ancestors, whose `mod.rs` only declares and re-exports, left out).
fn file_graph() -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let files = module_files();
    let mut graph = BTreeMap::new();
    for (m, text) in &files {
        let bytes = text.as_bytes();
        let mut deps = BTreeSet::new();
        for (kind, key) in [(0, "crate::"), (1, "super::"), (2, "self::")] {
            for (i, _) in text.match_indices(key) {
                if i > 0
                    && (bytes[i - 1].is_ascii_alphanumeric()
                        || bytes[i - 1] == b'_'
                        || bytes[i - 1] == b':')
                {
                    continue;
                }
                let mut base: Vec<String> = match kind {
                    0 => vec![],
                    1 => m[..m.len().saturating_sub(1)].to_vec(),
                    _ => m.clone(),
                };
                let mut at = i + key.len();
                while kind == 1 && text[at..].starts_with("super::") {
                    base.pop();
                    at += 7;
                }
                let mut paths = Vec::new();
                path_tree(bytes, &mut at, base, &mut paths);
                for p in paths {
                    let target = (1..=p.len())
                        .rev()
                        .map(|n| p[..n].to_vec())
                        .find(|q| files.contains_key(q));
                    if let Some(t) = target
                        && t != *m
                        && !m.starts_with(&t)
                    {
                        deps.insert(t);
                    }
                }
            }
        }
        graph.insert(m.clone(), deps);
    }
    graph
}

/// Inside the solver (`solve/`) and the database (`db/`) no file reaches itself through the
/// files it imports: the job types, stop checks and version lines sit in leaves that the
/// phases, the database's jobs and the distances import, and one dispatch sits above them.
#[test]
fn no_file_level_circle_inside_solve_and_db() {
    let g = file_graph();
    // The graph is read: the dispatch names the phases, a phase names the leaf.
    let name = |s: &str| s.split("::").map(String::from).collect::<Vec<_>>();
    assert!(
        g[&name("solve::run")].contains(&name("solve::phases")),
        "{g:#?}"
    );
    assert!(
        g[&name("solve::phases")].contains(&name("solve::running")),
        "{g:#?}"
    );
    for room in ["solve", "db"] {
        let inside = |m: &Vec<String>| m.len() > 1 && m[0] == room;
        // Depth-first from every file: a file met again on the current path closes a circle.
        fn visit<'a>(
            g: &'a BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
            m: &'a Vec<String>,
            inside: &dyn Fn(&Vec<String>) -> bool,
            path: &mut Vec<&'a Vec<String>>,
            done: &mut BTreeSet<&'a Vec<String>>,
        ) {
            if let Some(k) = path.iter().position(|p| *p == m) {
                let circle: Vec<String> = path[k..].iter().map(|p| p.join("::")).collect();
                panic!(
                    "a circle of files: {} -> {}",
                    circle.join(" -> "),
                    m.join("::")
                );
            }
            if !done.insert(m) {
                return;
            }
            path.push(m);
            for d in g[m].iter().filter(|d| inside(d)) {
                visit(g, d, inside, path, done);
            }
            path.pop();
        }
        let mut done = BTreeSet::new();
        for m in g.keys().filter(|m| inside(m)) {
            visit(&g, m, &inside, &mut Vec::new(), &mut done);
        }
    }
}
