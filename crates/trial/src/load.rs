//! The load of the CPUs over a trial: the DUT's (when it runs on this host, on CPUs of its own)
//! and the tester's, so that a result says whether the DUT was busy and the tester was not.

use serde::{Deserialize, Serialize};

/// What a set of CPUs did over a trial, from the kernel's own accounting (`/proc/stat`,
/// `/proc/softirqs`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuLoad {
    /// The CPUs, in order. Empty for a DUT elsewhere whose `dut.load` command gave `busy` (and
    /// `busy_max` the same): its softirq share and NET_RX runs are then not known (0).
    pub cpus: Vec<usize>,
    /// The share of their time (all of them together, 0 to 1) not idle and not waiting for I/O.
    pub busy: f64,
    /// The busiest CPU's busy share.
    pub busy_max: f64,
    /// The share of their time spent in softirqs (packet processing in the kernel: a kernel
    /// DUT's forwarding, a tester's receive path).
    pub softirq: f64,
    /// The share of their time (0 to 1) the hypervisor gave to something else while they
    /// wanted to run (`/proc/stat` steal): a shared host's pauses, as far as it counts them
    /// (on this project's VMs little of the 20-50 ms pauses shows here).
    #[serde(default)]
    pub steal: f64,
    /// NET_RX softirqs run on them (the kernel's receive processing: each is a poll of up to
    /// 64 frames of a device or a backlog).
    pub net_rx: u64,
}

/// The CPUs' load over one trial: from the start of its sending to the end of its timeout.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadReport {
    /// Seconds between the two readings.
    pub seconds: f64,
    /// The DUT's CPUs (configuration `dut.cpus`: a DUT on this host, the lab's); `None` when
    /// not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dut: Option<CpuLoad>,
    /// The CPUs of the tester's workers.
    pub tester: CpuLoad,
}

impl LoadReport {
    /// "DUT CPU 1 93 % busy (softirq 88 %, steal 0.0 %), tester CPU 0 100 %", for a human.
    pub fn summary(&self) -> String {
        let one = |who: &str, l: &CpuLoad| {
            if l.cpus.is_empty() {
                return format!("{who} {:.0} % busy (its dut.load)", 100.0 * l.busy);
            }
            format!(
                "{who} CPU {} {:.0} % busy (softirq {:.0} %, steal {:.1} %)",
                cpu_list(&l.cpus),
                100.0 * l.busy,
                100.0 * l.softirq,
                100.0 * l.steal
            )
        };
        match &self.dut {
            Some(d) => format!("{}, {}", one("DUT", d), one("tester", &self.tester)),
            None => one("tester", &self.tester),
        }
    }
}

/// A CPU list as Linux writes one ("0-3,6").
pub fn cpu_list(cpus: &[usize]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        out.push(if end == start {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    out.join(",")
}

/// The most CPUs a list may name (Linux's default `NR_CPUS` ceiling for x86-64 is 8192; the
/// configuration's CPU keys go to 1023).
pub const MAX_CPU: usize = 1023;

/// Why a CPU list cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CpuListError {
    #[error("`{0}` is not a CPU number")]
    NotANumber(String),
    #[error("CPU {0} is above {MAX_CPU}")]
    AboveMax(usize),
    #[error("`{0}`: the range runs backwards")]
    Backwards(String),
    #[error("`{0}`: an empty entry")]
    EmptyEntry(String),
}

/// Parse a CPU list as Linux writes one ("1", "0-3,6"); `Err` says what is wrong.
pub fn parse_cpu_list(text: &str) -> Result<Vec<usize>, CpuListError> {
    let mut cpus = Vec::new();
    for part in text.split(',').map(str::trim) {
        let num = |s: &str| -> Result<usize, CpuListError> {
            let n: usize = s.trim().parse().map_err(|_| CpuListError::NotANumber(s.to_string()))?;
            if n > MAX_CPU {
                return Err(CpuListError::AboveMax(n));
            }
            Ok(n)
        };
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(CpuListError::Backwards(part.to_string()));
                }
                cpus.extend(a..=b);
            }
            None if part.is_empty() => return Err(CpuListError::EmptyEntry(text.to_string())),
            None => cpus.push(num(part)?),
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_round_trip() {
        for (text, cpus) in [("1", vec![1]), ("0-3,6", vec![0, 1, 2, 3, 6]), ("5,1-2", vec![1, 2, 5])] {
            assert_eq!(parse_cpu_list(text).unwrap(), cpus, "{text}");
        }
        assert_eq!(cpu_list(&[6, 0, 1, 2, 3]), "0-3,6");
        assert_eq!(cpu_list(&[1]), "1");
        assert_eq!(cpu_list(&[1, 3]), "1,3");
        for bad in ["", "a", "3-1", "1,,2", "2000", "1-"] {
            assert!(parse_cpu_list(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_summary_names_the_cpus_or_the_duts_own_command() {
        let tester = CpuLoad {
            cpus: vec![0],
            busy: 1.0,
            ..CpuLoad::default()
        };
        let here = LoadReport {
            seconds: 1.0,
            dut: Some(CpuLoad {
                cpus: vec![1],
                busy: 0.93,
                softirq: 0.88,
                ..CpuLoad::default()
            }),
            tester: tester.clone(),
        };
        assert_eq!(
            here.summary(),
            "DUT CPU 1 93 % busy (softirq 88 %, steal 0.0 %), tester CPU 0 100 % busy (softirq 0 %, steal 0.0 %)"
        );
        let elsewhere = LoadReport {
            dut: Some(CpuLoad {
                busy: 0.425,
                ..CpuLoad::default()
            }),
            ..here
        };
        assert_eq!(
            elsewhere.summary(),
            "DUT 42 % busy (its dut.load), tester CPU 0 100 % busy (softirq 0 %, steal 0.0 %)"
        );
    }
}
