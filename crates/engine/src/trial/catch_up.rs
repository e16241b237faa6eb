//! What a sender does after falling behind its schedule, and what it remembers of it.
//!
//! - [`Pace`]: a token bucket (the ATM Forum's GCRA, as a theoretical arrival time) of rate
//!   r x (1 + percent / 100) and a depth of the trial's lag bound in frames. A sender on
//!   schedule never meets it; one that a pause left behind sends at most the depth at once and
//!   then catches up at that pace, so a DUT with that much headroom never queues the pause's
//!   frames (siitperf, and xlatperf without a bound, send every late frame at once).
//! - [`Meter`]: the same bucket without a depth, only measuring: the most frames the sender put
//!   on the wire above the pace at once (`catch_up_burst` in the report).
//! - [`Windows`]: the frames sent from the moment the sender fell further behind than the
//!   bound until it was back on schedule, in fixed memory: the frames whose loss may be the
//!   tester's, and whose delays include the queue its catch-up built.

/// Fractional bits of the ticks a frame takes at the pace.
const FRAC: u32 = 16;

/// A token bucket in ticks << FRAC: `tat` is when the bucket would be empty again.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    /// Ticks << FRAC per frame at the pace.
    step: u128,
    tat: u128,
}

impl Bucket {
    /// A bucket filled at `rate` frames/s plus `percent`, on a clock of `hz`.
    fn at_pace(hz: u64, rate: u64, percent: u64) -> Bucket {
        let frames_per_s = u128::from(rate) * u128::from(100 + percent) / 100;
        Bucket {
            step: ((u128::from(hz) << FRAC) / frames_per_s.max(1)).max(1),
            tat: 0,
        }
    }

    /// `n` frames went out at `now`.
    #[inline]
    fn sent(&mut self, now: u64, n: u64) {
        let now = u128::from(now) << FRAC;
        self.tat = self.tat.max(now) + u128::from(n) * self.step;
    }

    /// Frames above the pace now (what the bucket holds).
    #[inline]
    fn above(&self, now: u64) -> u64 {
        let now = u128::from(now) << FRAC;
        u64::try_from(self.tat.saturating_sub(now) / self.step).unwrap_or(u64::MAX)
    }
}

/// The catch-up pace of one sender.
#[derive(Debug, Clone, Copy)]
pub(super) struct Pace {
    bucket: Bucket,
    depth: u64,
}

impl Pace {
    /// At `rate` frames/s plus `percent`, on a clock of `hz`, at most `depth` frames at once.
    pub(super) fn new(hz: u64, rate: u64, percent: u64, depth: u64) -> Pace {
        Pace {
            bucket: Bucket::at_pace(hz, rate, percent),
            depth: depth.max(1),
        }
    }

    /// How many frames may go out at `now`.
    #[inline]
    pub(super) fn allowed(&self, now: u64) -> u64 {
        self.depth.saturating_sub(self.bucket.above(now))
    }

    #[inline]
    pub(super) fn sent(&mut self, now: u64, n: u64) {
        self.bucket.sent(now, n);
    }
}

/// Measures a sender's burstiness against the catch-up pace (see the module's text).
#[derive(Debug, Clone, Copy)]
pub(super) struct Meter {
    bucket: Bucket,
    pub(super) max: u64,
}

impl Meter {
    pub(super) fn new(hz: u64, rate: u64, percent: u64) -> Meter {
        Meter {
            bucket: Bucket::at_pace(hz, rate, percent),
            max: 0,
        }
    }

    /// `n` frames went out at `now`.
    #[inline]
    pub(super) fn sent(&mut self, now: u64, n: u64) {
        self.bucket.sent(now, n);
        self.max = self.max.max(self.bucket.above(now));
    }
}

/// Catch-up windows kept before the rest of a trial counts as one (a sender stalled this often
/// has a worse problem than its figure).
const MAX_WINDOWS: usize = 4096;

/// The catch-up windows of one sender: sequence numbers `[start, end)` sent from the first frame
/// beyond the bound until the sender was back on schedule.
#[derive(Debug, Clone, Default)]
pub(super) struct Windows {
    closed: Vec<(u64, u64)>,
    /// The open window's first frame.
    open: Option<u64>,
    /// Windows opened.
    pub(super) count: u64,
}

impl Windows {
    pub(super) fn new() -> Windows {
        Windows {
            // Reserved whole (64 KiB), so that closing a window never allocates on the send path.
            closed: Vec::with_capacity(MAX_WINDOWS),
            open: None,
            count: 0,
        }
    }

