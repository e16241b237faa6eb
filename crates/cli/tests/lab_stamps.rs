//! Lab test of the kernel timestamps against an observer we did not write: tshark, in the DUT's
//! namespace, captures the tester's tagged frames on the DUT's ingress and egress (the kernel's
//! packet-socket stamps, nanoseconds). Through lab router4, xlatperf's kernel-stamped one-way
//! delay of each tagged frame is the DUT's own time (egress minus ingress) plus the two veth
//! hops; the user-stamped delays add the tester's share on top. Needs root and tshark (CI
//! installs both); without them it skips, which fails under CI=true.

mod common;

use common::{skip_unless_root, TrialLab, LAB_TOOLS};
use serde_json::Value;
use std::collections::HashMap;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Frames per second and frames of each run: every frame is a tagged one (no delay, as many
/// tags as frames), so tag `i` is frame `i`.
const RATE: u64 = 2_000;
const FRAMES: u64 = 4_000;

/// The per-frame differences (ns) between xlatperf's forward delay of each tagged frame,
/// stamped by `stamps`, and the DUT's time for it as tshark saw it (egress minus ingress).
fn delay_minus_capture(lab: &TrialLab, stamps: &str) -> Vec<i64> {
    let dir = std::env::temp_dir();
    let pcap = dir.join(format!("xlat-stamps-{stamps}-{}.pcapng", std::process::id()));
    let json = dir.join(format!("xlat-stamps-{stamps}-{}.json", std::process::id()));
    let _ = std::fs::remove_file(&pcap);
    let filter = "udp and src host 198.18.0.2";
    let mut cap = Command::new("ip")
        .args(["netns", "exec", "xlat-dut", "tshark", "-q"])
        .args(["-i", "xlat-dl", "-f", filter, "-i", "xlat-dr", "-f", filter])
        .args(["-a", "duration:40", "-w"])
        .arg(&pcap)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("tshark");
    std::thread::sleep(Duration::from_secs(2)); // tshark opens the interfaces
    let out = common::xlatperf(&[
        "latency",
        "-c",
        &lab.config,
        "--rate",
        &RATE.to_string(),
        "--duration",
        &(FRAMES / RATE).to_string(),
        "--delay",
        "0",
        "--tags",
        &FRAMES.to_string(),
        "--repetitions",
        "1",
        "--timeout",
        "300",
        "--keep-samples",
        "--set",
        "traffic.reverse=false",
        "--set",
        &format!("tester.timestamps={stamps}"),
        "--json",
        json.to_str().unwrap(),
    ]);
    let stop = Instant::now() + Duration::from_secs(45);
    // SIGINT ends tshark's capture cleanly (the file complete); it started within 40 s anyway.
    let _ = Command::new("kill").args(["-INT", &cap.id().to_string()]).status();
    while cap.try_wait().expect("tshark").is_none() {
        assert!(Instant::now() < stop, "tshark did not end");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let _ = std::fs::remove_file(&json);
    let run = &v["results"][0]["result"]["runs"][0];
    assert_eq!(run["trials"].as_array().unwrap().last().unwrap()["forward"]["stamps"], stamps);
    let samples = run["runs"][0]["samples"]["forward"].as_array().expect("samples").clone();
    assert_eq!(samples.len() as u64, FRAMES, "{run}");

    let text = Command::new("tshark")
        .arg("-r")
        .arg(&pcap)
        .args(["-d", "udp.port==0-65535,data", "-Y", "udp", "-T", "fields"])
        .args(["-e", "frame.interface_name", "-e", "frame.time_epoch", "-e", "data.data"])
        .output()
        .expect("tshark -r");
    let _ = std::fs::remove_file(&pcap);
    // Per sequence number, the last time it went in and came out: a trial that was tried
    // again sent the same numbers before, and the valid one is the last.
    let (mut ingress, mut egress) = (HashMap::new(), HashMap::new());
    for line in String::from_utf8_lossy(&text.stdout).lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let [iface, time, data] = f[..] else { continue };
        // The payload: 8 bytes of signature, then the 64-bit field (its top byte the trial's).
        let Some(field) = data.get(16..32).and_then(|h| u64::from_str_radix(h, 16).ok()) else {
            continue;
        };
        let (s, ns) = time.split_once('.').expect("seconds.nanoseconds");
        assert_eq!(ns.len(), 9, "tshark's stamps in nanoseconds: {time}");
        let t: i64 = s.parse::<i64>().unwrap() * 1_000_000_000 + ns.parse::<i64>().unwrap();
        let seq = field & ((1 << 56) - 1);
        match iface {
            "xlat-dl" => ingress.insert(seq, t),
            "xlat-dr" => egress.insert(seq, t),
            other => panic!("a frame on {other}"),
        };
    }
    let mut diffs: Vec<i64> = samples
        .iter()
        .enumerate()
        .filter_map(|(i, s)| {
            let (i, o) = (ingress.get(&(i as u64))?, egress.get(&(i as u64))?);
            Some(s.as_i64()? - (o - i))
        })
        .collect();
    assert!(diffs.len() as u64 >= FRAMES * 99 / 100, "{} frames matched", diffs.len());
    diffs.sort_unstable();
    diffs
}

fn quantile(sorted: &[i64], q: f64) -> i64 {
    sorted[((sorted.len() - 1) as f64 * q) as usize]
}

#[test]
fn kernel_stamped_delays_agree_with_a_capture_in_the_duts_namespace() {
    if skip_unless_root(&[LAB_TOOLS, &["tshark"]].concat()) {
        return;
    }
    let lab = TrialLab::up("router4", &[]);
    let kernel = delay_minus_capture(&lab, "kernel");
    let user = delay_minus_capture(&lab, "user");
    let (km, k99) = (quantile(&kernel, 0.5), quantile(&kernel, 0.99));
    let (um, u99) = (quantile(&user, 0.5), quantile(&user, 0.99));
    eprintln!("delay minus capture, ns: kernel median {km}, p99 {k99}; user median {um}, p99 {u99}");
    // The kernel's stamps enclose the DUT's time and the two veth hops only (about 2 us on
    // this machine): every difference is positive and a few microseconds.
    assert!(kernel[0] >= 0, "a kernel-stamped delay shorter than the DUT's own: {}", kernel[0]);
    assert!(km < 10_000 && k99 < 50_000, "kernel: median {km} ns, p99 {k99} ns");
    // The user's stamps lie outside the kernel's (before the send call, after the ring): the
    // tester's own share comes on top.
    assert!(um > km, "user median {um} ns <= kernel median {km} ns");
}

/// Removes the test's own namespace (and with it its veth pair), also when the test fails.
struct LoopNs(&'static str);

impl Drop for LoopNs {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", self.0]).status();
    }
}

/// The self-test's latency floor over a veth pair looped back (no DUT) is measured once with
/// every source the ports offer, kernel first, and each says what stamped it.
#[test]
fn selftest_measures_the_floor_with_every_source_over_a_veth_loop() {
    if skip_unless_root(LAB_TOOLS) {
        return;
    }
    let lab = TrialLab::up("router4", &[]);
    let ns = LoopNs("xlat-sloop");
    let ip = |args: &[&str]| assert!(Command::new("ip").args(args).status().unwrap().success(), "ip {args:?}");
    let _ = Command::new("ip").args(["netns", "del", ns.0]).status();
    ip(&["netns", "add", ns.0]);
    ip(&["-n", ns.0, "link", "add", "xlat-sa", "type", "veth", "peer", "name", "xlat-sb"]);
    ip(&["-n", ns.0, "link", "set", "xlat-sa", "up"]);
    ip(&["-n", ns.0, "link", "set", "xlat-sb", "up"]);
    let conf = std::fs::read_to_string(&lab.config).unwrap();
    let conf: String = conf
        .lines()
        .map(|l| match l.split(" = ").next().unwrap_or("") {
            "left_port" => "left_port = \"xlat-sa\"".to_string(),
            "right_port" => "right_port = \"xlat-sb\"".to_string(),
            "netns" => format!("netns = \"{}\"", ns.0),
            "loopback" => "loopback = true".to_string(),
            _ => l.to_string(),
        })
        .map(|l| l + "\n")
        .collect();
    let path = std::env::temp_dir().join(format!("xlat-loop-{}.toml", std::process::id()));
    std::fs::write(&path, conf).unwrap();
    let out = common::xlatperf(&[
        "selftest",
        "-c",
        path.to_str().unwrap(),
        "--max-rate",
        "20000",
        "--error",
        "10000",
        "--duration",
        "2",
        "--latency-rate",
        "5000",
        "--json",
        "-",
    ]);
    let _ = std::fs::remove_file(&path);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let floors = v["latency"].as_array().expect("latency floors");
    let sources: Vec<&str> = floors
        .iter()
        .map(|l| {
            l["trials"].as_array().unwrap().last().unwrap()["forward"]["stamps"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert_eq!(sources, ["kernel", "user"], "{v}");
    for l in floors {
        for dir in ["forward", "reverse"] {
            assert!(l[dir]["typical"].as_u64().is_some(), "a finite typical latency: {l}");
        }
    }
    // The kernel's floor on a veth loop is well under a microsecond typically.
    let typical = floors[0]["forward"]["typical"].as_u64().unwrap();
    assert!(typical < 50_000, "kernel-stamped floor {typical} ns");
}
