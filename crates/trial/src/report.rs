//! What one trial measured.

use serde::{Deserialize, Serialize};

use crate::delay::{DelayRecorder, IpdvRecorder};
use crate::spec::CatchUp;
use crate::validity::Rule;

/// Frame loss in percent, RFC 2544 section 26.3: (input count - output count) x 100 / input
/// count. `None` when nothing was sent. Every loss percentage xlatperf prints or writes is this.
pub fn loss_percent(sent: u64, received: u64) -> Option<f64> {
    (sent > 0).then(|| sent.saturating_sub(received) as f64 * 100.0 / sent as f64)
}

/// The counts of one direction of a trial: what the trial reports ([`DirectionReport`]) and
/// what a procedure keeps of it (a trial record), declared once.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DirectionCounts {
    /// Test frames sent.
    pub sent: u64,
    /// Distinct test frames received (each sequence number counted once).
    pub received: u64,
    /// sent - received.
    pub lost: u64,
    /// Extra copies of frames already received: never counted in `received`.
    pub duplicates: u64,
    /// Frames that arrived after a frame with a higher sequence number.
    pub reordered: u64,
    /// Test frames whose sequence number this trial never sent (foreign or corrupt).
    pub unexpected: u64,
    /// Of `unexpected`: test frames with a trial tag this tester never used, i.e. from another
    /// tester sending into the same ports (or an earlier run's frames, back late). A trial with
    /// any is invalid: the other tester's load would count as the DUT's loss.
    #[serde(default)]
    pub foreign: u64,
    /// Frames with the test signature whose checksums or lengths did not verify (corrupted on
    /// the way): never counted as received.
    #[serde(default)]
    pub corrupted: u64,
    /// sent / the seconds from the first frame's scheduled time to the last frame's
    /// transmission.
    pub achieved_rate: f64,
    /// The largest lag of a burst behind its schedule, nanoseconds.
    pub max_lag_ns: u64,
    /// The 99.9th percentile of the frames' lag behind their schedule, nanoseconds (each frame
    /// of a burst counted at the burst's lag, an upper bound for all but its first; from a
    /// histogram of 1/16 relative precision, rounded up).
    #[serde(default)]
    pub lag_p999_ns: u64,
    /// Stalls of the sender: times it fell more than [`crate::STALL_NS`] (100 us) behind its
    /// schedule (one stall lasts until it caught up to within that again).
    #[serde(default)]
    pub stalls: u64,
    /// What stamped this direction's frames for its latency and delays.
    #[serde(default)]
    pub stamps: crate::stamps::StampSource,
    /// Frames to be timed (latency tags, or every frame for PDV) that the port's stamps missed:
    /// a transmit stamp that never came back, a frame received without one. Any makes the
    /// trial invalid; always 0 with the tester's own (user) stamps.
    #[serde(default)]
    pub stamps_missing: u64,
    /// Test frames the tester itself failed to transmit after its backend had accepted them
    /// (an AF_PACKET slot the kernel refused, DPDK `oerrors`). Never counted as the DUT's loss:
    /// a trial with any is invalid.
    #[serde(default)]
    pub tester_tx_dropped: u64,
    /// Frames the tester's receiving port dropped before the receiver saw them (AF_PACKET
    /// `tp_drops`, AF_XDP's ring and buffer drops, and with either the interface's own
    /// `rx_dropped` + `rx_missed_errors`, e.g. a full backlog on the tester's CPU; DPDK
    /// `imissed` + `ierrors` + `rx_nombuf`). A trial with any is invalid.
    #[serde(default)]
    pub tester_rx_dropped: u64,
    /// Times the sender fell further behind its schedule than the trial's lag bound
    /// (`tester.max_send_lag_*`) and caught up: each a window of frames (from the first sent
    /// beyond the bound to the catch-up's end, and as many again after it while the DUT's
    /// queue drains) whose loss may be the tester's. 0 without a bound.
    #[serde(default)]
    pub catch_ups: u64,
    /// Of `lost`, frames sent inside such a window: any makes the trial invalid (rule
    /// `lag_harm`); a loss outside every window is the DUT's, whatever the lag.
    #[serde(default)]
    pub lost_in_catch_up: u64,
    /// The most frames the sender put on the wire above its catch-up pace at once (the
    /// burstiness of the offered load: the depth a token bucket at rate x (1 + catch-up
    /// percent) would have needed to pass every frame). About a transmit burst for a sender that
    /// never fell behind; at most the lag bound in frames (plus a burst) with a bounded catch-up.
    #[serde(default)]
    pub catch_up_burst: u64,
    /// Latency tags, or PDV frames, left out of the delay figures because they were sent in a
    /// catch-up window (their delay includes the queue the tester's burst built).
    #[serde(default)]
    pub untimed_catch_up: u64,
}

