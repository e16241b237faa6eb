//! Where the lab's parts run: the DUT's packet processing on the DUT's CPUs, the tester's
//! workers and its receive path on the others.
//!
//! A veth end hands a frame to its peer with `netif_rx` on the CPU that sent it, so without
//! steering the kernel DUT (routing, nftables, conntrack, the AFTR's tc programs) runs inside
//! the tester sender's own system call, on the tester's CPU, and a lab figure measures both
//! together. The lab steers with RPS: every receive queue of a DUT-side veth end (`xlat-dl`,
//! `xlat-dr`, and the CLAT's `xlat-cl`, `xlat-cr`) gets the DUT's CPUs in its `rps_cpus`, so a
//! frame the tester sends is queued to the DUT CPU's backlog and processed there; the tester's
//! two ends get the tester's CPUs, so the DUT's output is received on the tester's side. TAYGA
//! (a user-space DUT) is pinned to the DUT's CPUs. docs/lab.md says why RPS (measured against
//! threaded NAPI). This module chooses the CPUs; `steer` applies and reads the steering.

use serde::{Deserialize, Serialize};

use crate::error::LabError;

/// The DUT's CPUs and the tester's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Placement {
    pub dut: Vec<usize>,
    pub tester: Vec<usize>,
    /// The DUT's kernel processing is steered to `dut` (RPS); `false` with `--no-steering`
    /// (it then runs where the frames arrive, the tester's CPU: for comparisons only).
    pub steered: bool,
}

impl Placement {
    /// The placement on a machine whose CPUs are `online`: the DUT on `dut` (`None`: the
    /// highest CPU), the tester on the rest. `None` when there is one CPU (nothing to split).
    pub fn choose(dut: Option<&[usize]>, online: &[usize], steered: bool) -> Result<Option<Placement>, LabError> {
        let dut: Vec<usize> = match dut {
            Some(list) => {
                if let Some(c) = list.iter().find(|c| !online.contains(c)) {
                    return Err(LabError::InvalidInput(format!(
                        "--dut-cpus: CPU {c} is not one this process may use ({})",
                        xlat_trial::load::cpu_list(online)
                    )));
                }
                list.to_vec()
            }
            None if online.len() < 2 => return Ok(None),
            None => online.iter().max().into_iter().copied().collect(),
        };
        let tester: Vec<usize> = online.iter().copied().filter(|c| !dut.contains(c)).collect();
        if dut.is_empty() || tester.is_empty() {
            return Err(LabError::InvalidInput(format!(
                "--dut-cpus {}: the DUT and the tester each need a CPU of their own (this process may use {})",
                xlat_trial::load::cpu_list(&dut),
                xlat_trial::load::cpu_list(online)
            )));
        }
        Ok(Some(Placement { dut, tester, steered }))
    }

    /// The cores of the tester's workers: the left port's (its sender and its receiver) on the
    /// first tester CPU, the right port's on the second (the first again when there is only
    /// one: then all four roles share one thread).
    pub fn tester_roles(&self) -> (usize, usize) {
        let first = self.tester.first().copied().unwrap_or(0);
        (first, self.tester.get(1).copied().unwrap_or(first))
    }

    /// "DUT CPU 1, tester CPU 0" for messages and the configuration's comment.
    pub fn describe(&self) -> String {
        format!(
            "DUT CPU {}{}, tester CPU {}",
            xlat_trial::load::cpu_list(&self.dut),
            if self.steered {
                ""
            } else {
                " (not steered: the kernel DUT runs on the sending CPU)"
            },
            xlat_trial::load::cpu_list(&self.tester)
        )
    }
}

/// The CPUs this process may run on.
pub fn online_cpus() -> Vec<usize> {
    allowed_cpus("self").unwrap_or_else(|| (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect())
}

/// The CPUs process `pid` ("self", or a number) may run on: `Cpus_allowed_list` of
/// /proc/PID/status; `None` when it cannot be read.
pub(crate) fn allowed_cpus(pid: &str) -> Option<Vec<usize>> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let list = text.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?;
    xlat_trial::load::parse_cpu_list(list.trim()).ok()
}

/// A CPU set as the kernel's bitmap files take it (`rps_cpus`): hexadecimal, 32 bits per
/// comma-separated group, the highest group first. `{1}` -> "2", `{0, 33}` -> "2,00000001".
pub fn cpu_mask(cpus: &[usize]) -> String {
    let groups = cpus.iter().max().map_or(1, |m| m / 32 + 1);
    let mut words = vec![0u32; groups];
    for &c in cpus {
        words[c / 32] |= 1 << (c % 32);
    }
    let mut out: Vec<String> = Vec::new();
    for (i, w) in words.iter().enumerate().rev() {
        out.push(if i + 1 == groups { format!("{w:x}") } else { format!("{w:08x}") });
    }
    out.join(",")
}

/// The CPUs of a kernel bitmap ("00000002", "2,00000001"); `None` if it is not one.
pub fn parse_cpu_mask(text: &str) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    for (i, g) in text.trim().split(',').rev().enumerate() {
        let w = u32::from_str_radix(g, 16).ok()?;
        cpus.extend((0..32).filter(|b| w & (1 << b) != 0).map(|b| i * 32 + b));
    }
    Some(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_as_the_kernel_writes_them() {
        assert_eq!(cpu_mask(&[1]), "2");
        assert_eq!(cpu_mask(&[0, 1, 2, 3]), "f");
        assert_eq!(cpu_mask(&[0, 33]), "2,00000001");
        assert_eq!(parse_cpu_mask("00000002"), Some(vec![1]));
        assert_eq!(parse_cpu_mask("2,00000001"), Some(vec![0, 33]));
        assert_eq!(parse_cpu_mask("0"), Some(vec![]));
        assert_eq!(parse_cpu_mask("zz"), None);
        for set in [vec![5], vec![0, 31, 32, 63, 64]] {
            assert_eq!(parse_cpu_mask(&cpu_mask(&set)), Some(set));
        }
    }

    #[test]
    fn the_dut_gets_the_highest_cpu_by_default() {
        let two = Placement::choose(None, &[0, 1], true).unwrap().unwrap();
        assert_eq!((two.dut.clone(), two.tester.clone()), (vec![1], vec![0]));
        assert_eq!(two.tester_roles(), (0, 0));
        let eight: Vec<usize> = (0..8).collect();
        let p = Placement::choose(None, &eight, true).unwrap().unwrap();
        assert_eq!((p.dut.clone(), p.tester.len(), p.tester_roles()), (vec![7], 7, (0, 1)));
        let p = Placement::choose(Some(&[2, 3]), &eight, true).unwrap().unwrap();
        assert_eq!(p.tester, vec![0, 1, 4, 5, 6, 7]);
        assert_eq!(Placement::choose(None, &[0], true).unwrap(), None);
        // Every CPU for the DUT, or one that is not there: refused, naming the CPUs.
        let e = Placement::choose(Some(&[0, 1]), &[0, 1], true).unwrap_err().to_string();
        assert!(e.contains("each need a CPU of their own") && e.contains("0-1"), "{e}");
        let e = Placement::choose(Some(&[9]), &[0, 1], true).unwrap_err().to_string();
        assert!(e.contains("CPU 9"), "{e}");
    }
}
