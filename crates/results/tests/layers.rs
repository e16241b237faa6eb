//! The modules of this crate form layers: no two use each other, directly or through others
//! (the one check shared by every crate: wire/tests/common/layers.rs).

#[path = "../../wire/tests/common/layers.rs"]
mod layers;

#[test]
fn modules_form_layers() {
    layers::assert_check_finds_cycles();
    layers::assert_layered(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src")));
}
