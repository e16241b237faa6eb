//! The dpdk backend end to end: the self-test on a net_ring loopback pair, and the same trial
//! through the lab's router4 DUT on net_af_packet vdevs and on the afpacket backend. On
//! hugepages (scripts/setup.sh reserves them) but for one test that keeps `--no-huge` working.
#![cfg(feature = "dpdk")]

mod common;

use common::{lab_lock, lab_up, last_json, skip_unless_root, until_valid, LabDown, LAB_TOOLS};
use serde_json::Value;
use std::process::{Command, Output};

fn run(cmd: &mut Command) -> String {
    let o: Output = cmd.output().expect("run");
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(o.status.success(), "{cmd:?} failed:\n{out}\n{}", String::from_utf8_lossy(&o.stderr));
    out
}

fn xlatperf() -> Command {
    Command::new(env!("CARGO_BIN_EXE_xlatperf"))
}

/// The self-test on a net_ring pair, on the hugepages scripts/setup.sh reserved (the example's
/// EAL arguments: no `--no-huge`), as DPDK is deployed.
#[test]
fn net_ring_self_test_is_valid_and_lossless_both_ways() {
    // Trials spin on both cores: one test at a time.
    let _serial = lab_lock();
    let conf = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/dpdk-ring-selftest.toml");
    // The check trial is timed like any other: a sender preempted for more than 10 us per second
    // on a busy machine makes it invalid (correctly). Judge the first self-test whose check is
    // valid, of three; a loss or an error is never retried away (asserted below).
    let selftest = || {
        let out = run(xlatperf().args(["selftest", "-c", conf, "--duration", "1", "--max-rate", "200000", "--json", "-"]));
        last_json(&out)
    };
    let v = common::retry::until_valid(
        "selftest check",
        selftest,
        |v| {
            // A loss is never retried away.
            for d in ["forward", "reverse"] {
                assert_eq!(v["check"][d]["lost"], 0, "{d}: {v}");
            }
            v["check"]["valid"] == Value::Bool(true)
        },
        |v| v["check"]["invalid_reasons"].to_string(),
    );
    for k in ["forward", "reverse", "bidirectional"] {
        assert!(v[k].as_u64().unwrap() > 0, "{k}: {v}");
    }
    let check = &v["check"];
    assert_eq!(check["valid"], Value::Bool(true), "{v}");
    for d in ["forward", "reverse"] {
        assert_eq!(check[d]["sent"], check[d]["received"], "{d}: {v}");
        assert_eq!(check[d]["lost"], 0, "{d}: {v}");
    }
}

/// `xlatperf TRIAL... -c conf` on the dpdk backend with net_af_packet vdevs of `qpairs` queue
/// pairs on the lab's tester ports, run inside the tester namespace (where the vdevs open the
/// veth ends), with `extra` arguments; its JSON report.
fn af_packet_trial(conf: &str, qpairs: u32, trial: &[&str], extra: &[&str]) -> Value {
    let eal = format!(
        r#"["--no-pci","-l","0-1","--vdev","net_af_packet0,iface=xlat-tl,qpairs={qpairs}","--vdev","net_af_packet1,iface=xlat-tr,qpairs={qpairs}"]"#
    );
    last_json(&run(Command::new("ip")
        .args(["netns", "exec", "xlat-tester", env!("CARGO_BIN_EXE_xlatperf")])
        .args(trial)
        .args([
            "-c",
            conf,
            "--set",
            "tester.backend=dpdk",
            "--set",
            "tester.left_port=net_af_packet0",
        ])
        .args([
            "--set",
            "tester.right_port=net_af_packet1",
            "--set",
            &format!("tester.eal_args={eal}"),
        ])
        .args(extra)))
}