impl DirectionCounts {
    /// Lost frames as a fraction of sent frames (0 when nothing was sent).
    pub fn loss_ratio(&self) -> f64 {
        if self.sent == 0 {
            0.0
        } else {
            self.lost as f64 / self.sent as f64
        }
    }

    /// RFC 2544 section 26.3: (input count - output count) * 100 / input count. `None` when
    /// nothing was sent.
    pub fn loss_percent(&self) -> Option<f64> {
        loss_percent(self.sent, self.received)
    }
}

/// The counts and timing of one direction.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct DirectionReport {
    /// The counts (in the JSON beside the fields below, not nested).
    #[serde(flatten)]
    pub counts: DirectionCounts,
    /// Frames received that were not test frames (ARP, NDP, other).
    pub other: u64,
    /// Seconds from the first frame's scheduled time to the last frame's transmission.
    pub send_duration_s: f64,
    /// Latency samples of the tagged frames, nanoseconds; a lost tag is `u64::MAX`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub latency_ns: Vec<u64>,
    /// Per-frame delay statistics, when the trial asked for them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pdv: Option<PdvReport>,
    /// The sequence number (from 0 at the trial's first frame) of the last frame that was sent
    /// and never received; `None` when nothing was lost. (Its send time is the trial's
    /// schedule's business: the procedures crate's system recovery reads it.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_lost_seq: Option<u64>,
    /// The longest time between two receptions of this trial's test frames, nanoseconds (the
    /// receiver's clock, read once per received burst): an interruption as the receiving side
    /// saw it, from the last frame before it to the first after (RFC 6201's timestamp
    /// method). 0 with fewer than two bursts received.
    #[serde(default)]
    pub max_rx_gap_ns: u64,
    /// When that gap ended, nanoseconds after the trial's sending began.
    #[serde(default)]
    pub max_rx_gap_end_ns: u64,
}

