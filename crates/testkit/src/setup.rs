//! The benchmarking setup the tests share: the tester's addresses in the benchmarking ranges
//! (RFC 2544's 198.18.0.0/15, RFC 5180's 2001:2::/48), the lab's left and right tester
//! addresses, both directions, fixed ports, every other frame foreground, seed 1. A test
//! changes what it is about with struct update syntax (`Setup { reverse: false, ..benchmarking(v) }`).
//!
//! xlat-traffic's own unit tests build theirs (`router_setup` in stream_tests.rs): a unit test
//! of a crate that testkit depends on sees another instance of its types.

use xlat_traffic::{IpVersion, PortSpec, Setup, Side, StatefulSpec};

/// The left tester's IPv4 and IPv6 addresses (the lab's).
pub const LEFT: (&str, &str) = ("198.18.0.2", "2001:2::2");
/// The right tester's.
pub const RIGHT: (&str, &str) = ("198.19.0.2", "2001:2:0:8000::2");

/// Both tester sides of IP version `v` with their benchmarking addresses (both families), both
/// directions, fixed ports, foreground 2 of 2, seed 1.
pub fn benchmarking(v: IpVersion) -> Setup {
    let side = |(ipv4, ipv6): (&str, &str)| Side {
        ipv4_real: ipv4.parse().ok(),
        ipv6_real: ipv6.parse().ok(),
        ..Side::new(v)
    };
    Setup {
        left: side(LEFT),
        right: side(RIGHT),
        forward: true,
        reverse: true,
        forward_ports: PortSpec::default(),
        reverse_ports: PortSpec::default(),
        fg_n: 2,
        fg_m: 2,
        stateful: StatefulSpec::default(),
        seed: Some(1),
        allow_foreign_addresses: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_addresses_are_the_benchmarking_ranges() {
        for v in [IpVersion::V4, IpVersion::V6] {
            let s = benchmarking(v);
            for side in [&s.left, &s.right] {
                assert_eq!(side.ip_version, v);
                let v4 = side.ipv4_real.expect("IPv4").octets();
                assert!(v4[0] == 198 && (v4[1] & 0xfe) == 18, "{v4:?}");
                assert_eq!(side.ipv6_real.expect("IPv6").segments()[..3], [0x2001, 2, 0]);
            }
            assert!(s.forward && s.reverse);
        }
    }
}
