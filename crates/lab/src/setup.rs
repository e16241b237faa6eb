//! Building and removing the lab: what every DUT shares (namespaces, veths, addresses,
//! forwarding, a CLAT, the tester's side), and the DUT's own part through its module
//! (`duts/`).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::cmd::{ip_in, run, run_with_input, sysctl_set};
use crate::duts::{tayga, Down};
use crate::error::LabError;
use crate::globals;
use crate::report::{DownReport, LabInfo};
use crate::state::{self, remove_file_if_exists, LabState};
use crate::topology::*;

/// Neighbour table limits of the initial namespace (the tables are host-wide: the kernel does
/// not expose them in other namespaces). Raised so that 65k tester addresses per side fit.
const GC_THRESH: [(&str, u64); 6] = [
    ("net.ipv4.neigh.default.gc_thresh1", 131_072),
    ("net.ipv4.neigh.default.gc_thresh2", 196_608),
    ("net.ipv4.neigh.default.gc_thresh3", 262_144),
    ("net.ipv6.neigh.default.gc_thresh1", 131_072),
    ("net.ipv6.neigh.default.gc_thresh2", 196_608),
    ("net.ipv6.neigh.default.gc_thresh3", 262_144),
];

/// nftables ruleset of the tester namespace: drop everything at ingress of both tester ports,
/// so the namespace's IP stack spends nothing on test frames (packet sockets see them first).
fn tester_ruleset() -> String {
    format!(
        "table netdev xlat {{\n\
         \tchain ingress_left {{ type filter hook ingress device \"{LEFT_PORT}\" priority 0; policy drop; }}\n\
         \tchain ingress_right {{ type filter hook ingress device \"{RIGHT_PORT}\" priority 0; policy drop; }}\n\
         }}\n"
    )
}

/// Names of the namespaces known to `ip netns`.
pub(crate) fn list_netns() -> Result<Vec<String>, LabError> {
    let out = run("ip", &["netns", "list"])?;
    Ok(out
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect())
}

/// Interface names in the namespace of this process.
pub(crate) fn root_links() -> Result<Vec<String>, LabError> {
    links_from(&["-j", "link", "show"])
}

/// Interface names in network namespace `ns`.
pub(crate) fn links_in(ns: &str) -> Result<Vec<String>, LabError> {
    links_from(&["-n", ns, "-j", "link", "show"])
}

fn links_from(args: &[&str]) -> Result<Vec<String>, LabError> {
    let out = run("ip", args)?;
    let v: serde_json::Value = serde_json::from_str(out.trim()).map_err(|e| LabError::Output {
        command: format!("ip {}", args.join(" ")),
        detail: e.to_string(),
    })?;
    Ok(v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|l| l.get("ifname").and_then(|n| n.as_str()).map(str::to_string))
                .collect()
        })
        .unwrap_or_default())
}

/// What of a lab exists already, if anything.
pub(crate) fn existing() -> Result<Option<String>, LabError> {
    let mut found = Vec::new();
    match state::read() {
        Ok(Some(st)) => found.push(format!("state file {} for {}", state::STATE_FILE, st.topology)),
        Ok(None) => {}
        Err(_) => found.push(format!("state file {}", state::STATE_FILE)),
    }
    let ns = list_netns()?;
    found.extend(
        NAMESPACES
            .iter()
            .filter(|n| ns.iter().any(|x| x == *n))
            .map(|n| format!("namespace {n}")),
    );
    let links = root_links()?;
    found.extend(
        LINK_NAMES
            .iter()
            .filter(|n| links.iter().any(|x| x == *n))
            .map(|n| format!("link {n}")),
    );
    Ok(if found.is_empty() { None } else { Some(found.join(", ")) })
}

/// `up`, after the checks: build everything, recording it in `st` as it goes: what every DUT
/// shares (unless its kind brings its own ports), then the DUT's own part (its module in
/// `duts/`).
pub(crate) fn build(t: Topology, st: &mut LabState, opts: &crate::report::UpOptions) -> Result<LabInfo, LabError> {
    let kind = t.dut().kind();
    if kind.cabled() {
        cable(t, st, opts)?;
        kind.build(t, st, opts)?;
        wait_links_up(t)?;
        if let Some(p) = &st.placement {
            crate::steer::apply(t, p)?;
        }
    } else {
        kind.build(t, st, opts)?;
    }
    finish(t, st, opts)
}

