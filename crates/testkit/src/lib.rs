//! What xlatperf's tests share. Every crate takes it as a dev-dependency only, so nothing here
//! is in a release library.
//!
//! | module | holds |
//! | --- | --- |
//! | [`skip`] | the one skip rule of tests that need the machine (root, tools), and the serial lock of namespace tests |
//! | [`retry`] | the one retry rule of tests judged by the tester's own timing, and its suite-wide budget |
//! | [`layers`] | the check that a crate's modules form layers (no two use each other) |
//! | [`rng`] | [`rng::Rng`], the deterministic generator of tests that pick at random |
//! | `setup` (feature `setup`) | the benchmarking setup the tests share: both tester sides in the benchmarking ranges |
//! | `sim` (feature `sim`) | the simulated DUTs the procedures are tested against |
//! | `fake` (feature `sim`) | [`fake::Fake`], the one hand-made runner: closures over the spec (phase 2, phase 1, the DUT's timed commands) |

#[cfg(feature = "sim")]
pub mod fake;
pub mod layers;
pub mod retry;
pub mod rng;
#[cfg(feature = "setup")]
pub mod setup;
#[cfg(feature = "sim")]
pub mod sim;
pub mod skip;
