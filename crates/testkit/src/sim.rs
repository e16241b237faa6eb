//! A simulated DUT that implements [`TrialRunner`], for testing the procedures without hardware.
//!
//! Model, per active direction and trial: the DUT forwards at `capacity_fps` (times a per-trial
//! factor uniform in [1 - noise, 1 + noise] from a seeded RNG) and holds up to `buffer_frames`
//! in a FIFO buffer, so of N = rate x duration frames it forwards
//! min(N, floor(capacity x duration) + buffer). A trial at a rate above `invalid_above` is
//! invalid (the tester could not keep up), as are the next `invalid_next` trials. Tagged frames
//! have latency `latency_ns` plus a uniform jitter in [0, `latency_jitter_ns`]; a tag is lost
//! with the trial's loss probability, and the first `lost_tags` tags are always lost. With
//! per-frame delays asked for (`TrialSpec::pdv`), every frame has that latency and jitter, the
//! last frames of the trial being the lost ones. For system recovery (a trial with a rate
//! change), an overloaded DUT keeps losing every frame for `recovery_time_s` after the rate
//! reduction, and the report names the last lost frame.
//!
//! A stateful trial (`TrialSpec::preliminary`) first runs a simulated phase 1: all N frames are
//! foreground; the DUT lets through what its connection establishment rate
//! (`preliminary_capacity_fps`) allows at the preliminary rate R; the tester cannot send phase 1
//! faster than `preliminary_tester_max` (sending too slow, the trial invalid); and the next
//! `unfilled_next` stateful trials lose one phase 1 frame. When phase 1 fails (too slow, or the
//! state table of M entries not filled) phase 2 does not run, as in the engine.

use xlat_traffic::rng::SplitMix64;
use xlat_trial::delay::{DelayRecorder, IpdvRecorder};
use xlat_trial::{
    DirectionCounts, DirectionReport, HookRun, PdvReport, PreliminaryReport, PreliminarySpec, RateChange, StampSource, TrialReport,
    TrialSpec,
};

use xlat_trial::TrialRunner;

/// Frames a direction loses to the tester's catch-up above [`SimDut::lag_harm_above`].
pub const LAG_HARM_LOST: u64 = 40;

/// The share of its rate a trial above [`SimDut::late_above`] offers.
pub const LATE_SHARE: f64 = 0.95;

/// The simulation's noise: the workspace's one SplitMix64 (xlat_traffic's), as a uniform value.
#[derive(Debug, Clone)]
pub struct Noise(SplitMix64);

