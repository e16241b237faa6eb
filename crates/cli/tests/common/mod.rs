//! Helpers shared by the CLI's integration tests: running the xlatperf binary, and the lab's
//! one-at-a-time lock and tear-down guard.
// Each test binary uses a part of these.
#![allow(dead_code)]

use std::process::{Command, Output, Stdio};
use std::sync::MutexGuard;
use std::time::{Duration, Instant};

use xlat_testkit::skip;

pub use xlat_testkit::retry;

#[allow(unused_imports)]
pub use skip::{have_tool, skip, skip_unless_root};

pub mod procedures;

/// tshark's fields of a frame in a softwire (dslite, lw4o6): the outer IPv6 ends and next
/// header, the inner IPv4 ends and header checksum status, the UDP ports and checksum status.
pub const SOFTWIRE_FIELDS: [&str; 9] = [
    "ipv6.src",
    "ipv6.dst",
    "ipv6.nxt",
    "ip.src",
    "ip.dst",
    "ip.checksum.status",
    "udp.srcport",
    "udp.dstport",
    "udp.checksum.status",
];

/// The tools a lab topology runs (xlat_lab checks the same before `lab up`).
pub const LAB_TOOLS: &[&str] = &["ip", "nft", "sysctl", "kill"];

/// Run xlatperf with `args`.
pub fn xlatperf(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xlatperf"))
        .args(args)
        .output()
        .expect("run xlatperf")
}

/// Run xlatperf with `args`, which must succeed; its standard output.
pub fn ok(args: &[&str]) -> String {
    let o = xlatperf(args);
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        o.status.success(),
        "xlatperf {args:?} failed:\n{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

/// The lab's namespaces have fixed names: one lab at a time within a test binary (cargo runs
/// the binaries one after another).
pub fn lab_lock() -> MutexGuard<'static, ()> {
    skip::serial()
}

/// Takes the lab down when dropped, also when the test fails.
pub struct LabDown;

impl Drop for LabDown {
    fn drop(&mut self) {
        let _ = xlatperf(&["lab", "down"]);
    }
}

/// Bring a lab up (replacing any), returning the path of the configuration it wrote.
pub fn lab_up(topology: &str) -> String {
    lab_up_with(topology, &[])
}

/// [`lab_up`] with more `lab up` arguments (e.g. `--conntrack-max 20000`). With
/// `XLAT_LAB_BACKEND=afxdp` in the environment, every lab test that does not name a backend
/// itself runs on that backend (`lab up --backend afxdp`): the whole lab suite, mirrored.
pub fn lab_up_with(topology: &str, extra: &[&str]) -> String {
    let backend = std::env::var("XLAT_LAB_BACKEND").ok().filter(|_| !extra.contains(&"--backend"));
    let forced: Vec<&str> = backend.as_deref().map(|b| vec!["--backend", b]).unwrap_or_default();
    let out = ok(&[&["lab", "up", topology, "--replace"], extra, &forced].concat());
    out.lines().last().expect("lab up prints the config path last").trim().to_string()
}

/// Run a trial (a closure giving its JSON report) until it is valid, three times at most: on a
/// shared machine another process may take the cores and make a trial invalid (correctly
/// reported as such, but not what the caller tests).
pub fn until_valid(trial: impl FnMut() -> serde_json::Value) -> serde_json::Value {
    retry::until_valid(
        "trial",
        trial,
        |v| v["valid"] == serde_json::Value::Bool(true),
        |v| v["invalid_reasons"].to_string(),
    )
}

/// [`until_valid`] for a test that judges a trial by its counts (frames sent, lost, connections
/// in the DUT), which a sender that finished its last burst a little late does not change: a
/// trial whose only invalidity is that (every reason "sending exceeded the L seconds limit
/// (took T s)" with T - L under 10 ms: a preemption at the end on a shared 2-core machine) is
/// taken; any other invalidity is retried as `until_valid` does.
pub fn until_counted(trial: impl FnMut() -> serde_json::Value) -> serde_json::Value {
    retry::until_valid(
        "trial",
        trial,
        |v| v["valid"] == serde_json::Value::Bool(true) || only_late(v),
        |v| v["invalid_reasons"].to_string(),
    )
}

/// True when every invalid reason of trial report `v` is a sending that ended late by less than
/// 10 ms.
pub fn only_late(v: &serde_json::Value) -> bool {
    let Some(reasons) = v["invalid_reasons"].as_array().filter(|r| !r.is_empty()) else {
        return false;
    };
    reasons.iter().all(|r| {
        let r = r.as_str().unwrap_or("");
        let num = |after: &str, before: &str| -> Option<f64> { r.split(after).nth(1)?.split(before).next()?.trim().parse().ok() };
        match (num("exceeded the ", " seconds limit"), num("(took ", " s)")) {
            (Some(limit), Some(took)) => r.contains("sending exceeded the") && took - limit < 0.010,
            _ => false,
        }
    })
}

