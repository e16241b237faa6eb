//! What one trial is asked to do.

use serde::{Deserialize, Serialize};

/// The parameters of one trial (siitperf-tp's command line and more).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialSpec {
    /// siitperf's frame size parameter: IPv6 frames have it, IPv4 frames are 20 bytes shorter;
    /// both count the FCS.
    pub frame_size: usize,
    /// Frames per second per active direction.
    pub rate: u64,
    /// Seconds of sending.
    pub duration_s: f64,
    /// Milliseconds the receivers keep receiving after sending ended.
    pub timeout_ms: u64,
    /// Frames per transmit burst.
    pub burst: usize,
    /// Latency measurement: tagged frames (RFC 8219 section 7.2); `None` for none.
    pub latency: Option<LatencySpec>,
    /// Per-frame one-way delay (PDV, IPDV); `None` for none.
    pub pdv: Option<PdvSpec>,
    /// System recovery (RFC 2544 section 26.5): after `at_s` seconds, continue at another rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_change: Option<RateChange>,
    /// Stateful test (RFC 9693): the preliminary phase (phase 1) that runs before this trial,
    /// which is then phase 2. Needs a setup with `stateful.mode` other than off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preliminary: Option<PreliminarySpec>,
    /// The largest lag behind its schedule a frame may leave with, nanoseconds: a trial whose
    /// sender fell further behind (a stall of the tester's, which the DUT sees as a burst) is
    /// invalid. `None`: only the end of sending is judged (RFC 8219's rule, siitperf's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_send_lag_ns: Option<u64>,
    /// The same bound in frames: a trial whose sender fell further behind than this many of
    /// its frames (its lag times the trial's rate: the burst it sends to catch up) is invalid.
    /// A bound that scales with the rate, as the DUT's buffers see it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_send_lag_frames: Option<u64>,
    /// With a lag bound: how many percent above its rate a sender that fell behind may send
    /// while it catches up (`tester.catch_up_percent`; `None`:
    /// [`crate::validity::DEFAULT_CATCH_UP_PERCENT`]). Without a bound the catch-up is
    /// siitperf's, at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catch_up_percent: Option<u64>,
    /// The active directions; `None`: the configuration's (the self-test searches forward
    /// only, reverse only and both ways on the same open ports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub directions: Option<Directions>,
    /// After which phase 1 a stateful trial goes on to phase 2 (siitperf's command lines run
    /// it after an invalid one too).
    #[serde(default, skip_serializing_if = "PhaseTwoAfter::is_default")]
    pub phase_two_after: PhaseTwoAfter,
    /// What stamps the frames for latency and delays (one of the runner's
    /// [`crate::TrialRunner::stamp_sources`]); `None`: the runner's choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stamps: Option<crate::stamps::StampSource>,
    /// What runs between phase 1 and phase 2 of a stateful trial (a DUT command); an `Err`
    /// ends the trial. Not part of the trial's record.
    #[serde(skip)]
    pub between_phases: Option<crate::dut::PhaseHook>,
}

/// The active directions of a trial.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Directions {
    pub forward: bool,
    pub reverse: bool,
}

/// The preliminary phase of a stateful test (RFC 9693; siitperf's `N M R T D`): the Initiator
/// sends `frames` at `rate`, and the Responder learns the 4-tuples that arrive into a state
/// table of `state_table` entries. Phase 2 (the trial itself) starts `phase_delay_ms` after
/// phase 1 started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreliminarySpec {
    /// N: frames the Initiator sends in phase 1 (foreground and background).
    pub frames: u64,
    /// M: entries of the Responder's state table.
    pub state_table: u64,
    /// R: the phase 1 rate, frames/s.
    pub rate: u64,
    /// T: milliseconds the Responder keeps receiving after phase 1 sending ended.
    pub timeout_ms: u64,
    /// D: milliseconds from the start of phase 1 to the start of phase 2.
    pub phase_delay_ms: u64,
}

/// Why a [`TrialSpec`] cannot run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SpecError {
    #[error("a trial needs a rate above 0 frames/s")]
    ZeroRate,
    #[error("a trial needs a duration above 0 s, not {0}")]
    BadDuration(f64),
    #[error("a trial needs a burst of at least 1 frame")]
    ZeroBurst,
    #[error("{rate} frames/s for {duration_s} s is no frame at all")]
    NoFrames { rate: u64, duration_s: f64 },
    #[error("{frames} frames per direction is more than the {max} one trial can track")]
    TooManyFrames { frames: u64, max: u64 },
    #[error(
        "{frames} frames per direction on {queues} queues per port is more than the {max} one trial can track with that many receivers (each keeps a bit per frame); use fewer queues or fewer frames"
    )]
    TooManyFramesForQueues { frames: u64, queues: u64, max: u64 },
    #[error("a preliminary phase (N M R T D) needs a stateful setup (stateful.mode / Stateful)")]
    NotStateful,
    #[error("a stateful setup (stateful.mode / Stateful) needs the preliminary phase's N M R T D")]
    NoPreliminary,
    #[error("the preliminary phase: {0}")]
    Preliminary(String),
}

