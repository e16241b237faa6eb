//! A check that the modules of a crate form layers: no module uses, directly or through
//! others, a module that uses it back (STYLE.md S8, issue 13). Every crate's `tests/layers.rs`
//! calls it on its own `src/`; [`graph`] gives the uses themselves (config checks its map).
//!
//! A module is a file (`lib.rs` the root, `x.rs` and `x/mod.rs` module `x`, `x/y.rs` module
//! `x::y`). Module `a` uses module `b` when `a`'s code outside comments and its test module names
//! `b` by a path: `crate::b`, `super::b` for a sibling, `b::` for a child, or an item of `b`
//! (`crate::Item` is the root's, `super::Item` the parent's). Declaring a child (`mod b;`) is
//! not a use.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

type Module = Vec<String>;

/// The modules of the crate at `src` and the source of each.
fn modules(src: &Path) -> BTreeMap<Module, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![(src.to_path_buf(), Vec::<String>::new())];
    while let Some((dir, prefix)) = stack.pop() {
        for e in std::fs::read_dir(&dir).expect("read src") {
            let p = e.expect("dir entry").path();
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                let mut m = prefix.clone();
                m.push(name);
                stack.push((p, m));
            } else if p.extension().is_some_and(|x| x == "rs") {
                let mut m = prefix.clone();
                if !(name == "mod" || (prefix.is_empty() && (name == "lib" || name == "main"))) {
                    m.push(name);
                }
                out.insert(m, std::fs::read_to_string(&p).expect("read source"));
            }
        }
    }
    out
}

/// The code of `text` without comments and without its `#[cfg(test)]` module. Inside an inline
/// module (`mod simd { ... }`), `super::` is the file's own module: it becomes `self::`.
fn code(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    let mut depth = 0i32;
    let mut inline_at: Vec<i32> = Vec::new();
    while let Some(l) = lines.next() {
        let t = l.trim_start();
        if t.starts_with("#[cfg(test)]") && lines.peek().is_some_and(|n| n.trim_start().starts_with("mod tests")) {
            break;
        }
        if t.starts_with("//") {
            continue;
        }
        let l = l.split(" // ").next().unwrap_or("");
        let decl = t.strip_prefix("pub ").or_else(|| t.strip_prefix("pub(crate) ")).unwrap_or(t);
        if decl.starts_with("mod ") && decl.trim_end().ends_with('{') {
            inline_at.push(depth);
        }
        if inline_at.is_empty() {
            out.push_str(l);
        } else {
            out.push_str(&l.replace("super::", "self::"));
        }
        out.push('\n');
        depth += l.matches('{').count() as i32 - l.matches('}').count() as i32;
        while inline_at.last().is_some_and(|&d| depth <= d) {
            inline_at.pop();
        }
    }
    out
}

/// The identifiers that start the paths after `text[at..]`: one, or each item of a `{...}` list.
fn heads(text: &str, at: usize) -> Vec<Vec<String>> {
    let rest = &text[at..];
    let ident = |s: &str| -> Vec<String> {
        let end = s.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).unwrap_or(s.len());
        s[..end].split("::").filter(|x| !x.is_empty()).map(str::to_string).collect()
    };
    if let Some(list) = rest.strip_prefix('{') {
        let mut depth = 0;
        let mut items = Vec::new();
        let mut start = 0;
        for (i, c) in list.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    items.push(&list[start..i]);
                    break;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    items.push(&list[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        items.into_iter().map(|s| ident(s.trim())).filter(|v| !v.is_empty()).collect()
    } else {
        vec![ident(rest)]
    }
}

/// The deepest module of `all` that `path` (relative to `base`) names, or `base` itself when
/// the path names an item of it.
fn resolve(all: &BTreeSet<Module>, base: &Module, path: &[String]) -> Module {
    let mut m = base.clone();
    for seg in path {
        let mut next = m.clone();
        next.push(seg.clone());
        if all.contains(&next) {
            m = next;
        } else {
            break;
        }
    }
    m
}

/// The modules each module uses.
fn uses(mods: &BTreeMap<Module, String>) -> BTreeMap<Module, BTreeSet<Module>> {
    let all: BTreeSet<Module> = mods.keys().cloned().collect();
    let mut out = BTreeMap::new();
    for (m, text) in mods {
        let c = code(text);
        let mut to = BTreeSet::new();
        let boundary = |i: usize| i == 0 || !c[..i].ends_with(|ch: char| ch.is_alphanumeric() || ch == '_' || ch == ':');
        // crate::..., super::...
        for (kw, base) in [("crate::", Vec::new()), ("super::", m[..m.len().saturating_sub(1)].to_vec())] {
            for (i, _) in c.match_indices(kw) {
                if !boundary(i) {
                    continue;
                }
                for p in heads(&c, i + kw.len()) {
                    to.insert(resolve(&all, &base, &p));
                }
            }
        }
        // child::... (a path from this module's own scope)
        for child in all.iter().filter(|x| x.len() == m.len() + 1 && x.starts_with(m)) {
            let name = format!("{}::", child.last().unwrap());
            if c.match_indices(&name).any(|(i, _)| boundary(i)) {
                to.insert(child.clone());
            }
            // `pub use child::{...}` / `use child::x` in the same form
        }
        to.remove(m);
        out.insert(m.clone(), to);
    }
    out
}

/// A module's name: "crate" for the root, "a::b" for a nested one.
fn name(m: &Module) -> String {
    if m.is_empty() {
        "crate".to_string()
    } else {
        m.join("::")
    }
}

/// Every module of the crate at `src` and the modules it uses, by name (a use of an item of
/// lib.rs, such as a re-export, is a use of "crate").
pub fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    uses(&modules(src))
        .into_iter()
        .map(|(m, to)| (name(&m), to.iter().map(name).collect()))
        .collect()
}

