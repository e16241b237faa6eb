//! Tests of `text.rs`.

use super::*;

#[test]
fn grouping() {
    assert_eq!(group(0), "0");
    assert_eq!(group(999), "999");
    assert_eq!(group(1000), "1,000");
    assert_eq!(group(7_161_269), "7,161,269");
}
