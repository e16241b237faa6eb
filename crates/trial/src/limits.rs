//! The limits of one trial, defined once.

/// The most frames one direction of a trial may send: each receiver keeps a bit per frame
/// (2 GiB at this limit).
pub const MAX_FRAMES: u64 = 1 << 34;

/// siitperf's TOLERANCE: sending must end within duration x 1.00001.
pub const TOLERANCE: f64 = 1.00001;

/// A trial's seconds of sending unless it says otherwise (RFC 2544 section 24: at least 60).
pub const DEFAULT_DURATION_S: f64 = 60.0;

/// Milliseconds the receivers keep receiving after sending ended, unless a trial says
/// otherwise (RFC 2544 section 23: 2 s).
pub const DEFAULT_TIMEOUT_MS: u64 = 2000;

/// Frames per transmit burst of a trial unless it says otherwise: the ports' own default burst
/// (`xlat_io::DEFAULT_BURST`, which the engine checks is the same).
pub const DEFAULT_BURST: usize = 32;

/// A sender more than this far behind its schedule is stalled (reported per trial as
/// [`crate::DirectionReport::stalls`]), nanoseconds.
pub const STALL_NS: u64 = 100_000;
