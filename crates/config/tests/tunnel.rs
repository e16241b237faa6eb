//! IPv4 in IPv6 on a side (`[left.tunnel]`, DS-Lite's B4): read from TOML and written back,
//! refused where it cannot be (an IPv6 side, one end missing, a frame size that does not fit
//! with the outer header, siitperf.conf), each error naming its key.

use xlat_config::{parse_toml, to_siitperf, to_toml};

const DSLITE: &str = r#"
[tester]
backend = "afpacket"
left_port = "xlat-tl"
right_port = "xlat-tr"

[left]
ip_version = 4
ipv4_real = "198.18.0.2"
dut_ipv6 = "2001:2::1"

[left.tunnel]
local = "2001:2::2"
remote = "2001:2::1"

[right]
ip_version = 4
ipv4_real = "198.19.0.2"
dut_ipv4 = "198.19.0.1"
"#;

#[test]
fn a_b4_side_is_read_and_written_back() {
    let c = parse_toml(DSLITE, "dslite.toml").expect("dslite");
    let t = c.setup.left.tunnel.expect("tunnel");
    assert_eq!(
        (t.local.to_string(), t.remote.to_string()),
        ("2001:2::2".into(), "2001:2::1".into())
    );
    assert!(c.setup.right.tunnel.is_none());
    let again = parse_toml(&to_toml(&c), "again.toml").expect("written back");
    assert_eq!(again.setup.left.tunnel, Some(t));
    // siitperf has no such keys: converting refuses, naming the key.
    let e = to_siitperf(&c).unwrap_err().to_string();
    assert!(
        e.contains("'left.tunnel'") && e.contains("siitperf sends no encapsulated frames"),
        "{e}"
    );
}

#[test]
fn bad_tunnels_are_errors_naming_the_key() {
    let no_remote = DSLITE.replace("remote = \"2001:2::1\"\n", "");
    let e = parse_toml(&no_remote, "dslite.toml").unwrap_err().to_string();
    assert!(e.contains("left.tunnel.remote") && e.contains("both ends"), "{e}");
    let v4_end = DSLITE.replace("local = \"2001:2::2\"", "local = \"198.18.0.2\"");
    let e = parse_toml(&v4_end, "dslite.toml").unwrap_err().to_string();
    assert!(e.contains("left.tunnel.local"), "{e}");
    let v6_side = DSLITE.replacen("ip_version = 4", "ip_version = 6\nipv6_real = \"2001:2::2\"", 1);
    let e = parse_toml(&v6_side, "dslite.toml").unwrap_err().to_string();
    assert!(e.contains("left.tunnel") && e.contains("ip_version must be 4"), "{e}");
    let unknown = DSLITE.replace("[left.tunnel]\n", "[left.tunnel]\nkind = \"gre\"\n");
    let e = parse_toml(&unknown, "dslite.toml").unwrap_err().to_string();
    assert!(e.contains("kind"), "{e}");
    // The largest IPv4 frame is 40 bytes shorter with the outer header.
    let c = parse_toml(&format!("{DSLITE}\n[trial]\nframe_size = 8998\n"), "dslite.toml");
    assert!(c.is_ok(), "{c:?}");
    let e = parse_toml(&format!("{DSLITE}\n[trial]\nframe_size = 8999\n"), "dslite.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("trial.frame_size") && e.contains("40 bytes longer in the tunnel"), "{e}");
}

/// Many B4s in a stateful test: the B4 side's varying addresses are the outer ones, so phase 1's
/// port enumeration needs no IP enumeration (siitperf's rule 5 is about the inner addresses,
/// which stay fixed), while the same variation on a native side still needs it.
#[test]
fn many_b4s_with_port_enumeration_need_no_ip_enumeration() {
    let stateful = "\n[stateful]\nmode = \"initiator-left\"\nenumerate_ports = \"pseudorandom\"\n\
        [traffic.forward_ports]\nsport = { variation = \"pseudorandom\", min = 10000, max = 10099 }\n\
        [left.ip_variation]\nvariation = \"pseudorandom\"\nmin = 2\nmax = 1001\n";
    let text = format!("{DSLITE}{stateful}");
    // (TOML tables may come in any order: [left.ip_variation] after [traffic].)
    let c = parse_toml(&text, "dslite.toml").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((c.setup.left.ip_var.min, c.setup.left.ip_var.max), (2, 1001));
    let native = text.replace("[left.tunnel]\nlocal = \"2001:2::2\"\nremote = \"2001:2::1\"\n", "");
    let e = parse_toml(&native, "dslite.toml").unwrap_err().to_string();
    assert!(e.contains("stateful.enumerate_ips"), "{e}");
}
