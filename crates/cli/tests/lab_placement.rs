//! The lab measures the DUT: its packet processing on its own CPU, its load in every result,
//! and what bounded a figure (issue 38).
//!
//! The kernel's own counters are the judge: an nftables chain in the DUT's forward path with a
//! counter per CPU (`meta cpu N counter`) says on which CPU every forwarded frame was
//! processed, `ip -s link` says whether any veth end dropped a frame, and a DUT made slow by
//! configuration (a chain of thousands of rules every frame walks) must come out DUT-bound with
//! its CPU busy. Needs root (CI runs as root); without it each test skips, which fails under
//! CI=true.

mod common;

use common::procedures::{runs, Lab};
use common::{dropped_between, dut_exec, lab_up_with, skip_unless_root, until_counted, veth_drops, LabDown, TrialLab, LAB_TOOLS};
use serde_json::Value;

/// The lab's default placement on this machine: (DUT CPU, tester CPU), the highest CPU for the
/// DUT. `None` (after skipping) on one CPU or without root.
fn placement() -> Option<(usize, usize)> {
    if skip_unless_root(&[LAB_TOOLS, &["conntrack"]].concat()) {
        return None;
    }
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    if n < 2 {
        common::skip("needs two CPUs: one for the DUT, one for the tester");
        return None;
    }
    Some((n - 1, 0))
}

/// A counter per CPU in the DUT's forward path (table `inet xlat_cpu`, before every other
/// chain): how many frames the DUT forwarded on each CPU.
fn count_forwarding_per_cpu(cpus: usize) {
    dut_exec(&["nft", "add table inet xlat_cpu"]);
    dut_exec(&[
        "nft",
        "add chain inet xlat_cpu forward_cpu { type filter hook forward priority -300 ; }",
    ]);
    for c in 0..cpus {
        dut_exec(&["nft", &format!("add rule inet xlat_cpu forward_cpu meta cpu {c} counter")]);
    }
}