/// Run a command in the lab's DUT namespace, which must succeed; its standard output.
pub fn dut_exec(args: &[&str]) -> String {
    let o = Command::new("ip")
        .args(["netns", "exec", "xlat-dut"])
        .args(args)
        .output()
        .expect("ip netns exec");
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).to_string()
}

/// Put an nftables rule into the DUT's forward path: table `inet TABLE`, a filter chain on the
/// forward hook at `priority`, and `rule` (e.g. `ct state new limit rate over 20000/second
/// burst 500 packets drop`). `lab down` removes it with the namespace.
pub fn dut_forward_rule(table: &str, priority: i32, rule: &str) {
    dut_exec(&["nft", &format!("add table inet {table}")]);
    dut_exec(&[
        "nft",
        &format!("add chain inet {table} fw {{ type filter hook forward priority {priority} ; }}"),
    ]);
    dut_exec(&["nft", &format!("add rule inet {table} fw {rule}")]);
}

/// A lab for one test that runs trials: up on creation (holding the lab lock), down on drop
/// (also when the test fails).
pub struct TrialLab {
    pub config: String,
    _g: MutexGuard<'static, ()>,
}

impl TrialLab {
    /// `lab up TOPOLOGY EXTRA...` (e.g. `--backend afxdp`, `--queues 2`).
    pub fn up(topology: &str, extra: &[&str]) -> TrialLab {
        let g = lab_lock();
        let config = lab_up_with(topology, extra);
        assert!(std::path::Path::new(&config).exists(), "{config}");
        TrialLab { config, _g: g }
    }

    /// `xlatperf trial` on the lab's configuration at `rate` for `secs` (timeout 500 ms) with
    /// `extra` arguments; its JSON report. Every frame the tester's own veth ends dropped in it
    /// (`ip -s link`, the kernel's count) must be in the report's `tester_rx_dropped`: a loss
    /// of the tester's is never the DUT's.
    pub fn trial(&self, rate: u64, secs: u64, extra: &[&str]) -> serde_json::Value {
        let before = veth_drops();
        let (r, s) = (rate.to_string(), secs.to_string());
        let mut args = vec![
            "trial",
            "-c",
            &self.config,
            "--rate",
            &r,
            "--duration",
            &s,
            "--timeout",
            "500",
            "--json",
            "-",
        ];
        args.extend_from_slice(extra);
        let v = last_json(&ok(&args));
        let after = veth_drops();
        let rx = |all: &[(String, u64, u64)]| -> u64 { all.iter().filter(|d| d.0 == "xlat-tl" || d.0 == "xlat-tr").map(|d| d.1).sum() };
        let counted: u64 = ["forward", "reverse"]
            .iter()
            .filter_map(|d| v[d]["tester_rx_dropped"].as_u64())
            .sum();
        let kernel = rx(&after) - rx(&before);
        assert!(
            kernel <= counted,
            "the tester's veth ends dropped {kernel} frames, the report counts {counted} as the tester's: {v}"
        );
        v
    }
}

impl Drop for TrialLab {
    fn drop(&mut self) {
        let _ = xlatperf(&["lab", "down"]);
    }
}

/// Every frame dropped by a veth end of the lab: (interface, rx dropped, tx dropped), both
/// namespaces, from `ip -s -j link`.
pub fn veth_drops() -> Vec<(String, u64, u64)> {
    let mut out = Vec::new();
    for ns in ["xlat-tester", "xlat-dut"] {
        let o = std::process::Command::new("ip")
            .args(["-n", ns, "-s", "-j", "link", "show"])
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        for l in v.as_array().unwrap() {
            let name = l["ifname"].as_str().unwrap_or("");
            if name.starts_with("xlat-") {
                let s = &l["stats64"];
                out.push((
                    name.to_string(),
                    s["rx"]["dropped"].as_u64().unwrap_or(0),
                    s["tx"]["dropped"].as_u64().unwrap_or(0),
                ));
            }
        }
    }
    out
}

/// Frames dropped by any veth end between two readings of [`veth_drops`].
pub fn dropped_between(before: &[(String, u64, u64)], after: &[(String, u64, u64)]) -> Vec<String> {
    after
        .iter()
        .filter_map(|(n, rx, tx)| {
            let (_, rx0, tx0) = before.iter().find(|b| &b.0 == n)?;
            (rx > rx0 || tx > tx0).then(|| format!("{n}: rx {} tx {}", rx - rx0, tx - tx0))
        })
        .collect()
}

