//! The mapping rule against the RFCs' worked examples, each figure as RFC 7599 Appendix A
//! writes it (its text read for these tests; two errata noted where they fall), and a property
//! test: for random rules and CEs, the border relay's check inverts the CE's mapping exactly.

use super::*;
use crate::rng::SplitMix64;

fn v6(s: &str) -> Ipv6Addr {
    s.parse().unwrap()
}

fn v4(s: &str) -> Ipv4Addr {
    s.parse().unwrap()
}

/// RFC 7599 Appendix A, example 1 (Basic Mapping Rule): {2001:db8:0000::/40, 192.0.2.0/24,
/// EA-bits 16}, PSID offset 6 (the default).
fn example_1() -> MapRule {
    MapRule::new((v6("2001:db8:0000::"), 40), (v4("192.0.2.0"), 24), 16, 6).unwrap()
}

#[test]
fn rfc7599_example_1_basic_mapping_rule() {
    let rule = example_1();
    // "PSID length: (16 - (32 - 24) = 8 (sharing ratio of 256)"
    assert_eq!(rule.psid_len(), 8);
    // End-user IPv6 prefix 2001:db8:0012:3400::/56 -> "IPv4 address: 192.0.2.18", "PSID: 0x34".
    let ce = rule.ce_of(v6("2001:db8:0012:3400:0000:c000:0212:0034")).unwrap();
    assert_eq!(
        ce,
        Ce {
            ipv4: v4("192.0.2.18"),
            psid: 0x34
        }
    );
    assert_eq!(rule.end_user_prefix(ce), Some((v6("2001:db8:0012:3400::"), 56)));
    // "IPv6 address of MAP CE: 2001:db8:0012:3400:0000:c000:0212:0034"
    assert_eq!(rule.ce_address(ce), Some(v6("2001:db8:0012:3400:0000:c000:0212:0034")));
    // "Available ports (63 ranges): 1232-1235, 2256-2259, ...... , 63696-63699, 64720-64723"
    assert_eq!(rule.ports_per_set(), 63 * 4);
    let ports: Vec<u16> = (0..rule.ports_per_set()).map(|i| rule.port(0x34, i).unwrap()).collect();
    assert_eq!(ports[..8], [1232, 1233, 1234, 1235, 2256, 2257, 2258, 2259]);
    assert_eq!(ports[ports.len() - 8..], [63696, 63697, 63698, 63699, 64720, 64721, 64722, 64723]);
    assert!(ports.iter().all(|&p| rule.psid_of(p) == Some(0x34)));
    assert_eq!(rule.port(0x34, rule.ports_per_set()), None);
}

#[test]
fn rfc7599_examples_2_and_3_default_mapping_rule() {
    let rule = example_1();
    let dmr = v6("2001:db8:ffff::");
    // Example 2 (BR): 10.2.3.4:80 -> 192.0.2.18:1232 becomes "IPv6 source address:
    // 2001:db8:ffff:0:000a:0203:0400::", "IPv6 destination address:
    // 2001:db8:0012:3400:0000:c000:0212:0034".
    assert_eq!(embed(dmr, 64, v4("10.2.3.4")), Some(v6("2001:db8:ffff:0:000a:0203:0400::")));
    let psid = rule.psid_of(1232).unwrap();
    assert_eq!(psid, 0x34);
    let ce = Ce {
        ipv4: v4("192.0.2.18"),
        psid,
    };
    assert_eq!(rule.ce_address(ce), Some(v6("2001:db8:0012:3400:0000:c000:0212:0034")));
    // Example 3 (the CE): the same two addresses the other way; the BR reads them back.
    assert_eq!(extract(dmr, 64, v6("2001:db8:ffff:0:000a:0203:0400::")), Some(v4("10.2.3.4")));
    assert!(rule.allows(v6("2001:db8:0012:3400:0000:c000:0212:0034"), v4("192.0.2.18"), 1232));
}

#[test]
fn rfc7599_example_4_no_ea_bits_no_sharing() {
    // {2001:db8:0012:3400::/56, 192.0.2.1/32, EA-bits 0}; "PSID length: 0 (sharing ratio is 1)".
    // (The example's "IPv4 address: 192.0.2.18" contradicts its own rule and result; the
    // address is the rule's 192.0.2.1, as the CE address below shows.)
    let rule = MapRule::new((v6("2001:db8:0012:3400::"), 56), (v4("192.0.2.1"), 32), 0, 6).unwrap();
    assert_eq!((rule.psid_len(), rule.ces()), (0, 1));
    let ce = rule.ce(0).unwrap();
    assert_eq!(
        ce,
        Ce {
            ipv4: v4("192.0.2.1"),
            psid: 0
        }
    );
    // "IPv6 address of MAP CE: 2001:db8:0012:3400:0000:c000:0201:0000"
    assert_eq!(rule.ce_address(ce), Some(v6("2001:db8:0012:3400:0000:c000:0201:0000")));
    // Without sharing the CE has every port.
    assert_eq!(rule.ports_per_set(), 65_536);
    assert!(rule.allows(v6("2001:db8:0012:3400:0000:c000:0201:0000"), v4("192.0.2.1"), 80));
}