impl Serialize for DirectionReport {
    /// The fields in the order a trial's JSON has always had them: the counts with `other`
    /// and `send_duration_s` among them (a derived flatten would put the counts first). The
    /// round trip test below fails when a field is left out here.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let c = &self.counts;
        let optional =
            usize::from(!self.latency_ns.is_empty()) + usize::from(self.pdv.is_some()) + usize::from(self.last_lost_seq.is_some());
        let mut st = s.serialize_struct("DirectionReport", 24 + optional)?;
        st.serialize_field("sent", &c.sent)?;
        st.serialize_field("received", &c.received)?;
        st.serialize_field("lost", &c.lost)?;
        st.serialize_field("duplicates", &c.duplicates)?;
        st.serialize_field("reordered", &c.reordered)?;
        st.serialize_field("unexpected", &c.unexpected)?;
        st.serialize_field("foreign", &c.foreign)?;
        st.serialize_field("corrupted", &c.corrupted)?;
        st.serialize_field("other", &self.other)?;
        st.serialize_field("tester_tx_dropped", &c.tester_tx_dropped)?;
        st.serialize_field("tester_rx_dropped", &c.tester_rx_dropped)?;
        st.serialize_field("send_duration_s", &self.send_duration_s)?;
        st.serialize_field("achieved_rate", &c.achieved_rate)?;
        st.serialize_field("max_lag_ns", &c.max_lag_ns)?;
        st.serialize_field("lag_p999_ns", &c.lag_p999_ns)?;
        st.serialize_field("stalls", &c.stalls)?;
        st.serialize_field("stamps", &c.stamps)?;
        st.serialize_field("stamps_missing", &c.stamps_missing)?;
        st.serialize_field("catch_ups", &c.catch_ups)?;
        st.serialize_field("lost_in_catch_up", &c.lost_in_catch_up)?;
        st.serialize_field("catch_up_burst", &c.catch_up_burst)?;
        st.serialize_field("untimed_catch_up", &c.untimed_catch_up)?;
        if !self.latency_ns.is_empty() {
            st.serialize_field("latency_ns", &self.latency_ns)?;
        }
        if let Some(p) = &self.pdv {
            st.serialize_field("pdv", p)?;
        }
        if let Some(l) = &self.last_lost_seq {
            st.serialize_field("last_lost_seq", l)?;
        }
        st.serialize_field("max_rx_gap_ns", &self.max_rx_gap_ns)?;
        st.serialize_field("max_rx_gap_end_ns", &self.max_rx_gap_end_ns)?;
        st.end()
    }
}

/// The one-way delay of every frame of a direction, as recorded (RFC 8219 section 7.3). The
/// statistics (PDV, IPDV, percentiles, CDF) are the results crate's: `xlat_results::delay`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PdvReport {
    /// The delay of every frame sent: each received frame's, and each lost frame (late ones
    /// included) as an infinite delay (RFC 8219 section 7.3.1).
    pub delays: DelayRecorder,
    /// D(i) - D(i-1) over received frames in arrival order (RFC 8219 section 7.3.2).
    pub ipdv: IpdvRecorder,
    /// More than 0.1 % of the frames were lost: like PDV, IPDV is infinite (a lost frame's
    /// delay is infinite), whatever `ipdv` holds about the frames that arrived.
    #[serde(default)]
    pub ipdv_infinite: bool,
    /// Frames whose delay was measured.
    pub timed: u64,
    /// Frames later than the frame timeout: counted as lost.
    pub late: u64,
    /// Frames received whose delays are left out: they were sent in a catch-up window.
    #[serde(default)]
    pub untimed_catch_up: u64,
    /// How long after the start of its burst each frame was stamped (mean and largest, ns):
    /// what one transmit stamp per burst would have added to the measured delays.
    #[serde(default)]
    pub burst_stamp_skew_mean_ns: u64,
    #[serde(default)]
    pub burst_stamp_skew_max_ns: u64,
}

/// The result of one trial.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TrialReport {
    /// False when the trial cannot be trusted (the sender could not keep the rate or the
    /// duration x 1.00001 limit); its counts must not be judged as pass or fail.
    pub valid: bool,
    /// Why the trial is invalid, one sentence each.
    pub invalid_reasons: Vec<String>,
    /// The rule behind each of `invalid_reasons`, in the same order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub invalid_rules: Vec<Rule>,
    /// The catch-up bound the sender kept after falling behind (`None`: no lag bound, so
    /// siitperf's prompt catch-up and only its end-of-sending rule).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catch_up: Option<CatchUp>,
    pub frame_size: usize,
    pub rate: u64,
    pub duration_s: f64,
    pub timeout_ms: u64,
    pub forward: Option<DirectionReport>,
    pub reverse: Option<DirectionReport>,
    /// The preliminary phase of a stateful test (RFC 9693), when the trial had one. When it
    /// failed (sending too slow, state table not filled), phase 2 did not run: `forward` and
    /// `reverse` are then `None` and the trial is invalid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preliminary: Option<PreliminaryReport>,
    /// The DUT commands (configuration `[dut]`) run for this trial, in order: what each
    /// printed, how long it took, how it ended (filled in by the runner that ran them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dut_hooks: Vec<HookRun>,
    /// The DUT's and the tester's CPUs over the trial (phase 2 of a stateful one), when the
    /// runner read them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<crate::load::LoadReport>,
}