impl TrialSpec {
    /// Check that the trial can run: a rate, a duration and a burst above 0, and between 1 and
    /// [`crate::limits::MAX_FRAMES`] frames per direction.
    pub fn validate(&self) -> Result<(), SpecError> {
        if self.rate == 0 {
            return Err(SpecError::ZeroRate);
        }
        if !(self.duration_s > 0.0 && self.duration_s.is_finite()) {
            return Err(SpecError::BadDuration(self.duration_s));
        }
        if self.burst == 0 {
            return Err(SpecError::ZeroBurst);
        }
        let frames = self.frames();
        if frames == 0 {
            return Err(SpecError::NoFrames {
                rate: self.rate,
                duration_s: self.duration_s,
            });
        }
        if frames > crate::limits::MAX_FRAMES {
            return Err(SpecError::TooManyFrames {
                frames,
                max: crate::limits::MAX_FRAMES,
            });
        }
        Ok(())
    }

    pub fn new(frame_size: usize, rate: u64, duration_s: f64, timeout_ms: u64) -> TrialSpec {
        TrialSpec {
            frame_size,
            rate,
            duration_s,
            timeout_ms,
            burst: crate::limits::DEFAULT_BURST,
            latency: None,
            pdv: None,
            rate_change: None,
            preliminary: None,
            max_send_lag_ns: None,
            max_send_lag_frames: None,
            catch_up_percent: None,
            directions: None,
            phase_two_after: PhaseTwoAfter::default(),
            stamps: None,
            between_phases: None,
        }
    }

    /// Frames each active direction sends: rate x duration, rounded down (with a rate change:
    /// the frames before it at `rate` plus the rest at the new rate).
    pub fn frames(&self) -> u64 {
        match self.rate_change {
            Some(c) if c.at_s < self.duration_s => {
                let first = (self.rate as f64 * c.at_s.max(0.0)).floor() as u64;
                first + (c.rate as f64 * (self.duration_s - c.at_s.max(0.0))).floor() as u64
            }
            _ => (self.rate as f64 * self.duration_s).floor() as u64,
        }
    }

    /// The trial's highest rate (with a rate change, the higher of the two), at least 1.
    pub fn highest_rate(&self) -> u64 {
        self.rate.max(self.rate_change.map_or(0, |c| c.rate)).max(1)
    }

    /// The sender's lag allowed, nanoseconds: the tighter of [`TrialSpec::max_send_lag_ns`]
    /// and [`TrialSpec::max_send_lag_frames`] at the trial's highest rate; `None`: no bound.
    pub fn send_lag_bound_ns(&self) -> Option<u64> {
        let rate = self.highest_rate();
        let frames = self
            .max_send_lag_frames
            .map(|f| u64::try_from(u128::from(f) * 1_000_000_000 / u128::from(rate)).unwrap_or(u64::MAX));
        match (self.max_send_lag_ns, frames) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// How a sender that fell behind its schedule catches up: at most `burst_frames` frames at once
/// above a pace of rate x (1 + `percent` / 100), a token bucket of that depth and rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CatchUp {
    pub burst_frames: u64,
    pub percent: u64,
}

/// The tester's bound of its senders' lag and their catch-up pace (`tester.max_send_lag_us`,
/// `tester.max_send_lag_frames`, `tester.catch_up_percent`): part of every trial a test runs,
/// carried by each procedure's configuration into the specs it builds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SendLag {
    /// [`TrialSpec::max_send_lag_ns`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_ns: Option<u64>,
    /// [`TrialSpec::max_send_lag_frames`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_frames: Option<u64>,
    /// [`TrialSpec::catch_up_percent`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catch_up_percent: Option<u64>,
}

impl SendLag {
    /// No bound (the end of sending alone is judged, siitperf's rule).
    pub fn is_none(&self) -> bool {
        *self == SendLag::default()
    }

