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

/// lw4o6 (RFC 7596): a bidirectional trial through the lwAFTR with 1,000 lwB4s (the binding
/// table's first 1,000 of its 10,000) is lossless and its softwire frames dissect
/// ([`softwire_trial`]): each frame's softwire end is the lwB4 that the binding of its inner
/// address and port names, one of the first 1,000.
#[test]
fn lw4o6_trial_with_1000_lwb4s_is_lossless_and_its_softwire_frames_dissect() {
    let bindings: std::collections::HashMap<String, (String, u16)> = (0..1000)
        .map(|i| {
            let (v4, psid, b4) = xlat_lab::lw4o6_binding(i);
            (b4.to_string(), (v4.to_string(), psid))
        })
        .collect();
    softwire_trial("lw4o6", &["--set", "left.map.subscribers=1000"], |b4, v4, port| {
        bindings.get(b4).is_some_and(|(a, psid)| {
            let (lo, hi) = xlat_lab::lw4o6_port_set(*psid);
            a == v4 && (lo..=hi).contains(&port)
        })
    });
}

/// mape (RFC 7597): a bidirectional trial through the border relay with 1,000 CEs (the 1,000
/// the mapping rule gives from the tester's own, 198.18.0.2 PSID 1, on) is lossless and its
/// softwire frames dissect ([`softwire_trial`]): each frame's softwire end is the address the
/// rule gives its inner address and port, a CE of those 1,000.
#[test]
fn mape_trial_with_1000_ces_is_lossless_and_its_softwire_frames_dissect() {
    let rule = xlat_lab::map_rule().expect("the lab's rule");
    let ours = ces_from_the_testers(&rule, 1000);
    softwire_trial("mape", &["--set", "left.map.subscribers=1000"], |b4, v4, port| {
        let (b4, v4): (std::net::Ipv6Addr, std::net::Ipv4Addr) = (b4.parse().unwrap(), v4.parse().unwrap());
        let ce = rule.psid_of(port).map(|psid| xlat_traffic::maprule::Ce { ipv4: v4, psid });
        rule.allows(b4, v4, port) && ce.and_then(|c| rule.index(c)).is_some_and(|k| ours.contains(&k))
    });
}

/// The numbers of the `n` CEs of `rule` from the tester's own (198.18.0.2 PSID 1) on.
fn ces_from_the_testers(rule: &xlat_traffic::maprule::MapRule, n: u64) -> std::ops::Range<u64> {
    let own = xlat_lab::map_tester_ce().and_then(|a| rule.ce_of(a)).expect("the tester's CE");
    let first = rule.index(own).expect("its number");
    first..first + n
}

