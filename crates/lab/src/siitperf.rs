//! What siitperf's stateful scripts need to run against a lab DUT (`xlatperf lab up nat44
//! --siitperf-dir DIR`): the settings each script wants in siitperf.conf and its parameter
//! block, and the DUT commands to put where the scripts ssh to their DUT.

use crate::topology::{Topology, STATEFUL_BEFORE_TRIAL, STATEFUL_CONNECTIONS, STATEFUL_COUNT, STATEFUL_DPORT, STATEFUL_SPORT};

/// The notes for `t` (stateful topologies only), as printed by `lab up --siitperf-dir` and
/// written beside the scripts' files.
pub fn script_notes(t: Topology) -> Option<String> {
    t.stateful()?;
    let (s, d) = (STATEFUL_SPORT, STATEFUL_DPORT);
    // Every (source port, destination port) pair once (topology.rs checks the product).
    let combinations = STATEFUL_CONNECTIONS;
    Some(format!(
        "siitperf's stateful scripts against lab {t}

siitperf.conf here has Stateful 1 (Initiator left), Enumerate-ports 3 and Responder-tuples 3
over Fwd-sport {s0}-{s1} x Fwd-dport {d0}-{d1}: {combinations} distinct connections.

What each script wants (set it in siitperf.conf and in the script's parameter block):
  binary-rate-alg.sh-R  (maximum connection establishment rate): siitperf.conf as written;
                        N = M at most {combinations} (each frame of phase 1 a new connection).
  binary-rate-alg.sh-sf (throughput with a stateful DUT): siitperf.conf as written;
                        N = M = {combinations}, so that phase 2's pseudorandom ports meet only
                        connections phase 1 made; R safely below the connection
                        establishment rate.
  cttc.sh               (connection tracking table capacity): in siitperf.conf
                        'Forward 0' (the validation is the Responder's alone: with the
                        Initiator sending too, phase 2 opens connections of its own) and
                        'Responder-tuples 1' (the validation reads every entry once, in order);
                        C0 and every size it tries at most {combinations}.

DUT commands, for the scripts' ssh lines (run as root on this host):
  empty the connection table (startcmd, stopcmd; before every trial):
      {flush}
  count its entries (countcmd):
      {count}
  its size (the cttc.sh DUT's conntrack table): xlatperf lab up {t} --conntrack-max SIZE
  rebootcmd, rsscmd, lladdrcmd: true (nothing to do: lab up set the DUT up)
",
        s0 = s.0,
        s1 = s.1,
        d0 = d.0,
        d1 = d.1,
        flush = STATEFUL_BEFORE_TRIAL,
        count = STATEFUL_COUNT,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_for_the_stateful_topologies_only() {
        assert!(script_notes(Topology::ROUTER4).is_none());
        assert!(script_notes(Topology::SIIT).is_none());
        let n = script_notes(Topology::NAT44).expect("nat44");
        for want in [
            "Fwd-sport 10000-10999 x Fwd-dport 1-1000: 1000000 distinct connections",
            "'Forward 0'",
            "'Responder-tuples 1'",
            "ip netns exec xlat-dut conntrack -F",
            "ip netns exec xlat-dut conntrack -C",
            "xlatperf lab up nat44 --conntrack-max SIZE",
        ] {
            assert!(n.contains(want), "{want}: {n}");
        }
        assert!(script_notes(Topology::NAT64).is_some_and(|n| n.contains("lab nat64")));
    }
}