    /// `spec` with this bound where it has none of its own.
    pub fn apply(self, spec: TrialSpec) -> TrialSpec {
        TrialSpec {
            max_send_lag_ns: spec.max_send_lag_ns.or(self.max_ns),
            max_send_lag_frames: spec.max_send_lag_frames.or(self.max_frames),
            catch_up_percent: spec.catch_up_percent.or(self.catch_up_percent),
            ..spec
        }
    }
}

impl TrialSpec {
    /// The catch-up this trial's sender keeps: with a lag bound, a burst of the bound in frames
    /// at the trial's highest rate (at least one transmit burst) above the catch-up pace;
    /// `None` without a bound (siitperf's prompt catch-up).
    pub fn catch_up(&self) -> Option<CatchUp> {
        let bound = self.send_lag_bound_ns()?;
        let rate = self.highest_rate();
        let frames = u64::try_from(u128::from(bound) * u128::from(rate) / 1_000_000_000).unwrap_or(u64::MAX);
        Some(CatchUp {
            burst_frames: frames.max(self.burst as u64),
            percent: self.catch_up_percent.unwrap_or(crate::validity::DEFAULT_CATCH_UP_PERCENT),
        })
    }
}

impl PreliminarySpec {
    /// Check the phase 1 parameters: N, M and R above 0, N within what one trial can track.
    pub fn validate(&self) -> Result<(), SpecError> {
        let bad = |m: String| Err(SpecError::Preliminary(m));
        if self.frames == 0 {
            return bad("N (preliminary frames) must be at least 1".into());
        }
        if self.state_table == 0 {
            return bad("M (state table size) must be at least 1".into());
        }
        if self.rate == 0 {
            return bad("R (preliminary rate) must be at least 1 frame/s".into());
        }
        if self.frames > crate::limits::MAX_FRAMES {
            return bad(format!(
                "N {} is more than the {} frames one phase can track",
                self.frames,
                crate::limits::MAX_FRAMES
            ));
        }
        Ok(())
    }

    /// The spec of phase 1 run alone (RFC 9693's connection establishment rate, loading the
    /// DUT's table): N = M = `connections` at `rate`, timeout T = `timeout_ms`, and D as the
    /// default, phase 1 plus twice T (only a validation phase waits for it). The trial part
    /// (1 s at `rate`) never runs; it carries the frame size.
    pub fn alone(frame_size: usize, connections: u64, rate: u64, timeout_ms: u64) -> TrialSpec {
        let mut t = TrialSpec::new(frame_size, rate.max(1), 1.0, timeout_ms);
        let phase1_ms = connections.saturating_mul(1000).div_ceil(rate.max(1));
        t.preliminary = Some(PreliminarySpec {
            frames: connections,
            state_table: connections,
            rate,
            timeout_ms,
            phase_delay_ms: phase1_ms.saturating_add(2 * timeout_ms).max(1),
        });
        t
    }

    /// Phase 1 as a trial: N frames at R (duration N / R), timeout T, the frame size and burst
    /// of phase 2's `spec`.
    pub fn phase_one_spec(&self, spec: &TrialSpec) -> TrialSpec {
        TrialSpec {
            frame_size: spec.frame_size,
            rate: self.rate,
            duration_s: self.frames as f64 / self.rate.max(1) as f64,
            timeout_ms: self.timeout_ms,
            burst: spec.burst,
            latency: None,
            pdv: None,
            rate_change: None,
            preliminary: None,
            // siitperf judges phase 1 by the end of its sending alone; with a bound on the
            // sender's lag (tester.max_send_lag_us) xlatperf holds phase 1 to it too: a stall's
            // catch-up burst is more than a rate-limiting DUT accepts, and its drops would count
            // as the DUT's.
            max_send_lag_ns: spec.max_send_lag_ns,
            max_send_lag_frames: spec.max_send_lag_frames,
            catch_up_percent: spec.catch_up_percent,
            // Phase 1's direction is the Initiator's, whatever phase 2's are.
            directions: None,
            phase_two_after: PhaseTwoAfter::default(),
            stamps: spec.stamps,
            between_phases: None,
        }
    }
}

/// After which phase 1 a stateful trial goes on to phase 2.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum PhaseTwoAfter {
    /// Only after a valid phase 1 (sent on time, state table filled, no tuple mapped twice):
    /// xlatperf's own judgement (RFC 9693), since phase 2 on a half-built DUT state measures
    /// nothing the RFC defines.
    #[default]
    ValidPhaseOne,
    /// After any phase 1, as siitperf-tp and siitperf-lat do: they print their warning or
    /// error about phase 1 and run phase 2 all the same (the Responder then answers on the
    /// entries it learnt, and on nothing for the rest). The report stays invalid.
    AnyPhaseOne,
    /// After a phase 1 that filled the state table, whatever else went wrong, as
    /// siitperf-pdv does (it exits on an unfilled table, but not on a slow phase 1).
    FilledTable,
}