/// One run of a DUT command (`dut.before_trial`, `dut.between_phases`, `dut.count`, ...).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HookRun {
    /// The configuration key: `dut.before_trial`, ...
    pub key: String,
    pub command: String,
    pub seconds: f64,
    /// The exit status; `None` when it was killed at its deadline or could not start.
    pub exit_status: Option<i32>,
    /// The end of its standard output (the count of `dut.count`), empty when not kept.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub output: String,
}

/// What the preliminary phase (phase 1) of a stateful test did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PreliminaryReport {
    /// N and R as asked.
    pub frames: u64,
    pub rate: u64,
    /// Frames the Initiator sent (foreground and background).
    pub sent: u64,
    /// Distinct phase 1 test frames the Responder received (foreground and background).
    pub received: u64,
    /// Of those, foreground (IPv4) frames: each one's 4-tuple was learnt.
    pub foreground_received: u64,
    /// Foreground frames the Initiator sent (siitperf's "foreground preliminary frames").
    pub foreground_sent: u64,
    /// Filled entries of the state table after phase 1: min(foreground received, M).
    pub valid_entries: u64,
    /// M: the state table's size.
    pub state_table: u64,
    /// Seconds from the first frame's scheduled time to the last frame's transmission.
    pub send_duration_s: f64,
    /// Phase 1 sending ended within N / R x 1.00001 s.
    pub sending_valid: bool,
    /// The largest lag of a phase 1 burst behind its schedule, nanoseconds, and the sender's
    /// stalls (over [`crate::STALL_NS`]), as a direction's `max_lag_ns` and `stalls`. A sender
    /// that stalls catches up with a burst, which a rate-limiting DUT may drop: the tester's
    /// doing, which `tester.max_send_lag_us` bounds (phase 1 is then invalid beyond it).
    #[serde(default)]
    pub max_lag_ns: u64,
    #[serde(default)]
    pub stalls: u64,
    /// Learnt 4-tuples that equal an earlier learnt one (the DUT mapped two connections onto
    /// one tuple), when the enumeration promised unique tuples and the check ran; else `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duplicate_tuples: Option<u64>,
    /// Test frames of phase 1 that the Responder's port saw but were not this phase's (a
    /// straggler of another trial), duplicates, corrupted frames, and the tester's own drops,
    /// as in a direction's report.
    pub unexpected: u64,
    pub duplicates: u64,
    pub corrupted: u64,
    pub tester_tx_dropped: u64,
    pub tester_rx_dropped: u64,
    /// The connections in the DUT's table after phase 1, as its `dut.count` command printed
    /// them (filled in by the runner that ran it; `None`: not counted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dut_connections: Option<u64>,
}

impl PreliminaryReport {
    /// Every entry of the state table holds a learnt tuple (siitperf's "Preliminary phase
    /// finished." rather than "Failed to fill state table").
    pub fn table_filled(&self) -> bool {
        self.valid_entries >= self.state_table
    }
}

impl TrialReport {
    /// A valid report of `spec`'s trial with nothing measured yet.
    pub fn of(spec: &crate::spec::TrialSpec) -> TrialReport {
        TrialReport {
            dut_hooks: Vec::new(),
            load: None,
            preliminary: None,
            valid: true,
            invalid_reasons: Vec::new(),
            invalid_rules: Vec::new(),
            catch_up: spec.catch_up(),
            frame_size: spec.frame_size,
            rate: spec.rate,
            duration_s: spec.duration_s,
            timeout_ms: spec.timeout_ms,
            forward: None,
            reverse: None,
        }
    }

    /// Mark the trial invalid, saying why (one sentence).
    pub fn invalidate(&mut self, why: String) {
        self.invalidate_by(Rule::Other, why);
    }

