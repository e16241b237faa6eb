//! The media's maximum frame rate, the default highest rate of the throughput search, the
//! frame loss sweep, back-to-back bursts and the system recovery overload (RFC 2544 section 20).

/// Bytes each frame occupies on an Ethernet wire besides itself: preamble and start delimiter
/// (8) and the inter-frame gap (12).
pub const ETHERNET_OVERHEAD: usize = 20;

/// The maximum frame rate of a `gbps` link carrying frames of `frame_bytes` (FCS included): at
/// least 1. 10 Gbit/s, 64-byte frames: 14,880,952.
pub fn line_rate(gbps: f64, frame_bytes: usize) -> u64 {
    ((gbps * 1.0e9 / ((frame_bytes + ETHERNET_OVERHEAD) * 8) as f64).floor() as u64).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_rate_of_ethernet() {
        assert_eq!(line_rate(10.0, 64), 14_880_952);
        assert_eq!(line_rate(10.0, 1518), 812_743);
        assert_eq!(line_rate(1.0, 64), 1_488_095);
        assert_eq!(line_rate(0.0, 64), 1);
    }
}