/// Panics with the cycle when the modules of the crate at `src` use each other in a circle.
pub fn assert_layered(src: &Path) {
    let g = uses(&modules(src));
    // Depth-first search with colours: 1 on the stack, 2 done.
    fn visit(
        m: &Module,
        g: &BTreeMap<Module, BTreeSet<Module>>,
        colour: &mut BTreeMap<Module, u8>,
        stack: &mut Vec<Module>,
    ) -> Option<Vec<Module>> {
        colour.insert(m.clone(), 1);
        stack.push(m.clone());
        for n in g.get(m).into_iter().flatten() {
            match colour.get(n) {
                Some(1) => {
                    let at = stack.iter().position(|x| x == n).unwrap();
                    let mut cyc = stack[at..].to_vec();
                    cyc.push(n.clone());
                    return Some(cyc);
                }
                Some(_) => {}
                None => {
                    if let Some(c) = visit(n, g, colour, stack) {
                        return Some(c);
                    }
                }
            }
        }
        stack.pop();
        colour.insert(m.clone(), 2);
        None
    }
    let mut colour = BTreeMap::new();
    for m in g.keys() {
        if !colour.contains_key(m) {
            if let Some(c) = visit(m, &g, &mut colour, &mut Vec::new()) {
                let names: Vec<String> = c.iter().map(name).collect();
                panic!("{}: modules use each other: {}", src.display(), names.join(" -> "));
            }
        }
    }
}

/// A self-test of the check on made-up crates, so that a check that finds nothing is not
/// taken for a pass.
pub fn assert_check_finds_cycles() {
    let dir = std::env::temp_dir().join(format!("xlat-layers-{}", std::process::id()));
    let write = |files: &[(&str, &str)]| {
        let _ = std::fs::remove_dir_all(&dir);
        for (f, text) in files {
            let p = dir.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
    };
    let cyclic = |files: &[(&str, &str)]| {
        write(files);
        std::panic::catch_unwind(|| assert_layered(&dir)).is_err()
    };
    let lib = "mod a;\nmod b;\n";
    assert!(!cyclic(&[
        ("lib.rs", lib),
        ("a.rs", "use crate::b::X;\n"),
        ("b.rs", "pub struct X;\n")
    ]));
    assert!(cyclic(&[
        ("lib.rs", lib),
        ("a.rs", "use crate::b::X;\n"),
        ("b.rs", "use crate::{a::Y};\n")
    ]));
    assert!(cyclic(&[
        ("lib.rs", "pub use a::X;\nmod a;\n"),
        ("a.rs", "fn f() -> crate::Y { todo!() }\n")
    ]));
    assert!(cyclic(&[
        ("lib.rs", "mod d;\n"),
        ("d/mod.rs", "mod p;\nmod q;\nfn f() { p::g() }\n"),
        ("d/p.rs", "use super::helper;\n"),
        ("d/q.rs", "")
    ]));
    // Comments, test modules and an inline module's `super` (its own file) do not count.
    assert!(!cyclic(&[
        ("lib.rs", "mod a;\nuse a::X;\n"),
        ("a.rs", "pub struct X;\nmod inner {\n    use super::X;\n}\n")
    ]));
    assert!(!cyclic(&[
        ("lib.rs", lib),
        ("a.rs", "use crate::b::X;\n"),
        (
            "b.rs",
            "/// See [`crate::a`].\n#[cfg(test)]\nmod tests {\n    use crate::a::Y;\n}\n"
        )
    ]));
    let _ = std::fs::remove_dir_all(&dir);
}
