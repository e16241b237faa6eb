//! The modules of xlat-bpf form layers: no two use each other, directly or through others.

#[path = "../../wire/tests/common/layers.rs"]
mod layers;

#[test]
fn modules_form_layers() {
    layers::assert_check_finds_cycles();
    layers::assert_layered(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src")));
}
