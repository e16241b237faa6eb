//! TAYGA, the user-space translator of siit, nat64 and xlat464: its configurations, starting
//! the daemon with its TUN device and routes, and stopping it. xlat464 runs two: the PLAT in
//! the DUT namespace (nat64's) and the CLAT in its own namespace.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::kind::{Down, DutKind};
use crate::cmd::{ip_in, run, run_in, run_with_input};
use crate::error::LabError;
use crate::names::*;
use crate::process::process_is;
use crate::report::UpOptions;
use crate::state::{self, LabState, CLAT_TAYGA_CONF, CLAT_TAYGA_PIDFILE, TAYGA_CONF, TAYGA_PIDFILE};
use crate::topologies::{Dut, Topology};

/// siit's DUT (a static map) and nat64's and xlat464's PLAT (a dynamic pool that
/// [`super::masquerade`] masquerades). It also stops xlat464's CLAT, which setup.rs starts.
pub(crate) struct Tayga;

impl DutKind for Tayga {
    fn name(&self) -> &'static str {
        "tayga"
    }

    fn tools(&self) -> &'static [&'static str] {
        &["tayga"]
    }

    fn build(&self, t: Topology, st: &mut LabState, opts: &UpOptions) -> Result<(), LabError> {
        start_dut(t, st)?;
        if t.uses_nat() {
            super::masquerade::start(t, st, opts, "")?;
        }
        Ok(())
    }

    /// The recorded pids (the DUT's and the CLAT's), and (after a crash before they were
    /// recorded) any tayga in the DUT's or the CLAT's namespace.
    fn stop(&self, down: &mut Down<'_>) {
        let mut pids: Vec<u32> = down.state.iter().flat_map(|s| [s.tayga_pid, s.clat_pid]).flatten().collect();
        for ns in [DUT_NS, CLAT_NS].into_iter().filter(|ns| down.namespaces.iter().any(|n| n == ns)) {
            match run("ip", &["netns", "pids", ns]) {
                Ok(out) => {
                    for pid in out.lines().filter_map(|l| l.trim().parse::<u32>().ok()) {
                        if pids.contains(&pid) {
                            continue;
                        }
                        if process_is(pid, "tayga") {
                            pids.push(pid);
                        } else {
                            down.report.notes.push(format!("process {pid} still runs in {ns}; left alone"));
                        }
                    }
                }
                Err(e) => down.failures.push(e.to_string()),
            }
        }
        for pid in pids {
            down.stop_process(pid, "tayga");
        }
    }

    fn files(&self) -> &'static [&'static str] {
        &[TAYGA_CONF, TAYGA_PIDFILE, CLAT_TAYGA_CONF, CLAT_TAYGA_PIDFILE]
    }

    fn on_dut_cpus(&self, t: Topology) -> String {
        let who = if t.has_clat() { "both TAYGAs" } else { "TAYGA" };
        format!("{who} and the kernel's packet processing of the DUT")
    }
}

/// TAYGA's configuration in the DUT namespace: siit's static map, or the dynamic pool of nat64
/// and of xlat464's PLAT.
pub(crate) fn dut_conf(t: Topology) -> String {
    let mut s = format!("# written by `xlatperf lab up {t}`\ntun-device {TAYGA_TUN}\nipv4-addr {TAYGA_IPV4}\nprefix {NAT64_PREFIX}\n");
    if t.dut() == Dut::TaygaStatic {
        s.push_str(&format!("map {SIIT_MAP_IPV4} {SIIT_MAP_IPV6}\n"));
    } else {
        s.push_str(&format!("dynamic-pool {NAT64_POOL}\n"));
    }
    s
}

/// The CLAT's configuration (xlat464), as clatd writes one: the PLAT-side prefix, and the
/// customer's IPv4 addresses (the left tester's) mapped into the CLAT-side prefix. TAYGA looks
/// both addresses of a packet up in its map first and puts the others into the prefix, so
/// 198.18.0.2 -> 198.19.0.2 leaves as 2001:2:0:4646::c612:2 -> 2001:2:0:6464::c613:2.
pub(crate) fn clat_conf() -> String {
    format!(
        "# written by `xlatperf lab up xlat464`: the CLAT\ntun-device {TAYGA_TUN}\nipv4-addr {TAYGA_IPV4}\nprefix {NAT64_PREFIX}\nmap {CLAT_MAP_IPV4} {CLAT_MAP_IPV6}\n"
    )
}

/// nftables table of every namespace that runs a TAYGA: IPv6 UDP frames out of its TUN device
/// (what it translated from IPv4) with checksum 0x0000 get 0xffff, the same one's complement
/// value. TAYGA 0.9.2 updates the checksum incrementally and never turns a result of 0 into
/// 0xffff, so about 1 frame in 65,536 would leave with the checksum IPv6 forbids (RFC 8200 8.1)
/// and be dropped by the next hop (the CLAT, the PLAT, the tester): a loss that is TAYGA's
/// defect, not its capacity, and that no zero-loss search could pass (docs/lab.md).
pub(crate) fn checksum_repair() -> String {
    format!(
        "table ip6 {CHECKSUM_TABLE} {{\n\
         \tchain forward {{ type filter hook forward priority filter; policy accept; \
         iifname \"{TAYGA_TUN}\" meta l4proto udp udp checksum 0 udp checksum set 0xffff; }}\n\
         }}\n"
    )
}

/// Start the DUT's TAYGA (siit, nat64, xlat464's PLAT) in the DUT namespace, routing its
/// addresses into its TUN device; its pid goes into `st`.
fn start_dut(t: Topology, st: &mut LabState) -> Result<(), LabError> {
    let pool = if t.dut() == Dut::TaygaStatic { SIIT_MAP_IPV4 } else { NAT64_POOL };
    let routes = [("-4", TAYGA_IPV4_ROUTE), ("-4", pool), ("-6", NAT64_PREFIX)];
    let files = (TAYGA_CONF, TAYGA_PIDFILE);
    start(DUT_NS, files, &dut_conf(t), &routes, st, |s| &mut s.tayga_pid)
}

