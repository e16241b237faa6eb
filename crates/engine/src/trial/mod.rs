//! The tester: two ports, their neighbour handling, and one trial at a time (RFC 2544 sections
//! 23-25: trial, duration, address resolution).
//!
//! A trial runs in four steps ([`Tester::run_trial`]): `check` the spec and the ports, `plan`
//! the senders and receivers and the cores they run on, `run` one worker thread per core
//! (`worker.rs`), and `assemble` the report. Every wait ends at a deadline: a sender gives up
//! half a second after the duration x 1.00001 limit, receivers wait the timeout after their
//! sender, and no worker runs past the sum of both plus half a second. A worker that fails stops
//! the others; so does Ctrl-C (the abort flag).

mod receiver;
mod schedule;
mod sender;
mod worker;

use crate::clock::Clock;
use crate::delay::{DelayRecorder, IpdvRecorder};
use crate::neighbour::Neighbour;
use crate::pin::{allowed_cores, pin_current_thread};
use crate::report::{DirectionReport, PdvReport, PreliminaryReport, TrialReport};
use crate::spec::{CpuPlan, PhaseTwoAfter, PreliminarySpec, SpecError, TrialSpec};
use receiver::{Count, OwnTags, PdvState, Receiver};
use schedule::{Schedule, TagPlan};
use sender::{Sender, Split, StampSkew, TS_RING};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use worker::{dir_index, run_worker, Shared, Worker};
use xlat_io::{IoError, Port, Queues, RxQueue, TxQueue, RX_BURST};
use xlat_traffic::{BurstScratch, Direction, DirectionStream, Setup, SideId, StateTable, Stateful, Variation};
use xlat_wire::{classify, MacAddr};

pub use xlat_trial::{MAX_FRAMES, TOLERANCE};
/// A sender still sending this long after the duration x TOLERANCE limit gives up.
const GIVE_UP_S: f64 = 0.5;
/// No worker runs longer than this after the receivers' timeout should have ended.
const HARD_MARGIN_S: f64 = 0.5;
/// How long a trial waits for a port's link to come up before it fails.
const LINK_WAIT: Duration = Duration::from_secs(2);
/// The top byte of the 64-bit field carries a trial tag, so that a straggler from an earlier
/// trial is never counted in a later one; the low 56 bits are the sequence number.
const TAG_SHIFT: u32 = 56;
const SEQ_MASK: u64 = (1 << TAG_SHIFT) - 1;
/// RFC 8219 section 7.3.1: PDV takes the 99.9th percentile, so with more than 0.1 % of the
/// frames lost (infinite delay) PDV is infinite; the same holds for IPDV here.
const PDV_LOST_LIMIT: f64 = 0.001;

