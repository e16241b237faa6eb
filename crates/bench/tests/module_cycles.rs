//! No file-level import cycle inside the bench crate: each module uses only modules that do
//! not use it back, directly or through others (test modules and comments do not count).

use std::collections::{BTreeMap, BTreeSet};

fn uses() -> BTreeMap<String, BTreeSet<String>> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
    let mut files = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_stem().unwrap().to_str().unwrap().to_string();
        if p.extension().is_some_and(|x| x == "rs") && name != "lib" {
            files.insert(name, std::fs::read_to_string(&p).unwrap());
        }
    }
    let modules: BTreeSet<String> = files.keys().cloned().collect();
    files
        .iter()
        .map(|(m, text)| {
            let code = text.split("#[cfg(test)]").next().unwrap_or("");
            let mut deps = BTreeSet::new();
            for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
                for part in line.split("crate::").skip(1) {
                    let dep: String = part.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                    if modules.contains(&dep) && &dep != m {
                        deps.insert(dep);
                    }
                }
            }
            (m.clone(), deps)
        })
        .collect()
}

#[test]
fn no_module_of_bench_reaches_itself_through_its_imports() {
    let g = uses();
    assert!(g.len() > 10 && g["trial"].contains("runner"), "{g:?}");
    for start in g.keys() {
        let mut stack: Vec<&String> = g[start].iter().collect();
        let mut seen = BTreeSet::new();
        while let Some(m) = stack.pop() {
            assert_ne!(m, start, "{start} reaches itself through its imports: {g:?}");
            if seen.insert(m) {
                stack.extend(g[m].iter());
            }
        }
    }
}
