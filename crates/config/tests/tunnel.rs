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
    let e = to_siitperf(&c).unwrap_err();
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