/// The last line of `out` that is a JSON document (a stateful trial prints its phases' lines
/// before the report).
pub fn last_json(out: &str) -> serde_json::Value {
    let line = out
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .unwrap_or_else(|| panic!("no JSON in {out}"));
    serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

/// Capture `count` frames matching `filter` on `iface` of the DUT's namespace with tshark while
/// `run` runs (the capture goes on across a retried trial), and dissect them with `fields`
/// (checksums checked): one row of field values per frame, and what `run` returned.
pub fn dissect(
    iface: &str,
    filter: &str,
    count: usize,
    fields: &[&str],
    run: impl FnOnce() -> serde_json::Value,
) -> (Vec<Vec<String>>, serde_json::Value) {
    dissect_for(60, iface, filter, count, fields, run)
}

/// [`dissect`], the capture ending after `secs` seconds at the latest.
pub fn dissect_for(
    secs: u64,
    iface: &str,
    filter: &str,
    count: usize,
    fields: &[&str],
    run: impl FnOnce() -> serde_json::Value,
) -> (Vec<Vec<String>>, serde_json::Value) {
    let pcap = std::env::temp_dir().join(format!("xlat-stateful-{iface}-{}.pcap", std::process::id()));
    let _ = std::fs::remove_file(&pcap);
    let (n, dur) = (count.to_string(), format!("duration:{secs}"));
    let mut cap = Command::new("ip")
        .args([
            "netns", "exec", "xlat-dut", "tshark", "-q", "-i", iface, "-c", &n, "-a", &dur, "-f", filter,
        ])
        .arg("-w")
        .arg(&pcap)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("tshark");
    std::thread::sleep(Duration::from_secs(2)); // tshark opens the interface
    let v = run();
    let deadline = Instant::now() + Duration::from_secs(secs + 10);
    while cap.try_wait().expect("tshark").is_none() {
        assert!(Instant::now() < deadline, "tshark did not end");
        std::thread::sleep(Duration::from_millis(100));
    }
    // The UDP payload is test data whatever the port: without `-d`, a pseudorandom port such
    // as 4341 (LISP data) makes tshark dissect the payload as a packet of its own and report
    // a second IPv6 header ("4,4" as the next header).
    let mut args = vec![
        "-o",
        "ip.check_checksum:TRUE",
        "-o",
        "udp.check_checksum:TRUE",
        "-d",
        "udp.port==0-65535,data",
        "-T",
        "fields",
    ];
    for f in fields {
        args.extend(["-e", f]);
    }
    let out = Command::new("tshark").arg("-r").arg(&pcap).args(&args).output().expect("tshark -r");
    let _ = std::fs::remove_file(&pcap);
    let text = String::from_utf8_lossy(&out.stdout);
    let rows = text.lines().map(|l| l.split('\t').map(str::to_string).collect()).collect();
    (rows, v)
}

/// Open `html` in headless Chromium; `None` (after skipping) where the browser or the Python
/// environment is missing.
pub fn check_in_browser(html: &std::path::Path) -> Option<serde_json::Value> {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = root.join(".venv/report/bin/python");
    if !python.exists() || !have_tool("chromium") {
        skip("needs chromium and .venv/report (scripts/setup.sh installs both)");
        return None;
    }
    let script = root.join("crates/campaign/tests/browser/check_report.py");
    let o = Command::new(python).arg(script).arg(html).output().unwrap();
    assert!(
        o.status.success(),
        "check_report.py failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    Some(serde_json::from_slice(&o.stdout).expect("check_report.py prints JSON"))
}

/// Processes whose command line mentions `needle` (a campaign's directory) or that run in it
/// (a campaign's runs: their working directory is the campaign's, their paths relative), other
/// than the test binaries themselves (whose arguments may mention it too).
pub fn processes_mentioning(needle: &str) -> Vec<String> {
    let me = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()));
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(c) = std::fs::read(e.path().join("cmdline")) {
            let c = String::from_utf8_lossy(&c).replace('\0', " ");
            let cwd = std::fs::read_link(e.path().join("cwd")).unwrap_or_default();
            let here = c.contains(needle) || cwd.to_string_lossy().starts_with(needle);
            if here && !me.as_deref().is_some_and(|m| c.contains(m)) {
                found.push(format!("{}: {c}", e.file_name().to_string_lossy()));
            }
        }
    }
    found
}

/// An empty directory of this test's own, `/tmp/NAME-PID` (whatever an earlier run left there
/// removed first).
pub fn fresh_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
