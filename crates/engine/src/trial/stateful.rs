//! Stateful trials (RFC 9693): phase 1, in which the Initiator opens the connections and the
//! Responder learns them, the wait until phase 2, and phase 2 or a validation phase.

use super::error::{EngineError, Res};
use super::phase::dir_index;
use super::phase::Phase;
use super::{Tester, MAX_FRAMES, TOLERANCE};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use xlat_io::Port;
use xlat_traffic::{Direction, DirectionStream, StateTable, Stateful, Variation};
use xlat_trial::report::{PreliminaryReport, TrialReport};
use xlat_trial::spec::{PreliminarySpec, SpecError, TrialSpec};

impl<P: Port> Tester<P> {
    /// The Initiator's direction of a stateful setup; `None` for a stateless one.
    pub(super) fn initiator(&self) -> Option<Direction> {
        match self.setup.stateful.mode {
            Stateful::Off => None,
            Stateful::InitiatorLeft => Some(Direction::Forward),
            Stateful::InitiatorRight => Some(Direction::Reverse),
        }
    }

    /// A stateful test (RFC 9693): the preliminary phase, in which the Initiator (direction
    /// `init`) sends `p.frames` frames at `p.rate` whose foreground frames open one connection
    /// each in the DUT, and the Responder learns their 4-tuples as the DUT rewrote them; then,
    /// `p.phase_delay_ms` after phase 1 started (or as soon as it ended, if later), phase 2:
    /// the trial of `spec`, the Responder answering on the learnt tuples.
    ///
    /// When phase 1 sending was too slow, fewer than M tuples were learnt, or the DUT mapped
    /// two connections onto one tuple (checked when the enumeration promised unique ones), the
    /// trial is invalid; by default it then reports phase 1 alone, and phase 2 runs only
    /// where the spec's `phase_two_after` asks for it (siitperf's command lines). Each phase
    /// has its own trial tag: a late phase 1 frame is never a phase 2 frame.
    pub(super) fn run_stateful(&mut self, spec: &TrialSpec, p: PreliminarySpec, init: Direction) -> Res<TrialReport> {
        p.validate()?;
        let active = self.apply(spec)?;
        self.check(spec, active, Phase::Test(init))?;
        let (mut report, table, t1) = self.phase_one(spec, p, init)?;
        let filled = report.preliminary.as_ref().is_some_and(PreliminaryReport::table_filled);
        if !spec.phase_two_after.goes_on(report.valid, filled) {
            return Ok(report);
        }
        let t0 = self.between_phases(spec, t1, p)?;
        let (r2, _) = self.run_phase(spec, spec.frames(), active, Phase::Learn(init, &table).phase_two(), t0)?;
        // Phase 1's reasons (if it ran after an invalid phase 1) stay, phase 2's follow.
        report.valid &= r2.valid;
        report.invalid_reasons.extend(r2.invalid_reasons);
        report.forward = r2.forward;
        report.reverse = r2.reverse;
        // The load of the measurement: phase 2's.
        report.load = r2.load;
        Ok(report)
    }