impl Noise {
    pub fn new(seed: u64) -> Noise {
        Noise(SplitMix64::new(seed))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0.next()
    }

    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.0.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The simulated device under test.
#[derive(Debug, Clone)]
pub struct SimDut {
    pub capacity_fps: f64,
    pub buffer_frames: u64,
    pub noise: f64,
    pub invalid_above: Option<u64>,
    pub invalid_next: u32,
    /// Trials above this rate lose `LAG_HARM_LOST` frames per direction that the sender sent
    /// while it caught up from a stall (rule `lag_harm`), beside the DUT's own loss: a host
    /// whose pauses make the tester's catch-up overflow the DUT's queue near its limit.
    pub lag_harm_above: Option<u64>,
    /// Trials above this rate end late (rule `end_of_sending`): the tester offers only
    /// [`LATE_SHARE`] of the rate (a host that pauses it near the end of every trial).
    pub late_above: Option<u64>,
    pub latency_ns: u64,
    pub latency_jitter_ns: u64,
    pub lost_tags: u64,
    pub bidirectional: bool,
    /// Only the reverse direction is active when a trial's spec does not choose.
    pub reverse_only: bool,
    pub recovery_time_s: f64,
    /// Phase 1: the DUT's connection establishment rate, frames/s (`None`: unlimited).
    pub preliminary_capacity_fps: Option<f64>,
    /// Phase 1: the fastest rate the tester can send at (`None`: any).
    pub preliminary_tester_max: Option<u64>,
    /// The next this many stateful trials lose one phase 1 frame (the table is not filled).
    pub unfilled_next: u32,
    /// The connections the DUT's table holds (`None`: any number). Phase 1 of more still
    /// passes (the DUT drops older unanswered connections to make room, as Linux conntrack
    /// does), but a validation finds only this many.
    pub table_capacity: Option<u64>,
    /// The timestamp sources it offers (best first), and the one its trials say stamped them.
    pub stamp_sources: Vec<StampSource>,
    pub stamps: StampSource,
    /// A reset (`dut.reset`, [`TrialRunner::run_with_dut_command`]) interrupts forwarding in
    /// both directions for this long, seconds (`None`: the command does nothing).
    pub reset_s: Option<f64>,
    /// The reset command never returns (it is killed at its deadline).
    pub reset_hangs: bool,
    /// Every spec run, in order.
    pub log: Vec<TrialSpec>,
    rng: Noise,
}

impl SimDut {
    /// A bidirectional DUT of `capacity_fps` per direction, no buffer, no noise, 10 us latency.
    pub fn new(capacity_fps: f64, seed: u64) -> SimDut {
        SimDut {
            capacity_fps,
            buffer_frames: 0,
            noise: 0.0,
            invalid_above: None,
            invalid_next: 0,
            lag_harm_above: None,
            late_above: None,
            latency_ns: 10_000,
            latency_jitter_ns: 0,
            lost_tags: 0,
            bidirectional: true,
            reverse_only: false,
            recovery_time_s: 0.0,
            preliminary_capacity_fps: None,
            preliminary_tester_max: None,
            table_capacity: None,
            unfilled_next: 0,
            stamp_sources: vec![StampSource::User],
            stamps: StampSource::User,
            reset_s: None,
            reset_hangs: false,
            log: Vec::new(),
            rng: Noise::new(seed),
        }
    }

    pub fn buffer(mut self, frames: u64) -> SimDut {
        self.buffer_frames = frames;
        self
    }

    pub fn noise(mut self, relative: f64) -> SimDut {
        self.noise = relative;
        self
    }

    pub fn invalid_above(mut self, rate: u64) -> SimDut {
        self.invalid_above = Some(rate);
        self
    }

    /// Trials above `rate` lose frames to the tester's catch-up ([`SimDut::lag_harm_above`]).
    pub fn lag_harm_above(mut self, rate: u64) -> SimDut {
        self.lag_harm_above = Some(rate);
        self
    }

    /// Trials above `rate` end late ([`SimDut::late_above`]).
    pub fn late_above(mut self, rate: u64) -> SimDut {
        self.late_above = Some(rate);
        self
    }

    pub fn latency(mut self, ns: u64, jitter_ns: u64) -> SimDut {
        self.latency_ns = ns;
        self.latency_jitter_ns = jitter_ns;
        self
    }

    /// Phase 1 frames above `fps` are lost (the DUT's connection establishment rate).
    pub fn preliminary_capacity(mut self, fps: f64) -> SimDut {
        self.preliminary_capacity_fps = Some(fps);
        self
    }

    /// The tester cannot send phase 1 faster than `rate`.
    pub fn preliminary_tester_max(mut self, rate: u64) -> SimDut {
        self.preliminary_tester_max = Some(rate);
        self
    }

    /// The next `trials` stateful trials do not fill the state table.
    pub fn table_capacity(mut self, connections: u64) -> SimDut {
        self.table_capacity = Some(connections);
        self
    }

    pub fn unfilled_next(mut self, trials: u32) -> SimDut {
        self.unfilled_next = trials;
        self
    }

