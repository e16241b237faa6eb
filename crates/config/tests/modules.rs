//! The modules of this crate import each other one way only: no two files use each other, even
//! through a third, and no module reaches another's items through lib.rs's re-exports (that
//! would make it use every module lib.rs uses). The map at the top of lib.rs says who uses whom.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The code of a file without comments and without its `#[cfg(test)]` module (tests may use
/// anything).
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]") {
        Some(at) => &text[..at],
        None => text,
    };
    text.lines()
        .map(|l| match l.find("//") {
            Some(at) => &l[..at],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first segments of every path that starts with `crate::` or `super::` in `code`, e.g.
/// `crate::doc::Doc` and `crate::{model::Backend, keys}` give `doc`, `model` and `keys`.
fn crate_paths(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for prefix in ["crate::", "super::"] {
        for (at, _) in code.match_indices(prefix) {
            let rest = &code[at + prefix.len()..];
            if let Some(group) = rest.strip_prefix('{') {
                // A group: split it at the commas of its own level.
                let (mut depth, mut start) = (0usize, 0usize);
                for (i, c) in group.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => {
                            out.insert(first_segment(&group[start..i]));
                            break;
                        }
                        '}' => depth -= 1,
                        ',' if depth == 0 => {
                            out.insert(first_segment(&group[start..i]));
                            start = i + 1;
                        }
                        _ => {}
                    }
                }
            } else {
                out.insert(first_segment(rest));
            }
        }
    }
    out.remove("");
    out
}

fn first_segment(path: &str) -> String {
    path.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect()
}

/// Module name -> the modules it uses, for every file in src/ but lib.rs.
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut g = BTreeMap::new();
    for e in std::fs::read_dir(src).expect("src/") {
        let p = e.expect("entry").path();
        let Some(name) = p.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        if p.extension().and_then(|e| e.to_str()) != Some("rs") || name == "lib" {
            continue;
        }
        let text = std::fs::read_to_string(&p).expect("read");
        let mut uses = crate_paths(&code(&text));
        uses.remove(name);
        g.insert(name.to_string(), uses);
    }
    g
}

/// A cycle in `g`, as the modules on it, if there is one.
fn find_cycle(g: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(m: &str, g: &BTreeMap<String, BTreeSet<String>>, path: &mut Vec<String>, done: &mut BTreeSet<String>) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| p == m) {
            let mut cycle = path[at..].to_vec();
            cycle.push(m.to_string());
            return Some(cycle);
        }
        if done.contains(m) {
            return None;
        }
        path.push(m.to_string());
        for next in g.get(m).into_iter().flatten() {
            if let Some(c) = visit(next, g, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(m.to_string());
        None
    }
    let mut done = BTreeSet::new();
    g.keys().find_map(|m| visit(m, g, &mut Vec::new(), &mut done))
}

#[test]
fn modules_import_each_other_one_way() {
    let g = graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(g.len() >= 7, "{g:?}");
    for (m, uses) in &g {
        for u in uses {
            assert!(
                g.contains_key(u),
                "{m}.rs uses crate::{u}: not a module (an item of lib.rs); name it by its module"
            );
        }
    }
    assert_eq!(find_cycle(&g), None, "{g:?}");
    // The leaves: plain data and the catalogue use no other module.
    for leaf in ["model", "keys", "error"] {
        assert_eq!(g[leaf], BTreeSet::new(), "{leaf}");
    }
}

/// The map at the top of lib.rs (`| module | holds | uses |`) is the graph of the files.
#[test]
fn the_map_in_lib_rs_is_true() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(dir.join("lib.rs")).expect("lib.rs");
    let mut map = BTreeMap::new();
    for line in lib.lines().filter_map(|l| l.strip_prefix("//! | ")) {
        let cells: Vec<&str> = line.split(" | ").map(str::trim).collect();
        let module: String = cells[0].chars().filter(|c| c.is_alphanumeric() || *c == '_').collect();
        if cells.len() != 3 || module == "module" || module.is_empty() {
            continue;
        }
        let uses = cells[2].trim_end_matches('|').trim();
        let uses: BTreeSet<String> = match uses {
            "none" => BTreeSet::new(),
            list => list.split(", ").map(String::from).collect(),
        };
        map.insert(module, uses);
    }
    assert_eq!(map, graph(&dir));
}

/// The checker itself finds the cycles and the re-exports it is meant to find.
#[test]
fn the_checker_sees_cycles_and_groups() {
    let uses = crate_paths("use crate::doc::{self, Doc};\nuse crate::{model::{A, B}, keys};\nfn f() { super::error::x() }");
    assert_eq!(uses, ["doc", "error", "keys", "model"].into_iter().map(String::from).collect());
    assert!(crate_paths(&code("// use crate::build;\nfn f() {}\n#[cfg(test)]\nmod t { use crate::x; }")).is_empty());
    let g: BTreeMap<String, BTreeSet<String>> = [("build", "validate"), ("validate", "build"), ("doc", "")]
        .into_iter()
        .map(|(a, b)| (a.to_string(), [b.to_string()].into_iter().filter(|s| !s.is_empty()).collect()))
        .collect();
    assert_eq!(
        find_cycle(&g),
        Some(vec!["build".to_string(), "validate".to_string(), "build".to_string()])
    );
}