/// What every DUT in namespaces shares: the namespaces, the veths, the addresses, the
/// forwarding switches, xlat464's CLAT.
fn cable(t: Topology, st: &mut LabState, opts: &crate::report::UpOptions) -> Result<(), LabError> {
    for ns in t.namespaces() {
        run("ip", &["netns", "add", ns])?;
        ip_in(ns, &["link", "set", "dev", "lo", "up"])?;
    }
    // The DUT namespaces: the DUT's, and the CLAT's of xlat464.
    let duts = &t.namespaces()[1..];
    // Defaults before the links exist, so the new interfaces inherit them.
    for key in ["net.ipv6.conf.all.disable_ipv6", "net.ipv6.conf.default.disable_ipv6"] {
        sysctl_set(Some(TESTER_NS), key, "1")?;
    }
    for key in [
        "net.ipv6.conf.all.accept_dad",
        "net.ipv6.conf.default.accept_dad",
        "net.ipv6.conf.default.accept_ra",
        "net.ipv4.conf.all.rp_filter",
        "net.ipv4.conf.default.rp_filter",
    ] {
        for ns in duts {
            sysctl_set(Some(ns), key, "0")?;
        }
    }

    // With several queues, each veth end gets as many (the tester's senders and receivers
    // then use one each; the DUT's kernel spreads its work over them too).
    let queues = opts.queues.unwrap_or(1).to_string();
    for [(ns_a, a), (ns_b, b)] in cables(t) {
        let mut args = vec!["link", "add", a, "netns", ns_a];
        let per_end = ["numtxqueues", queues.as_str(), "numrxqueues", queues.as_str()];
        if opts.queues.is_some() {
            args.extend(per_end);
        }
        args.extend(["type", "veth", "peer", "name", b, "netns", ns_b]);
        if opts.queues.is_some() {
            args.extend(per_end);
        }
        run("ip", &args)?;
    }

    for port in [LEFT_PORT, RIGHT_PORT] {
        sysctl_set(Some(TESTER_NS), &format!("net.ipv6.conf.{port}.disable_ipv6"), "1")?;
        ip_in(
            TESTER_NS,
            &["link", "set", "dev", port, "txqueuelen", TXQUEUELEN, "promisc", "on", "up"],
        )?;
    }
    run_with_input("ip", &["netns", "exec", TESTER_NS, "nft", "-f", "-"], Some(&tester_ruleset()))?;
    // A queue on the tester's ends (veth has none): the afpacket backend sends through it on
    // veth, so that a frame the DUT's full input queue refuses is lost there, as on a wire,
    // instead of being sent again (see xlat-io's afpacket open_tx).
    for port in [LEFT_PORT, RIGHT_PORT] {
        run(
            "ip",
            &[
                "netns", "exec", TESTER_NS, "tc", "qdisc", "replace", "dev", port, "root", "pfifo", "limit", TXQUEUELEN,
            ],
        )?;
    }

    // (namespace, interface, IPv4, IPv6): xlat464's CLAT takes the DUT's left IPv4 address,
    // and the link between CLAT and PLAT is IPv6 only.
    let addresses = if t.has_clat() {
        [
            (CLAT_NS, CLAT_LEFT, Some(DUT_LEFT_IPV4), None),
            (CLAT_NS, CLAT_RIGHT, None, Some(CLAT_RIGHT_IPV6)),
            (DUT_NS, DUT_LEFT, None, Some(DUT_LEFT_IPV6)),
            (DUT_NS, DUT_RIGHT, Some(DUT_RIGHT_IPV4), Some(DUT_RIGHT_IPV6)),
        ]
        .to_vec()
    } else if t.dut().left_ipv6_only() {
        // The AFTR's (BR's) left is IPv6 only: the B4s reach it through their softwires, the
        // MAP-T CEs by translation.
        [
            (DUT_NS, DUT_LEFT, None, Some(DUT_LEFT_IPV6)),
            (DUT_NS, DUT_RIGHT, Some(DUT_RIGHT_IPV4), Some(DUT_RIGHT_IPV6)),
        ]
        .to_vec()
    } else {
        [
            (DUT_NS, DUT_LEFT, Some(DUT_LEFT_IPV4), Some(DUT_LEFT_IPV6)),
            (DUT_NS, DUT_RIGHT, Some(DUT_RIGHT_IPV4), Some(DUT_RIGHT_IPV6)),
        ]
        .to_vec()
    };
    for (ns, dev, v4, v6) in addresses {
        sysctl_set(Some(ns), &format!("net.ipv6.conf.{dev}.accept_dad"), "0")?;
        if let Some(v4) = v4 {
            ip_in(ns, &["address", "add", v4, "dev", dev])?;
        }
        if let Some(v6) = v6 {
            ip_in(ns, &["-6", "address", "add", v6, "dev", dev, "nodad"])?;
        }
        ip_in(ns, &["link", "set", "dev", dev, "txqueuelen", TXQUEUELEN, "up"])?;
    }
    if t.dut().left_ipv6_only() {
        // (mapt: an IPv4 packet of 1,500 bytes is 1,520 as IPv6.)
        ip_in(TESTER_NS, &["link", "set", "dev", LEFT_PORT, "mtu", DSLITE_LEFT_MTU])?;
        ip_in(DUT_NS, &["link", "set", "dev", DUT_LEFT, "mtu", DSLITE_LEFT_MTU])?;
    }

    globals::raise(st, &GC_THRESH)?;

    let (v4, v6) = t.forwarding();
    for ns in duts {
        sysctl_set(Some(ns), "net.ipv4.ip_forward", if v4 { "1" } else { "0" })?;
        sysctl_set(Some(ns), "net.ipv6.conf.all.forwarding", if v6 { "1" } else { "0" })?;
    }

    if t.has_clat() {
        tayga::start_clat(st)?;
        // Between the two: the CLAT reaches the PLAT-side prefix through the PLAT, and the PLAT
        // the CLAT-side prefix through the CLAT.
        let (plat, clat) = (addr(DUT_LEFT_IPV6), addr(CLAT_RIGHT_IPV6));
        ip_in(CLAT_NS, &["-6", "route", "add", NAT64_PREFIX, "via", plat, "dev", CLAT_RIGHT])?;
        ip_in(DUT_NS, &["-6", "route", "add", CLAT_PREFIX, "via", clat, "dev", DUT_LEFT])?;
    }
    Ok(())
}