    /// Before sending frame `seq` with the sender `lag` ticks behind: a window opens beyond
    /// `bound` and closes once the lag is at most `on_time`. True when `seq` is inside one.
    #[inline]
    pub(super) fn at(&mut self, seq: u64, lag: u64, bound: u64, on_time: u64) -> bool {
        match self.open {
            None if lag > bound => {
                self.open = Some(seq);
                self.count += 1;
                true
            }
            Some(start) if lag <= on_time && self.closed.len() < MAX_WINDOWS => {
                self.open = None;
                // Within the capacity reserved in `new`: no allocation.
                self.closed.push((start, seq));
                false
            }
            open => open.is_some(),
        }
    }

    /// Whether frame `seq` was sent inside a window (a kernel stamp that came back late).
    pub(super) fn contains(&self, seq: u64) -> bool {
        if self.open.is_some_and(|s| seq >= s) {
            return true;
        }
        self.closed.iter().rev().take(8).any(|&(s, e)| (s..e).contains(&seq))
    }

    /// Take in another queue's windows of the same direction.
    pub(super) fn absorb(&mut self, o: &Windows) {
        self.closed.extend_from_slice(&o.closed);
        if let Some(s) = o.open {
            self.closed.push((s, u64::MAX));
        }
        self.count += o.count;
    }

    /// The ranges whose loss counts against the tester: each window, followed by as many frames
    /// again (at least `drain` frames: the DUT's queue draining after the catch-up), up to
    /// `total`; merged where they overlap, in order.
    pub(super) fn harmed(&self, drain: u64, total: u64) -> Vec<(u64, u64)> {
        let mut v: Vec<(u64, u64)> = self
            .closed
            .iter()
            .copied()
            .chain(self.open.map(|s| (s, u64::MAX)))
            .map(|(s, e)| {
                let end = e.saturating_add(e.saturating_sub(s).max(drain));
                (s.min(total), end.min(total))
            })
            .filter(|(s, e)| s < e)
            .collect();
        v.sort_unstable();
        let mut out: Vec<(u64, u64)> = Vec::with_capacity(v.len());
        for (s, e) in v {
            match out.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => out.push((s, e)),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HZ: u64 = 1_000_000_000;

    #[test]
    fn a_pace_lets_its_depth_out_at_once_then_its_rate() {
        // 10,000 frames/s + 100 % = a frame every 50 us; depth 100.
        let mut p = Pace::new(HZ, 10_000, 100, 100);
        assert_eq!(p.allowed(1_000_000), 100);
        p.sent(1_000_000, 100);
        assert_eq!(p.allowed(1_000_000), 0);
        // 50 us later one frame's room is back, 5 ms later all of it.
        assert_eq!(p.allowed(1_050_000), 1);
        assert_eq!(p.allowed(6_000_000), 100);
        // Over any interval: at most depth + pace x interval frames.
        let (mut t, mut sent) = (10_000_000u64, 0u64);
        while t < 20_000_000 {
            let k = p.allowed(t).min(32);
            p.sent(t, k);
            sent += k;
            t += 7_000;
        }
        assert!(sent <= 100 + 10_000_000 / 50_000 + 1, "{sent}");
        assert!(sent >= 10_000_000 / 50_000, "{sent}");
    }

    #[test]
    fn the_meter_measures_a_burst_above_the_pace() {
        let mut m = Meter::new(HZ, 10_000, 100);
        // On schedule at 10,000 frames/s in bursts of 4: never more than a burst above.
        for i in 0..100 {
            m.sent(i * 400_000, 4);
        }
        assert!(m.max <= 4, "{}", m.max);
        // 300 frames at once after a pause.
        m.sent(60_000_000, 300);
        assert_eq!(m.max, 300);
    }

    #[test]
    fn windows_open_beyond_the_bound_and_close_on_time() {
        let mut w = Windows::new();
        assert!(!w.at(0, 10, 1000, 100));
        assert!(w.at(50, 5000, 1000, 100));
        assert!(w.at(90, 3000, 1000, 100));
        assert!(w.contains(95));
        assert!(!w.at(120, 50, 1000, 100));
        assert!(!w.at(130, 500, 1000, 100), "within the bound: no new window");
        assert!(w.at(1000, 2000, 1000, 100));
        assert_eq!(w.count, 2);
        assert!(w.contains(60) && !w.contains(125) && w.contains(5000));
        // [50, 120) + 70 frames of drain (its own length), [1000, open) to the total.
        assert_eq!(w.harmed(10, 2000), vec![(50, 190), (1000, 2000)]);
        // A drain longer than the window; overlapping ranges merge; another queue's windows.
        let mut o = Windows::new();
        o.at(150, 5000, 1000, 100);
        o.at(160, 0, 1000, 100);
        w.absorb(&o);
        assert_eq!(w.harmed(100, 2000), vec![(50, 260), (1000, 2000)]);
        assert_eq!(w.count, 3);
    }
}