#[test]
fn rfc7599_example_5_no_ea_bits_with_sharing() {
    // {2001:db8:0012:3400::/56, 192.0.2.18/32, EA-bits 0}, PSID length 8 and PSID provisioned
    // (the text says 0x20 and then 0x34; the erratum: 0x34, which its ports and address show).
    let rule = MapRule::new((v6("2001:db8:0012:3400::"), 56), (v4("192.0.2.18"), 32), 0, 6)
        .unwrap()
        .with_psid_len(8)
        .unwrap();
    let ce = Ce {
        ipv4: v4("192.0.2.18"),
        psid: 0x34,
    };
    // "IPv6 address of MAP CE: 2001:db8:0012:3400:0000:c000:0212:0034"
    assert_eq!(rule.ce_address(ce), Some(v6("2001:db8:0012:3400:0000:c000:0212:0034")));
    assert_eq!(rule.ce_of(v6("2001:db8:0012:3400:0000:c000:0212:0034")), Some(ce));
    // "Available ports (63 ranges): 1232-1235, 2256-2259, ...... , 63696-63699, 64720-64723"
    assert_eq!((rule.port(0x34, 0), rule.port(0x34, 251)), (Some(1232), Some(64723)));
}

/// RFC 6052 section 2.2's table: 192.0.2.33 under 2001:db8::/32 ... /96, each length's
/// address as the RFC's section 2.4 example lists it.
#[test]
fn rfc6052_embedding_at_every_prefix_length() {
    let a = v4("192.0.2.33");
    for (prefix, len, want) in [
        ("2001:db8::", 32, "2001:db8:c000:221::"),
        ("2001:db8:100::", 40, "2001:db8:1c0:2:21::"),
        ("2001:db8:122::", 48, "2001:db8:122:c000:2:2100::"),
        ("2001:db8:122:300::", 56, "2001:db8:122:3c0:0:221::"),
        ("2001:db8:122:344::", 64, "2001:db8:122:344:c0:2:2100:0"),
        ("2001:db8:122:344::", 96, "2001:db8:122:344::192.0.2.33"),
    ] {
        assert_eq!(embed(v6(prefix), len, a), Some(v6(want)), "/{len}");
        assert_eq!(extract(v6(prefix), len, v6(want)), Some(a), "/{len}");
    }
    assert_eq!(embed(v6("2001:db8::"), 33, a), None);
    assert_eq!(extract(v6("2001:db8::"), 32, v6("2001:db9::1")), None);
}

#[test]
fn rules_that_cannot_be_used_say_why() {
    let r = |p6: &str, l6, p4: &str, l4, ea, a| MapRule::new((v6(p6), l6), (v4(p4), l4), ea, a);
    assert_eq!(
        r("2001:2::", 40, "198.18.0.0", 24, 7, 6),
        Err(RuleError::EaShort {
            ea_len: 7,
            ipv4_len: 24,
            suffix: 8
        })
    );
    assert_eq!(
        r("2001:2::", 56, "198.18.0.0", 24, 16, 6),
        Err(RuleError::EaLong { ipv6_len: 56, ea_len: 16 })
    );
    assert_eq!(
        r("2001:2::", 40, "198.18.0.0", 24, 20, 6),
        Err(RuleError::PsidBits { offset: 6, len: 12 })
    );
    assert_eq!(
        r("2001:2::1", 40, "198.18.0.0", 24, 16, 6),
        Err(RuleError::HostBits { which: "IPv6" })
    );
    assert_eq!(
        r("2001:2::", 40, "198.18.0.1", 24, 16, 6),
        Err(RuleError::HostBits { which: "IPv4" })
    );
    assert_eq!(r("2001:2::", 72, "198.18.0.0", 24, 8, 6), Err(RuleError::Ipv6Len(72)));
    assert_eq!(r("2001:2::", 40, "198.18.0.0", 33, 16, 6), Err(RuleError::Ipv4Len(33)));
    assert_eq!(
        r("2001:2::", 40, "198.18.0.0", 24, 16, 6).unwrap().with_psid_len(4),
        Err(RuleError::PsidLenWithEa)
    );
    let e = r("2001:2::", 40, "198.18.0.0", 24, 7, 6).unwrap_err().to_string();
    assert!(e.contains("EA bits (7)") && e.contains("8 bits"), "{e}");
}

