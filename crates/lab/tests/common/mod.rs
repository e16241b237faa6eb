//! Shared by the lab tests: serialisation and cleanup.

#![allow(dead_code)]

use std::sync::{Mutex, MutexGuard};

#[path = "../../../wire/tests/common/skip.rs"]
mod skip;

static LAB: Mutex<()> = Mutex::new(());

/// Hold this for the whole test: the lab's names are fixed, so tests must not overlap.
pub fn serial() -> MutexGuard<'static, ()> {
    LAB.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
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

/// See [`skip::skip_unless`]: root and `tools` are needed, or the test skips (fails under CI).
pub fn skip_unless_root(tools: &[&str]) -> bool {
    skip::skip_unless(xlat_lab::is_root(), tools)
}

/// Start from a clean machine (a crashed earlier run may have left a lab) and clean up at the end.
pub fn cleanup_guard() -> Cleanup {
    if let Err(e) = xlat_lab::down() {
        eprintln!("lab cleanup before the test failed: {e}");
    }
    Cleanup
}

pub mod packet;
