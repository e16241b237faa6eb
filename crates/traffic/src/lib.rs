//! What xlatperf sends: the test setup (sides, IP versions, real and virtual addresses, MACs),
//! which addresses each direction uses (docs/config.md, "Which addresses a direction uses"), the
//! foreground/background mix, the variation of ports and addresses, and the frame templates with
//! the per-frame patcher that the engine's senders call.
//!
//! This crate knows nothing of threads, clocks or backends.

pub mod rng;
pub mod setup;
pub mod stream;
pub mod vary;

pub use setup::*;
pub use stream::{Burst, BurstScratch, DirectionStream, StreamError};
