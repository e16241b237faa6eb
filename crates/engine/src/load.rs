//! Reading the CPUs' load from the kernel's own accounting: `/proc/stat` (time per CPU in
//! user, system, softirq, idle, ...) and `/proc/softirqs` (NET_RX runs per CPU), once before
//! and once after a trial.

use xlat_trial::{CpuLoad, LoadReport};

/// One CPU's counters at one moment, in USER_HZ ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct CpuTimes {
    /// idle + iowait: exact where the kernel stops the tick when idle (NOHZ), which counts
    /// idle time from the clock, not by sampling.
    idle: u64,
    /// The non-idle states' ticks (user, nice, system, irq, softirq, steal), sampled once per
    /// tick: under NOHZ a CPU that wakes briefly (to process a backlog) is mostly not sampled,
    /// so these undercount; only their proportions are used.
    sampled: u64,
    softirq: u64,
    /// Time the hypervisor ran something else while this CPU wanted to run (its steal clock,
    /// accounted at each tick: not sampled like the others).
    steal: u64,
    net_rx: u64,
}

/// Every CPU's counters at one moment, indexed by CPU number.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    cpus: Vec<Option<CpuTimes>>,
    at: Option<std::time::Instant>,
}

/// The kernel's USER_HZ, the unit of /proc/stat.
fn user_hz() -> f64 {
    // SAFETY: sysconf has no memory preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if hz > 0 {
        hz as f64
    } else {
        100.0
    }
}

impl Snapshot {
    /// Read `/proc/stat` and `/proc/softirqs` now; an empty snapshot (every load then unknown)
    /// where they cannot be read.
    pub fn take() -> Snapshot {
        let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
        let softirqs = std::fs::read_to_string("/proc/softirqs").unwrap_or_default();
        let mut s = Snapshot::parse(&stat, &softirqs);
        s.at = Some(std::time::Instant::now());
        s
    }

    /// The counters in the texts of `/proc/stat` and `/proc/softirqs`. Lines it does not
    /// understand are skipped.
    pub fn parse(stat: &str, softirqs: &str) -> Snapshot {
        let mut cpus: Vec<Option<CpuTimes>> = Vec::new();
        for line in stat.lines() {
            let mut words = line.split_whitespace();
            let Some(cpu) = words
                .next()
                .and_then(|w| w.strip_prefix("cpu"))
                .and_then(|n| n.parse::<usize>().ok())
            else {
                continue;
            };
            // user nice system idle iowait irq softirq steal (guest time is inside user).
            let v: Vec<u64> = words.take(8).map_while(|w| w.parse().ok()).collect();
            if v.len() < 7 || cpu > xlat_trial::load::MAX_CPU {
                continue;
            }
            if cpus.len() <= cpu {
                cpus.resize(cpu + 1, None);
            }
            let idle = v[3] + v[4];
            cpus[cpu] = Some(CpuTimes {
                idle,
                sampled: v.iter().sum::<u64>() - idle,
                softirq: v[6],
                steal: v.get(7).copied().unwrap_or(0),
                net_rx: 0,
            });
        }
        let mut lines = softirqs.lines();
        let columns: Vec<Option<usize>> = lines
            .next()
            .unwrap_or("")
            .split_whitespace()
            .map(|w| w.strip_prefix("CPU").and_then(|n| n.parse().ok()))
            .collect();
        for line in lines {
            let mut words = line.split_whitespace();
            if words.next() != Some("NET_RX:") {
                continue;
            }
            for (col, w) in words.enumerate() {
                let (Some(Some(cpu)), Ok(n)) = (columns.get(col), w.parse::<u64>()) else {
                    continue;
                };
                if let Some(Some(t)) = cpus.get_mut(*cpu) {
                    t.net_rx = n;
                }
            }
        }
        Snapshot { cpus, at: None }
    }

    /// What `cpus` did from `self` to `later`, `ticks` USER_HZ ticks of wall-clock time apart:
    /// busy is the time not idle (exact), softirq the busy time's share of softirq among the
    /// sampled ticks. `None` when a CPU is missing from either or no time passed.
    pub fn load(&self, later: &Snapshot, cpus: &[usize], ticks: f64) -> Option<CpuLoad> {
        if cpus.is_empty() || ticks <= 0.0 {
            return None;
        }
        let (mut busy, mut softirq, mut net_rx, mut busy_max, mut steal) = (0.0f64, 0.0f64, 0u64, 0.0f64, 0.0f64);
        for &c in cpus {
            let a = self.cpus.get(c).copied().flatten()?;
            let b = later.cpus.get(c).copied().flatten()?;
            let idle = b.idle.saturating_sub(a.idle) as f64;
            let share = (1.0 - idle / ticks).clamp(0.0, 1.0);
            let sampled = b.sampled.saturating_sub(a.sampled);
            if sampled > 0 {
                softirq += share * b.softirq.saturating_sub(a.softirq) as f64 / sampled as f64;
            }
            busy += share;
            steal += (b.steal.saturating_sub(a.steal) as f64 / ticks).clamp(0.0, 1.0);
            busy_max = busy_max.max(share);
            net_rx += b.net_rx.saturating_sub(a.net_rx);
        }
        let n = cpus.len() as f64;
        let mut cpus = cpus.to_vec();
        cpus.sort_unstable();
        cpus.dedup();
        Some(CpuLoad {
            cpus,
            busy: busy / n,
            busy_max,
            softirq: softirq / n,
            steal: steal / n,
            net_rx,
        })
    }

