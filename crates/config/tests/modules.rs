//! The modules of this crate import each other one way only (`tests/layers.rs` checks that no
//! two use each other, even through a third), no module reaches another's items through
//! lib.rs's re-exports (that would make it use every module lib.rs uses), and the map at the
//! top of lib.rs says who uses whom. The uses are `xlat_testkit::layers::graph`'s, the one
//! reading of module paths every crate's layering check uses.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Module -> the modules it uses, for every file of src/ but lib.rs.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let mut g = xlat_testkit::layers::graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    g.remove("crate");
    g
}

#[test]
fn modules_use_no_item_of_lib_rs_and_the_leaves_use_nothing() {
    let g = graph();
    assert!(g.len() >= 7, "{g:?}");
    for (m, uses) in &g {
        assert!(
            !uses.contains("crate"),
            "{m}.rs uses an item of lib.rs (a re-export); name it by its module"
        );
    }
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
    assert_eq!(map, graph());
}
