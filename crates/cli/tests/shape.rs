//! The shape of the workspace that issue 25 set (one boundary between the procedures and the
//! tester): checked on every run, so that it cannot slip back unseen.
//!
//! - no source file over 700 lines;
//! - exactly one `trait ...Runner` in `crates/*/src`;
//! - the procedures (`xlat-procedures`) link neither the engine nor the ports, and results are read
//!   without them (`xlat-results`, and the campaign report through it);
//! - no library links the test support (`xlat-testkit`: the simulated DUTs, skip, retry);
//! - no `Result<_, String>` in any crate's sources;
//! - the binary's code outside tests at most 3,000 lines (code: lines that are neither blank
//!   nor comments, outside `*_tests.rs` files and `#[cfg(test)]` modules).

use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Every `crates/*/src` file.
fn all_sources() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(workspace().join("crates")).expect("crates") {
        let src = e.expect("entry").path().join("src");
        if src.is_dir() {
            out.extend(sources(&src));
        }
    }
    assert!(out.len() > 50, "too few sources found: {}", out.len());
    out
}

/// Code lines of `text`: not blank, not a comment, before its `#[cfg(test)]` module.
fn code_lines(text: &str) -> usize {
    text.lines()
        .take_while(|l| !l.trim_start().starts_with("#[cfg(test)]"))
        .filter(|l| {
            let t = l.trim();
            !t.is_empty() && !t.starts_with("//")
        })
        .count()
}

#[test]
fn counting_code_lines() {
    assert_eq!(
        code_lines("//! doc\nfn a() {}\n\n    // note\nlet x = 1; // tail\n#[cfg(test)]\nmod tests {}\n"),
        2
    );
}

#[test]
fn no_source_file_over_700_lines() {
    let long: Vec<String> = all_sources()
        .into_iter()
        .filter_map(|p| {
            let n = std::fs::read_to_string(&p).expect("read").lines().count();
            (n > 700).then(|| format!("{} ({n} lines)", p.display()))
        })
        .collect();
    assert!(long.is_empty(), "split these along their seams: {long:?}");
}

#[test]
fn one_runner_trait() {
    let mut found = Vec::new();
    for p in all_sources() {
        let text = std::fs::read_to_string(&p).expect("read");
        for l in text.lines() {
            let t = l.trim_start().trim_start_matches("pub ").trim_start_matches("pub(crate) ");
            if let Some(rest) = t.strip_prefix("trait ") {
                let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if name.ends_with("Runner") {
                    found.push(format!("{} in {}", name, p.display()));
                }
            }
        }
    }
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("TrialRunner in ") && found[0].contains("crates/trial/src"),
        "{found:?}"
    );
}

/// Errors are types with their causes, not text: no `Result<_, String>` in any crate's
/// sources (tests in `src/` included).
#[test]
fn no_error_is_a_string() {
    let mut found = Vec::new();
    for p in all_sources() {
        let text = std::fs::read_to_string(&p).expect("read");
        for (i, l) in text.lines().enumerate() {
            if let Some(at) = l.find("Result<") {
                let rest = &l[at..];
                let end = rest.find(['{', ';', '=']).unwrap_or(rest.len());
                if rest[..end].contains(", String>") {
                    found.push(format!("{}:{}", p.display(), i + 1));
                }
            }
        }
    }
    assert!(found.is_empty(), "give these errors a type: {found:?}");
}

/// The workspace crates `package` links outside its tests (`cargo tree -e normal`), by name.
fn links(package: &str) -> Vec<String> {
    let out = std::process::Command::new(env!("CARGO"))
        .args(["tree", "--offline", "-p", package, "-e", "normal", "--prefix", "none"])
        .current_dir(workspace())
        .output()
        .expect("cargo tree");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let tree = String::from_utf8_lossy(&out.stdout);
    let mut names: Vec<String> = tree
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with("xlat"))
        .map(String::from)
        .collect();
    names.sort();
    names.dedup();
    names
}

#[test]
fn the_procedures_link_neither_the_engine_nor_the_ports() {
    let l = links("xlat-procedures");
    assert!(l.iter().any(|n| n == "xlat-trial"), "{l:?}");
    for c in ["xlat-engine", "xlat-io"] {
        assert!(!l.iter().any(|n| n == c), "xlat-procedures links {c}: {l:?}");
    }
}

/// Results are read without the procedures: the campaign report links the results crate, not
/// xlat-procedures; the results crate links only the trial's data.
#[test]
fn results_and_the_campaign_link_no_procedure() {
    let campaign = links("xlat-campaign");
    assert!(campaign.iter().any(|n| n == "xlat-results"), "{campaign:?}");
    assert!(
        !campaign.iter().any(|n| n == "xlat-procedures"),
        "xlat-campaign links the procedures: {campaign:?}"
    );
    assert_eq!(links("xlat-results"), ["xlat-results", "xlat-trial"]);
}

/// The test support (the simulated DUTs, the skip and retry rules) is in no release library:
/// every crate takes xlat-testkit as a dev-dependency only.
#[test]
fn no_library_links_the_test_support() {
    let all = links("xlatperf");
    assert!(all.len() >= 10, "{all:?}");
    for c in all.iter().chain(&["xlat-campaign".to_string()]) {
        let l = links(c);
        assert!(!l.iter().any(|n| n == "xlat-testkit"), "{c} links xlat-testkit: {l:?}");
    }
}

#[test]
fn the_binary_holds_at_most_3000_code_lines() {
    let src = workspace().join("crates/cli/src");
    let mut total = 0;
    let mut per_file = Vec::new();
    for p in sources(&src) {
        if p.to_string_lossy().ends_with("_tests.rs") {
            continue;
        }
        let n = code_lines(&std::fs::read_to_string(&p).expect("read"));
        per_file.push((n, p.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default()));
        total += n;
    }
    per_file.sort();
    assert!(
        total <= 3000,
        "the CLI has {total} code lines outside tests; move logic into the library crates: {per_file:?}"
    );
}
