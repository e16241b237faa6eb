//! Lab tests: real trials through a Linux DUT in a network namespace, driven through the
//! xlatperf binary as a user would. They need root (CI runs as root); without it they skip,
//! which fails under CI=true and makes scripts/test.sh fail (common::skip_unless_root).

mod common;

use common::{dut_exec, ok, skip_unless_root, until_valid, TrialLab, LAB_TOOLS};
use serde_json::Value;

/// The lab of one test ([`TrialLab`]) with a way into its DUT.
struct Lab(TrialLab);

impl Lab {
    fn up(topology: &str) -> Lab {
        Lab(TrialLab::up(topology, &[]))
    }

    fn dut(&self, args: &[&str]) -> String {
        dut_exec(args)
    }

    fn trial(&self, rate: u64, secs: u64, extra: &[&str]) -> Value {
        self.0.trial(rate, secs, extra)
    }
}

fn counts(v: &Value, dir: &str) -> (u64, u64, u64, u64) {
    let d = &v[dir];
    let g = |k: &str| d[k].as_u64().unwrap_or_else(|| panic!("{dir}.{k} missing in {v}"));
    (g("sent"), g("received"), g("lost"), g("duplicates"))
}

/// Run a trial; a trial made invalid by this shared machine's other load is reported as such
/// (correctly) and is tried again, up to three times.
fn valid_trial(lab: &Lab, rate: u64, secs: u64, extra: &[&str]) -> Value {
    until_valid(|| lab.trial(rate, secs, extra))
}