/// Write the test configuration of what `build` made, mark the state complete, and say where
/// everything is.
fn finish(t: Topology, st: &mut LabState, opts: &crate::report::UpOptions) -> Result<LabInfo, LabError> {
    let path = state::config_path(t);
    st.files.push(path.clone());
    state::write(st)?;
    let text = config_toml_for(t, opts.backend, opts.queues.unwrap_or(1), st.placement.as_ref());
    std::fs::write(&path, text).map_err(|e| LabError::io(&path, e))?;
    st.config_path = Some(path.clone());
    st.complete = true;
    state::write(st)?;

    let (left, right) = t.dut().kind().tester_ports();
    Ok(LabInfo {
        topology: t,
        config_path: path,
        tester_ns: t.namespaces().first().map_or_else(String::new, |n| n.to_string()),
        dut_ns: if t.dut().kind().cabled() {
            DUT_NS.to_string()
        } else {
            String::new()
        },
        clat_ns: t.has_clat().then(|| CLAT_NS.to_string()),
        left_port: left.to_string(),
        right_port: right.to_string(),
        placement: st.placement.clone(),
    })
}

/// The veth pairs of topology `t`, each end as (namespace, interface): the tester's ports to
/// the DUT, except that in xlat464 the left port goes to the CLAT and the CLAT to the DUT (the
/// PLAT).
fn cables(t: Topology) -> Vec<[(&'static str, &'static str); 2]> {
    let mut c = vec![
        [(TESTER_NS, LEFT_PORT), t.left_peer()],
        [(TESTER_NS, RIGHT_PORT), (DUT_NS, DUT_RIGHT)],
    ];
    if t.has_clat() {
        c.push([(CLAT_NS, CLAT_RIGHT), (DUT_NS, DUT_LEFT)]);
    }
    c
}