/// mapt (RFC 7599): a bidirectional trial through the border relay with 1,000 MAP-T CEs (the
/// 1,000 the mapping rule gives from the tester's own, 198.18.0.2 PSID 1, on) is lossless, and
/// tshark dissects both sides. On the CE side every frame is IPv6 UDP between a CE's address and
/// the DMR prefix: the CE's address decodes by the rule to one of the 1,000 (its IPv4 address
/// and PSID), the port is in that CE's set, the prefix's address decodes to 198.19.0.2 (RFC
/// 6052). On the IPv4 side every frame is IPv4 UDP between one of those CEs' addresses, at a port
/// of its set, and 198.19.0.2. Every checksum is good, so also those of the frames the BR
/// translated (the reverse ones on the CE side, the forward ones on the IPv4 side). A trial the
/// machine made late is captured and run again.
#[test]
fn mapt_trial_with_1000_ces_is_lossless_and_both_sides_dissect() {
    use std::net::{Ipv4Addr, Ipv6Addr};
    use xlat_traffic::maprule::{extract, Ce};
    if skip_unless_root(&[LAB_TOOLS, &["tshark"]].concat()) {
        return;
    }
    let lab = Lab::up("mapt");
    let rule = xlat_lab::map_rule().expect("the lab's rule");
    let ours = ces_from_the_testers(&rule, 1000);
    let right4 = Ipv4Addr::new(198, 19, 0, 2);
    let dmr: Ipv6Addr = "2001:2:0:6464::".parse().unwrap();
    let l4 = ["udp.srcport", "udp.dstport", "udp.checksum.status"];
    let sides = [
        ("xlat-dl", "ip6 and udp", [&["ipv6.src", "ipv6.dst"][..], &l4].concat()),
        (
            "xlat-dr",
            "ip and udp",
            [&["ip.src", "ip.dst"][..], &l4, &["ip.checksum.status"]].concat(),
        ),
    ];
    let extra = ["--set", "left.map.subscribers=1000"];
    for (iface, filter, fields) in sides {
        let (rows, v) = common::retry::until_valid(
            &format!("mapt tshark trial on {iface}"),
            || common::dissect_for(20, iface, filter, 4000, &fields, || lab.trial(1000, 2, &extra)),
            |(_, v)| v["valid"] == Value::Bool(true) || common::only_late(v),
            |(_, v)| v["invalid_reasons"].to_string(),
        );
        assert_eq!(rows.len(), 4000, "{iface}: {v}");
        let mut out = 0;
        for r in &rows {
            let (sport, dport): (u16, u16) = (r[2].parse().unwrap(), r[3].parse().unwrap());
            // (the CE's IPv4 address, the right tester's, outward?), by the rule and the prefix
            // on the CE side.
            let (ce4, other, outward) = if iface == "xlat-dl" {
                let (a, b): (Ipv6Addr, Ipv6Addr) = (r[0].parse().unwrap(), r[1].parse().unwrap());
                match (rule.ce_of(a), extract(dmr, 96, b), rule.ce_of(b), extract(dmr, 96, a)) {
                    (Some(c), Some(d), _, _) => (c.ipv4, d, true),
                    (_, _, Some(c), Some(s)) => (c.ipv4, s, false),
                    _ => panic!("neither way between a CE and the DMR prefix: {r:?}"),
                }
            } else {
                let (a, b): (Ipv4Addr, Ipv4Addr) = (r[0].parse().unwrap(), r[1].parse().unwrap());
                if b == right4 {
                    (a, b, true)
                } else {
                    (b, a, false)
                }
            };
            assert_eq!(other, right4, "{r:?}");
            let port = if outward { sport } else { dport };
            let ce = rule.psid_of(port).map(|psid| Ce { ipv4: ce4, psid });
            let k = ce.and_then(|c| rule.index(c));
            assert!(
                k.is_some_and(|k| ours.contains(&k)),
                "not one of the 1,000 CEs (address, port): {r:?}"
            );
            if iface == "xlat-dl" {
                let addr = if outward { &r[0] } else { &r[1] };
                assert!(rule.allows(addr.parse().unwrap(), ce4, port), "the CE's address and port: {r:?}");
            }
            assert!(r[4..].iter().all(|s| s == "1"), "UDP (and IPv4) checksums: {r:?}");
            out += usize::from(outward);
        }
        assert_eq!(out, 2000, "{iface}: {v}");
        for dir in ["forward", "reverse"] {
            assert_eq!(counts(&v, dir), (2000, 2000, 0, 0), "{iface} {dir}: {v}");
        }
    }
}

/// A bidirectional trial through `topology`'s softwire concentrator (2001:2::1) with `extra`
/// arguments is lossless, and tshark in the DUT's namespace dissects every frame in the
/// softwire as IPv6 between a B4 (CE) and the concentrator carrying IPv4 carrying UDP, every
/// checksum good, the B4's end, its inner IPv4 address and its port (forward source ports,
/// reverse destination ports) one the tester's side has, as `owns(b4, ipv4, port)` says. A
/// trial the machine made late is captured and run again.
fn softwire_trial(topology: &str, extra: &[&str], owns: impl Fn(&str, &str, u16) -> bool) {
    if skip_unless_root(&[LAB_TOOLS, &["tshark"]].concat()) {
        return;
    }
    let lab = Lab::up(topology);
    let fields = common::SOFTWIRE_FIELDS;
    let (rows, v) = common::retry::until_valid(
        &format!("{topology} tshark trial"),
        || common::dissect_for(20, "xlat-dl", "ip6 and ip6[6] == 4", 4000, &fields, || lab.trial(1000, 2, extra)),
        |(_, v)| v["valid"] == Value::Bool(true) || common::only_late(v),
        |(_, v)| v["invalid_reasons"].to_string(),
    );
    assert_eq!(rows.len(), 4000, "{v}");
    let (aftr, right) = ("2001:2::1", "198.19.0.2");
    let mut out = 0;
    for r in &rows {
        let (sport, dport): (u16, u16) = (r[6].parse().unwrap(), r[7].parse().unwrap());
        let outward = r[1] == aftr;
        let (b4, v4, port) = if outward {
            assert_eq!(r[4], right, "inner destination: {r:?}");
            (&r[0], &r[3], sport)
        } else {
            assert_eq!((r[0].as_str(), r[3].as_str()), (aftr, right), "softwire end, inner source: {r:?}");
            (&r[1], &r[4], dport)
        };
        assert!(owns(b4, v4, port), "not the tester's B4 (CE), address and port: {r:?}");
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
