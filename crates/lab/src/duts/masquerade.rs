//! nftables masquerade with connection tracking from left to right: nat44's and nat66's DUT,
//! and the stateful half of nat64's and xlat464's TAYGA (its dynamic pool masqueraded) and of
//! dslite's AFTR (NAT44 per B4). Its table, and the host's connection tracking sized for it.

use super::kind::DutKind;
use crate::cmd::{run_with_input, sysctl_set};
use crate::error::LabError;
use crate::globals;
use crate::names::*;
use crate::report::UpOptions;
use crate::state::LabState;
use crate::topologies::Topology;

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

/// nat44's and nat66's DUT.
pub(crate) struct Masquerade;

impl DutKind for Masquerade {
    fn name(&self) -> &'static str {
        "masquerade"
    }

    fn build(&self, t: Topology, st: &mut LabState, opts: &UpOptions) -> Result<(), LabError> {
        start(t, st, opts, "")
    }
}

/// Load the NAT's table into the DUT namespace (with `chains` of the DUT's own in it) and size
/// the connection tracking for it.
pub(crate) fn start(t: Topology, st: &mut LabState, opts: &UpOptions, chains: &str) -> Result<(), LabError> {
    run_with_input("ip", &["netns", "exec", DUT_NS, "nft", "-f", "-"], Some(&ruleset(t, chains)))?;
    // After the ruleset: it loads nf_conntrack, whose sysctls exist only from then on.
    tune_conntrack(st, opts.conntrack)
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
fn ruleset(t: Topology, chains: &str) -> String {
    let family = t.nat_family().unwrap_or("ip");
    let ndp = if family == "ip6" {
        "icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert } accept; "
    } else {
        ""
    };
    format!(
        "table {family} xlat {{\n{chains}\
         \tchain postrouting {{ type nat hook postrouting priority srcnat; policy accept; oifname \"{DUT_RIGHT}\" masquerade; }}\n\
         \tchain forward {{ type filter hook forward priority filter; policy accept; ct state established,related accept; iifname \"{DUT_RIGHT}\" drop; }}\n\
         \tchain input {{ type filter hook input priority filter; policy accept; ct state established,related accept; {ndp}iifname \"{DUT_RIGHT}\" drop; }}\n\
         }}\n"
    )
}

/// Make the DUT's connection tracking fit a stateful test: a table and hash for
/// [`CONNTRACK_MAX`] connections (host-wide, restored by `down`), and UDP timeouts of
/// [`CONNTRACK_UDP_TIMEOUT_S`] in the DUT namespace, well above phase 1, the delay to phase 2
/// and phase 2 of the lab's stateful configuration together.
/// With `exact` (`--conntrack-max`), table and hash are set to those values, lower too.
fn tune_conntrack(st: &mut LabState, exact: Option<(u64, u64)>) -> Result<(), LabError> {
    match exact {
        None => globals::raise(st, &CONNTRACK_GLOBAL)?,
        Some((max, buckets)) => {
            // The hash first: a table above the old hash size is fine, but set both anyway.
            let keys = [(CONNTRACK_GLOBAL[1].0, buckets), (CONNTRACK_GLOBAL[0].0, max)];
            globals::set(st, &keys)?;
        }
    }
    for key in CONNTRACK_UDP_TIMEOUTS {
        sysctl_set(Some(DUT_NS), key, &CONNTRACK_UDP_TIMEOUT_S.to_string())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nat_drops_from_the_right_what_the_left_did_not_open() {
        for t in [Topology::NAT44, Topology::NAT64, Topology::NAT66] {
            let nat = ruleset(t, "");
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
        assert!(ruleset(Topology::DSLITE, "\tchain b4 { }\n").starts_with("table ip xlat {\n\tchain b4 { }\n\tchain postrouting"));
    }
}