    /// The simulated phase 1 of a stateful trial, and why it failed, if it did.
    fn preliminary(&mut self, p: &PreliminarySpec) -> (PreliminaryReport, Option<String>) {
        let (n, r) = (p.frames, p.rate.max(1));
        let sending_valid = self.preliminary_tester_max.is_none_or(|x| r <= x);
        let ideal_s = n as f64 / r as f64;
        let send_duration_s = match self.preliminary_tester_max {
            Some(x) if !sending_valid => n as f64 / x.max(1) as f64,
            _ => ideal_s,
        };
        let mut received = match self.preliminary_capacity_fps {
            Some(c) if r as f64 > c => ((n as f64) * c / r as f64).floor() as u64,
            _ => n,
        };
        if self.unfilled_next > 0 {
            self.unfilled_next -= 1;
            received = received.min(n.saturating_sub(1));
        }
        let valid_entries = received.min(p.state_table);
        let report = PreliminaryReport {
            frames: n,
            rate: p.rate,
            sent: n,
            received,
            foreground_received: received,
            foreground_sent: n,
            valid_entries,
            state_table: p.state_table,
            send_duration_s,
            sending_valid,
            ..PreliminaryReport::default()
        };
        let why = if !sending_valid {
            Some(format!(
                "Preliminary sending was too slow (only {:.10} percent of required rate), the test is invalid",
                100.0 * ideal_s / send_duration_s
            ))
        } else if valid_entries < p.state_table {
            Some(format!(
                "Failed to fill state table (valid entries: {valid_entries}, state table size: {})",
                p.state_table
            ))
        } else {
            None
        };
        (report, why)
    }

    pub fn unidirectional(mut self) -> SimDut {
        self.bidirectional = false;
        self
    }

    /// This trial's capacity.
    fn capacity(&mut self) -> f64 {
        let u = self.rng.next_f64() * 2.0 - 1.0;
        (self.capacity_fps * (1.0 + self.noise * u)).max(0.0)
    }

    fn direction(&mut self, spec: &TrialSpec, capacity: f64) -> DirectionReport {
        if let Some(change) = spec.rate_change {
            return self.recovery_direction(spec, change, capacity);
        }
        let sent = spec.frames();
        let can = (capacity * spec.duration_s).floor().max(0.0) as u64;
        let received = sent.min(can.saturating_add(self.buffer_frames));
        let lost = sent - received;
        let mut latency_ns = Vec::new();
        if let Some(l) = spec.latency {
            let p_loss = if sent == 0 { 0.0 } else { lost as f64 / sent as f64 };
            for i in 0..l.tags {
                let lost_tag = i < self.lost_tags || self.rng.next_f64() < p_loss;
                latency_ns.push(if lost_tag { u64::MAX } else { self.one_latency() });
            }
        }
        let pdv = spec.pdv.map(|p| {
            let (mut delays, mut ipdv) = if p.exact {
                (DelayRecorder::exact(), IpdvRecorder::exact())
            } else {
                (DelayRecorder::histogram(), IpdvRecorder::histogram())
            };
            for _ in 0..received {
                let d = self.one_latency();
                delays.record(d);
                ipdv.record(d);
            }
            delays.record_lost(lost);
            PdvReport {
                delays,
                ipdv,
                ipdv_infinite: lost as f64 > 0.001 * sent as f64,
                timed: received,
                ..PdvReport::default()
            }
        });
        DirectionReport {
            counts: DirectionCounts {
                sent,
                received,
                lost,
                achieved_rate: spec.rate as f64,
                ..DirectionCounts::default()
            },
            send_duration_s: spec.duration_s,
            latency_ns,
            pdv,
            last_lost_seq: (lost > 0).then(|| sent - 1),
            ..DirectionReport::default()
        }
    }

    /// One frame's latency: `latency_ns` plus the jitter.
    fn one_latency(&mut self) -> u64 {
        let j = (self.rng.next_f64() * (self.latency_jitter_ns as f64 + 1.0)).floor() as u64;
        self.latency_ns.saturating_add(j.min(self.latency_jitter_ns))
    }

