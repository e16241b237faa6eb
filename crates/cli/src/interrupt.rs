//! Ctrl-C between trials. The first SIGINT sets a flag that the procedures' runner checks
//! before each trial: the trial in progress finishes (its numbers stay consistent), no new one
//! starts, the command fails with "interrupted", and drop guards (the demo's lab) clean up. The
//! handler then restores the default action, so a second Ctrl-C ends the process at once; what
//! that leaves behind, `xlatperf lab down` removes (it works after a crash too).

use std::sync::atomic::{AtomicBool, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);

const MESSAGE: &[u8] = b"\nxlatperf: Ctrl-C: stopping after the current trial (Ctrl-C again to stop at once)\n";

extern "C" fn on_sigint(_signal: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
    // SAFETY: write(2) and signal(2) are async-signal-safe; MESSAGE is a static buffer.
    unsafe {
        let _ = libc::write(2, MESSAGE.as_ptr().cast(), MESSAGE.len());
        libc::signal(libc::SIGINT, libc::SIG_DFL);
    }
}

/// Install the handler (idempotent).
pub fn install() {
    let handler: extern "C" fn(libc::c_int) = on_sigint;
    // SAFETY: the handler only touches an atomic and calls async-signal-safe functions.
    unsafe {
        libc::signal(libc::SIGINT, handler as libc::sighandler_t);
    }
}

/// Was Ctrl-C pressed?
pub fn requested() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// The flag itself, for code that waits on it (the campaign runner).
pub fn flag() -> &'static AtomicBool {
    &STOP
}
