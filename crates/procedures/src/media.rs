//! The media's maximum frame rate, the default highest rate of the throughput search, the
//! frame loss sweep, back-to-back bursts and the system recovery overload (RFC 2544 section 20).

use xlat_traffic::IpVersion;

/// Bytes each frame occupies on an Ethernet wire besides itself: preamble and start delimiter
/// (8) and the inter-frame gap (12).
pub const ETHERNET_OVERHEAD: usize = 20;

/// The maximum frame rate of a `gbps` link carrying frames of `frame_bytes` (FCS included): at
/// least 1. 10 Gbit/s, 64-byte frames: 14,880,952.
pub fn line_rate(gbps: f64, frame_bytes: usize) -> u64 {
    ((gbps * 1.0e9 / ((frame_bytes + ETHERNET_OVERHEAD) * 8) as f64).floor() as u64).max(1)
}

/// The maximum frame rate of a `gbps` link for `frame_size` for the longest frame an active
/// sender of `setup` puts on the wire: IPv4 frames are 20 bytes shorter than the frame size
/// (the size is IPv6's, RFC 8219 section 5.1), background frames are IPv6. 10 Gbit/s, size 84,
/// IPv4: 14,880,952.
pub fn setup_line_rate(setup: &xlat_traffic::Setup, frame_size: usize, gbps: f64) -> u64 {
    let on_wire = |v: IpVersion| {
        if v == IpVersion::V4 && !setup.has_background() {
            frame_size.saturating_sub(20)
        } else {
            frame_size
        }
    };
    let mut longest = 0;
    if setup.forward {
        longest = longest.max(on_wire(setup.left.ip_version));
    }
    if setup.reverse {
        longest = longest.max(on_wire(setup.right.ip_version));
    }
    if longest == 0 {
        longest = frame_size;
    }
    line_rate(gbps, longest)
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

    #[test]
    fn line_rate_of_a_setup_takes_its_longest_frame() {
        let mut s = xlat_testkit::setup::benchmarking(IpVersion::V4);
        // IPv4 both ways: the frame size is IPv6's, IPv4 frames are 20 bytes shorter.
        assert_eq!(setup_line_rate(&s, 84, 10.0), 14_880_952);
        assert_eq!(setup_line_rate(&s, 1538, 10.0), 812_743);
        // An IPv6 side sends frames of the full size; only the active senders count.
        s.right.ip_version = IpVersion::V6;
        assert_eq!(setup_line_rate(&s, 84, 10.0), line_rate(10.0, 84));
        s.reverse = false;
        assert_eq!(setup_line_rate(&s, 84, 10.0), 14_880_952);
        // Background frames are IPv6.
        s.fg_m = 1;
        assert_eq!(setup_line_rate(&s, 84, 10.0), line_rate(10.0, 84));
    }
}