/// Errors that stop a trial (as opposed to an invalid trial, which is a result).
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Io(#[from] IoError),
    #[error("{side} port: {msg}")]
    Port { side: &'static str, msg: String },
    #[error("{0}")]
    Stream(#[from] xlat_traffic::StreamError),
    #[error("{0}")]
    Spec(#[from] SpecError),
    #[error(
        "frame size {frame_size} makes {len}-byte frames (without FCS) on the {side} port {port}, \
         which carries at most {max} bytes (its MTU plus the 14-byte Ethernet header, or its buffers)"
    )]
    FrameTooLong {
        frame_size: usize,
        len: usize,
        side: &'static str,
        port: String,
        max: usize,
    },
    #[error("CPU core {core}: {msg}")]
    Cpu { core: usize, msg: String },
    #[error("a worker thread panicked")]
    Panicked,
    #[error("interrupted")]
    Interrupted,
    #[error("the hook between the phases failed: {0}")]
    Hook(String),
    #[error("{0}")]
    State(#[from] xlat_traffic::StateError),
}

type Res<T> = std::result::Result<T, EngineError>;

/// A DUT hook run between the phases of a stateful trial; `Err` carries what went wrong.
pub type PhaseHook = Box<dyn FnMut() -> std::result::Result<(), String> + Send>;

/// One side's port with the MACs its frames use.
struct SidePort<P: Port> {
    id: SideId,
    name: String,
    mac: MacAddr,
    dut_mac: Option<MacAddr>,
    /// Its queue sets (one per queue of a multi-queue port).
    q: Vec<Queues<P::Tx, P::Rx>>,
}

impl<P: Port> SidePort<P> {
    /// Take what every receive queue holds, handing ARP/NDP to `nb` (answers go out on the
    /// control queue of the set the request came in on).
    fn poll_control(&mut self, nb: &mut Neighbour<'_>) -> Res<()> {
        for set in &mut self.q {
            set.rx.rx_burst(RX_BURST, |f| nb.handle(&classify(f), &mut set.ctl))?;
        }
        Ok(())
    }
}

/// How many frames of a direction go out in one go on one queue before the next queue's turn
/// (several queues per port): a burst's worth, so that each sender still sends whole bursts.
const QUEUE_CHUNK: u64 = 64;

/// The tester: two ports joined through the DUT.
pub struct Tester<P: Port> {
    setup: Setup,
    clock: Clock,
    cpus: CpuPlan,
    /// Trials run since the tag start was set; trial `n`'s tag is `tag_start + n` (mod 256).
    trials: u64,
    tag_start: u64,
    /// Set from outside (Ctrl-C) to end the running trial at once.
    abort: &'static AtomicBool,
    /// Run between the preliminary phase and phase 2 of a stateful trial (a DUT hook).
    between_phases: Option<PhaseHook>,
    /// After which phase 1 a stateful trial runs its phase 2.
    phase_two_after: PhaseTwoAfter,
    left: SidePort<P>,
    right: SidePort<P>,
    // Dropped after the queues above (fields drop in order).
    ports: (P, P),
}

impl<P: Port> Tester<P> {
    /// Open both ports' queues and check their links (waiting up to 5 s for them to come up).
    pub fn new(setup: Setup, mut left: P, mut right: P, cpus: CpuPlan) -> Res<Self> {
        let deadline = Instant::now() + Duration::from_secs(5);
        for (p, side) in [(&left, "left"), (&right, "right")] {
            while !p.link_up() {
                if Instant::now() > deadline {
                    return Err(EngineError::Port {
                        side,
                        msg: format!("link of {} is down", p.name()),
                    });
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        let queues = cpus.queues.max(1);
        let mk = |p: &mut P, id: SideId, s: &Setup| -> Res<SidePort<P>> {
            let side = s.side(id);
            if queues > p.max_queues() {
                return Err(EngineError::Port {
                    side: id.name(),
                    msg: format!("{} opens at most {} queues, {queues} asked", p.name(), p.max_queues()),
                });
            }
            Ok(SidePort {
                id,
                name: p.name(),
                mac: side.tester_mac.unwrap_or(p.mac()),
                dut_mac: side.dut_mac,
                q: p.open_queues(queues)?,
            })
        };
        let l = mk(&mut left, SideId::Left, &setup)?;
        let r = mk(&mut right, SideId::Right, &setup)?;
        Ok(Tester {
            setup,
            clock: Clock::calibrate(),
            cpus,
            trials: 0,
            tag_start: 0,
            // One flag per tester unless the caller gives one (a few bytes, never freed).
            abort: Box::leak(Box::new(AtomicBool::new(false))),
            between_phases: None,
            phase_two_after: PhaseTwoAfter::default(),
            left: l,
            right: r,
            ports: (left, right),
        })
    }

    /// The flag that ends the running trial (and refuses the next ones) with
    /// [`EngineError::Interrupted`] when set, e.g. from a Ctrl-C handler.
    pub fn abort_flag(&self) -> &'static AtomicBool {
        self.abort
    }

    /// Use `flag` as the abort flag (see [`Tester::abort_flag`]), e.g. one a signal handler sets.
    pub fn set_abort_flag(&mut self, flag: &'static AtomicBool) {
        self.abort = flag;
    }

    /// Run `hook` after the preliminary phase of every stateful trial and before its phase 2
    /// (e.g. a command that empties the DUT's connection table, to show that phase 2 then
    /// fails). An `Err` ends the trial with [`EngineError::Hook`].
    pub fn set_between_phases(&mut self, hook: Option<PhaseHook>) {
        self.between_phases = hook;
    }

    /// After which phase 1 the next stateful trials run phase 2: by default only after a
    /// valid one; siitperf's command lines run it after an invalid one too (see
    /// [`PhaseTwoAfter`]), the report saying why the trial is invalid all the same.
    pub fn set_phase_two_after(&mut self, when: PhaseTwoAfter) {
        self.phase_two_after = when;
    }

    /// Let the next trial's tag (the top byte of every test frame's 64-bit field) be `start + 1`,
    /// and forget the tags used so far. A tester's tags start at 1 unless this is called; the
    /// binary starts each process at a different place, so that two testers sending into the
    /// same ports tell each other's frames apart: a test frame with a tag this tester never used
    /// makes the trial invalid ([`DirectionReport::foreign`](crate::DirectionReport)).
    pub fn set_trial_tag_start(&mut self, start: u8) {
        self.tag_start = u64::from(start);
        self.trials = 0;
    }

    pub fn setup(&self) -> &Setup {
        &self.setup
    }

    /// Choose the active directions for the next trials (e.g. the self-test's forward-only,
    /// reverse-only and bidirectional searches on the same open ports).
    pub fn set_directions(&mut self, forward: bool, reverse: bool) {
        self.setup.forward = forward;
        self.setup.reverse = reverse;
    }

    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// The DUT MACs in use (after [`Tester::prepare`]).
    pub fn dut_macs(&self) -> (Option<MacAddr>, Option<MacAddr>) {
        (self.left.dut_mac, self.right.dut_mac)
    }

    /// Queue sets per port (each with its sender and receiver).
    pub fn queues(&self) -> usize {
        self.left.q.len()
    }

    pub fn port_names(&self) -> (String, String) {
        (self.left.name.clone(), self.right.name.clone())
    }

    /// Resolve the DUT's MACs that the configuration does not give, and announce the tester's
    /// addresses to the DUT. Answers the DUT's requests meanwhile. Call before the first trial;
    /// [`Tester::run_trial`] announces again before each trial.
    pub fn prepare(&mut self, timeout: Duration) -> Res<()> {
        let setup = &self.setup;
        for sp in [&mut self.left, &mut self.right] {
            let mut nb = Neighbour::new(setup, sp.id, sp.mac);
            let deadline = Instant::now() + timeout;
            let mut next_ask = Instant::now();
            while sp.dut_mac.is_none() {
                let now = Instant::now();
                if now > deadline {
                    let s = setup.side(sp.id);
                    let what = match (s.dut_ipv4, s.dut_ipv6) {
                        (Some(a), _) => format!("no ARP reply from the DUT's {a}"),
                        (None, Some(a)) => format!("no neighbour advertisement from the DUT's {a}"),
                        (None, None) => {
                            "the DUT's MAC is not configured and neither is its address to resolve it (set dut_mac, or dut_ipv4 / dut_ipv6)"
                                .into()
                        }
                    };
                    return Err(EngineError::Port {
                        side: sp.id.name(),
                        msg: format!("{} on {}", what, sp.name),
                    });
                }
                if now >= next_ask {
                    nb.solicit_dut(&mut sp.q[0].ctl);
                    next_ask = now + Duration::from_millis(200);
                }
                sp.poll_control(&mut nb)?;
                if let Some(m) = nb.learnt_dut_mac {
                    sp.dut_mac = Some(m);
                }
                std::thread::yield_now();
            }
        }
        self.announce()
    }

    /// Announce all tester addresses on both sides and keep answering for 20 ms after.
    fn announce(&mut self) -> Res<()> {
        let setup = &self.setup;
        for sp in [&mut self.left, &mut self.right] {
            let mut nb = Neighbour::new(setup, sp.id, sp.mac);
            nb.learnt_dut_mac = sp.dut_mac;
            let v4 = setup.tester_addresses_v4(sp.id);
            let v6 = setup.tester_addresses_v6(sp.id);
            let mut cursor = 0;
            let start = Instant::now();
            while !nb.announce(&mut sp.q[0].ctl, &mut cursor, 32, &v4, &v6) {
                sp.poll_control(&mut nb)?;
                if start.elapsed() > Duration::from_secs(30) {
                    return Err(EngineError::Port {
                        side: sp.id.name(),
                        msg: "announcing the tester's addresses takes too long".into(),
                    });
                }
            }
        }
        let until = Instant::now() + Duration::from_millis(20);
        while Instant::now() < until {
            for sp in [&mut self.left, &mut self.right] {
                let mut nb = Neighbour::new(setup, sp.id, sp.mac);
                sp.poll_control(&mut nb)?;
            }
        }
        Ok(())
    }

    /// Run one trial: send at `spec.rate` for `spec.duration_s` in each active direction, keep
    /// receiving for the timeout, and report what each direction sent and received. With a
    /// stateful setup, the trial is phase 2 of a stateful test, after its preliminary phase
    /// (`spec.preliminary`, see [`Tester::run_stateful`]).
    pub fn run_trial(&mut self, spec: &TrialSpec) -> Res<TrialReport> {
        match (spec.preliminary, self.initiator()) {
            (None, None) => {}
            (Some(p), Some(d)) => return self.run_stateful(spec, p, d),
            (Some(_), None) => return Err(SpecError::NotStateful.into()),
            (None, Some(_)) => return Err(SpecError::NoPreliminary.into()),
        }
        let active = [self.setup.forward, self.setup.reverse];
        self.check(spec, active, Phase::Stateless)?;
        self.ready()?;
        let t0 = self.clock.now() + self.clock.ticks(0.05);
        Ok(self.run_phase(spec, spec.frames(), active, Phase::Stateless, t0)?.0)
    }

    /// The Initiator's direction of a stateful setup; `None` for a stateless one.
    fn initiator(&self) -> Option<Direction> {
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
    /// where [`Tester::set_phase_two_after`] asks for it (siitperf's command lines). Each phase
    /// has its own trial tag: a late phase 1 frame is never a phase 2 frame.
    fn run_stateful(&mut self, spec: &TrialSpec, p: PreliminarySpec, init: Direction) -> Res<TrialReport> {
        p.validate()?;
        let active = [self.setup.forward, self.setup.reverse];
        self.check(spec, active, Phase::Test(init))?;
        let (mut report, table, t1) = self.phase_one(spec, p, init)?;
        let filled = report.preliminary.as_ref().is_some_and(|p| p.valid_entries >= p.state_table);
        let go_on = match self.phase_two_after {
            PhaseTwoAfter::ValidPhaseOne => report.valid,
            PhaseTwoAfter::AnyPhaseOne => true,
            PhaseTwoAfter::FilledTable => filled,
        };
        if !go_on {
            return Ok(report);
        }
        let t0 = self.between_phases(t1, p)?;
        let (r2, _) = self.run_phase(spec, spec.frames(), active, Phase::Learn(init, &table).phase_two(), t0)?;
        // Phase 1's reasons (if it ran after an invalid phase 1) stay, phase 2's follow.
        report.valid &= r2.valid;
        report.invalid_reasons.extend(r2.invalid_reasons);
        report.forward = r2.forward;
        report.reverse = r2.reverse;
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
        let t0 = self.between_phases(t1, p)?;
        let (r2, _) = self.run_phase(&vspec, frames, active, Phase::Validate(&table), t0)?;
        for r in r2.invalid_reasons {
            report.invalidate(format!("Validation: {r}"));
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
        if frames > crate::trial::MAX_FRAMES {
            return Err(SpecError::Preliminary(format!(
                "the validation of {entries} connections needs {frames} frames, more than the {} one phase can track",
                crate::trial::MAX_FRAMES
            ))
            .into());
        }
        Ok(frames)
    }

    /// Between phase 1 (started at tick `t1`) and the next phase: run the between-phases hook,
    /// wait until D after phase 1 started (phase 1 ran to its end, so never earlier), announce
    /// again; returns the tick the next phase starts at.
    fn between_phases(&mut self, t1: u64, p: PreliminarySpec) -> Res<u64> {
        if let Some(h) = &mut self.between_phases {
            h().map_err(EngineError::Hook)?;
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
            sent: d1.sent,
            received: d1.received,
            foreground_received: learnt[dir_index(init)],
            foreground_sent: xlat_traffic::enumerate::foreground_count(d1.sent, fg_n, fg_m),
            valid_entries: table.valid(),
            state_table: p.state_table,
            send_duration_s: d1.send_duration_s,
            sending_valid: d1.sent == p.frames && d1.send_duration_s <= limit,
            duplicate_tuples: None,
            unexpected: d1.unexpected,
            duplicates: d1.duplicates,
            corrupted: d1.corrupted,
            tester_tx_dropped: d1.tester_tx_dropped,
            tester_rx_dropped: d1.tester_rx_dropped,
            dut_connections: None,
        };
        let mut report = TrialReport::of(spec);
        let mut invalid = |why: String| report.invalidate(why);
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
        if pre.valid_entries < pre.state_table {
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

    /// One phase: the senders of the `active` directions and a receiver per port, `total`
    /// frames per direction from `t0` (ticks) on. Returns the report and, per direction, the
    /// 4-tuples learnt.
    fn run_phase(&mut self, spec: &TrialSpec, total: u64, active: [bool; 2], phase: Phase<'_>, t0: u64) -> Res<(TrialReport, [u64; 2])> {
        // Every receiver keeps a bit per frame: with several queues, as much memory in all as
        // one receiver of the largest trial.
        let queues = self.queues() as u64;
        if queues > 1 && total.saturating_mul(queues) > MAX_FRAMES {
            return Err(SpecError::TooManyFramesForQueues {
                frames: total,
                queues,
                max: MAX_FRAMES / queues,
            }
            .into());
        }
        self.trials += 1;
        let tag = (self.tag_start.wrapping_add(self.trials) & 0xff) << TAG_SHIFT;
        let own = OwnTags {
            start: self.tag_start,
            used: self.trials,
        };
        let clock = self.clock;
        let tags = TagPlan::new(spec, total);
        let tag_count = tags.map_or(0, |p| p.count as usize);
        let stamps = |n: usize| -> Vec<AtomicU64> { (0..n).map(|_| AtomicU64::new(0)).collect() };
        let tx_ts = [stamps(tag_count), stamps(tag_count)];
        let ring_len = if spec.pdv.is_some() { TS_RING } else { 0 };
        let frame_ts = [stamps(ring_len), stamps(ring_len)];

        let limit_s = spec.duration_s * TOLERANCE;
        let give_up_at = t0 + clock.ticks(limit_s + GIVE_UP_S);
        let timeout = clock.ticks_ms(spec.timeout_ms);
        let shared = Shared {
            clock,
            t0,
            timeout,
            hard_end: give_up_at + timeout + clock.ticks(HARD_MARGIN_S),
            done: [AtomicU64::new(0), AtomicU64::new(0)],
            senders_left: active.map(|a| AtomicUsize::new(if a { self.queues() } else { 0 })),
            last_end: [AtomicU64::new(0), AtomicU64::new(0)],
            n_active: active.iter().filter(|a| **a).count(),
            failed: AtomicBool::new(false),
            abort: self.abort,
        };
        let trial = TrialPlan {
            spec,
            tag,
            own,
            total,
            active,
            phase,
            tags,
            give_up_at,
            schedule: Schedule::new(spec, &clock),
            ns_mul: (1_000_000_000u128 << 32) / u128::from(clock.hz),
            tx_ts: &tx_ts,
            frame_ts: &frame_ts,
        };
        let cores = plan_cores(&self.cpus, self.queues());
        let workers = plan_workers(&self.setup, [&mut self.left, &mut self.right], &trial, cores)?;
        let workers = run_workers(workers, &shared)?;
        if self.abort.load(Ordering::Relaxed) {
            return Err(EngineError::Interrupted);
        }
        Ok(assemble(&trial, &shared, workers))
    }

    /// Refuse a trial that cannot run: a bad spec, a port whose link stays down, a frame the
    /// ports cannot carry ([`Tester::ready`] then resolves or re-announces the addresses).
    fn check(&mut self, spec: &TrialSpec, active: [bool; 2], phase: Phase<'_>) -> Res<()> {
        spec.validate()?;

        if self.abort.load(Ordering::Relaxed) {
            return Err(EngineError::Interrupted);
        }
        for (p, side) in [(&self.ports.0, "left"), (&self.ports.1, "right")] {
            let deadline = Instant::now() + LINK_WAIT;
            while !p.link_up() {
                if Instant::now() > deadline {
                    return Err(EngineError::Port {
                        side,
                        msg: format!("link of {} is down", p.name()),
                    });
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        for (p, sp, d) in [
            (&self.ports.0, &self.left, Direction::Forward),
            (&self.ports.1, &self.right, Direction::Reverse),
        ] {
            if !active[dir_index(d)] {
                continue;
            }
            // Any MAC will do to learn the length of the direction's frames.
            let stream = phase.stream(&self.setup, d, spec.frame_size, sp.mac, sp.mac)?;
            if stream.max_len() > p.max_frame_len() {
                return Err(EngineError::FrameTooLong {
                    frame_size: spec.frame_size,
                    len: stream.max_len(),
                    side: sp.id.name(),
                    port: sp.name.clone(),
                    max: p.max_frame_len(),
                });
            }
        }
        Ok(())
    }

    /// Resolve the DUT's MACs still unknown, or re-announce the tester's addresses: once before
    /// every trial (a stateful trial checks two phases' frames, but announces once).
    fn ready(&mut self) -> Res<()> {
        if self.left.dut_mac.is_none() || self.right.dut_mac.is_none() {
            self.prepare(Duration::from_secs(3))
        } else {
            self.announce()
        }
    }
}

/// What every sender and receiver of one trial needs to know.
struct TrialPlan<'a> {
    spec: &'a TrialSpec,
    tag: u64,
    own: OwnTags,
    total: u64,
    /// The directions that send (forward, reverse).
    active: [bool; 2],
    phase: Phase<'a>,
    tags: Option<TagPlan>,
    give_up_at: u64,
    schedule: Schedule,
    /// Ticks to nanoseconds: ns = ticks * ns_mul >> 32.
    ns_mul: u128,
    tx_ts: &'a [Vec<AtomicU64>; 2],
    frame_ts: &'a [Vec<AtomicU64>; 2],
}

/// Which phase of which kind of test a set of workers runs.
#[derive(Clone, Copy)]
enum Phase<'a> {
    /// A stateless test.
    Stateless,
    /// Checking the frames of phase 1 of a stateful test (Initiator's direction).
    Preliminary(Direction),
    /// Checking the frames of phase 2 of a stateful test (Initiator's direction).
    Test(Direction),
    /// Phase 1 running: the Initiator enumerates, the Responder learns into the table.
    Learn(Direction, &'a Arc<StateTable>),
    /// Phase 2 running: the Responder answers on the table and keeps learning.
    Answer(Direction, &'a Arc<StateTable>),
    /// A validation phase after phase 1: only the Responder sends, to every learnt tuple once
    /// in the table's order.
    Validate(&'a Arc<StateTable>),
}

impl<'a> Phase<'a> {
    fn phase_two(self) -> Phase<'a> {
        match self {
            Phase::Learn(d, t) => Phase::Answer(d, t),
            p => p,
        }
    }

    /// The stream that direction `d` sends in this phase.
    fn stream(self, setup: &Setup, d: Direction, size: usize, src: MacAddr, dst: MacAddr) -> Res<DirectionStream> {
        Ok(match self {
            Phase::Stateless => DirectionStream::new(setup, d, size, src, dst)?,
            Phase::Preliminary(i) | Phase::Learn(i, _) if d == i => DirectionStream::preliminary(setup, d, size, src, dst)?,
            Phase::Test(i) | Phase::Answer(i, _) if d == i => DirectionStream::new(setup, d, size, src, dst)?,
            Phase::Answer(_, t) => DirectionStream::responder(setup, d, size, src, dst, Arc::clone(t))?,
            Phase::Validate(t) => {
                let mut s = setup.clone();
                s.stateful.responder_tuples = Variation::Increasing;
                DirectionStream::responder(&s, d, size, src, dst, Arc::clone(t))?
            }
            Phase::Test(_) => {
                let v6 = setup.side(d.sender()).ip_version == xlat_traffic::IpVersion::V6;
                DirectionStream::responder(setup, d, size, src, dst, Arc::new(StateTable::with_version(1, v6)?))?
            }
            // Phase 1 sends only in the Initiator's direction.
            Phase::Preliminary(_) | Phase::Learn(..) => DirectionStream::preliminary(setup, d, size, src, dst)?,
        })
    }

    /// The table the receiver of direction `d` learns into.
    fn learns(self, d: Direction) -> Option<&'a StateTable> {
        match self {
            Phase::Learn(i, t) | Phase::Answer(i, t) if i == d => Some(t.as_ref()),
            _ => None,
        }
    }
}

/// The cores of (sender, receiver) of the left and the right port, per queue. By default each
/// port's queue gets its own core (queue `q` of the left port the `q`-th this process may use,
/// the right port's after the left's, wrapping around: on two cores with two queues each
/// direction's senders run on both); roles given the same core share one worker thread. A
/// plan's cores are those of the first queue.
fn plan_cores(cpus: &CpuPlan, queues: usize) -> Vec<[(usize, usize); 2]> {
    let c = allowed_cores();
    let auto = |side: usize, q: usize| -> usize {
        if c.is_empty() {
            0
        } else {
            c[(side * queues + q) % c.len()]
        }
    };
    (0..queues)
        .map(|q| {
            if q > 0 {
                return [(auto(0, q), auto(0, q)), (auto(1, q), auto(1, q))];
            }
            let left_send = cpus.left_send.unwrap_or(auto(0, 0));
            let right_send = cpus.right_send.unwrap_or(auto(1, 0));
            [
                (left_send, cpus.left_recv.unwrap_or(left_send)),
                (right_send, cpus.right_recv.unwrap_or(right_send)),
            ]
        })
        .collect()
}

/// Build the senders of the active directions and a receiver per port, and group them into one
/// worker per core.
fn plan_workers<'s, P: Port>(
    setup: &'s Setup,
    sides: [&'s mut SidePort<P>; 2],
    trial: &TrialPlan<'s>,
    cores: Vec<[(usize, usize); 2]>,
) -> Res<Vec<Worker<'s, 's, P::Tx, P::Rx>>> {
    let mut workers: Vec<Worker<'s, 's, P::Tx, P::Rx>> = Vec::new();
    fn at<'w, 's, T: TxQueue, R: RxQueue>(workers: &'w mut Vec<Worker<'s, 's, T, R>>, core: usize) -> &'w mut Worker<'s, 's, T, R> {
        let i = match workers.iter().position(|w| w.core == core) {
            Some(i) => i,
            None => {
                workers.push(Worker {
                    core,
                    senders: Vec::new(),
                    receivers: Vec::new(),
                    cut_off: false,
                });
                workers.len() - 1
            }
        };
        &mut workers[i]
    }
    for (s, sp) in sides.into_iter().enumerate() {
        let (send_dir, recv_dir) = match sp.id {
            SideId::Left => (Direction::Forward, Direction::Reverse),
            SideId::Right => (Direction::Reverse, Direction::Forward),
        };
        let queues = sp.q.len() as u64;
        let (id, mac, dut_mac) = (sp.id, sp.mac, sp.dut_mac);
        for (q, Queues { tx, rx, ctl }) in sp.q.iter_mut().enumerate() {
            let (send_core, recv_core) = cores[q][s];
            let split = Split {
                queue: q as u64,
                queues,
                chunk: QUEUE_CHUNK,
            };
            if trial.active[dir_index(send_dir)] {
                let dut = dut_mac.ok_or(EngineError::Port {
                    side: id.name(),
                    msg: "the DUT's MAC is unknown".into(),
                })?;
                let stream = trial.phase.stream(setup, send_dir, trial.spec.frame_size, mac, dut)?;
                at(&mut workers, send_core).senders.push(Sender {
                    dir: send_dir,
                    split,
                    next: split.first(),
                    tx,
                    stream,
                    scratch: BurstScratch::new(trial.spec.burst),
                    total: trial.total,
                    tag: trial.tag,
                    burst: trial.spec.burst,
                    schedule: trial.schedule,
                    give_up_at: trial.give_up_at,
                    tags: trial.tags,
                    tx_ts: &trial.tx_ts[dir_index(send_dir)],
                    frame_ts: &trial.frame_ts[dir_index(send_dir)],
                    sent: 0,
                    max_lag: 0,
                    end: 0,
                    gave_up: false,
                    skew: StampSkew::default(),
                    dropped: 0,
                });
            }
            let counting = trial.active[dir_index(recv_dir)];
            let lanes = rx.lanes().max(1);
            let mut nb = Neighbour::new(setup, id, mac);
            nb.learnt_dut_mac = dut_mac;
            at(&mut workers, recv_core).receivers.push(Receiver {
                rx,
                ctl,
                nb,
                dir: counting.then_some(recv_dir),
                count: Count {
                    tag: trial.tag,
                    own: trial.own,
                    total: trial.total,
                    seen: if counting {
                        vec![0u64; trial.total.div_ceil(64) as usize]
                    } else {
                        Vec::new()
                    },
                    report: DirectionReport::default(),
                    split,
                    max_seen: vec![None; queues as usize * lanes],
                    tags: if counting { trial.tags } else { None },
                    rx_ts: if counting {
                        vec![0; trial.tags.map_or(0, |p| p.count as usize)]
                    } else {
                        Vec::new()
                    },
                    pdv: match trial.spec.pdv {
                        Some(p) if counting => Some(PdvState {
                            frame_timeout_ns: p.frame_timeout_ms.saturating_mul(1_000_000),
                            delays: if p.exact {
                                DelayRecorder::exact()
                            } else {
                                DelayRecorder::histogram()
                            },
                            ipdv: if p.exact {
                                IpdvRecorder::exact()
                            } else {
                                IpdvRecorder::histogram()
                            },
                            prev_seq: None,
                            timed: 0,
                            late: 0,
                            mul: trial.ns_mul,
                        }),
                        _ => None,
                    },
                    learnt: 0,
                },
                frame_ts: &trial.frame_ts[dir_index(recv_dir)],
                learn: if counting { trial.phase.learns(recv_dir) } else { None },
                fg: (u64::from(setup.fg_n.max(1)), u64::from(setup.fg_m)),
            });
        }
    }
    Ok(workers)
}

/// Run every worker on its own thread, pinned to its core, and wait for all of them. Returns
/// the first error of any worker (the others stop when one fails).
fn run_workers<'s, T: TxQueue, R: RxQueue>(workers: Vec<Worker<'s, 's, T, R>>, shared: &Shared<'_>) -> Res<Vec<Worker<'s, 's, T, R>>> {
    let results: Vec<Res<Worker<'s, 's, T, R>>> = std::thread::scope(|sc| {
        let handles: Vec<_> = workers
            .into_iter()
            .map(|mut w| {
                sc.spawn(move || -> Res<Worker<'s, 's, T, R>> {
                    if let Err(msg) = pin_current_thread(w.core) {
                        shared.failed.store(true, Ordering::Relaxed);
                        return Err(EngineError::Cpu { core: w.core, msg });
                    }
                    crate::pin::raise_priority();
                    run_worker(&mut w, shared)?;
                    Ok(w)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    shared.failed.store(true, Ordering::Relaxed);
                    Err(EngineError::Panicked)
                })
            })
            .collect()
    });
    results.into_iter().collect()
}

/// Turn what the workers counted into the trial's report, judging its validity.
fn assemble<T: TxQueue, R: RxQueue>(trial: &TrialPlan<'_>, sh: &Shared<'_>, workers: Vec<Worker<'_, '_, T, R>>) -> (TrialReport, [u64; 2]) {
    let clock = sh.clock;
    let spec = trial.spec;
    let mut report = TrialReport::of(spec);
    let mut invalid = |why: String| report.invalidate(why);
    if workers.iter().any(|w| w.cut_off) {
        invalid(format!(
            "the trial was stopped at its deadline ({:.3} s after the start) before every receiver had waited out the timeout, the test is invalid",
            clock.secs(sh.hard_end - sh.t0)
        ));
    }
    // One sender and one receiver per direction: the queues' own merged into the first's.
    let mut senders: Vec<Sender<'_, T>> = Vec::new();
    let mut receivers: Vec<Receiver<'_, '_, R, T>> = Vec::new();
    for w in workers {
        for s in w.senders {
            match senders.iter_mut().find(|m| m.dir == s.dir) {
                Some(m) => m.absorb(&s),
                None => senders.push(s),
            }
        }
        for r in w.receivers.into_iter().filter(|r| r.dir.is_some()) {
            match receivers.iter_mut().find(|m| m.dir == r.dir) {
                Some(m) => m.count.absorb(r.count),
                None => receivers.push(r),
            }
        }
    }
    let limit = spec.duration_s * TOLERANCE;
    let mut dirs = Vec::new();
    let mut learnt = [0u64; 2];
    for s in senders {
        let Some(i) = receivers.iter().position(|r| r.dir == Some(s.dir)) else {
            continue;
        };
        let count = receivers.swap_remove(i).count;
        let d = s.dir;
        learnt[dir_index(d)] = count.learnt;
        let mut dr = count.report;
        dr.sent = s.sent;
        dr.lost = s.sent.saturating_sub(dr.received);
        dr.tester_tx_dropped = s.dropped;
        dr.send_duration_s = clock.secs(s.end.saturating_sub(sh.t0));
        dr.achieved_rate = if dr.send_duration_s > 0.0 {
            s.sent as f64 / dr.send_duration_s
        } else {
            0.0
        };
        dr.max_lag_ns = clock.ns(s.max_lag);
        if dr.lost > 0 {
            dr.last_lost_seq = last_missing(&count.seen, s.sent);
        }
        if let Some(p) = count.pdv {
            dr.pdv = Some(pdv_report(p, dr.lost, s.sent, &s.skew, &clock));
        }
        if s.gave_up {
            invalid(format!(
                "{} sending stopped {:.1} s after the {:.10} seconds limit with {} of {} frames sent (the port took no more), the test is invalid",
                d.title(),
                GIVE_UP_S,
                limit,
                s.sent,
                s.total
            ));
        } else if dr.send_duration_s > limit {
            invalid(format!(
                "{} sending exceeded the {:.10} seconds limit (took {:.6} s), the test is invalid",
                d.title(),
                limit,
                dr.send_duration_s
            ));
        }
        if dr.tester_tx_dropped + dr.tester_rx_dropped > 0 {
            invalid(format!(
                "{}: the tester itself dropped frames ({} not transmitted, {} not received by its port), the test is invalid",
                d.title(),
                dr.tester_tx_dropped,
                dr.tester_rx_dropped
            ));
        }
        if dr.foreign > 0 {
            invalid(format!(
                "{}: {} test frames carried a trial tag this tester never used: another tester is sending into these ports (or frames of an earlier run came back late), the test is invalid",
                d.title(),
                dr.foreign
            ));
        }
        if let Some(p) = trial.tags {
            let txs = &trial.tx_ts[dir_index(d)];
            dr.latency_ns = (0..p.count as usize)
                .map(|i| {
                    let (t, r) = (txs[i].load(Ordering::Relaxed), count.rx_ts[i]);
                    if t != 0 && r != 0 {
                        clock.ns(r.saturating_sub(t))
                    } else {
                        u64::MAX
                    }
                })
                .collect();
        }
        dirs.push((d, dr));
    }
    for (d, dr) in dirs {
        match d {
            Direction::Forward => report.forward = Some(dr),
            Direction::Reverse => report.reverse = Some(dr),
        }
    }
    (report, learnt)
}

/// What a direction recorded of its delays: every lost frame (including those later than the
/// frame timeout) is recorded as an infinite delay (RFC 8219 section 7.3.1), so PDV is infinite
/// when more than 0.1 % of the frames were lost; IPDV is then marked infinite too. The
/// statistics are computed from the record by the bench crate.
fn pdv_report(mut p: PdvState, lost: u64, sent: u64, skew: &StampSkew, clock: &Clock) -> PdvReport {
    p.delays.record_lost(lost);
    PdvReport {
        delays: p.delays,
        ipdv_infinite: sent > 0 && lost as f64 > PDV_LOST_LIMIT * sent as f64,
        ipdv: p.ipdv,
        timed: p.timed,
        late: p.late,
        burst_stamp_skew_mean_ns: skew.sum_ticks.checked_div(skew.frames).map_or(0, |t| clock.ns(t)),
        burst_stamp_skew_max_ns: clock.ns(skew.max_ticks),
    }
}

/// The highest sequence number below `sent` whose bit is clear.
fn last_missing(seen: &[u64], sent: u64) -> Option<u64> {
    let words = sent.div_ceil(64) as usize;
    for w in (0..words.min(seen.len())).rev() {
        let valid = if w as u64 == sent / 64 {
            (1u64 << (sent % 64)) - 1
        } else {
            u64::MAX
        };
        let missing = !seen[w] & valid;
        if missing != 0 {
            return Some(w as u64 * 64 + 63 - u64::from(missing.leading_zeros()));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trials_default_burst_is_the_ports_default_burst() {
        assert_eq!(xlat_trial::DEFAULT_BURST, xlat_io::DEFAULT_BURST);
    }

    #[test]
    fn last_missing_finds_the_highest_hole() {
        let mut seen = vec![u64::MAX; 4];
        assert_eq!(last_missing(&seen, 256), None);
        seen[1] &= !(1 << 5);
        assert_eq!(last_missing(&seen, 256), Some(69));
        // Bits at or above `sent` do not count.
        let seen2 = vec![u64::MAX, 0b0111];
        assert_eq!(last_missing(&seen2, 67), None);
        assert_eq!(last_missing(&seen2, 68), Some(67));
    }

    #[test]
    fn default_cores_give_each_port_its_own_core_and_a_plan_can_share_one() {
        let c = allowed_cores();
        let [l, r] = plan_cores(&CpuPlan::default(), 1)[0];
        assert_eq!(l, (c[0], c[0]));
        assert_eq!(r.0, r.1);
        let one = CpuPlan {
            left_send: Some(0),
            left_recv: Some(0),
            right_send: Some(0),
            right_recv: Some(0),
            queues: 1,
        };
        assert_eq!(plan_cores(&one, 1), vec![[(0, 0), (0, 0)]]);
    }

    #[test]
    fn queues_take_cores_in_turn_so_each_direction_spreads() {
        let c = allowed_cores();
        let plan = plan_cores(&CpuPlan::default(), 2);
        assert_eq!(plan.len(), 2);
        // The left port's queues: the first two cores (or the one there is, twice).
        assert_eq!(plan[0][0].0, c[0]);
        assert_eq!(plan[1][0].0, c[1 % c.len()]);
        // The right port's queues after them, wrapping around.
        assert_eq!(plan[0][1].0, c[2 % c.len()]);
        assert_eq!(plan[1][1].0, c[3 % c.len()]);
        // A plan's cores are the first queue's; the second queue keeps its own.
        let one = CpuPlan {
            left_send: Some(7),
            ..CpuPlan::default()
        };
        let plan = plan_cores(&one, 2);
        assert_eq!((plan[0][0], plan[1][0].0), ((7, 7), c[1 % c.len()]));
    }
}