    /// The system recovery model: the overload part loses what exceeds capacity and buffer;
    /// then the DUT loses every frame for `recovery_time_s`, and whatever the reduced rate
    /// exceeds its capacity.
    fn recovery_direction(&self, spec: &TrialSpec, change: RateChange, capacity: f64) -> DirectionReport {
        let overload_s = change.at_s;
        let recovery_s = spec.duration_s - overload_s;
        let n1 = (spec.rate as f64 * overload_s).floor() as u64;
        let n2 = spec.frames().saturating_sub(n1);
        let can = (capacity * overload_s).floor() as u64;
        let lost1 = n1.saturating_sub(can.saturating_add(self.buffer_frames));
        let mut lost = lost1;
        let mut last = (lost1 > 0).then(|| n1 - 1);
        if lost1 > 0 && self.recovery_time_s > 0.0 {
            let k = ((self.recovery_time_s * change.rate as f64).ceil() as u64).min(n2);
            if k > 0 {
                lost += k;
                last = Some(n1 + k - 1);
            }
        }
        if change.rate as f64 > capacity && n2 > 0 {
            let k = n2 - ((capacity * recovery_s).floor() as u64).min(n2);
            if k > 0 {
                lost = lost.max(lost1 + k);
                last = Some(n1 + n2 - 1);
            }
        }
        let sent = n1 + n2;
        let lost = lost.min(sent);
        DirectionReport {
            counts: DirectionCounts {
                sent,
                received: sent - lost,
                lost,
                achieved_rate: sent as f64 / spec.duration_s,
                ..DirectionCounts::default()
            },
            send_duration_s: spec.duration_s,
            last_lost_seq: last,
            ..DirectionReport::default()
        }
    }

    fn invalid_reason(&mut self, rate: u64) -> Option<String> {
        if self.invalid_next > 0 {
            self.invalid_next -= 1;
            return Some("simulated: the sender fell behind its schedule".into());
        }
        match self.invalid_above {
            Some(x) if rate > x => Some(format!("simulated: the tester cannot send more than {x} frames/s")),
            _ => None,
        }
    }
}

impl TrialRunner for SimDut {
    fn stamp_sources(&self) -> Vec<StampSource> {
        self.stamp_sources.clone()
    }