fn lossless_bidirectional(topology: &str) {
    if skip_unless_root(LAB_TOOLS) {
        return;
    }
    let lab = Lab::up(topology);
    let v = valid_trial(&lab, 20_000, 5, &[]);
    for dir in ["forward", "reverse"] {
        let (sent, received, lost, dups) = counts(&v, dir);
        assert_eq!(sent, 100_000, "{dir}: {v}");
        assert_eq!((received, lost, dups), (sent, 0, 0), "{dir}: {v}");
        assert!(v[dir]["reordered"].as_u64().is_some() && v[dir]["achieved_rate"].as_f64().unwrap() > 19_000.0);
        assert!(v[dir]["max_lag_ns"].as_u64().is_some());
        // The send lag's percentile and stalls are in every trial's JSON.
        assert!(v[dir]["lag_p999_ns"].as_u64() <= v[dir]["max_lag_ns"].as_u64(), "{v}");
        assert!(v[dir]["stalls"].as_u64().is_some(), "{v}");
    }
    // The DUT learnt the tester's addresses dynamically: no static (PERMANENT) entries.
    let neigh = lab.dut(&["ip", "neigh", "show"]);
    assert!(!neigh.contains("PERMANENT"), "{neigh}");
    let expect = if topology == "router4" { "198.19.0.2" } else { "2001:2:0:8000::2" };
    assert!(neigh.contains(expect), "the DUT resolved the tester: {neigh}");
    // By default (auto) the kernel stamps the frames where a veth can (lab_stamps.rs checks
    // those stamps against a capture), and hardware stamps on a veth are refused with a
    // message that names the port and what it has (as ethtool -T says: software only).
    assert_eq!(v["forward"]["stamps"], "kernel", "{v}");
    let o = common::xlatperf(&[
        "trial",
        "-c",
        &lab.0.config,
        "--rate",
        "1000",
        "--duration",
        "1",
        "--set",
        "tester.timestamps=hardware",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(
        err.contains("tester.timestamps = hardware: port xlat-") && err.contains("has no hardware stamps on transmit and receive; it has: software transmit, software receive; no hardware clock (ethtool -T xlat-"),
        "{err}"
    );

    // With forwarding off, every frame is lost, and the trial is still a valid measurement.
    let key = if topology == "router4" {
        "net.ipv4.ip_forward=0"
    } else {
        "net.ipv6.conf.all.forwarding=0"
    };
    lab.dut(&["sysctl", "-qw", key]);
    let v = valid_trial(&lab, 20_000, 2, &[]);
    for dir in ["forward", "reverse"] {
        let (sent, received, lost, _) = counts(&v, dir);
        assert_eq!((sent, received, lost), (40_000, 0, 40_000), "{dir}: {v}");
    }
}

#[test]
fn router4_bidirectional_lossless_then_forwarding_off_loses_all() {
    lossless_bidirectional("router4");
}

#[test]
fn router6_bidirectional_lossless_then_forwarding_off_loses_all() {
    lossless_bidirectional("router6");
}

#[test]
fn siitperf_lines_and_unidirectional_trial() {
    if skip_unless_root(LAB_TOOLS) {
        return;
    }
    let lab = Lab::up("router4");
    let out = ok(&[
        "trial",
        "-c",
        &lab.0.config,
        "--rate",
        "10000",
        "--duration",
        "2",
        "--timeout",
        "500",
        "--set",
        "traffic.reverse=false",
    ]);
    assert!(out.contains("Forward frames sent: 20000"), "{out}");
    assert!(out.contains("Forward frames received: 20000") || out.contains("INVALID"), "{out}");
    assert!(!out.contains("Reverse frames"), "{out}");
}

/// lw4o6 (RFC 7596): a bidirectional trial through the lwAFTR, the tester as the lwB4 of the
/// binding table's first entry, is lossless and its softwire frames dissect
/// ([`softwire_trial`]), the lwB4's ports inside its port set (1024-2047).
#[test]
fn lw4o6_trial_is_lossless_and_its_softwire_frames_dissect() {
    softwire_trial("lw4o6", "2001:2::2", 1024..=2047);
}

/// mape (RFC 7597): a bidirectional trial through the border relay, the tester as the CE the
/// mapping rule gives 198.18.0.2 with PSID 1, is lossless and its softwire frames dissect
/// ([`softwire_trial`]), the CE's ports in the first range of its set (1088-1151).
#[test]
fn mape_trial_is_lossless_and_its_softwire_frames_dissect() {
    softwire_trial("mape", "2001:2:0:c021:0:c612:2:1", 1088..=1151);
}

/// A bidirectional trial through `topology`'s softwire concentrator (2001:2::1), the tester's
/// left side the softwire's other end `b4`, is lossless, and tshark in the DUT's namespace
/// dissects every frame in the softwire as IPv6 between `b4` and the concentrator carrying
/// IPv4 carrying UDP, every checksum good, with the tester's ports in `set`: forward source
/// ports, reverse destination ports. A trial the machine made late is captured and run again.
fn softwire_trial(topology: &str, b4: &str, set: std::ops::RangeInclusive<u16>) {
    if skip_unless_root(&[LAB_TOOLS, &["tshark"]].concat()) {
        return;
    }
    let lab = Lab::up(topology);
    let fields = common::SOFTWIRE_FIELDS;
    let (rows, v) = common::retry::until_valid(
        &format!("{topology} tshark trial"),
        || common::dissect_for(20, "xlat-dl", "ip6 and ip6[6] == 4", 4000, &fields, || lab.trial(1000, 2, &[])),
        |(_, v)| v["valid"] == Value::Bool(true) || common::only_late(v),
        |(_, v)| v["invalid_reasons"].to_string(),
    );
    assert_eq!(rows.len(), 4000, "{v}");
    let aftr = "2001:2::1";
    let mut out = 0;
    for r in &rows {
        let (sport, dport): (u16, u16) = (r[6].parse().unwrap(), r[7].parse().unwrap());
        let outward = r[0] == b4;
        let (ends, inner, port) = if outward {
            ((b4, aftr), ("198.18.0.2", "198.19.0.2"), sport)
        } else {
            ((aftr, b4), ("198.19.0.2", "198.18.0.2"), dport)
        };
        assert_eq!((r[0].as_str(), r[1].as_str()), ends, "softwire ends: {r:?}");
        assert_eq!((r[3].as_str(), r[4].as_str()), inner, "inner addresses: {r:?}");
        assert!(set.contains(&port), "the tester's port outside its set: {r:?}");
        assert!(
            r[2] == "4" && r[5] == "1" && r[8] == "1",
            "next header, IPv4 and UDP checksums: {r:?}"
        );
        out += usize::from(outward);
    }
    assert_eq!(out, 2000, "{v}");
    for dir in ["forward", "reverse"] {
        assert_eq!(counts(&v, dir), (2000, 2000, 0, 0), "{dir}: {v}");
    }
}
