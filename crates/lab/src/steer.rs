//! Steering each veth end's receive processing to the CPUs it belongs on (RPS, see
//! `placement`), and reading back where it runs now (`lab status`).

use crate::cmd::run_with_input;
use crate::error::LabError;
use crate::placement::{cpu_mask, parse_cpu_mask, Placement};
use crate::topology::*;

/// Every veth end of topology `t` with the CPUs its receive processing belongs on.
pub(crate) fn steering(t: Topology, p: &Placement) -> Vec<(&'static str, &'static str, Vec<usize>)> {
    let mut ends = vec![(TESTER_NS, LEFT_PORT, p.tester.clone()), (TESTER_NS, RIGHT_PORT, p.tester.clone())];
    let (left_ns, left_dev) = t.left_peer();
    ends.push((left_ns, left_dev, p.dut.clone()));
    ends.push((DUT_NS, DUT_RIGHT, p.dut.clone()));
    if t.has_clat() {
        ends.push((CLAT_NS, CLAT_RIGHT, p.dut.clone()));
        ends.push((DUT_NS, DUT_LEFT, p.dut.clone()));
    }
    ends
}

/// The `rps_cpus` files of interface `dev` in namespace `ns` (one per receive queue), read
/// through `ip netns exec`, which mounts that namespace's /sys.
fn rps_files(ns: &str, dev: &str) -> Result<Vec<String>, LabError> {
    let out = run_with_input("ip", &["netns", "exec", ns, "ls", &format!("/sys/class/net/{dev}/queues")], None)?;
    Ok(out
        .split_whitespace()
        .filter(|q| q.starts_with("rx-"))
        .map(|q| format!("/sys/class/net/{dev}/queues/{q}/rps_cpus"))
        .collect())
}

/// Steer every receive queue of every veth end of `t` as [`steering`] says.
pub(crate) fn apply(t: Topology, p: &Placement) -> Result<(), LabError> {
    if !p.steered {
        return Ok(());
    }
    for (ns, dev, cpus) in steering(t, p) {
        let mask = format!("{}\n", cpu_mask(&cpus));
        for file in rps_files(ns, dev)? {
            run_with_input("ip", &["netns", "exec", ns, "tee", &file], Some(&mask))?;
        }
    }
    Ok(())
}

/// A veth end's receive processing: where it runs now and where [`steering`] puts it.
pub(crate) struct EndCpus {
    pub ns: &'static str,
    pub dev: &'static str,
    /// The CPUs of its receive queues' `rps_cpus` (empty: not steered).
    pub now: Vec<usize>,
    pub placed: Vec<usize>,
}

/// Where each veth end's receive processing runs now, beside where it was placed.
pub(crate) fn read(t: Topology, p: &Placement) -> Result<Vec<EndCpus>, LabError> {
    let mut out = Vec::new();
    for (ns, dev, placed) in steering(t, p) {
        let mut cpus = Vec::new();
        for file in rps_files(ns, dev)? {
            let text = run_with_input("ip", &["netns", "exec", ns, "cat", &file], None)?;
            cpus.extend(parse_cpu_mask(&text).unwrap_or_default());
        }
        cpus.sort_unstable();
        cpus.dedup();
        out.push(EndCpus {
            ns,
            dev,
            now: cpus,
            placed,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dut_end_is_steered_to_the_dut() {
        let p = Placement::choose(None, &[0, 1], true).unwrap().unwrap();
        for t in Topology::ALL {
            let ends = steering(t, &p);
            let dut: Vec<&str> = ends.iter().filter(|e| e.2 == vec![1]).map(|e| e.1).collect();
            let tester: Vec<&str> = ends.iter().filter(|e| e.2 == vec![0]).map(|e| e.1).collect();
            assert_eq!(tester, vec![LEFT_PORT, RIGHT_PORT], "{t}");
            let want: &[&str] = if t.has_clat() {
                &[CLAT_LEFT, DUT_RIGHT, CLAT_RIGHT, DUT_LEFT]
            } else {
                &[DUT_LEFT, DUT_RIGHT]
            };
            assert_eq!(dut, want, "{t}");
        }
    }
}