    fn run(&mut self, spec: &TrialSpec) -> Result<TrialReport, xlat_trial::TrialError> {
        self.log.push(spec.clone());
        let preliminary = spec.preliminary.as_ref().map(|p| self.preliminary(p));
        if let Some((p, Some(why))) = preliminary.clone() {
            if !spec.phase_two_after.goes_on(false, p.table_filled()) {
                let mut r = TrialReport::of(spec);
                r.preliminary = Some(p);
                r.invalidate(why);
                return Ok(r);
            }
        }
        if let (Some(_), Some(hook)) = (&spec.preliminary, &spec.between_phases) {
            hook.run().map_err(xlat_trial::TrialError::new)?;
        }
        let (forward_on, reverse_on) = match spec.directions {
            Some(d) if !d.forward && !d.reverse => {
                return Err(xlat_trial::TrialError::of(
                    xlat_trial::TrialErrorKind::Config,
                    "no active direction",
                ))
            }
            Some(d) => (d.forward, d.reverse),
            None => (!self.reverse_only, self.bidirectional || self.reverse_only),
        };
        let st = match spec.stamps {
            Some(s) if !self.stamp_sources.contains(&s) => {
                return Err(xlat_trial::TrialError::msg(format!("no {} stamps here", s.name())));
            }
            Some(s) => s,
            None => self.stamps,
        };
        let capacity = self.capacity();
        let stamped = |mut d: DirectionReport| {
            d.counts.stamps = st;
            d
        };
        let forward = forward_on.then(|| stamped(self.direction(spec, capacity)));
        let reverse = reverse_on.then(|| stamped(self.direction(spec, capacity)));
        // Phase 1's reason (phase 2 ran after it all the same) first, then phase 2's.
        let reason: Vec<String> = preliminary
            .as_ref()
            .and_then(|(_, why)| why.clone())
            .into_iter()
            .chain(self.invalid_reason(spec.rate))
            .collect();
        let mut r = TrialReport::of(spec);
        r.preliminary = preliminary.map(|(p, _)| p);
        r.forward = forward;
        r.reverse = reverse;
        for why in reason {
            r.invalidate(why);
        }
        if self.lag_harm_above.is_some_and(|x| spec.rate > x) {
            for d in [r.forward.as_mut(), r.reverse.as_mut()].into_iter().flatten() {
                let c = &mut d.counts;
                let harm = LAG_HARM_LOST.min(c.received);
                (c.received, c.lost, c.catch_ups, c.lost_in_catch_up) = (c.received - harm, c.lost + harm, 1, harm);
            }
            r.invalidate_by(
                xlat_trial::Rule::LagHarm,
                format!("simulated: {LAG_HARM_LOST} frames lost while the sender caught up from a stall"),
            );
        }
        if self.late_above.is_some_and(|x| spec.rate > x) {
            for d in [r.forward.as_mut(), r.reverse.as_mut()].into_iter().flatten() {
                d.send_duration_s = spec.duration_s / LATE_SHARE;
                d.counts.achieved_rate = d.counts.sent as f64 / d.send_duration_s;
            }
            r.invalidate_by(
                xlat_trial::Rule::EndOfSending,
                "simulated: sending exceeded the duration's limit".into(),
            );
        }
        Ok(r)
    }

    /// The trial, with the DUT forwarding nothing for `reset_s` from `after_s` on: those
    /// frames lost, the receiving side's longest gap from the last frame before to the first
    /// after.
    fn run_with_dut_command(
        &mut self,
        spec: &TrialSpec,
        key: &str,
        after_s: f64,
    ) -> Result<(TrialReport, HookRun), xlat_trial::TrialError> {
        let mut r = self.run(spec)?;
        let rate = spec.rate.max(1) as f64;
        let out = self.reset_s.unwrap_or(0.0);
        for d in [r.forward.as_mut(), r.reverse.as_mut()].into_iter().flatten() {
            let first = ((after_s * rate) as u64).min(d.counts.sent);
            let n = ((out * rate).round() as u64).min(d.counts.sent - first);
            if n == 0 {
                continue;
            }
            d.counts.received = d.counts.received.saturating_sub(n);
            d.counts.lost += n;
            d.last_lost_seq = Some(first + n - 1);
            if first + n < d.counts.sent {
                d.max_rx_gap_ns = ((n + 1) as f64 / rate * 1e9).round() as u64;
                d.max_rx_gap_end_ns = ((first + n) as f64 / rate * 1e9).round() as u64;
            }
        }
        let run = HookRun {
            key: key.to_string(),
            command: "simulated reset".into(),
            seconds: if self.reset_hangs { spec.duration_s - after_s } else { out },
            exit_status: (!self.reset_hangs).then_some(0),
            output: String::new(),
        };
        Ok((r, run))
    }

