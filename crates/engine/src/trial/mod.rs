//! The tester: two ports, their neighbour handling, and one trial at a time (RFC 2544 sections
//! 23-25: trial, duration, address resolution).
//!
//! A trial runs in four steps ([`Tester::run_trial`]): `check` the spec and the ports, `plan`
//! the senders and receivers and the cores they run on, `run` one worker thread per core
//! (`worker.rs`), and `assemble` the report. Every wait ends at a deadline: a sender gives up
//! half a second after the duration x 1.00001 limit, receivers wait the timeout after their
//! sender, and no worker runs past the sum of both plus half a second. A worker that fails stops
//! the others; so does Ctrl-C (the abort flag).

mod assemble;
mod catch_up;
mod error;
mod phase;
mod plan;
mod port;
mod receiver;
mod ring;
pub(crate) use receiver::{Count, Receiver};
mod runner;
mod schedule;
mod seen;
mod sender;
mod split;
pub(crate) use sender::BurstSend;
mod stamps;
mod stateful;
mod worker;

use crate::clock::{Clock, RealtimeMap};
use crate::neighbour::Neighbour;
use assemble::{assemble, GIVE_UP_S};
pub use error::EngineError;
use error::Res;
use phase::dir_index;
use phase::{Phase, TrialPlan};
use plan::{plan_cores, plan_workers, run_workers};
use port::SidePort;
use receiver::OwnTags;
use ring::{TAG_SHIFT, TS_RING};
use schedule::{Schedule, TagPlan};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use worker::Shared;
use xlat_io::Port;
use xlat_traffic::{Direction, Setup, SideId};
use xlat_trial::report::TrialReport;
use xlat_trial::spec::{CpuPlan, SpecError, TrialSpec};
use xlat_trial::StampSource;
use xlat_wire::MacAddr;

