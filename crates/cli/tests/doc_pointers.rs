//! The docs send a reader to the right place: every source path that README.md and docs/*.md
//! name exists, and every item that docs/architecture.md names beside a file ("`Count::test_frame`
//! (`crates/engine/src/trial/receiver.rs`)") is in that file. Code moves; this fails when a
//! pointer is left behind (issue 39: a newcomer followed two that led nowhere).

use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// README.md and every docs/*.md, with their text.
fn documents() -> Vec<(PathBuf, String)> {
    let mut files = vec![workspace().join("README.md")];
    for e in std::fs::read_dir(workspace().join("docs")).expect("docs/") {
        let p = e.expect("entry").path();
        if p.extension().is_some_and(|x| x == "md") {
            files.push(p);
        }
    }
    files
        .into_iter()
        .map(|p| (p.clone(), std::fs::read_to_string(&p).expect("read")))
        .collect()
}

/// The workspace paths `text` names: each `crates/...` up to the first character that cannot
/// be in a path, without a trailing dot; patterns (`*`, `{`) left out.
fn paths(text: &str) -> Vec<String> {
    let ok = |c: char| c.is_ascii_alphanumeric() || "_./-".contains(c);
    let mut out = Vec::new();
    for (i, _) in text.match_indices("crates/") {
        if text[..i].ends_with(|c: char| ok(c)) {
            continue;
        }
        let rest = &text[i..];
        let end = rest.find(|c: char| !ok(c)).unwrap_or(rest.len());
        if rest[end..].starts_with(['*', '{']) {
            continue;
        }
        out.push(rest[..end].trim_end_matches(['.', '/']).to_string());
    }
    out
}

/// Pairs of an item and the file named right after it: "`ITEM` (`crates/...rs`".
fn items_beside_files(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices("` (`crates/") {
        let Some(start) = text[..i].rfind('`') else { continue };
        let item = &text[start + 1..i];
        let file = &text[i + 4..];
        let Some(end) = file.find('`') else { continue };
        // A crate beside its directory ("`xlat-wire` (`crates/wire`)") is a path, checked apart.
        let code = item.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') && !item.is_empty();
        if code && file[..end].ends_with(".rs") {
            out.push((item.to_string(), file[..end].to_string()));
        }
    }
    out
}

#[test]
fn every_source_path_in_the_docs_exists() {
    let mut missing = Vec::new();
    let mut seen = 0;
    for (doc, text) in documents() {
        for p in paths(&text) {
            seen += 1;
            if !workspace().join(&p).exists() {
                missing.push(format!("{}: {p}", doc.display()));
            }
        }
    }
    assert!(seen > 50, "too few paths found: {seen}");
    assert!(missing.is_empty(), "the docs name paths that do not exist:\n{}", missing.join("\n"));
}

#[test]
fn every_item_architecture_md_places_is_in_its_file() {
    let text = std::fs::read_to_string(workspace().join("docs/architecture.md")).expect("architecture.md");
    let pairs = items_beside_files(&text);
    assert!(pairs.len() > 15, "too few items found: {pairs:?}");
    let mut wrong = Vec::new();
    for (item, file) in pairs {
        let Ok(code) = std::fs::read_to_string(workspace().join(&file)) else {
            wrong.push(format!("{item}: {file} does not exist"));
            continue;
        };
        // The item's last segment (`test_frame` of `Count::test_frame`) as a whole word.
        let name = item.rsplit("::").next().unwrap_or(&item);
        let word = |i: usize| {
            let before = code[..i].chars().next_back().is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
            let after = code[i + name.len()..]
                .chars()
                .next()
                .is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
            before && after
        };
        if !code.match_indices(name).any(|(i, _)| word(i)) {
            wrong.push(format!("{item} is not in {file}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "docs/architecture.md points to the wrong place:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_scanners_find_what_they_look_for() {
    let t = "see `Count::test_frame` (`crates/engine/src/trial/receiver.rs`), crates/io/src/*.rs and \
             xcrates/no, then crates/lab/src/.";
    assert_eq!(paths(t), ["crates/engine/src/trial/receiver.rs", "crates/lab/src"]);
    assert_eq!(
        items_beside_files(t),
        [("Count::test_frame".to_string(), "crates/engine/src/trial/receiver.rs".to_string())]
    );
}
