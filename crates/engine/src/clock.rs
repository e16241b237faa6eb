//! Time: the CPU's invariant TSC where there is one, calibrated against CLOCK_MONOTONIC_RAW at
//! start; otherwise CLOCK_MONOTONIC_RAW itself (in nanoseconds).

use std::time::{Duration, Instant};

/// A calibrated tick counter.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    /// Ticks per second.
    pub hz: u64,
    tsc: bool,
}

fn monotonic_raw_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid timespec; CLOCK_MONOTONIC_RAW always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_RAW, &mut ts) };
    (ts.tv_sec as u64).wrapping_mul(1_000_000_000).wrapping_add(ts.tv_nsec as u64)
}

#[cfg(target_arch = "x86_64")]
#[inline]
fn rdtsc() -> u64 {
    // SAFETY: RDTSC is available on every x86_64 CPU.
    unsafe { core::arch::x86_64::_rdtsc() }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn rdtsc() -> u64 {
    monotonic_raw_ns()
}

fn has_invariant_tsc() -> bool {
    cfg!(target_arch = "x86_64")
        && std::fs::read_to_string("/proc/cpuinfo")
            .map(|s| {
                s.lines()
                    .find(|l| l.starts_with("flags"))
                    .is_some_and(|l| l.contains(" constant_tsc") && l.contains(" nonstop_tsc"))
            })
            .unwrap_or(false)
}

impl Clock {
    /// Calibrate: the TSC against CLOCK_MONOTONIC_RAW over about 50 ms (the median of five
    /// 10 ms windows), or the raw clock when the CPU has no invariant TSC.
    pub fn calibrate() -> Clock {
        if !has_invariant_tsc() {
            return Clock {
                hz: 1_000_000_000,
                tsc: false,
            };
        }
        let mut est: Vec<u64> = (0..5)
            .map(|_| {
                let (n0, t0) = (monotonic_raw_ns(), rdtsc());
                let start = Instant::now();
                while start.elapsed() < Duration::from_millis(10) {
                    std::hint::spin_loop();
                }
                let (n1, t1) = (monotonic_raw_ns(), rdtsc());
                let dn = n1.saturating_sub(n0).max(1);
                ((t1.saturating_sub(t0)) as u128 * 1_000_000_000 / dn as u128) as u64
            })
            .collect();
        est.sort_unstable();
        Clock {
            hz: est[2].max(1),
            tsc: true,
        }
    }

    /// A clock of `hz` ticks per second that reads CLOCK_MONOTONIC_RAW, for tests of tick
    /// arithmetic (use `hz` = 1e9 for real readings).
    pub fn fixed_hz(hz: u64) -> Clock {
        Clock { hz: hz.max(1), tsc: false }
    }

    /// The current tick count.
    #[inline]
    pub fn now(&self) -> u64 {
        if self.tsc {
            rdtsc()
        } else {
            monotonic_raw_ns()
        }
    }

    /// Ticks in `s` seconds.
    pub fn ticks(&self, s: f64) -> u64 {
        (s * self.hz as f64).round() as u64
    }

    pub fn ticks_ms(&self, ms: u64) -> u64 {
        (ms as u128 * self.hz as u128 / 1000) as u64
    }

    /// Nanoseconds in `ticks`.
    #[inline]
    pub fn ns(&self, ticks: u64) -> u64 {
        (ticks as u128 * 1_000_000_000 / self.hz as u128) as u64
    }

    pub fn secs(&self, ticks: u64) -> f64 {
        ticks as f64 / self.hz as f64
    }

    pub fn is_tsc(&self) -> bool {
        self.tsc
    }
}

fn realtime_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid timespec; CLOCK_REALTIME always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    (ts.tv_sec as u64).wrapping_mul(1_000_000_000).wrapping_add(ts.tv_nsec as u64)
}

/// CLOCK_REALTIME nanoseconds (the kernel's stamps of frames) as ticks of a [`Clock`]: one
/// reading of both clocks, taken once per trial, and the clock's rate. A difference of two
/// mapped stamps is as exact as the two stamps (to the rate's calibration, parts per million).
#[derive(Debug, Clone, Copy)]
pub struct RealtimeMap {
    ns0: u64,
    tick0: u64,
    /// ticks = ns * mul >> 32
    mul: u128,
}

impl RealtimeMap {
    /// Read both clocks: of five readings, the one whose two tick reads around the realtime
    /// read lay closest (a reading that was not interrupted).
    pub fn take(clock: &Clock) -> RealtimeMap {
        let (mut best, mut ns0, mut tick0) = (u64::MAX, 0, 0);
        for _ in 0..5 {
            let a = clock.now();
            let ns = realtime_ns();
            let b = clock.now();
            if b.saturating_sub(a) < best {
                (best, ns0, tick0) = (b.saturating_sub(a), ns, a + (b.saturating_sub(a)) / 2);
            }
        }
        RealtimeMap {
            ns0,
            tick0,
            mul: (u128::from(clock.hz) << 32) / 1_000_000_000,
        }
    }

    /// The tick count at which CLOCK_REALTIME read `ns` (0 for times before the clock's
    /// start).
    #[inline]
    pub fn ticks(&self, ns: u64) -> u64 {
        if ns >= self.ns0 {
            self.tick0.saturating_add(((u128::from(ns - self.ns0) * self.mul) >> 32) as u64)
        } else {
            self.tick0.saturating_sub(((u128::from(self.ns0 - ns) * self.mul) >> 32) as u64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn realtime_stamps_map_onto_the_ticks_read_at_the_same_moment() {
        let c = Clock::calibrate();
        let m = RealtimeMap::take(&c);
        std::thread::sleep(Duration::from_millis(20));
        let (a, ns, b) = (c.now(), realtime_ns(), c.now());
        let t = m.ticks(ns);
        // Within 50 us of the ticks read around it (a slow read on a busy machine aside, the
        // error is the read's own length plus parts per million of 20 ms).
        let slack = c.ticks(50e-6);
        assert!(t + slack >= a && t <= b + slack, "{a} <= {t} <= {b}");
        // Differences keep their length: 1 ms of realtime is 1 ms of ticks.
        let ms = c.ns(m.ticks(ns + 1_000_000) - t);
        assert!(ms.abs_diff(1_000_000) <= 2, "{ms}");
        assert!(m.ticks(ns - 1_000_000) < t);
    }

    #[test]
    fn calibration_tracks_the_monotonic_clock() {
        let c = Clock::calibrate();
        let (t0, n0) = (c.now(), monotonic_raw_ns());
        std::thread::sleep(Duration::from_millis(50));
        let (t1, n1) = (c.now(), monotonic_raw_ns());
        let by_clock = c.ns(t1 - t0) as f64;
        let by_ref = (n1 - n0) as f64;
        // Within 2 %: generous for a shared machine; a wrong unit would be off by orders.
        assert!((by_clock / by_ref - 1.0).abs() < 0.02, "{by_clock} vs {by_ref}");
    }
}