    /// Phase 1 of a stateful test alone (RFC 9693's connection establishment rate: the
    /// preliminary phase is the measurement): the report's `preliminary` holds the counts and
    /// its validity says whether every frame was sent on time and the state table filled.
    /// `spec.preliminary` must be set.
    ///
    /// With `validation` (a rate, frames/s), a validation phase follows a valid phase 1
    /// (RFC 9693 section 4.4; siitperf's cttc.sh): only the Responder sends, once to every
    /// learnt tuple in the table's order (Responder-tuples increasing, whatever the setup
    /// says), D after phase 1 started or at once if later; its direction's report (`forward`
    /// or `reverse`) says how many came back through the DUT. Without it both stay empty.
    pub fn run_preliminary(&mut self, spec: &TrialSpec, validation: Option<u64>) -> Res<TrialReport> {
        let (p, init) = match (spec.preliminary, self.initiator()) {
            (Some(p), Some(d)) => (p, d),
            (Some(_), None) => return Err(SpecError::NotStateful.into()),
            (None, _) => return Err(SpecError::NoPreliminary.into()),
        };
        p.validate()?;
        self.apply(spec)?;
        let Some(rate) = validation else {
            return Ok(self.phase_one(spec, p, init)?.0);
        };
        let resp = init.opposite();
        let frames = self.validation_frames(p.state_table)?;
        let vspec = TrialSpec {
            rate,
            duration_s: frames as f64 / rate.max(1) as f64,
            timeout_ms: p.timeout_ms,
            latency: None,
            pdv: None,
            rate_change: None,
            preliminary: None,
            ..spec.clone()
        };
        let mut active = [false; 2];
        active[dir_index(resp)] = true;
        self.check(&vspec, active, Phase::Test(init))?;
        let (mut report, table, t1) = self.phase_one(spec, p, init)?;
        if !report.valid {
            return Ok(report);
        }
        let t0 = self.between_phases(spec, t1, p)?;
        let (r2, _) = self.run_phase(&vspec, frames, active, Phase::Validate(&table), t0)?;
        for (r, rule) in r2.invalid_reasons.into_iter().zip(r2.invalid_rules) {
            report.invalidate_by(rule, format!("Validation: {r}"));
        }
        report.forward = r2.forward;
        report.reverse = r2.reverse;
        Ok(report)
    }

    /// The frames a validation phase sends to visit each of the `entries` learnt tuples once:
    /// the foreground frames among them reach every entry (background frames, when the
    /// setup mixes them in, come on top).
    fn validation_frames(&self, entries: u64) -> Res<u64> {
        let (n, m) = (
            u64::from(self.setup.fg_n.max(1)),
            u64::from(self.setup.fg_m).min(u64::from(self.setup.fg_n.max(1))),
        );
        if m == 0 {
            return Err(SpecError::Preliminary("a validation phase needs foreground frames (n:m with m above 0)".into()).into());
        }
        // The smallest count whose foreground frames number `entries`.
        let frames = (entries / m) * n + entries % m;
        debug_assert_eq!(xlat_traffic::enumerate::foreground_count(frames, n as u32, m as u32), entries);
        if frames > MAX_FRAMES {
            return Err(SpecError::Preliminary(format!(
                "the validation of {entries} connections needs {frames} frames, more than the {} one phase can track",
                MAX_FRAMES
            ))
            .into());
        }
        Ok(frames)
    }