impl PhaseTwoAfter {
    /// Phase 2 runs after a phase 1 that was `valid` (or not) and `filled` its state table (or
    /// not).
    pub fn goes_on(self, valid: bool, filled: bool) -> bool {
        match self {
            PhaseTwoAfter::ValidPhaseOne => valid,
            PhaseTwoAfter::AnyPhaseOne => true,
            PhaseTwoAfter::FilledTable => filled,
        }
    }

    fn is_default(&self) -> bool {
        *self == PhaseTwoAfter::default()
    }
}

/// Latency tags: `tags` frames sent evenly after `delay_s` seconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LatencySpec {
    pub delay_s: f64,
    pub tags: u64,
}

/// Per-frame delay measurement.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PdvSpec {
    /// A frame later than this counts as lost (siitperf-pdv's frame timeout); 0: none.
    pub frame_timeout_ms: u64,
    /// Keep every delay (exact percentiles, memory grows with the frames) instead of a
    /// histogram with bounded memory and a stated relative error.
    #[serde(default)]
    pub exact: bool,
}

/// A change of the sending rate during a trial.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RateChange {
    /// Seconds after the start.
    pub at_s: f64,
    /// The rate from then on, frames/s.
    pub rate: u64,
}

/// Which CPU core runs which role, and how many queues each port runs. `None`: let the engine
/// choose. The four cores are those of each port's first queue; further queues take cores
/// of their own, in turn from those this process may use.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuPlan {
    pub left_send: Option<usize>,
    pub right_recv: Option<usize>,
    pub right_send: Option<usize>,
    pub left_recv: Option<usize>,
    /// Queue sets per port (a sender and a receiver each); 0 means 1.
    #[serde(default)]
    pub queues: usize,
    /// The CPUs of a DUT on this host (the lab's): the engine chooses no core of these for the
    /// tester, and reads their load over every trial. Empty: none.
    #[serde(default)]
    pub dut: Vec<usize>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catch_up_is_the_bound_in_frames_at_least_a_burst() {
        let mut s = TrialSpec::new(84, 100_000, 1.0, 0);
        assert_eq!(s.catch_up(), None, "no bound: siitperf's catch-up");
        s.max_send_lag_frames = Some(250);
        assert_eq!(
            s.catch_up(),
            Some(CatchUp {
                burst_frames: 250,
                percent: 100
            })
        );
        // 100 us at 100,000 frames/s is 10 frames: at least a transmit burst.
        s.max_send_lag_frames = None;
        s.max_send_lag_ns = Some(100_000);
        s.catch_up_percent = Some(25);
        assert_eq!(
            s.catch_up(),
            Some(CatchUp {
                burst_frames: 32,
                percent: 25
            })
        );
    }

    #[test]
    fn the_send_lag_bound_is_the_tighter_of_time_and_frames_at_the_highest_rate() {
        let spec = |ns, frames| TrialSpec {
            max_send_lag_ns: ns,
            max_send_lag_frames: frames,
            ..TrialSpec::new(84, 50_000, 1.0, 10)
        };
        assert_eq!(spec(None, None).send_lag_bound_ns(), None);
        assert_eq!(spec(Some(2_000_000), None).send_lag_bound_ns(), Some(2_000_000));
        // 250 frames at 50,000 frames/s: 5 ms.
        assert_eq!(spec(None, Some(250)).send_lag_bound_ns(), Some(5_000_000));
        assert_eq!(spec(Some(2_000_000), Some(250)).send_lag_bound_ns(), Some(2_000_000));
        assert_eq!(spec(Some(9_000_000), Some(250)).send_lag_bound_ns(), Some(5_000_000));
        // A rate change to 200,000 frames/s: 250 frames are 1.25 ms.
        let changed = TrialSpec {
            rate_change: Some(RateChange { at_s: 0.5, rate: 200_000 }),
            ..spec(None, Some(250))
        };
        assert_eq!(changed.send_lag_bound_ns(), Some(1_250_000));
        // Phase 1 keeps the bound in frames, at its own rate.
        let p = PreliminarySpec {
            frames: 1000,
            state_table: 1000,
            rate: 10_000,
            timeout_ms: 100,
            phase_delay_ms: 200,
        };
        assert_eq!(p.phase_one_spec(&spec(None, Some(250))).send_lag_bound_ns(), Some(25_000_000));
    }
}