/// Wait until the veth ends report operational state UP (the kernel sets it a moment after
/// both ends are up), so that the lab is ready to carry frames when `up` returns.
fn wait_links_up(t: Topology) -> Result<(), LabError> {
    let deadline = Instant::now() + Duration::from_secs(5);
    let ends: Vec<(&str, &str)> = cables(t).into_iter().flatten().collect();
    loop {
        let mut down = Vec::new();
        for &(ns, dev) in &ends {
            let out = ip_in(ns, &["-j", "link", "show", "dev", dev])?;
            if !out.contains("\"operstate\":\"UP\"") {
                down.push(dev);
            }
        }
        if down.is_empty() {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(LabError::Output {
                command: "ip -j link show".into(),
                detail: format!("{} not up after 5 s", down.join(", ")),
            });
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `down`: remove everything the lab may have made, with or without a state file.
/// An XDP program is attached to tester port `port` (`ip -d link show` says `prog/xdp`).
pub(crate) fn xdp_attached(port: &str) -> Result<bool, LabError> {
    let out = ip_in(TESTER_NS, &["-d", "link", "show", "dev", port])?;
    Ok(out.contains("prog/xdp") || out.lines().next().is_some_and(|l| l.contains(" xdp")))
}

pub(crate) fn teardown() -> Result<DownReport, LabError> {
    let mut report = DownReport::default();
    let mut failures: Vec<String> = Vec::new();
    let st = match state::read() {
        Ok(st) => st,
        Err(e) => {
            report.notes.push(format!("ignoring unreadable state: {e}"));
            None
        }
    };
    report.had_state = st.is_some();
    report.topology = st.as_ref().map(|s| s.topology);

    let namespaces = match list_netns() {
        Ok(n) => n,
        Err(e) => {
            failures.push(e.to_string());
            Vec::new()
        }
    };
    // 1. The DUTs' daemons (TAYGA, dpdk-testpmd): every kind stops what of it may run.
    for kind in crate::duts::all() {
        kind.stop(&mut Down {
            state: st.as_ref(),
            namespaces: &namespaces,
            report: &mut report,
            failures: &mut failures,
        });
    }

    // 2. XDP programs on the tester's ports. The afxdp backend attaches its program through a
    //    BPF link that the kernel removes when the process ends, even by kill -9; this removes
    //    one attached some other way, before the namespace (and the veth with it) goes anyway.
    //    A port that is gone (its veth peer went with a deleted DUT namespace) holds nothing.
    let tester_ports = if namespaces.iter().any(|n| n == TESTER_NS) {
        match links_in(TESTER_NS) {
            Ok(links) => links,
            Err(e) => {
                failures.push(e.to_string());
                Vec::new()
            }
        }
    } else {
        Vec::new()
    };
    for port in [LEFT_PORT, RIGHT_PORT].into_iter().filter(|p| tester_ports.iter().any(|l| l == p)) {
        match xdp_attached(port) {
            Ok(false) => {}
            Ok(true) => {
                for mode in ["xdpgeneric", "xdpdrv"] {
                    let _ = ip_in(TESTER_NS, &["link", "set", "dev", port, mode, "off"]);
                }
                match xdp_attached(port) {
                    Ok(false) => report.xdp_removed.push(port.to_string()),
                    Ok(true) => report.notes.push(format!(
                        "an XDP program on {port} could not be detached (a BPF link held by a running process?); it goes with namespace {TESTER_NS}"
                    )),
                    Err(e) => failures.push(e.to_string()),
                }
            }
            Err(e) => failures.push(e.to_string()),
        }
    }

    // 3. Namespaces (their links, nftables tables and routes go with them).
    for ns in [CLAT_NS, DUT_NS, TESTER_NS] {
        if namespaces.iter().any(|n| n == ns) {
            match run("ip", &["netns", "delete", ns]) {
                Ok(_) => report.namespaces_removed.push(ns.to_string()),
                Err(e) => failures.push(e.to_string()),
            }
        }
    }

    // 4. Links with the lab's names left in this namespace (never created here, but be sure).
    match root_links() {
        Ok(links) => {
            for name in LINK_NAMES {
                if links.iter().any(|l| l == name) {
                    match run("ip", &["link", "delete", "dev", name]) {
                        Ok(_) => report.links_removed.push(name.to_string()),
                        // Deleting one veth end deletes its peer: that is not a failure.
                        Err(e) => {
                            if root_links().map(|l| l.iter().any(|x| x == name)).unwrap_or(true) {
                                failures.push(e.to_string());
                            }
                        }
                    }
                }
            }
        }
        Err(e) => failures.push(e.to_string()),
    }

    // 5. Host-wide sysctls, if nobody changed them since.
    if let Some(st) = &st {
        globals::restore(st, &mut report, &mut failures);
    }

    // 6. Files; the state file last, and only when everything else is gone.
    let mut files: Vec<PathBuf> = Topology::ALL.iter().map(|t| state::config_path(*t)).collect();
    files.extend(crate::duts::all().iter().flat_map(|k| k.files()).map(PathBuf::from));
    if let Some(st) = &st {
        files.extend(st.files.iter().filter(|f| f.starts_with(state::RUN_DIR)).cloned());
        files.extend(st.config_path.iter().filter(|f| f.starts_with(state::RUN_DIR)).cloned());
    }
    files.sort();
    files.dedup();
    for f in files {
        match remove_file_if_exists(&f) {
            Ok(true) => report.files_removed.push(f),
            Ok(false) => {}
            Err(e) => failures.push(e.to_string()),
        }
    }
    if failures.is_empty() {
        let path = Path::new(state::STATE_FILE);
        match remove_file_if_exists(path) {
            Ok(true) => report.files_removed.push(path.to_path_buf()),
            Ok(false) => {}
            Err(e) => failures.push(e.to_string()),
        }
    }
    if failures.is_empty() {
        Ok(report)
    } else {
        Err(LabError::Teardown(failures))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tester_ruleset_drops_on_both_ports() {
        let t = tester_ruleset();
        assert!(t.contains("table netdev xlat") && t.contains("\"xlat-tl\"") && t.contains("\"xlat-tr\""));
        assert_eq!(t.matches("policy drop").count(), 2);
    }
}