    /// Mark the trial invalid by `rule`, saying why (one sentence).
    pub fn invalidate_by(&mut self, rule: Rule, why: String) {
        self.valid = false;
        self.invalid_reasons.push(why);
        self.invalid_rules.push(rule);
    }

    /// Invalid, and only by rules among `rules`.
    pub fn invalid_only_by(&self, rules: &[Rule]) -> bool {
        !self.valid && !self.invalid_rules.is_empty() && self.invalid_rules.iter().all(|r| rules.contains(r))
    }

    /// Invalid, and only because frames sent in a catch-up were lost ([`Rule::LagHarm`]): the
    /// DUT lost frames, but the tester's burst may have made it.
    pub fn only_lag_harmed(&self) -> bool {
        self.invalid_only_by(&[Rule::LagHarm])
    }

    /// The reports of the active directions.
    pub fn directions(&self) -> impl Iterator<Item = (&'static str, &DirectionReport)> {
        [("forward", self.forward.as_ref()), ("reverse", self.reverse.as_ref())]
            .into_iter()
            .filter_map(|(n, d)| d.map(|d| (n, d)))
    }

    /// Frames lost over all active directions.
    pub fn total_lost(&self) -> u64 {
        self.directions().map(|(_, d)| d.counts.lost).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every field of a direction set apart from its default.
    fn full() -> DirectionReport {
        DirectionReport {
            counts: DirectionCounts {
                sent: 1,
                received: 2,
                lost: 3,
                duplicates: 4,
                reordered: 5,
                unexpected: 6,
                foreign: 7,
                corrupted: 8,
                achieved_rate: 9.5,
                max_lag_ns: 10,
                lag_p999_ns: 11,
                stalls: 12,
                stamps: crate::stamps::StampSource::Kernel,
                stamps_missing: 13,
                tester_tx_dropped: 14,
                tester_rx_dropped: 15,
                catch_ups: 23,
                lost_in_catch_up: 24,
                catch_up_burst: 25,
                untimed_catch_up: 26,
            },
            other: 16,
            send_duration_s: 17.5,
            latency_ns: vec![18],
            pdv: Some(PdvReport {
                timed: 19,
                ..PdvReport::default()
            }),
            last_lost_seq: Some(20),
            max_rx_gap_ns: 21,
            max_rx_gap_end_ns: 22,
        }
    }

    #[test]
    fn a_direction_round_trips_with_every_field() {
        let d = full();
        let text = serde_json::to_string(&d).unwrap();
        assert_eq!(serde_json::from_str::<DirectionReport>(&text).unwrap(), d, "{text}");
        let bare = DirectionReport::default();
        let text = serde_json::to_string(&bare).unwrap();
        assert_eq!(serde_json::from_str::<DirectionReport>(&text).unwrap(), bare, "{text}");
    }

    #[test]
    fn a_directions_json_keeps_its_field_order() {
        // As a trial's JSON had it before the counts were one struct (`other` and
        // `send_duration_s` among them).
        let v = serde_json::to_string(&full()).unwrap();
        let keys: Vec<&str> = v.split(['{', ',']).filter_map(|f| f.strip_prefix('"')?.split('"').next()).collect();
        assert_eq!(
            keys[..18],
            [
                "sent",
                "received",
                "lost",
                "duplicates",
                "reordered",
                "unexpected",
                "foreign",
                "corrupted",
                "other",
                "tester_tx_dropped",
                "tester_rx_dropped",
                "send_duration_s",
                "achieved_rate",
                "max_lag_ns",
                "lag_p999_ns",
                "stalls",
                "stamps",
                "stamps_missing",
            ],
            "{v}"
        );
        assert!(
            v.ends_with(",\"last_lost_seq\":20,\"max_rx_gap_ns\":21,\"max_rx_gap_end_ns\":22}"),
            "{v}"
        );
    }
}
