//! The receiver's hot path, for benchmarks (`xlatperf bench-receiver`): on the calling thread,
//! a stream's frames go out on one port [`FILL`] at a time and come back on the other (a
//! loopback: a DPDK `net_ring` pair, the mem backend), where a trial's receiver takes them in
//! full bursts and counts them as in a trial (sequence numbers, duplicates, reordering, the
//! Responder's state table learnt). Receiving is [`receive_all`] alone, so that a profiler can
//! count its instructions apart from the sending (bench/instructions.sh: callgrind's
//! `--toggle-collect`).

use super::spec::BenchSpec;
use crate::clock::Clock;
use crate::neighbour::Neighbour;
use crate::trial::{BurstSend, Count, EngineError, Receiver};
use xlat_io::{Port, RxQueue, TxQueue};
use xlat_traffic::{BurstScratch, Direction, DirectionStream, Setup, SideId, StateTable};

/// What a receiver benchmark sent and counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopbackCount {
    pub sent: u64,
    /// Test frames received and counted once each.
    pub received: u64,
    /// Frames received but not counted as this run's test frames (duplicates, others').
    pub other: u64,
    /// Foreground frames whose tuple went into the state table.
    pub learnt: u64,
}

/// The most frames one run counts (its receiver keeps a bit per frame: 32 MiB).
pub const MAX_LOOPBACK_FRAMES: u64 = 1 << 28;
const _: () = assert!(MAX_LOOPBACK_FRAMES <= xlat_trial::MAX_FRAMES);

/// Frames sent per round before they are all received: half of the loopback's ring (a DPDK
/// `net_ring` pair holds 1,024 per direction), so that none is dropped.
pub const FILL: u64 = 512;

/// Send `stream`'s frames (payload field = sequence number, trial tag 0) on `tx`, `fill` frames
/// in bursts of `burst`, then take them all back with the receiver `r` until a poll comes back
/// empty; again, until `seconds` are over (checked once per round) or [`MAX_LOOPBACK_FRAMES`]
/// are sent.
fn loopback<T: TxQueue, R: RxQueue, C: TxQueue>(
    tx: &mut T,
    r: &mut Receiver<'_, '_, R, C>,
    stream: &mut DirectionStream,
    clock: &Clock,
    (seconds, burst, fill): (f64, usize, u64),
) -> Result<LoopbackCount, EngineError> {
    let total = MAX_LOOPBACK_FRAMES;
    let mut scratch = BurstScratch::new(burst);
    tx.place_frames(stream.hot_bytes());
    let end = clock.now() + clock.ticks(seconds);
    let (mut seq, burst) = (0u64, burst.max(1) as u64);
    // Every round sends at least a burst and receives until empty: it ends, and so does the run.
    let fill = fill.max(burst);
    while clock.now() < end && seq + fill <= total {
        let stop = seq + fill;
        while seq < stop {
            let k = burst.min(stop - seq);
            let sent = BurstSend::<T, false>::send(tx, stream, &mut scratch, seq, k as usize, 0)? as u64;
            if sent == 0 {
                // The ring is full: take what is there before sending on.
                break;
            }
            seq += sent;
        }
        tx.flush()?;
        receive_all(r, clock, fill)?;
    }
    let (rep, learnt) = r.counted();
    let c = &rep.counts;
    Ok(LoopbackCount {
        sent: seq,
        received: c.received,
        other: c.duplicates + c.unexpected + rep.other + c.corrupted,
        learnt,
    })
}

/// [`loopback`] from `left` to `right`, two ports looped back to each other: their queues
/// opened, a trial's receiver of the forward direction on the right (learning into `learn`, as
/// a Responder does in phase 1), the calling thread pinned to `spec.core`, the clock
/// calibrated. Returns the counts and the seconds the run took.
pub(super) fn loopback_ports<P: Port>(
    setup: &Setup,
    (left, right): (&mut P, &mut P),
    stream: &mut DirectionStream,
    learn: Option<&StateTable>,
    spec: &BenchSpec,
) -> Result<(LoopbackCount, f64), EngineError> {
    let right_mac = right.mac();
    let (mut lq, mut rq) = (left.queues()?, right.queues()?);
    if let Some(c) = spec.core {
        crate::pin::pin_current_thread(c).map_err(|source| EngineError::Cpu { core: c, source })?;
    }
    let clock = Clock::calibrate();
    let count = Count::single(MAX_LOOPBACK_FRAMES, rq.rx.lanes().max(1));
    let nb = Neighbour::new(setup, SideId::Right, right_mac);
    let mut r = Receiver::new((&mut rq.rx, &mut rq.ctl), nb, setup, Some(Direction::Forward), count).learning(learn);
    let t0 = std::time::Instant::now();
    let c = loopback(&mut lq.tx, &mut r, stream, &clock, (spec.seconds, spec.burst, FILL))?;
    Ok((c, t0.elapsed().as_secs_f64()))
}

/// Poll until a poll comes back empty: at most `most` polls with frames (a queue may give fewer
/// than `RX_BURST` per poll), and the empty one. Not inlined: a profiler counts the receiver
/// here.
#[inline(never)]
fn receive_all<R: RxQueue, T: TxQueue>(r: &mut Receiver<'_, '_, R, T>, clock: &Clock, most: u64) -> Result<(), EngineError> {
    for _ in 0..=most {
        if r.poll(clock)? == 0 {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use xlat_io::mem::MemPort;
    use xlat_traffic::{IpVersion, Variation};

    fn setup(v: IpVersion) -> Setup {
        let mut s = super::super::spec::tests::test_setup(v, 1);
        s.forward_ports.sport.variation = Variation::Pseudorandom;
        s
    }

    /// Every frame sent comes back counted once, in both IP versions, over rounds of a fill
    /// that is no multiple of the burst; the foreground half (every other frame) is learnt.
    #[test]
    fn every_frame_sent_is_counted_once() {
        for v in [IpVersion::V4, IpVersion::V6] {
            let s = setup(v);
            let (mut l, mut r) = xlat_io::mem::pair(1024);
            let (lm, rm) = (l.mac(), r.mac());
            let mut stream = DirectionStream::new(&s, Direction::Forward, 84, lm, rm).unwrap();
            let (mut lq, mut rq) = (l.queues().unwrap(), r.queues().unwrap());
            let table = StateTable::with_version(64, v == IpVersion::V6).unwrap();
            let clock = Clock::calibrate();
            let count = Count::single(MAX_LOOPBACK_FRAMES, 1);
            let nb = Neighbour::new(&s, SideId::Right, rm);
            let mut rx = Receiver::new((&mut rq.rx, &mut rq.ctl), nb, &s, Some(Direction::Forward), count).learning(Some(&table));
            let c = loopback::<_, _, <MemPort as Port>::Tx>(&mut lq.tx, &mut rx, &mut stream, &clock, (0.05, 32, 300)).unwrap();
            assert!(c.sent >= 300 && c.sent.is_multiple_of(300), "{c:?}");
            assert_eq!((c.received, c.other), (c.sent, 0), "{v:?}");
            assert_eq!(c.learnt, c.sent / 2, "{v:?}");
            assert!(table.read(63).is_some());
        }
    }
}