    /// Between phase 1 (started at tick `t1`) and the next phase: run the between-phases hook,
    /// wait until D after phase 1 started (phase 1 ran to its end, so never earlier), announce
    /// again; returns the tick the next phase starts at.
    fn between_phases(&mut self, spec: &TrialSpec, t1: u64, p: PreliminarySpec) -> Res<u64> {
        if let Some(h) = &spec.between_phases {
            h.run().map_err(EngineError::Hook)?;
        }
        let clock = self.clock;
        let t2 = t1 + clock.ticks_ms(p.phase_delay_ms);
        while clock.now() + clock.ticks(0.06) < t2 {
            if self.abort.load(Ordering::Relaxed) {
                return Err(EngineError::Interrupted);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        self.announce()?;
        Ok(t2.max(clock.now() + clock.ticks(0.01)))
    }

    /// Phase 1: the report with its `preliminary` part (invalid when phase 1 was), the table
    /// learnt, and the tick phase 1 started at.
    fn phase_one(&mut self, spec: &TrialSpec, p: PreliminarySpec, init: Direction) -> Res<(TrialReport, Arc<StateTable>, u64)> {
        let p1 = p.phase_one_spec(spec);
        let mut p1_active = [false; 2];
        p1_active[dir_index(init)] = true;
        self.check(&p1, p1_active, Phase::Preliminary(init))?;
        self.ready()?;
        // The Responder learns tuples of its own side's IP version.
        let responder_v6 = self.setup.side(init.receiver()).ip_version == xlat_traffic::IpVersion::V6;
        let table = Arc::new(StateTable::with_version(p.state_table, responder_v6)?);
        let clock = self.clock;
        let t1 = clock.now() + clock.ticks(0.05);
        let (r1, learnt) = self.run_phase(&p1, p.frames, p1_active, Phase::Learn(init, &table), t1)?;
        let d1 = match init {
            Direction::Forward => r1.forward.clone(),
            Direction::Reverse => r1.reverse.clone(),
        }
        .unwrap_or_default();
        let limit = p1.duration_s * TOLERANCE;
        let fg_n = self.setup.fg_n;
        let fg_m = self.setup.fg_m;
        let mut pre = PreliminaryReport {
            frames: p.frames,
            rate: p.rate,
            sent: d1.counts.sent,
            received: d1.counts.received,
            foreground_received: learnt[dir_index(init)],
            foreground_sent: xlat_traffic::enumerate::foreground_count(d1.counts.sent, fg_n, fg_m),
            valid_entries: table.valid(),
            state_table: p.state_table,
            send_duration_s: d1.send_duration_s,
            sending_valid: d1.counts.sent == p.frames && d1.send_duration_s <= limit,
            max_lag_ns: d1.counts.max_lag_ns,
            stalls: d1.counts.stalls,
            duplicate_tuples: None,
            unexpected: d1.counts.unexpected,
            duplicates: d1.counts.duplicates,
            corrupted: d1.counts.corrupted,
            tester_tx_dropped: d1.counts.tester_tx_dropped,
            tester_rx_dropped: d1.counts.tester_rx_dropped,
            dut_connections: None,
        };
        let mut report = TrialReport::of(spec);
        let mut invalid = |why: String| report.invalidate_by(xlat_trial::Rule::Preliminary, why);
        if !pre.sending_valid {
            let pct = if pre.send_duration_s > 0.0 {
                100.0 * p.frames as f64 / (pre.send_duration_s * p.rate as f64)
            } else {
                0.0
            };
            invalid(format!(
                "Preliminary sending was too slow (only {pct:.10} percent of required rate), the test is invalid"
            ));
        }
        // Reasons other than the time limit (the tester's own drops, a cut-off).
        for r in r1.invalid_reasons.iter().filter(|r| !r.contains("seconds limit")) {
            invalid(format!("Preliminary phase: {r}"));
        }
        if !pre.table_filled() {
            invalid(format!(
                "Failed to fill state table (valid entries: {}, state table size: {})",
                pre.valid_entries, pre.state_table
            ));
        } else if self.unique_tuples_promised(spec, init, pre.foreground_sent)? {
            let dups = table.duplicates();
            pre.duplicate_tuples = dups;
            if let Some(d) = dups.filter(|d| *d > 0) {
                invalid(format!(
                    "the DUT mapped {d} of the {} connections of phase 1 onto 4-tuples it had already used (the enumeration sent each one once), the test is invalid",
                    pre.valid_entries
                ));
            }
        }
        report.preliminary = Some(pre);
        Ok((report, table, t1))
    }

    /// True when phase 1 sends each of its `foreground` connections once (a unique
    /// enumeration with at least as many combinations), so that the learnt tuples must all
    /// differ.
    fn unique_tuples_promised(&self, spec: &TrialSpec, init: Direction, foreground: u64) -> Res<bool> {
        let st = self.setup.stateful;
        if st.enumerate_ports == Variation::Fixed && st.enumerate_ips == Variation::Fixed {
            return Ok(false);
        }
        let mac = self.left.mac;
        let stream = DirectionStream::preliminary(&self.setup, init, spec.frame_size, mac, mac)?;
        Ok(stream.enumeration_count().is_some_and(|c| u128::from(foreground) <= c))
    }
}
