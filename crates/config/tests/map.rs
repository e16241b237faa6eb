//! Many MAP CEs on a side (`[left.map]`): read from TOML and written back, and every bad
//! figure refused naming its key and line: a rule whose EA bits do not fit its prefixes, a PSID
//! that leaves no room in a port, more CEs than the rule gives, more ports than a set holds,
//! siitperf.conf.

use xlat_config::{parse_toml, to_siitperf, to_toml};

const MAPE: &str = r#"
[tester]
backend = "afpacket"
left_port = "xlat-tl"
right_port = "xlat-tr"

[left]
ip_version = 4
ipv4_real = "198.18.0.2"
dut_ipv6 = "2001:2::1"

[left.tunnel]
local = "2001:2:0:c021:0:c612:2:1"
remote = "2001:2::1"

[left.map]
rule_ipv6 = "2001:2:0:c000::/50"
rule_ipv4 = "198.18.0.0/22"
ea_bits = 14
subscribers = 1000

[right]
ip_version = 4
ipv4_real = "198.19.0.2"
dut_ipv4 = "198.19.0.1"
"#;

#[test]
fn a_side_of_many_ces_is_read_and_written_back() {
    let c = parse_toml(MAPE, "mape.toml").unwrap_or_else(|e| panic!("{e}"));
    let m = c.setup.left.map.expect("map");
    assert_eq!((m.subscribers, m.ports, m.binding_psid), (1000, None, None));
    assert_eq!(
        (m.rule.ea_len(), m.rule.psid_len(), m.rule.psid_offset(), m.rule.ces()),
        (14, 4, 6, 16_384)
    );
    let again = parse_toml(&to_toml(&c), "again.toml").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(again.setup.left.map, Some(m));
    let e = to_siitperf(&c).unwrap_err().to_string();
    assert!(e.contains("'left.tunnel'"), "{e}");
    let mut native = c.clone();
    native.setup.left.tunnel = None;
    let e = to_siitperf(&native).unwrap_err().to_string();
    assert!(e.contains("'left.map'") && e.contains("mapping rule"), "{e}");
    // lw4o6's binding table: no IPv6 prefix needed.
    let lw = MAPE
        .replace("rule_ipv6 = \"2001:2:0:c000::/50\"\n", "binding_psid = 1\n")
        .replace("198.18.0.0/22", "198.18.0.0/16")
        .replace("ea_bits = 14", "ea_bits = 22\npsid_offset = 0");
    let c = parse_toml(&lw, "lw4o6.toml").unwrap_or_else(|e| panic!("{e}"));
    let m = c.setup.left.map.expect("map");
    assert_eq!((m.binding_psid, m.rule.ipv6_prefix().1, m.rule.ports_per_set()), (Some(1), 0, 1024));
}

#[test]
fn bad_rules_and_counts_name_the_key_and_line() {
    let err = |from: &str, to: &str| {
        let text = MAPE.replace(from, to);
        assert_ne!(text, MAPE, "{from}");
        parse_toml(&text, "mape.toml").unwrap_err().to_string()
    };
    // The EA bits do not hold the /22's 10-bit suffix; they overrun a /64.
    let e = err("ea_bits = 14", "ea_bits = 7");
    assert!(
        e.contains("mape.toml:19") && e.contains("left.map.ea_bits") && e.contains("fewer than the IPv4 suffix"),
        "{e}"
    );
    let e = err("2001:2:0:c000::/50", "2001:2:0:c000::/56");
    assert!(e.contains("left.map.ea_bits") && e.contains("longer than a /64"), "{e}");
    // A PSID whose offset and length are more than a port's 16 bits.
    let e = err("ea_bits = 14", "ea_bits = 14\npsid_offset = 13");
    assert!(e.contains("left.map.psid_offset") && e.contains("16 bits of a port"), "{e}");
    // Host bits, a prefix without a length, a length beyond the family's.
    let e = err("198.18.0.0/22", "198.18.0.1/22");
    assert!(e.contains("left.map.rule_ipv4") && e.contains("bits set beyond its length"), "{e}");
    let e = err("198.18.0.0/22", "198.18.0.0");
    assert!(e.contains("left.map.rule_ipv4") && e.contains("a prefix such as"), "{e}");
    let e = err("2001:2:0:c000::/50", "2001:2:0:c000::/129");
    assert!(e.contains("left.map.rule_ipv6"), "{e}");
    // More CEs than the rule gives; more ports than a set holds.
    let e = err("subscribers = 1000", "subscribers = 16385");
    assert!(
        e.contains("mape.toml:20") && e.contains("left.map.subscribers") && e.contains("16384 CEs"),
        "{e}"
    );
    let e = err("subscribers = 1000", "subscribers = 1000\nports = 4033");
    assert!(e.contains("left.map.ports") && e.contains("4032 ports in each set"), "{e}");
    // A PSID length of its own only without EA bits and with a whole address.
    let e = err("ea_bits = 14", "ea_bits = 14\npsid_len = 3");
    assert!(e.contains("left.map.psid_len") && e.contains("PSID length of its own"), "{e}");
    let e = err("rule_ipv4 = \"198.18.0.0/22\"\n", "");
    assert!(e.contains("left.map.rule_ipv4"), "{e}");
    let e = err("ea_bits = 14\n", "");
    assert!(e.contains("left.map.ea_bits"), "{e}");
    let e = err("subscribers = 1000", "subscribers = 1000\nsize = 3");
    assert!(e.contains("size"), "{e}");
}
