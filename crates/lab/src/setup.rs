//! Building and removing the lab.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::cmd::{ip_in, run, run_with_input, sysctl_get, sysctl_set};
use crate::error::LabError;
use crate::report::{DownReport, LabInfo};
use crate::state::{self, remove_file_if_exists, LabState, SavedSysctl, CLAT_TAYGA_CONF, CLAT_TAYGA_PIDFILE, TAYGA_CONF, TAYGA_PIDFILE};
use crate::tayga;
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

/// Connection tracking limits of the initial namespace, raised for the stateful DUTs (on this
/// kernel, 6.x, both are global: read-only in every other namespace; the hash size is the same
/// value as `/sys/module/nf_conntrack/parameters/hashsize`). A hash as large as the table, as in
/// seeds/001's measurements.
const CONNTRACK_GLOBAL: [(&str, u64); 2] = [
    ("net.netfilter.nf_conntrack_max", CONNTRACK_MAX),
    ("net.netfilter.nf_conntrack_buckets", CONNTRACK_BUCKETS),
];

/// UDP timeouts of the DUT's connection tracking: these are per namespace, so they go with the
/// DUT namespace and need no restoring.
const CONNTRACK_UDP_TIMEOUTS: [&str; 2] = [
    "net.netfilter.nf_conntrack_udp_timeout",
    "net.netfilter.nf_conntrack_udp_timeout_stream",
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

/// nftables ruleset of the DUT for nat44, nat64 (`table ip xlat`) and nat66 (`table ip6 xlat`):
/// masquerade everything leaving on the right, and accept from the right only what belongs to a
/// connection the left opened. Without the forward filter the DUT would route a frame from the
/// right to a left address (198.18.0.2, TAYGA's pool, or 2001:2::2) as a new connection; without
/// the input filter a frame to the DUT's public address with no entry (after `conntrack -F`)
/// would make a new entry of its own (and an ICMP error). A stateful gateway drops what it has
/// no entry for, and the stateful tests count on it: the Responder's frames pass only through
/// entries of phase 1, and make none. For IPv6 the input chain also accepts neighbour
/// solicitations and advertisements from the right (conntrack does not track them): without
/// them the DUT could not resolve the right tester, nor be resolved by it.
fn nat_ruleset(t: Topology) -> String {
    let family = t.nat_family().unwrap_or("ip");
    let ndp = if family == "ip6" {
        "icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert } accept; "
    } else {
        ""
    };
    format!(
        "table {family} xlat {{\n{}\
         \tchain postrouting {{ type nat hook postrouting priority srcnat; policy accept; oifname \"{DUT_RIGHT}\" masquerade; }}\n\
         \tchain forward {{ type filter hook forward priority filter; policy accept; ct state established,related accept; iifname \"{DUT_RIGHT}\" drop; }}\n\
         \tchain input {{ type filter hook input priority filter; policy accept; ct state established,related accept; {ndp}iifname \"{DUT_RIGHT}\" drop; }}\n\
         }}\n",
        if t.dut() == Dut::Aftr { b4_chains() } else { String::new() }
    )
}

/// dslite's per-B4 NAT (RFC 6333 6.6): the AFTR's decapsulation marks each packet with its B4's
/// identity (aftr.rs); the mark chooses the connection-tracking zone of the original direction,
/// so that B4s may use the same IPv4 addresses and ports, and is kept in the connection, so that
/// a reply gets it back and the encapsulation knows its B4. nftables sets a zone from a map only
/// (a mark is not an integer to it): the map holds every identity, 1 to 65535.
fn b4_chains() -> String {
    let elements: Vec<String> = (1..=u16::MAX).map(|i| format!("{i} : {i}")).collect();
    format!(
        "\tmap b4zone {{ typeof meta mark : ct zone; elements = {{ {} }} }}\n\
         \tchain b4zone {{ type filter hook prerouting priority raw; policy accept; iifname \"{DUT_LEFT}\" ct original zone set meta mark map @b4zone; }}\n\
         \tchain b4mark {{ type filter hook prerouting priority mangle; policy accept; iifname \"{DUT_LEFT}\" ct mark set meta mark; iifname \"{DUT_RIGHT}\" meta mark set ct mark; }}\n",
        elements.join(", ")
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

/// `up`, after the checks: build everything, recording it in `st` as it goes.
pub(crate) fn build(t: Topology, st: &mut LabState, opts: &crate::report::UpOptions) -> Result<LabInfo, LabError> {
    if t.dut().dpdk() {
        // No namespace, no veth: the DUT is a DPDK process on its CPUs, the tester's ports its
        // virtio-user peers (vhost-user).
        let placement = st.placement.clone().ok_or_else(|| {
            LabError::InvalidInput(format!(
                "{t}: testpmd polls a CPU of its own and the tester needs another; this process may use one"
            ))
        })?;
        crate::dpdk_dut::start(st, &placement, opts.queues.unwrap_or(1))?;
        return finish(t, st, opts);
    }
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

    raise_globals(st, &GC_THRESH)?;

    let (v4, v6) = t.forwarding();
    for ns in duts {
        sysctl_set(Some(ns), "net.ipv4.ip_forward", if v4 { "1" } else { "0" })?;
        sysctl_set(Some(ns), "net.ipv6.conf.all.forwarding", if v6 { "1" } else { "0" })?;
    }

    if t.uses_tayga() {
        tayga::start_dut(t, st)?;
    }
    if t.has_clat() {
        tayga::start_clat(st)?;
        // Between the two: the CLAT reaches the PLAT-side prefix through the PLAT, and the PLAT
        // the CLAT-side prefix through the CLAT.
        let (plat, clat) = (addr(DUT_LEFT_IPV6), addr(CLAT_RIGHT_IPV6));
        ip_in(CLAT_NS, &["-6", "route", "add", NAT64_PREFIX, "via", plat, "dev", CLAT_RIGHT])?;
        ip_in(DUT_NS, &["-6", "route", "add", CLAT_PREFIX, "via", clat, "dev", DUT_LEFT])?;
    }
    if t.uses_nat() {
        run_with_input("ip", &["netns", "exec", DUT_NS, "nft", "-f", "-"], Some(&nat_ruleset(t)))?;
        // After the ruleset: it loads nf_conntrack, whose sysctls exist only from then on.
        tune_conntrack(st, opts.conntrack)?;
    }
    if t.dut().left_ipv6_only() {
        // What goes back to the B4s' IPv4 addresses leaves on the left to the tester's IPv6
        // address (its MAC by neighbour discovery); the encapsulation (translation) then
        // addresses the B4 (CE).
        match t.dut() {
            Dut::Lwaftr => crate::lwaftr::attach()?,
            Dut::MapE => crate::mapbr::attach()?,
            Dut::MapT => crate::maptbr::attach()?,
            _ => crate::aftr::attach()?,
        }
        if t.dut().map_rule() {
            // The CEs' addresses are on the left link (the tester answers for its CE's).
            ip_in(DUT_NS, &["-6", "route", "add", MAP_RULE_IPV6, "dev", DUT_LEFT])?;
        }
        let via = crate::topology::tester_ipv6_end(t)
            .ok_or_else(|| LabError::InvalidInput(format!("{t}: the tester's softwire end (lab names.rs) is not an address")))?
            .to_string();
        ip_in(
            DUT_NS,
            &["-4", "route", "add", DSLITE_B4_IPV4_ROUTE, "via", "inet6", &via, "dev", DUT_LEFT],
        )?;
    }

    wait_links_up(t)?;
    if let Some(p) = &st.placement {
        crate::steer::apply(t, p)?;
    }
    finish(t, st, opts)
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

    let (left, right) = if t.dut().dpdk() {
        (crate::testpmd::LEFT_VDEV, crate::testpmd::RIGHT_VDEV)
    } else {
        (LEFT_PORT, RIGHT_PORT)
    };
    Ok(LabInfo {
        topology: t,
        config_path: path,
        tester_ns: t.namespaces().first().map_or_else(String::new, |n| n.to_string()),
        dut_ns: if t.dut().dpdk() { String::new() } else { DUT_NS.to_string() },
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

/// Raise host-wide sysctls (neighbour table limits, connection tracking limits) that are lower
/// than wanted, recording each old value in the state file before it changes, so that `down`
/// restores it, also after a crash (`down`, or `up --replace`, finds the state file).
fn raise_globals(st: &mut LabState, wanted: &[(&str, u64)]) -> Result<(), LabError> {
    change_globals(st, wanted, |current, want| current.parse::<u64>().map(|v| v < want).unwrap_or(true))
}

/// Set host-wide sysctls to exactly `wanted` (lower too), saved as [`raise_globals`] does.
fn set_globals(st: &mut LabState, wanted: &[(&str, u64)]) -> Result<(), LabError> {
    change_globals(st, wanted, |current, want| current != want.to_string())
}

/// Set each sysctl of `wanted` whose current value `change(current, wanted)` says to, recording
/// the old value in the state file first, and then the value the kernel took (it may round:
/// the hash size goes to a multiple of a page of buckets), so that `down` recognises its own
/// value and restores the old one.
fn change_globals(st: &mut LabState, wanted: &[(&str, u64)], change: impl Fn(&str, u64) -> bool) -> Result<(), LabError> {
    for &(key, want) in wanted {
        let current = sysctl_get(None, key)?;
        if !change(current.trim(), want) {
            continue;
        }
        st.saved_sysctls.push(SavedSysctl {
            key: key.to_string(),
            original: current,
            set: want.to_string(),
        });
        state::write(st)?;
        sysctl_set(None, key, &want.to_string())?;
        let took = sysctl_get(None, key)?;
        if let Some(saved) = st.saved_sysctls.last_mut() {
            saved.set = took.trim().to_string();
        }
        state::write(st)?;
    }
    Ok(())
}

/// Make the DUT's connection tracking fit a stateful test: a table and hash for
/// [`CONNTRACK_MAX`] connections (host-wide, restored by `down`), and UDP timeouts of
/// [`CONNTRACK_UDP_TIMEOUT_S`] in the DUT namespace, well above phase 1, the delay to phase 2
/// and phase 2 of the lab's stateful configuration together.
/// With `exact` (`--conntrack-max`), table and hash are set to those values, lower too.
fn tune_conntrack(st: &mut LabState, exact: Option<(u64, u64)>) -> Result<(), LabError> {
    match exact {
        None => raise_globals(st, &CONNTRACK_GLOBAL)?,
        Some((max, buckets)) => {
            // The hash first: a table above the old hash size is fine, but set both anyway.
            let keys = [(CONNTRACK_GLOBAL[1].0, buckets), (CONNTRACK_GLOBAL[0].0, max)];
            set_globals(st, &keys)?;
        }
    }
    for key in CONNTRACK_UDP_TIMEOUTS {
        sysctl_set(Some(DUT_NS), key, &CONNTRACK_UDP_TIMEOUT_S.to_string())?;
    }
    Ok(())
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
    // 1. dpdk-fwd's testpmd: the recorded pid, and (after a crash before it was recorded) any
    //    testpmd serving the lab's vhost-user socket.
    let mut testpmds: Vec<u32> = st.iter().filter_map(|s| s.dut_pid).collect();
    for pid in crate::dpdk_dut::strays() {
        if !testpmds.contains(&pid) {
            testpmds.push(pid);
        }
    }
    for pid in testpmds {
        match crate::process::stop(pid, crate::testpmd::TESTPMD, &mut report.notes) {
            Ok(true) => report.killed.push(pid),
            Ok(false) => {}
            Err(e) => failures.push(e.to_string()),
        }
    }
    // 1b. TAYGA: the recorded pids, and (after a crash before they were recorded) any tayga in
    //    xlat-dut or xlat-clat.
    let mut pids: Vec<u32> = st.iter().flat_map(|s| [s.tayga_pid, s.clat_pid]).flatten().collect();
    for ns in [DUT_NS, CLAT_NS].into_iter().filter(|ns| namespaces.iter().any(|n| n == ns)) {
        match run("ip", &["netns", "pids", ns]) {
            Ok(out) => {
                for pid in out.lines().filter_map(|l| l.trim().parse::<u32>().ok()) {
                    if pids.contains(&pid) {
                        continue;
                    }
                    if crate::process::process_is(pid, "tayga") {
                        pids.push(pid);
                    } else {
                        report.notes.push(format!("process {pid} still runs in {ns}; left alone"));
                    }
                }
            }
            Err(e) => failures.push(e.to_string()),
        }
    }
    for pid in pids {
        match crate::process::stop(pid, "tayga", &mut report.notes) {
            Ok(true) => report.killed.push(pid),
            Ok(false) => {}
            Err(e) => failures.push(e.to_string()),
        }
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
        for s in &st.saved_sysctls {
            match sysctl_get(None, &s.key) {
                Ok(v) if v == s.set => match sysctl_set(None, &s.key, &s.original) {
                    Ok(()) => report.sysctls_restored.push(format!("{}={}", s.key, s.original)),
                    Err(e) => failures.push(e.to_string()),
                },
                Ok(v) => report.notes.push(format!("{} is {v}, not the lab's {}; left alone", s.key, s.set)),
                Err(e) => failures.push(e.to_string()),
            }
        }
    }

    // 5. Files; the state file last, and only when everything else is gone.
    let mut files: Vec<PathBuf> = Topology::ALL.iter().map(|t| state::config_path(*t)).collect();
    for f in [
        TAYGA_CONF,
        TAYGA_PIDFILE,
        CLAT_TAYGA_CONF,
        CLAT_TAYGA_PIDFILE,
        crate::testpmd::TESTPMD_LOG,
        crate::testpmd::LEFT_SOCKET,
        crate::testpmd::RIGHT_SOCKET,
    ] {
        files.push(PathBuf::from(f));
    }
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
    fn rulesets_name_the_lab_interfaces() {
        let t = tester_ruleset();
        assert!(t.contains("table netdev xlat") && t.contains("\"xlat-tl\"") && t.contains("\"xlat-tr\""));
        assert_eq!(t.matches("policy drop").count(), 2);
        for t in [Topology::NAT44, Topology::NAT64, Topology::NAT66] {
            let nat = nat_ruleset(t);
            let family = t.nat_family().unwrap();
            assert!(nat.starts_with(&format!("table {family} xlat {{\n")), "{nat}");
            assert!(nat.contains("oifname \"xlat-dr\" masquerade"), "{nat}");
            // From the right, only what belongs to a connection the left opened is forwarded.
            assert!(nat.contains("hook forward") && nat.contains("hook input"), "{nat}");
            assert!(
                nat.contains("hook forward priority filter; policy accept; ct state established,related accept; iifname \"xlat-dr\" drop;"),
                "{nat}"
            );
            // IPv6 neighbour discovery with the right tester still reaches the DUT.
            let ndp = if t == Topology::NAT66 {
                "icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert } accept; "
            } else {
                ""
            };
            assert!(
                nat.contains(&format!(
                    "hook input priority filter; policy accept; ct state established,related accept; {ndp}iifname \"xlat-dr\" drop;"
                )),
                "{nat}"
            );
        }
    }
}