#[test]
fn dpdk_on_af_packet_vdevs_and_afpacket_agree_through_router4() {
    // Trials spin on both cores: one test at a time.
    let _serial = lab_lock();
    if skip_unless_root(LAB_TOOLS) {
        return;
    }
    let conf = lab_up("router4");
    let _down = LabDown;
    let trial = ["trial", "--rate", "10000", "--duration", "3", "--timeout", "500", "--json", "-"];
    let afp = until_valid(|| last_json(&run(xlatperf().args(trial).args(["-c", &conf]))));
    let dpdk = until_valid(|| af_packet_trial(&conf, 2, &trial, &[]));
    for d in ["forward", "reverse"] {
        for k in ["sent", "received", "lost", "duplicates"] {
            assert_eq!(afp[d][k], dpdk[d][k], "{d}.{k}: afpacket {afp} dpdk {dpdk}");
        }
        assert_eq!(dpdk[d]["lost"], 0, "{dpdk}");
    }
}

/// A trial on the net_ring loopback pair of examples/dpdk-ring-selftest.toml with `queues`
/// queue sets per port and pseudorandom ports, as JSON (a valid one, of three tries).
fn ring_trial(queues: u32, rate: u64, secs: u64) -> Value {
    let conf = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/dpdk-ring-selftest.toml");
    let (q, r, d) = (format!("tester.queues={queues}"), rate.to_string(), secs.to_string());
    until_valid(|| {
        last_json(&run(xlatperf().args([
            "trial",
            "-c",
            conf,
            "--rate",
            &r,
            "--duration",
            &d,
            "--timeout",
            "200",
            "--json",
            "-",
            "--set",
            &q,
            "--set",
            "traffic.forward_ports.sport.variation=pseudorandom",
            "--set",
            "traffic.reverse_ports.dport.variation=pseudorandom",
        ])))
    })
}

#[test]
fn net_ring_with_two_queues_counts_exactly_what_one_queue_counts() {
    let _serial = lab_lock();
    let (rate, secs) = (100_000u64, 2u64);
    let two = ring_trial(2, rate, secs);
    let one = ring_trial(1, rate, secs);
    for d in ["forward", "reverse"] {
        for k in ["sent", "received"] {
            assert_eq!(two[d][k], rate * secs, "{d}.{k}: {two}");
        }
        for k in [
            "lost",
            "duplicates",
            "reordered",
            "unexpected",
            "tester_tx_dropped",
            "tester_rx_dropped",
        ] {
            assert_eq!(two[d][k], 0, "{d}.{k}: {two}");
        }
        for k in ["sent", "received", "lost", "duplicates", "reordered"] {
            assert_eq!(two[d][k], one[d][k], "{d}.{k}: two queues {two}\none queue {one}");
        }
    }
}

#[test]
fn dpdk_with_two_queue_sets_through_router4_on_af_packet_vdevs() {
    let _serial = lab_lock();
    if skip_unless_root(LAB_TOOLS) {
        return;
    }
    let conf = common::lab_up_with("router4", &["--queues", "2"]);
    let _down = LabDown;
    // Two queue sets: four transmit queues (traffic and control of each), so qpairs=4; the
    // vdev's four receive sockets are read two by each set.
    let trial = ["trial", "--rate", "10000", "--duration", "3", "--timeout", "500", "--json", "-"];
    let v = until_valid(|| af_packet_trial(&conf, 4, &trial, &["--set", "traffic.forward_ports.sport.variation=pseudorandom"]));
    for d in ["forward", "reverse"] {
        assert_eq!(
            (v[d]["sent"].as_u64(), v[d]["received"].as_u64()),
            (Some(30_000), Some(30_000)),
            "{d}: {v}"
        );
        for k in ["lost", "duplicates", "reordered"] {
            assert_eq!(v[d][k], 0, "{d}.{k}: {v}");
        }
    }
}