/// A random rule that can be used: prefixes of random lengths in the benchmarking ranges'
/// shape (random bits, host bits clear), EA bits from the IPv4 suffix up to what fits.
fn random_rule(rng: &mut SplitMix64) -> MapRule {
    loop {
        let ipv4_len = 16 + (rng.next() % 17) as u8;
        let ipv6_len = 24 + (rng.next() % 33) as u8;
        let suffix = 32 - ipv4_len;
        let room = 64u8.saturating_sub(ipv6_len);
        if room < suffix {
            continue;
        }
        let ea = suffix + (rng.next() % u64::from(room - suffix + 1)).min(16) as u8;
        let offset = (rng.next() % 8) as u8;
        let p6 = (u128::from(rng.next()) << 64 | u128::from(rng.next())) & mask128(ipv6_len);
        let p4 = (rng.next() as u32) & mask32(ipv4_len);
        if let Ok(rule) = MapRule::new((Ipv6Addr::from(p6), ipv6_len), (Ipv4Addr::from(p4), ipv4_len), ea, offset) {
            return rule;
        }
    }
}

#[test]
fn the_border_relays_check_inverts_the_ces_mapping() {
    let mut rng = SplitMix64::new(7597);
    for _ in 0..2000 {
        let rule = random_rule(&mut rng);
        let ce = rule.ce(rng.next() % rule.ces()).unwrap();
        let addr = rule.ce_address(ce).unwrap();
        assert_eq!(rule.ce_of(addr), Some(ce), "{rule:?}");
        let port = rule.port(ce.psid, (rng.next() % u64::from(rule.ports_per_set())) as u32).unwrap();
        assert_eq!(rule.psid_of(port), Some(ce.psid), "{rule:?} {port}");
        assert!(rule.allows(addr, ce.ipv4, port), "{rule:?} {ce:?} {port}");
        // Any other port, address or source is another CE's, or no one's.
        let other_port = rng.next() as u16;
        assert_eq!(rule.allows(addr, ce.ipv4, other_port), rule.psid_of(other_port) == Some(ce.psid));
        let flipped = Ipv6Addr::from(u128::from(addr) ^ (1u128 << (rng.next() % 128)));
        assert!(!rule.allows(flipped, ce.ipv4, port), "{rule:?} {flipped}");
        if rule.ces() > 1 {
            let other = rule
                .ce((rng.next() % (rule.ces() - 1) + 1 + rule.index(ce).unwrap()) % rule.ces())
                .unwrap();
            assert_ne!(other, ce);
            assert_ne!(rule.ce_address(other), Some(addr));
        }
    }
}

/// `index` inverts `ce` for every CE of a rule, and nothing outside the rule has one; a rule
/// read back from JSON is the rule, and one that fails its checks is refused there too.
#[test]
fn index_inverts_ce_and_json_keeps_the_rule() {
    let mut rng = SplitMix64::new(6052);
    for _ in 0..200 {
        let rule = random_rule(&mut rng);
        let n = rng.next() % rule.ces();
        assert_eq!(rule.index(rule.ce(n).unwrap()), Some(n), "{rule:?}");
        let json = serde_json::to_string(&rule).unwrap();
        assert_eq!(serde_json::from_str::<MapRule>(&json).unwrap(), rule, "{json}");
    }
    let rule = example_1();
    assert_eq!(
        rule.index(Ce {
            ipv4: v4("192.0.3.1"),
            psid: 0
        }),
        None
    );
    assert_eq!(
        rule.index(Ce {
            ipv4: v4("192.0.2.18"),
            psid: 256
        }),
        None
    );
    let shared = MapRule::new((v6("2001:db8:12:3400::"), 56), (v4("192.0.2.18"), 32), 0, 6)
        .unwrap()
        .with_psid_len(8)
        .unwrap();
    let json = serde_json::to_string(&shared).unwrap();
    assert_eq!(serde_json::from_str::<MapRule>(&json).unwrap(), shared);
    let bad = json.replace("\"ea_len\":0", "\"ea_len\":3");
    assert!(
        serde_json::from_str::<MapRule>(&bad)
            .unwrap_err()
            .to_string()
            .contains("PSID length of its own"),
        "{bad}"
    );
}

#[test]
fn every_port_of_a_shared_address_belongs_to_one_set() {
    let rule = example_1();
    let mut owners = vec![0u32; 1 << 16];
    for psid in 0..256u16 {
        for i in 0..rule.ports_per_set() {
            owners[usize::from(rule.port(psid, i).unwrap())] += 1;
        }
    }
    // 0-1023 in no set (PSID offset 6), every other port in exactly one.
    assert!(owners[..1024].iter().all(|&n| n == 0));
    assert!(owners[1024..].iter().all(|&n| n == 1));
}