    /// Phase 1 as [`SimDut::run`] simulates it; a validation (at any rate) gets back one frame
    /// per connection the table holds, on the Initiator's side (reverse).
    fn run_preliminary(&mut self, spec: &TrialSpec, validation: Option<u64>) -> Result<TrialReport, xlat_trial::TrialError> {
        self.log.push(spec.clone());
        let p = spec
            .preliminary
            .as_ref()
            .ok_or_else(|| xlat_trial::TrialError::of(xlat_trial::TrialErrorKind::Config, "no preliminary phase"))?;
        let (pre, why) = self.preliminary(p);
        let mut r = TrialReport::of(spec);
        let m = pre.state_table;
        r.preliminary = Some(pre);
        if let Some(why) = why {
            r.invalidate(why);
            return Ok(r);
        }
        if let Some(v) = validation {
            if let Some(hook) = &spec.between_phases {
                hook.run().map_err(xlat_trial::TrialError::new)?;
            }
            let received = self.table_capacity.map_or(m, |c| c.min(m));
            r.reverse = Some(DirectionReport {
                counts: DirectionCounts {
                    sent: m,
                    received,
                    lost: m - received,
                    achieved_rate: v as f64,
                    ..DirectionCounts::default()
                },
                send_duration_s: m as f64 / v.max(1) as f64,
                ..DirectionReport::default()
            });
        }
        Ok(r)
    }
}

/// A DUT given by its Trial Loss Ratio as a function of load, trial duration and chance: the
/// DUTs that the MLRsearch comparisons drive both xlatperf's search and its authors' Python
/// implementation against (`tests/mlrsearch/reference.py` computes the same functions). One
/// direction; a trial at load L for D seconds sends N = floor(L x D + 0.5) frames and loses
/// floor(N x ratio + 0.5) of them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LossModel {
    /// No loss below `at` frames/s, `ratio` of the frames at and above it.
    Step { at: f64, ratio: f64 },
    /// A forwarding-rate limit: loss ratio 1 - capacity / load above `fps`, growing smoothly.
    Capacity { fps: f64 },
    /// A limit of `fps` with a buffer of `buffer` frames: forwards fps x D + buffer frames, so
    /// that short trials lose less than long ones.
    Buffered { fps: f64, buffer: f64 },
    /// A limit that varies per trial, uniform in fps x [1 - noise, 1 + noise].
    Noisy { fps: f64, noise: f64 },
}

impl LossModel {
    /// The loss ratio of a trial; `u` is uniform in [0, 1) (used by `Noisy` only).
    pub fn loss_ratio(&self, load: f64, duration_s: f64, u: f64) -> f64 {
        let limit = |fps: f64, extra: f64| {
            let sent = load * duration_s;
            if sent <= 0.0 {
                0.0
            } else {
                (1.0 - (fps * duration_s + extra) / sent).max(0.0)
            }
        };
        match *self {
            LossModel::Step { at, ratio } => {
                if load >= at {
                    ratio
                } else {
                    0.0
                }
            }
            LossModel::Capacity { fps } => limit(fps, 0.0),
            LossModel::Buffered { fps, buffer } => limit(fps, buffer),
            LossModel::Noisy { fps, noise } => limit(fps * (1.0 + noise * (2.0 * u - 1.0)), 0.0),
        }
    }
}

/// A [`TrialRunner`] whose one direction loses what a [`LossModel`] says.
#[derive(Debug, Clone)]
pub struct ModelDut {
    pub model: LossModel,
    rng: Noise,
}

impl ModelDut {
    pub fn new(model: LossModel, seed: u64) -> ModelDut {
        ModelDut {
            model,
            rng: Noise::new(seed),
        }
    }
}

impl TrialRunner for ModelDut {
    fn run(&mut self, spec: &TrialSpec) -> Result<TrialReport, xlat_trial::TrialError> {
        let sent = (spec.rate as f64 * spec.duration_s + 0.5).floor() as u64;
        let ratio = self.model.loss_ratio(spec.rate as f64, spec.duration_s, self.rng.next_f64());
        let lost = ((sent as f64 * ratio + 0.5).floor() as u64).min(sent);
        let mut r = TrialReport::of(spec);
        r.forward = Some(DirectionReport {
            counts: DirectionCounts {
                sent,
                received: sent - lost,
                lost,
                achieved_rate: spec.rate as f64,
                ..DirectionCounts::default()
            },
            send_duration_s: spec.duration_s,
            ..DirectionReport::default()
        });
        Ok(r)
    }

    fn describe(&self) -> String {
        format!("simulated DUT {:?}", self.model)
    }
}