/// `bench-receiver` on the net_ring pair: the receiver takes back every frame the sender put in
/// the ring, counted once (the command fails otherwise), for IPv4 and IPv6 test frames, the
/// Initiator's phase 1 (learnt into a state table) and the Responder's phase 2 frames.
#[test]
fn bench_receiver_counts_every_frame_sent() {
    let _serial = lab_lock();
    let conf = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/dpdk-ring-selftest.toml");
    let stateful = [
        "--set",
        "stateful.mode=initiator-left",
        "--set",
        "stateful.enumerate_ports=pseudorandom",
    ];
    let responder = [&stateful[..], &["--responder", "1000"][..]].concat();
    let v6 = ["--set", "left.ip_version=6", "--set", "right.ip_version=6"];
    for extra in [&[][..], &v6[..], &stateful[..], &responder[..]] {
        let out = run(xlatperf()
            .args([
                "bench-receiver",
                "-c",
                conf,
                "--seconds",
                "0.3",
                "--core",
                "1",
                "--set",
                "traffic.reverse=false",
            ])
            .args(extra));
        let frames: u64 = out
            .lines()
            .find_map(|l| l.strip_prefix("receiver frames: "))
            .unwrap_or_else(|| panic!("{out}"))
            .parse()
            .unwrap();
        // 0.3 s holds many rounds of 512 frames.
        assert!(frames >= 512, "{extra:?}: {frames} frames");
    }
}

/// A directory of this test process and in it a configuration `NAME.toml` of the forward
/// direction alone on one DPDK net_null port with EAL arguments `eal` (TOML array items).
fn null_config(name: &str, eal: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("xlat-dpdk-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let conf = dir.join(format!("{name}.toml"));
    let text = format!(
        "[tester]\nbackend = \"dpdk\"\nleft_port = \"net_null0\"\nright_port = \"net_null0\"\neal_args = [{eal}]\nloopback = true\n\
         [left]\nip_version = 4\nipv4_real = \"198.18.0.2\"\n[right]\nip_version = 4\nipv4_real = \"198.19.0.2\"\n\
         [traffic]\nreverse = false\n"
    );
    std::fs::write(&conf, text).unwrap();
    (dir, conf)
}

/// `bench-sender` on a net_null vdev, recycling mbufs and, with `--reset-mbufs`, resetting every
/// mbuf and writing its frame whole as testpmd txonly does (bench/modes.sh `fixedreset`), and
/// the Responder's sender (`--responder`): all send (the frames are the same, crates/engine/src/bench/saturate.rs's test; here: DPDK's path).
/// The one DPDK test without hugepages (`--no-huge`): that way keeps working.
#[test]
fn bench_sender_runs_with_recycled_and_with_reset_mbufs() {
    let _serial = lab_lock();
    let (dir, conf) = null_config(
        "null",
        r#""--no-huge", "-m", "1024", "--no-pci", "--no-shconf", "--vdev", "net_null0", "-l", "1""#,
    );
    // And the Responder's phase 2 sender (bench/modes.sh `responder`) on made-up connections.
    let responder = [
        "--responder",
        "1000",
        "--set",
        "stateful.mode=initiator-left",
        "--set",
        "stateful.responder_tuples=pseudorandom",
    ];
    for extra in [&[][..], &["--reset-mbufs"][..], &responder[..]] {
        let out = run(xlatperf()
            .args(["bench-sender", "-c", conf.to_str().unwrap(), "--seconds", "0.5", "--core", "1"])
            .args(extra));
        let fps: f64 = out
            .lines()
            .find_map(|l| l.strip_prefix("sender frames/s: "))
            .unwrap_or_else(|| panic!("{out}"))
            .parse()
            .unwrap();
        assert!(fps > 100_000.0, "{extra:?}: {fps} frames/s");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Too few hugepages for what EAL is asked to take (`-m`): an error before EAL starts that says
/// how many are needed, how many are free, and how to reserve them (instead of EAL's "Cannot
/// init memory").
#[test]
fn too_few_hugepages_are_refused_saying_how_many() {
    // 4 TB: more than any host here has.
    let (dir, conf) = null_config("huge", r#""-m", "4000000", "--no-pci", "--vdev", "net_null0", "-l", "1""#);
    let o = xlatperf()
        .args(["trial", "-c", conf.to_str().unwrap(), "--rate", "1000", "--duration", "1"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(
        err.contains("DPDK needs 2000000 free hugepages for EAL's 4000000 MB (-m) and this host has ")
            && err.contains("/proc/sys/vm/nr_hugepages")
            && err.contains("--no-huge"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
