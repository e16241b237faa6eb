//! What a benchmark run is asked, and why it fails.

use crate::trial::EngineError;

/// One benchmark run: for how long, which frames, in bursts of how many, on which core.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BenchSpec {
    /// Seconds to run.
    pub seconds: f64,
    /// Frame size with FCS (the IPv6 size; IPv4 frames are 20 bytes shorter).
    pub frame_size: usize,
    /// Frames per burst sent.
    pub burst: usize,
    /// The core the (first) benchmark thread is pinned to.
    pub core: Option<usize>,
    /// With a stateful setup: the Responder's phase 2 frames on a state table of this many
    /// made-up connections instead of the Initiator's phase 1.
    pub responder: Option<u64>,
}

/// How [`sender`] sends beyond the [`BenchSpec`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Saturation {
    /// Queue sets of the port, each sending the whole stream on a core of its own.
    pub queues: usize,
    /// Reset every mbuf and write its frame whole, per frame (testpmd txonly's work).
    pub reset: bool,
}

/// Why a benchmark failed.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    Stream(#[from] xlat_traffic::StreamError),
    #[error(transparent)]
    State(#[from] xlat_traffic::StateError),
    #[error("the Responder's frames need a stateful setup (stateful.mode)")]
    NotStateful,
    #[error("the Responder's frames need the real addresses of both sides in the Responder's IP version")]
    NoAddresses,
    #[error("the receiver counted {received} of {sent} frames sent once ({other} others): the loopback lost or changed frames")]
    Lost { sent: u64, received: u64, other: u64 },
}

#[cfg(test)]
pub(crate) mod tests {
    use xlat_traffic::{IpVersion, Setup};

    /// Forward traffic only between the benchmarking addresses, foreground frames `fg_m` of
    /// every 2: for the benchmarks' tests.
    pub(crate) fn test_setup(v: IpVersion, fg_m: u32) -> Setup {
        Setup {
            reverse: false,
            fg_m,
            ..xlat_testkit::setup::benchmarking(v)
        }
    }
}
