//! Lab tests of multiple IP addresses per side (as in section 6.2 of G. Lencse, "Making stateless
//! and stateful network performance measurements unbiased", 2024): 1000 pseudorandom
//! addresses on each side through a Linux router, with no static neighbour entries in the DUT:
//! the tester announces and answers for every address itself.

mod common;

use common::{lab_lock, lab_up, ok, skip_unless_root, until_valid, LabDown, LAB_TOOLS};
use serde_json::Value;
use std::process::Command;

/// Neighbour entries of the DUT on `dev`: (address, state).
fn neighbours(dev: &str) -> Vec<(String, String)> {
    let o = Command::new("ip")
        .args(["-n", "xlat-dut", "neigh", "show", "dev", dev])
        .output()
        .expect("ip neigh");
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            Some((w.first()?.to_string(), w.last()?.to_string()))
        })
        .collect()
}

fn thousand_addresses(topology: &str, offset_key: &str, offset: &str) {
    if skip_unless_root(LAB_TOOLS) {
        return;
    }
    let _g = lab_lock();
    let conf = lab_up(topology);
    let _down = LabDown;
    let mut args: Vec<String> = [
        "trial",
        "-c",
        &conf,
        "--rate",
        "5000",
        "--duration",
        "4",
        "--timeout",
        "1000",
        "--json",
        "-",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for side in ["left", "right"] {
        for (k, v) in [("variation", "pseudorandom"), ("min", "2"), ("max", "1001"), (offset_key, offset)] {
            args.push("--set".into());
            args.push(format!("{side}.ip_variation.{k}={v}"));
        }
    }
    let argv: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
    let v: Value = until_valid(|| serde_json::from_str(ok(&argv).trim()).unwrap());
    for dir in ["forward", "reverse"] {
        assert_eq!(v[dir]["sent"], 20_000, "{v}");
        assert_eq!(v[dir]["lost"], 0, "{dir}: {v}");
    }
    for dev in ["xlat-dl", "xlat-dr"] {
        let n = neighbours(dev);
        assert!(n.iter().all(|(_, st)| st != "PERMANENT"), "{dev}: static entries {n:?}");
        let learnt = n.iter().filter(|(_, st)| st != "FAILED" && st != "INCOMPLETE").count();
        assert!(learnt >= 1000, "{dev}: the DUT knows only {learnt} tester addresses");
    }
}

#[test]
fn router4_with_1000_addresses_per_side_needs_no_static_entries() {
    thousand_addresses("router4", "ipv4_offset", "2");
}

#[test]
fn router6_with_1000_addresses_per_side_needs_no_static_entries() {
    thousand_addresses("router6", "ipv6_offset", "14");
}
