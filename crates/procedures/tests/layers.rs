//! The modules of this crate form layers: no two use each other, directly or through others
//! (the one check every crate shares: `xlat_testkit::layers`).

#[test]
fn modules_form_layers() {
    xlat_testkit::layers::assert_check_finds_cycles();
    xlat_testkit::layers::assert_layered(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src")));
}
