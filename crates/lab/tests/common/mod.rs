//! Shared by the lab tests: serialisation and cleanup.

#![allow(dead_code)]

use std::sync::MutexGuard;

pub use skip::skip_unless_root;
pub use xlat_testkit::skip;

/// Hold this for the whole test: the lab's names are fixed, so tests must not overlap.
pub fn serial() -> MutexGuard<'static, ()> {
    skip::serial()
}

/// Tears the lab down when dropped, so a failing test leaves nothing behind.
pub struct Cleanup;

impl Drop for Cleanup {
    fn drop(&mut self) {
        if let Err(e) = xlat_lab::down() {
            eprintln!("lab cleanup failed: {e}");
        }
    }
}

/// Start from a clean machine (a crashed earlier run may have left a lab) and clean up at the end.
pub fn cleanup_guard() -> Cleanup {
    if let Err(e) = xlat_lab::down() {
        eprintln!("lab cleanup before the test failed: {e}");
    }
    Cleanup
}

pub mod packet;