    /// The load report from `self` to `later` (both taken): the DUT's CPUs (if any) and the
    /// tester's.
    pub fn report(&self, later: &Snapshot, dut: &[usize], tester: &[usize]) -> Option<LoadReport> {
        let seconds = later.at?.saturating_duration_since(self.at?).as_secs_f64();
        let ticks = seconds * user_hz();
        Some(LoadReport {
            seconds,
            dut: self.load(later, dut, ticks),
            tester: self.load(later, tester, ticks)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // 200 ticks apart. CPU 0: 100 idle, 10 stolen; CPU 1: 20 idle, 10 ticks sampled busy, 8 of them softirq.
    const STAT_A: &str = "cpu  300 0 200 1000 0 0 100 0 0 0\n\
                          cpu0 100 0 100 700 0 0 0 0 0 0\n\
                          cpu1 200 0 100 300 0 0 100 0 0 0\n\
                          intr 12345\n";
    const STAT_B: &str = "cpu  300 0 200 1000 0 0 100 0 0 0\n\
                          cpu0 150 0 150 800 0 0 0 10 0 0\n\
                          cpu1 200 0 102 315 5 0 108 0 0 0\n";
    const SOFT_A: &str = "                    CPU0       CPU1\n\
                          HI:          0          0\n\
                          NET_RX:        10        20\n";
    const SOFT_B: &str = "                    CPU0       CPU1\n\
                          NET_RX:        14     10020\n";

    #[test]
    fn loads_from_the_kernels_counters() {
        let (a, b) = (Snapshot::parse(STAT_A, SOFT_A), Snapshot::parse(STAT_B, SOFT_B));
        // CPU 1: busy 180 of 200 ticks (the idle time is exact; the sampled 10 are not the
        // busy time), 8 of the 10 sampled in softirq: 0.9 x 0.8.
        let dut = a.load(&b, &[1], 200.0).unwrap();
        assert_eq!(dut.cpus, vec![1]);
        assert!((dut.busy - 0.9).abs() < 1e-9, "{dut:?}");
        assert!((dut.softirq - 0.72).abs() < 1e-9, "{dut:?}");
        assert_eq!(dut.net_rx, 10_000);
        // CPU 0: 100 idle of 200.
        let tester = a.load(&b, &[0], 200.0).unwrap();
        assert!((tester.busy - 0.5).abs() < 1e-9 && tester.softirq == 0.0 && tester.net_rx == 4);
        // 10 ticks of its 200 stolen by the hypervisor (none of CPU 1's).
        assert!((tester.steal - 0.05).abs() < 1e-9 && dut.steal == 0.0, "{tester:?}");
        // Both together: the mean, and the busiest.
        let both = a.load(&b, &[1, 0], 200.0).unwrap();
        assert!((both.busy - 0.7).abs() < 1e-9 && (both.busy_max - 0.9).abs() < 1e-9);
        assert_eq!(both.cpus, vec![0, 1]);
        // A CPU the kernel does not list, or no time: unknown, not zero.
        assert_eq!(a.load(&b, &[2], 200.0), None);
        assert_eq!(a.load(&b, &[], 200.0), None);
        assert_eq!(a.load(&b, &[0], 0.0), None);
        // Snapshots without a time (parsed, not taken) give no report.
        assert_eq!(a.report(&b, &[1], &[0]), None);
    }

    #[test]
    fn garbage_is_no_load() {
        let s = Snapshot::parse("cpu0 x y\ncpu99999999999 1 2 3 4 5 6 7\n", "NET_RX: 1 2");
        assert_eq!(s.load(&s, &[0], 100.0), None);
        // This machine's own files parse, with CPU 0 in them, over a busy 50 ms of this thread.
        let a = Snapshot::take();
        let spin = std::time::Instant::now();
        while spin.elapsed() < std::time::Duration::from_millis(50) {
            std::hint::spin_loop();
        }
        let r = a.report(&Snapshot::take(), &[], &[0]).unwrap();
        assert!(r.dut.is_none() && r.seconds >= 0.05 && r.tester.cpus == vec![0], "{r:?}");
        assert!(r.summary().starts_with("tester CPU 0 "), "{}", r.summary());
    }
}
