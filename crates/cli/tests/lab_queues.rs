//! Lab tests of multi-queue ports (root only): `lab up router4 --queues 2` gives each veth end
//! two queues and writes `tester.queues = 2`; the tester then runs two senders and two
//! receivers per port (afpacket: a fanout group), and its counts through the Linux router are
//! exact and the same as with one queue: losses the DUT makes, no duplicates, and no
//! reordering where the DUT kept each flow in order.

mod common;

use common::{dut_exec, ok, skip_unless_root, until_valid, xlatperf, TrialLab, LAB_TOOLS};
use serde_json::Value;
use std::process::Command;

const PSEUDORANDOM_PORTS: [&str; 4] = [
    "traffic.forward_ports.sport.variation=pseudorandom",
    "traffic.forward_ports.dport.variation=pseudorandom",
    "traffic.reverse_ports.sport.variation=pseudorandom",
    "traffic.reverse_ports.dport.variation=pseudorandom",
];

/// The lab of one test ([`TrialLab`]) whose trials send pseudorandom ports.
struct Lab(TrialLab);

impl Lab {
    fn up(topology: &str, extra: &[&str]) -> Lab {
        Lab(TrialLab::up(topology, extra))
    }

    /// A bidirectional trial with pseudorandom ports (many flows, spread over the queues) and a
    /// fixed seed (the same frames every time), as JSON.
    fn trial(&self, rate: u64, secs: u64, extra: &[&str]) -> Value {
        let mut args: Vec<&str> = PSEUDORANDOM_PORTS.iter().flat_map(|k| ["--set", *k]).collect();
        args.extend_from_slice(&["--set", "traffic.seed=4814"]);
        args.extend_from_slice(extra);
        self.0.trial(rate, secs, &args)
    }
}

/// (sent, received, lost, duplicates, reordered) of a direction.
fn counts(v: &Value, dir: &str) -> (u64, u64, u64, u64, u64) {
    let d = &v[dir];
    let g = |k: &str| d[k].as_u64().unwrap_or_else(|| panic!("{dir}.{k} missing in {v}"));
    (g("sent"), g("received"), g("lost"), g("duplicates"), g("reordered"))
}

/// The queues of a tester port, as its sysfs directory lists them.
fn tester_queues(port: &str) -> Vec<String> {
    let o = Command::new("ip")
        .args(["netns", "exec", "xlat-tester", "ls", &format!("/sys/class/net/{port}/queues")])
        .output()
        .expect("ls queues");
    String::from_utf8_lossy(&o.stdout).split_whitespace().map(str::to_string).collect()
}

#[test]
fn router4_with_two_queues_counts_exactly_what_one_queue_counts() {
    if skip_unless_root(LAB_TOOLS) {
        return;
    }
    let lab = Lab::up("router4", &["--queues", "2"]);
    assert_eq!(tester_queues("xlat-tl"), ["rx-0", "rx-1", "tx-0", "tx-1"]);
    let conf = std::fs::read_to_string(&lab.0.config).unwrap();
    assert!(conf.contains("queues = 2"), "{conf}");

    let (rate, secs) = (20_000u64, 4u64);
    let two = until_valid(|| lab.trial(rate, secs, &[]));
    let one = until_valid(|| lab.trial(rate, secs, &["--set", "tester.queues=1"]));
    for dir in ["forward", "reverse"] {
        assert_eq!(counts(&two, dir), (rate * secs, rate * secs, 0, 0, 0), "two queues, {dir}: {two}");
        assert_eq!(counts(&two, dir), counts(&one, dir), "{dir}: two {two}\none {one}");
        for k in ["tester_tx_dropped", "tester_rx_dropped", "corrupted", "unexpected"] {
            assert_eq!(two[dir][k], 0, "{dir}.{k}: {two}");
        }
    }

    // The DUT drops the frames of a range of source ports: the same frames (a fixed seed),
    // so the same losses, whether one queue sent and received them or two.
    dut_exec(&["nft", "add table inet xlat_q"]);
    dut_exec(&["nft", "add chain inet xlat_q xq { type filter hook forward priority 0; }"]);
    dut_exec(&["nft", "add rule inet xlat_q xq udp sport 1024-9999 drop"]);
    let two = until_valid(|| lab.trial(rate, secs, &[]));
    let one = until_valid(|| lab.trial(rate, secs, &["--set", "tester.queues=1"]));
    for dir in ["forward", "reverse"] {
        let (sent, received, lost, dups, reordered) = counts(&two, dir);
        assert_eq!(sent, rate * secs);
        assert!(lost > 0 && lost < sent / 4, "{dir}: some frames (about 14 %) dropped: {two}");
        assert_eq!((received + lost, dups, reordered), (sent, 0, 0), "{dir}: {two}");
        assert_eq!(counts(&two, dir), counts(&one, dir), "{dir}: two {two}\none {one}");
    }
}

#[test]
fn router4_with_two_afxdp_sockets_per_port_counts_as_afpacket_does() {
    if skip_unless_root(LAB_TOOLS) {
        return;
    }
    let lab = Lab::up("router4", &["--queues", "2", "--backend", "afxdp"]);
    let (rate, secs) = (20_000u64, 3u64);
    let xdp = until_valid(|| lab.trial(rate, secs, &[]));
    let afp = until_valid(|| lab.trial(rate, secs, &["--set", "tester.backend=afpacket"]));
    for dir in ["forward", "reverse"] {
        assert_eq!(counts(&xdp, dir), (rate * secs, rate * secs, 0, 0, 0), "afxdp, {dir}: {xdp}");
        assert_eq!(counts(&xdp, dir), counts(&afp, dir), "{dir}: afxdp {xdp}\nafpacket {afp}");
    }
    // One socket per queue: a port with more receive queues than sockets is refused (its
    // frames on the other queue would reach the kernel, not the tester).
    let o = xlatperf(&[
        "trial",
        "-c",
        &lab.0.config,
        "--rate",
        "1000",
        "--duration",
        "1",
        "--set",
        "tester.queues=1",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("2 receive queues"), "{err}");
}

/// PDV (RFC 8219 7.3) with two queues per port: every frame of both receive queues is timed
/// (none lost through the router), and IPDV comes from the pairs of consecutive frames that
/// one queue received.
#[test]
fn router4_pdv_with_two_queues_times_every_frame() {
    if skip_unless_root(LAB_TOOLS) {
        return;
    }
    let lab = Lab::up("router4", &["--queues", "2"]);
    let json = std::env::temp_dir().join(format!("xlat-queues-pdv-{}.json", std::process::id()));
    let json_s = json.to_str().unwrap().to_string();
    let args = [
        "pdv",
        "-c",
        &lab.0.config,
        "--rate",
        "20000",
        "--duration",
        "2",
        "--repetitions",
        "1",
        "--timeout",
        "300",
        "--retries",
        "2",
        "--json",
        &json_s,
    ];
    ok(&args);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let _ = std::fs::remove_file(&json);
    let run = &v["results"][0]["result"]["runs"][0]["runs"][0];
    for dir in ["forward", "reverse"] {
        let d = &run[dir];
        assert_eq!(d["pdv"]["frames"].as_u64(), Some(40_000), "{dir}: {d}");
        assert!(d["pdv"]["pdv"].is_u64(), "{dir}: a finite PDV: {d}");
        let i = &d["ipdv"];
        assert!(i["min_ns"].as_i64().unwrap() <= i["max_ns"].as_i64().unwrap(), "{i}");
    }
}

#[test]
fn lab_up_refuses_queues_out_of_range() {
    let o = xlatperf(&["lab", "up", "router4", "--queues", "0"]);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--queues"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
