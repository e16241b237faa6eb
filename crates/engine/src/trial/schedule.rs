//! When each frame of a trial is due (RFC 2544 section 23: frames at a constant rate), and which
//! frames carry latency tags (RFC 8219 section 7.2).

use crate::clock::Clock;
use xlat_trial::spec::TrialSpec;

/// When each frame is due: at `rate`, or with a rate change at `at` ticks, at `rate2` after.
#[derive(Debug, Clone, Copy)]
pub(super) struct Schedule {
    hz: u128,
    r1: u128,
    r2: u128,
    /// Ticks from the start to the rate change (`u64::MAX`: none).
    at: u64,
    /// Frames due before the change.
    n1: u64,
}

impl Schedule {
    pub(super) fn new(spec: &TrialSpec, clock: &Clock) -> Schedule {
        let hz = u128::from(clock.hz);
        let r1 = u128::from(spec.rate.max(1));
        match spec.rate_change {
            Some(c) if c.at_s < spec.duration_s && c.rate > 0 => {
                let at = clock.ticks(c.at_s.max(0.0));
                let n1 = (u128::from(at) * r1).div_ceil(hz) as u64;
                Schedule {
                    hz,
                    r1,
                    r2: u128::from(c.rate),
                    at,
                    n1,
                }
            }
            _ => Schedule {
                hz,
                r1,
                r2: r1,
                at: u64::MAX,
                n1: u64::MAX,
            },
        }
    }

    /// Ticks from the start to frame `i`'s scheduled time.
    #[inline]
    pub(super) fn time_of(&self, i: u64) -> u64 {
        if i < self.n1 {
            (u128::from(i) * self.hz / self.r1) as u64
        } else {
            self.at + (u128::from(i - self.n1) * self.hz / self.r2) as u64
        }
    }

    /// How many frames are due `elapsed` ticks after the start.
    #[inline]
    pub(super) fn due(&self, elapsed: u64) -> u64 {
        if elapsed < self.at {
            (u128::from(elapsed) * self.r1 / self.hz) as u64 + 1
        } else {
            self.n1 + (u128::from(elapsed - self.at) * self.r2 / self.hz) as u64 + 1
        }
    }
}

/// Latency tags: frames `first`, `first + step`, ... (`count` of them).
#[derive(Debug, Clone, Copy)]
pub(super) struct TagPlan {
    pub(super) first: u64,
    pub(super) step: u64,
    pub(super) count: u64,
}

impl TagPlan {
    pub(super) fn new(spec: &TrialSpec, frames: u64) -> Option<TagPlan> {
        let l = spec.latency?;
        let first = ((l.delay_s * spec.rate as f64).floor() as u64).min(frames);
        let rest = frames - first;
        if l.tags == 0 || rest == 0 {
            return None;
        }
        let step = (rest / l.tags).max(1);
        Some(TagPlan {
            first,
            step,
            count: l.tags.min(rest.div_ceil(step)),
        })
    }

    /// The tag index of frame `seq`, if it carries one.
    #[inline]
    pub(super) fn index(&self, seq: u64) -> Option<usize> {
        if seq < self.first {
            return None;
        }
        let d = seq - self.first;
        (d.is_multiple_of(self.step) && d / self.step < self.count).then_some((d / self.step) as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xlat_trial::spec::{LatencySpec, RateChange};

    #[test]
    fn schedule_with_a_rate_change() {
        let clock = Clock::fixed_hz(1_000_000_000);
        let mut spec = TrialSpec::new(84, 1000, 10.0, 0);
        let s = Schedule::new(&spec, &clock);
        assert_eq!(s.time_of(1000), 1_000_000_000);
        assert_eq!(s.due(0), 1);
        assert_eq!(s.due(999_999_999), 1000);
        spec.rate_change = Some(RateChange { at_s: 2.0, rate: 500 });
        let s = Schedule::new(&spec, &clock);
        assert_eq!(s.n1, 2000);
        assert_eq!(s.time_of(1999), 1_999_000_000);
        assert_eq!(s.time_of(2000), 2_000_000_000);
        assert_eq!(s.time_of(2001), 2_002_000_000);
        assert_eq!(s.due(2_000_000_000), 2001);
        assert_eq!(s.due(2_003_999_999), 2002);
        assert_eq!(spec.frames(), 2000 + 4000);
    }

    #[test]
    fn tag_plan_spreads_tags_evenly_after_the_delay() {
        let mut s = TrialSpec::new(84, 1000, 10.0, 100);
        s.latency = Some(LatencySpec { delay_s: 2.0, tags: 500 });
        let p = TagPlan::new(&s, s.frames()).unwrap();
        assert_eq!((p.first, p.step, p.count), (2000, 16, 500));
        assert_eq!(p.index(2000), Some(0));
        assert_eq!(p.index(2016), Some(1));
        assert_eq!(p.index(2017), None);
        assert_eq!(p.index(1999), None);
        assert_eq!(p.index(2000 + 16 * 500), None);
        s.latency = Some(LatencySpec { delay_s: 20.0, tags: 500 });
        assert!(TagPlan::new(&s, s.frames()).is_none());
    }
}
