//! What one run of senders and receivers is: the trial plan they share and the phase of the
//! test (stateless, or which phase of a stateful test) that decides what each direction sends.

use super::error::Res;
use super::receiver::OwnTags;
use super::schedule::{Schedule, TagPlan};
use crate::clock::RealtimeMap;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use xlat_traffic::{Direction, DirectionStream, Setup, StateTable, Variation};
use xlat_trial::spec::TrialSpec;
use xlat_wire::MacAddr;

/// What every sender and receiver of one trial needs to know.
/// Index of a direction in a trial's per-direction arrays (`TrialPlan::active`, the stamps,
/// the worker's `Shared`).
pub(super) fn dir_index(d: Direction) -> usize {
    (d == Direction::Reverse) as usize
}

pub(super) struct TrialPlan<'a> {
    pub(super) spec: &'a TrialSpec,
    pub(super) tag: u64,
    pub(super) own: OwnTags,
    pub(super) total: u64,
    /// The directions that send (forward, reverse).
    pub(super) active: [bool; 2],
    pub(super) phase: Phase<'a>,
    pub(super) tags: Option<TagPlan>,
    pub(super) give_up_at: u64,
    /// A sender further behind its schedule than this (ticks) is stalled.
    pub(super) stall: u64,
    /// Further behind than this (ticks) opens a catch-up window: the trial's lag bound
    /// (`u64::MAX`: none).
    pub(super) bound: u64,
    pub(super) schedule: Schedule,
    /// The clock's ticks per second.
    pub(super) clock_hz: u64,
    /// Ticks to nanoseconds: ns = ticks * ns_mul >> 32.
    pub(super) ns_mul: u128,
    pub(super) tx_ts: &'a [Vec<AtomicU64>; 2],
    pub(super) frame_ts: &'a [Vec<AtomicU64>; 2],
    /// With kernel stamps: their clock (CLOCK_REALTIME) on the trial's ticks. `None`: the
    /// tester stamps the frames itself.
    pub(super) kernel: Option<RealtimeMap>,
    /// How long a received frame waits for its kernel transmit stamp (ticks).
    pub(super) stamp_wait: u64,
}

/// Which phase of which kind of test a set of workers runs.
#[derive(Clone, Copy)]
pub(super) enum Phase<'a> {
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
    pub(super) fn phase_two(self) -> Phase<'a> {
        match self {
            Phase::Learn(d, t) => Phase::Answer(d, t),
            p => p,
        }
    }

    /// The stream that direction `d` sends in this phase.
    pub(super) fn stream(self, setup: &Setup, d: Direction, size: usize, src: MacAddr, dst: MacAddr) -> Res<DirectionStream> {
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
    pub(super) fn learns(self, d: Direction) -> Option<&'a StateTable> {
        match self {
            Phase::Learn(i, t) | Phase::Answer(i, t) if i == d => Some(t.as_ref()),
            _ => None,
        }
    }
}