/// The frames counted per CPU by [`count_forwarding_per_cpu`], indexed by CPU.
fn forwarded_per_cpu(cpus: usize) -> Vec<u64> {
    let out = dut_exec(&["nft", "-j", "list", "table", "inet", "xlat_cpu"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    let mut per = vec![0; cpus];
    for item in v["nftables"].as_array().unwrap() {
        let Some(expr) = item["rule"]["expr"].as_array() else { continue };
        let cpu = expr.iter().find_map(|e| e["match"]["right"].as_u64());
        let packets = expr.iter().find_map(|e| e["counter"]["packets"].as_u64());
        if let (Some(c), Some(p)) = (cpu, packets) {
            per[c as usize] = p;
        }
    }
    per
}

/// A lossless trial through `topology`: every frame the DUT forwarded, it forwarded on the DUT's
/// CPU and none on the tester's; the result carries both CPUs' load (the DUT's busy, NET_RX on
/// it); no veth end dropped a frame.
fn forwarding_runs_on_the_dut_cpu(topology: &str, rate: u64, extra: &[&str]) {
    let Some((dut, tester)) = placement() else { return };
    let lab = TrialLab::up(topology, &[]);
    let cpus = dut + 1;
    count_forwarding_per_cpu(cpus);
    let before = veth_drops();
    let v = until_counted(|| lab.trial(rate, 2, extra));
    let after = veth_drops();
    for d in ["forward", "reverse"] {
        assert_eq!(v[d]["lost"], 0, "{d}: {v}");
    }
    let per = forwarded_per_cpu(cpus);
    let sent = v["forward"]["sent"].as_u64().unwrap() + v["reverse"]["sent"].as_u64().unwrap();
    assert_eq!(per[tester], 0, "frames forwarded on the tester's CPU {tester}: {per:?}");
    assert!(
        per[dut] >= sent,
        "{} forwarded on the DUT's CPU {dut}, {sent} sent: {per:?}",
        per[dut]
    );
    let load = &v["load"];
    assert_eq!(load["dut"]["cpus"], serde_json::json!([dut]), "{load}");
    assert_eq!(load["tester"]["cpus"], serde_json::json!([tester]), "{load}");
    assert!(load["dut"]["busy"].as_f64().unwrap() > 0.0, "{load}");
    assert!(load["dut"]["net_rx"].as_u64().unwrap() > 0, "{load}");
    assert_eq!(
        dropped_between(&before, &after),
        Vec::<String>::new(),
        "veth drops in a lossless trial"
    );
}

#[test]
fn router4_forwarding_runs_on_the_dut_cpu() {
    forwarding_runs_on_the_dut_cpu("router4", 50_000, &[]);
}

/// nat44 with 10,000 connections opened in phase 1: phase 2's forwarding (and the DUT's
/// connection tracking and NAT) on the DUT's CPU.
#[test]
fn nat44_forwarding_runs_on_the_dut_cpu() {
    forwarding_runs_on_the_dut_cpu(
        "nat44",
        50_000,
        &[
            "--preliminary-frames",
            "10000",
            "--preliminary-rate",
            "50000",
            "--preliminary-timeout",
            "500",
            "--phase-delay",
            "2000",
            "--set",
            "traffic.forward_ports.sport.max=10009",
        ],
    );
}

/// `lab up --dut-cpus` refuses a list that leaves the tester no CPU, naming the CPUs, before
/// anything is made; `lab status` shows where each part runs.
/// A frame the tester's own host drops (here: the tester's right end, with an MTU below the
/// frames the DUT forwards to it, drops every one as too long, counted in its rx_dropped) is
/// the tester's loss: the trial is invalid and says so, and its count is the kernel's.
fn frames_the_tester_host_drops_are_the_testers_loss(lab_args: &[&str]) {
    let Some(_) = placement() else { return };
    let lab = TrialLab::up("router4", lab_args);
    let set_mtu = |mtu: &str| {
        let o = std::process::Command::new("ip")
            .args(["-n", "xlat-tester", "link", "set", "xlat-tr", "mtu", mtu])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    set_mtu("1000");
    let before = veth_drops();
    // Forward only (the right port sends nothing, so its MTU limits nothing the tester sends).
    let v = lab.trial(2_000, 1, &["--frame-size", "1518", "--set", "traffic.reverse=false"]);
    let after = veth_drops();
    set_mtu("1500");
    let f = &v["forward"];
    let sent = f["sent"].as_u64().unwrap();
    let rx = |all: &[(String, u64, u64)]| all.iter().find(|d| d.0 == "xlat-tr").map(|d| d.1).unwrap();
    assert_eq!(rx(&after) - rx(&before), sent, "every frame dropped by xlat-tr: {v}");
    assert_eq!(f["tester_rx_dropped"].as_u64(), Some(sent), "{v}");
    assert_eq!(v["valid"], false, "{v}");
    assert!(v["pass"].is_null(), "a trial the tester spoiled has no verdict on the DUT: {v}");
}

#[test]
fn afpacket_counts_the_tester_hosts_drops() {
    frames_the_tester_host_drops_are_the_testers_loss(&[]);
}

#[test]
fn afxdp_counts_the_tester_hosts_drops() {
    frames_the_tester_host_drops_are_the_testers_loss(&["--backend", "afxdp"]);
}

#[test]
fn dut_cpus_are_checked_and_shown() {
    let Some((dut, _)) = placement() else { return };
    let _g = common::lab_lock();
    let _down = LabDown;
    let all = format!("0-{dut}");
    let o = common::xlatperf(&["lab", "up", "router4", "--replace", "--dut-cpus", &all]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("each need a CPU of their own"), "{err}");
    assert!(
        !std::path::Path::new("/run/xlatperf/lab.json").exists(),
        "a refused lab up made its state file"
    );
    lab_up_with("xlat464", &[]);
    let status = common::ok(&["lab", "status"]);
    for part in [
        "xlat-tl (xlat-tester) receive",
        "xlat-cl (xlat-clat) receive",
        "xlat-dr (xlat-dut) receive",
        "tayga (pid",
    ] {
        let line = status
            .lines()
            .find(|l| l.contains(part))
            .unwrap_or_else(|| panic!("{part}: {status}"));
        let want = if part.starts_with("xlat-tl") {
            "CPU 0"
        } else {
            &format!("CPU {dut}")
        };
        assert!(line.contains(want) && !line.contains("WARNING"), "{line}");
    }
    // Steering changed behind the lab's back is reported.
    dut_exec(&["sh", "-c", "echo 1 > /sys/class/net/xlat-dr/queues/rx-0/rps_cpus"]);
    let status = common::ok(&["lab", "status"]);
    let line = status.lines().find(|l| l.contains("xlat-dr (xlat-dut) receive")).unwrap();
    assert!(
        line.contains("CPU 0") && line.contains("WARNING") && line.contains(&format!("placed on CPU {dut}")),
        "{line}"
    );
}

/// Make the lab's DUT slow: an nftables chain of `rules` rules (table `inet xlat_slow`) that
/// every forwarded frame walks (3,000: about 10,000 frames/s per direction on one CPU of one
/// machine, 40,000 on another).
fn slow_down_the_dut(rules: u32) {
    let mut chain = String::from("table inet xlat_slow {\n chain fw {\n  type filter hook forward priority 0;\n");
    for i in 0..rules {
        let port = 10_000 + i % 50_000;
        chain.push_str(&format!("  udp dport {port} counter\n"));
    }
    chain.push_str(" }\n}\n");
    let o = std::process::Command::new("ip")
        .args(["netns", "exec", "xlat-dut", "nft", "-f", "-"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(chain.as_bytes())?;
            c.wait()
        })
        .unwrap();
    assert!(o.success());
}

/// A DUT elsewhere reports its load with `dut.load`: here the lab's DUT, made slow and driven
/// past its limit, through a configuration without `dut.cpus` whose `dut.load` reads the DUT
/// CPU's own counters over `XLAT_TRIAL_SECONDS` (a script, as an operator would over ssh). The
/// figure is the saturated CPU's, so the command ran during the sending, not after it.
#[test]
fn a_dut_load_command_reports_the_load_of_a_dut_elsewhere() {
    let Some((dut, _)) = placement() else { return };
    let lab = TrialLab::up("router4", &[]);
    slow_down_the_dut(3_000);
    let dir = std::env::temp_dir().join(format!("xlatperf-dut-load-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("busy.sh");
    std::fs::write(
        &script,
        "c=cpu$1\n\
         r() { awk -v c=\"$c\" '$1 == c { print $2 + $3 + $4 + $7 + $8 + $9, $5 + $6 }' /proc/stat; }\n\
         a=$(r); sleep \"$XLAT_TRIAL_SECONDS\"; b=$(r)\n\
         echo \"$a $b\" | awk '{ busy = $3 - $1; idle = $4 - $2; print 100 * busy / (busy + idle) }'\n",
    )
    .unwrap();
    let text = std::fs::read_to_string(&lab.config).unwrap();
    let text: String = text
        .lines()
        .filter(|l| !l.starts_with("cpus = "))
        .map(|l| format!("{l}\n"))
        .collect::<String>()
        .replace("[dut]\n", &format!("[dut]\nload = \"sh {} {dut}\"\n", script.display()));
    let config = dir.join("elsewhere.toml");
    std::fs::write(&config, text).unwrap();
    let out = common::ok(&[
        "trial",
        "-c",
        config.to_str().unwrap(),
        "--rate",
        "30000",
        "--duration",
        "2",
        "--timeout",
        "300",
        "--json",
        "-",
    ]);
    let _ = std::fs::remove_dir_all(&dir);
    dut_exec(&["nft", "delete table inet xlat_slow"]);
    let v = common::last_json(&out);
    let load = &v["load"]["dut"];
    assert!(load["busy"].as_f64().unwrap() >= 0.8, "the saturated DUT CPU's load: {v}");
    assert_eq!(load["cpus"], serde_json::json!([]), "{load}");
    let hooks = v["dut_hooks"].as_array().unwrap();
    assert!(hooks.iter().any(|h| h["key"] == "dut.load" && h["exit_status"] == 0), "{v}");
}

/// A DUT made slow by configuration (an nftables chain of 30,000 rules that every forwarded
/// frame walks, on the DUT's one CPU): the throughput search comes out bounded by the DUT, its
/// CPU at least 90 % busy during the failed trial above the result, no rate tester-bound (the
/// DUT's full input queue is the DUT's loss, not the tester's lag); without the chain the same
/// tester, ports and DUT pass four times that rate, lossless: the tester's own limit is well
/// above. How fast the chain lets the DUT forward depends on the CPU (3,000 rules passed the whole
/// 40,000 frames/s on one machine of this kind): the test calibrates on the host first, one
/// second at 50,000 frames/s per direction, and searches up to four times what came through.
#[test]
fn an_expensive_dut_is_dut_bound() {
    let Some(_) = placement() else { return };
    let lab = Lab::up("router4", "expensive");
    slow_down_the_dut(30_000);
    let calibration = common::last_json(&common::ok(&[
        "trial",
        "-c",
        &lab.config,
        "--rate",
        "50000",
        "--duration",
        "1",
        "--timeout",
        "300",
        "--json",
        "-",
    ]));
    let through = ["forward", "reverse"]
        .iter()
        .map(|d| calibration[*d]["received"].as_u64().unwrap())
        .min()
        .unwrap();
    let max = (4 * through).clamp(2_000, 50_000);
    eprintln!("calibration: {through} frames/s came through the chain; searching up to {max}");
    let max_s = max.to_string();
    let (v, _) = lab.run(
        "throughput",
        &["--max-rate", &max_s, "--error", "5%", "--duration", "1", "--timeout", "300"],
    );
    let r = &runs(&v)[0];
    let tp = r["throughput"].as_u64().unwrap();
    assert_eq!(r["bound"]["by"], "dut", "{}", r["bound"]);
    assert!(r["bound"]["dut_busy"].as_f64().unwrap() >= 0.9, "{}", r["bound"]);
    assert!(tp > 0 && tp < max, "{tp}");
    // No rate the tester could not send (an invalid trial, the machine's other work delaying a
    // sender, is retried; before the afpacket fix every rate above the DUT's was invalid).
    assert!(r["tester_bound"].is_null(), "{}", r["tester_bound"]);
    for t in r["trials"].as_array().unwrap() {
        assert_eq!(t["tester_bound"], Value::Null, "a rate the tester could not send: {t}");
    }
    dut_exec(&["nft", "delete table inet xlat_slow"]);
    let rate = (4 * tp).to_string();
    let args = [
        "trial",
        "-c",
        &lab.config,
        "--rate",
        &rate,
        "--duration",
        "2",
        "--timeout",
        "500",
        "--json",
        "-",
    ];
    let v = until_counted(|| common::last_json(&common::ok(&args)));
    for d in ["forward", "reverse"] {
        assert_eq!(v[d]["lost"], 0, "{d} at {rate}: {v}");
    }
}