/// Start the CLAT's TAYGA in [`CLAT_NS`]: what goes to the right side's IPv4 addresses, and
/// what comes back to the CLAT-side prefix, goes through it; its pid goes into `st`.
pub(crate) fn start_clat(st: &mut LabState) -> Result<(), LabError> {
    let routes = [("-4", TAYGA_IPV4_ROUTE), ("-4", CLAT_IPV4_ROUTE), ("-6", CLAT_PREFIX)];
    let files = (CLAT_TAYGA_CONF, CLAT_TAYGA_PIDFILE);
    start(CLAT_NS, files, &clat_conf(), &routes, st, |s| &mut s.clat_pid)
}

/// Create a TAYGA's TUN device in `ns`, route `routes` (each `(-4 or -6, prefix)`) to it,
/// write its configuration `text` to `conf` and start the daemon with `pidfile`, record its pid
/// in the field of `st` that `pid_of` names, and pin it to the DUT's CPUs (`st.placement`).
fn start(
    ns: &str,
    (conf, pidfile): (&str, &str),
    text: &str,
    routes: &[(&str, &str)],
    st: &mut LabState,
    pid_of: fn(&mut LabState) -> &mut Option<u32>,
) -> Result<(), LabError> {
    for f in [conf, pidfile] {
        st.files.push(PathBuf::from(f));
    }
    state::write(st)?;
    std::fs::write(conf, text).map_err(|e| LabError::io(conf, e))?;
    state::remove_file_if_exists(std::path::Path::new(pidfile))?;

    run_in(ns, "tayga", &["--config", conf, "--mktun"])?;
    ip_in(ns, &["link", "set", "dev", TAYGA_TUN, "txqueuelen", TXQUEUELEN, "up"])?;
    for &(family, prefix) in routes {
        ip_in(ns, &[family, "route", "add", prefix, "dev", TAYGA_TUN])?;
    }
    run_with_input("ip", &["netns", "exec", ns, "nft", "-f", "-"], Some(&checksum_repair()))?;

    // TAYGA detaches (stdio to /dev/null) and writes its pid file from the daemon process.
    run_in(ns, "tayga", &["--config", conf, "--pidfile", pidfile])?;
    let deadline = Instant::now() + Duration::from_secs(3);
    let pid = loop {
        let text = std::fs::read_to_string(pidfile).unwrap_or_default();
        if let Ok(pid) = text.trim().parse::<u32>() {
            break pid;
        }
        if Instant::now() > deadline {
            return Err(LabError::Output {
                command: "tayga".into(),
                detail: format!("no pid in {pidfile} after 3 s"),
            });
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // Recorded before anything else can fail, so that `down` stops it.
    *pid_of(st) = Some(pid);
    state::write(st)?;
    // A user-space DUT on the tester's cores preempts the senders (and is preempted by them):
    // it runs on the DUT's CPUs (see placement.rs), and the lab config keeps the tester off them.
    if let Some(p) = &st.placement {
        run(
            "taskset",
            &["-a", "-p", "-c", &xlat_trial::load::cpu_list(&p.dut), &pid.to_string()],
        )?;
    }
    // Give a failing daemon (bad configuration, no TUN) a moment to exit, then check it runs.
    std::thread::sleep(Duration::from_millis(100));
    if !process_is(pid, "tayga") {
        return Err(LabError::Output {
            command: format!("tayga in {ns}"),
            detail: format!("daemon (pid {pid}) exited at once; see the system log"),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tayga_configurations() {
        let s = dut_conf(Topology::SIIT);
        assert!(s.contains("tun-device xlat-nat64\n") && s.contains("prefix 2001:2:0:6464::/96\n"));
        assert!(s.contains("map 198.18.1.0/24 2001:2::/120\n") && !s.contains("dynamic-pool"));
        for t in [Topology::NAT64, Topology::XLAT464] {
            let n = dut_conf(t);
            assert!(n.contains("dynamic-pool 198.18.128.0/18\n") && !n.contains("map "), "{n}");
        }
        // The CLAT: the PLAT's prefix, the left tester's addresses mapped into the CLAT-side
        // prefix by RFC 6052's /96 rule (198.18.0.0 = c612:0), TAYGA's own address outside.
        let c = clat_conf();
        assert!(c.contains("prefix 2001:2:0:6464::/96\n"), "{c}");
        assert!(c.contains("map 198.18.0.0/17 2001:2:0:4646::c612:0/113\n"), "{c}");
        let own: std::net::Ipv4Addr = TAYGA_IPV4.parse().unwrap();
        assert!(u32::from(own) >> 15 != u32::from(std::net::Ipv4Addr::new(198, 18, 0, 0)) >> 15);
        let v6: std::net::Ipv6Addr = CLAT_MAP_IPV6.split('/').next().unwrap().parse().unwrap();
        assert_eq!(v6.segments()[6..], [0xc612, 0]);
    }

    /// The repair touches UDP from the TUN device only, and nft reads it (checked against the
    /// kernel in the lab tests: no frame with checksum 0 between CLAT and PLAT).
    #[test]
    fn checksum_repair_is_for_tayga_s_udp_only() {
        let r = checksum_repair();
        assert!(r.starts_with("table ip6 xlat_tayga_csum {\n"), "{r}");
        assert!(
            r.contains("iifname \"xlat-nat64\" meta l4proto udp udp checksum 0 udp checksum set 0xffff;"),
            "{r}"
        );
    }
}