pub use xlat_trial::{MAX_FRAMES, TOLERANCE};
/// No worker runs longer than this after the receivers' timeout should have ended.
const HARD_MARGIN_S: f64 = 0.5;
/// How long a sender waits for the kernel's transmit stamps after its last frame.
const STAMP_WAIT_S: f64 = 0.1;
/// How long a trial waits for a port's link to come up before it fails.
const LINK_WAIT: Duration = Duration::from_secs(2);

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
    /// What stamps the frames for latency and delays now.
    stamps: StampSource,
    /// What stamps them when a trial's spec does not say ([`Tester::use_stamps`]).
    chosen_stamps: StampSource,
    left: SidePort<P>,
    right: SidePort<P>,
    /// The ports' flow control as [`Tester::set_flow_control`] read it back.
    port_settings: Vec<xlat_trial::PortSettings>,
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
            stamps: StampSource::User,
            chosen_stamps: StampSource::User,
            left: l,
            right: r,
            port_settings: Vec::new(),
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

    /// Set both ports' Ethernet flow control (`Some(on)`; `None`: leave it) and record what
    /// they read back ([`TrialRunner::ports`](xlat_trial::TrialRunner::ports)). A port that
    /// cannot do what is asked is an error that names it.
    pub fn set_flow_control(&mut self, want: Option<bool>) -> Res<()> {
        let mut settings = Vec::new();
        for (p, side) in [(&mut self.ports.0, "left"), (&mut self.ports.1, "right")] {
            let state = p.flow_control(want).map_err(|e| EngineError::Port { side, msg: e.to_string() })?;
            let flow_control = match state {
                None => "unsupported",
                Some(xlat_io::Pause { rx: true, tx: true }) => "on",
                Some(xlat_io::Pause { rx: true, tx: false }) => "rx-pause",
                Some(xlat_io::Pause { rx: false, tx: true }) => "tx-pause",
                Some(xlat_io::Pause { rx: false, tx: false }) => "off",
            };
            settings.push(xlat_trial::PortSettings {
                side: side.to_string(),
                port: p.name(),
                flow_control: flow_control.to_string(),
            });
        }
        self.port_settings = settings;
        Ok(())
    }

    /// The ports' settings recorded by [`Tester::set_flow_control`].
    pub fn port_settings(&self) -> &[xlat_trial::PortSettings] {
        &self.port_settings
    }

    /// Let the next trial's tag (the top byte of every test frame's 64-bit field) be `start + 1`,
    /// and forget the tags used so far. A tester's tags start at 1 unless this is called; the
    /// binary starts each process at a different place, so that two testers sending into the
    /// same ports tell each other's frames apart: a test frame with a tag this tester never used
    /// makes the trial invalid ([`DirectionReport::foreign`](xlat_trial::DirectionReport)).
    pub fn set_trial_tag_start(&mut self, start: u8) {
        self.tag_start = u64::from(start);
        self.trials = 0;
    }

    pub fn setup(&self) -> &Setup {
        &self.setup
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
        let active = self.apply(spec)?;
        self.check(spec, active, Phase::Stateless)?;
        self.ready()?;
        let t0 = self.clock.now() + self.clock.ticks(0.05);
        Ok(self.run_phase(spec, spec.frames(), active, Phase::Stateless, t0)?.0)
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
        let stamp_wait = clock.ticks(STAMP_WAIT_S);
        let shared = Shared {
            clock,
            t0,
            timeout,
            hard_end: give_up_at + timeout + clock.ticks(HARD_MARGIN_S),
            done: [AtomicU64::new(0), AtomicU64::new(0)],
            senders_left: active.map(|a| AtomicUsize::new(if a { self.queues() } else { 0 })),
            last_end: [AtomicU64::new(0), AtomicU64::new(0)],
            n_active: active.iter().filter(|a| **a).count(),
            stamp_wait,
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
            stall: clock.ticks(xlat_trial::STALL_NS as f64 / 1e9),
            bound: spec.send_lag_bound_ns().map_or(u64::MAX, |ns| clock.ticks(ns as f64 / 1e9)),
            schedule: Schedule::new(spec, &clock),
            clock_hz: clock.hz,
            ns_mul: (1_000_000_000u128 << 32) / u128::from(clock.hz),
            tx_ts: &tx_ts,
            frame_ts: &frame_ts,
            kernel: (self.stamps == StampSource::Kernel).then(|| RealtimeMap::take(&clock)),
            stamp_wait,
        };
        let cores = plan_cores(&self.cpus, self.queues());
        let mut tester_cpus: Vec<usize> = cores.iter().flat_map(|q| q.iter().flat_map(|&(s, r)| [s, r])).collect();
        tester_cpus.sort_unstable();
        tester_cpus.dedup();
        let workers = plan_workers(&self.setup, [&mut self.left, &mut self.right], &trial, cores)?;
        let reader = tester_cpus.first().copied().unwrap_or(0);
        let (workers, load) = run_workers(workers, &shared, (reader, &self.cpus.dut, &tester_cpus))?;
        if self.abort.load(Ordering::Relaxed) {
            return Err(EngineError::Interrupted);
        }
        let (mut report, learnt) = assemble(&trial, &shared, workers);
        report.load = load;
        for d in [report.forward.as_mut(), report.reverse.as_mut()].into_iter().flatten() {
            d.counts.stamps = self.stamps;
        }
        Ok((report, learnt))
    }

    /// Each side's name, port name and what the port can stamp.
    fn port_stamping(&self) -> [(&'static str, String, xlat_io::Stamping); 2] {
        let (l, r) = &self.ports;
        [("left", l.name(), l.stamping()), ("right", r.name(), r.stamping())]
    }

    /// The timestamp sources both ports can give and this build reads, best first.
    pub fn stamp_sources(&self) -> Vec<StampSource> {
        stamps::available(&self.port_stamping())
    }

    /// Stamp the frames with `want` (`tester.timestamps`; `None`: the best the ports offer
    /// that this build reads) in every trial whose spec does not choose: the source chosen, or
    /// an error naming the port that cannot.
    pub fn use_stamps(&mut self, want: Option<StampSource>) -> Res<StampSource> {
        let source = self.switch_stamps(want)?;
        self.chosen_stamps = source;
        Ok(source)
    }

    fn switch_stamps(&mut self, want: Option<StampSource>) -> Res<StampSource> {
        let source = stamps::resolve(want, self.port_stamping())?;
        if source == StampSource::Kernel {
            self.left.enable_stamps()?;
            self.right.enable_stamps()?;
        }
        self.stamps = source;
        Ok(source)
    }

    /// What a trial's spec chooses for itself: its stamps (else the chosen ones) now, and its
    /// active directions (else the configuration's), returned.
    fn apply(&mut self, spec: &TrialSpec) -> Res<[bool; 2]> {
        let want = spec.stamps.unwrap_or(self.chosen_stamps);
        if want != self.stamps {
            self.switch_stamps(Some(want))?;
        }
        Ok(match spec.directions {
            Some(d) => [d.forward, d.reverse],
            None => [self.setup.forward, self.setup.reverse],
        })
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

#[cfg(test)]
mod tests;
