//! The receiver's hot path, for benchmarks (`xlatperf bench-receiver`): on the calling thread,
//! a stream's frames go out on one port `fill` at a time and come back on the other (a
//! loopback: a DPDK `net_ring` pair, the mem backend), where a trial's receiver takes them in
//! full bursts and counts them as in a trial (sequence numbers, duplicates, reordering, the
//! Responder's state table learnt). Receiving is [`receive_all`] alone, so that a profiler can
//! count its instructions apart from the sending (bench/instructions.sh: callgrind's
//! `--toggle-collect`).

use super::error::{EngineError, Res};
use super::receiver::{Count, OwnTags, Receiver};
use super::sender::{BurstSend, Split, SEQ_MASK};
use crate::clock::Clock;
use crate::neighbour::Neighbour;
use xlat_io::{Port, Queues, RxQueue, TxQueue};
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

/// Send `stream`'s frames (payload field = sequence number, trial tag 0) from `left` to `right`
/// on the calling thread, `fill` frames in bursts of `burst`, then receive them on `right` with
/// a trial's receiver of the forward direction until a poll comes back empty; again, until `seconds`
/// are over (checked once per round) or [`MAX_LOOPBACK_FRAMES`] are sent. With `learn`, the
/// receiver learns foreground frames' tuples into it, as a Responder does in phase 1.
#[allow(clippy::too_many_arguments)]
fn loopback<P: Port>(
    setup: &Setup,
    left: &mut Queues<P::Tx, P::Rx>,
    right: &mut Queues<P::Tx, P::Rx>,
    right_mac: xlat_wire::MacAddr,
    stream: &mut DirectionStream,
    learn: Option<&StateTable>,
    clock: &Clock,
    seconds: f64,
    burst: usize,
    fill: usize,
) -> Res<LoopbackCount> {
    let total = MAX_LOOPBACK_FRAMES;
    let split = Split {
        queue: 0,
        queues: 1,
        chunk: total,
    };
    let lanes = right.rx.lanes().max(1);
    let mut r = Receiver {
        rx: &mut right.rx,
        ctl: &mut right.ctl,
        nb: Neighbour::new(setup, SideId::Right, right_mac),
        dir: Some(Direction::Forward),
        count: Count::new(0, OwnTags { start: 0, used: 1 }, total, true, split, lanes),
        frame_ts: &[],
        learn,
        fg: (u64::from(setup.fg_n.max(1)), u64::from(setup.fg_m)),
        kernel: None,
        stamp_wait: 0,
    };
    let mut scratch = BurstScratch::new(burst);
    left.tx.place_frames(stream.hot_bytes());
    let end = clock.now() + clock.ticks(seconds);
    let (mut seq, burst) = (0u64, burst.max(1) as u64);
    // Every round sends at least a burst and receives until empty: it ends, and so does the run.
    let fill = (fill as u64).max(burst);
    while clock.now() < end && seq + fill <= total {
        let stop = seq + fill;
        while seq < stop {
            let k = burst.min(stop - seq);
            let sent = BurstSend::<P::Tx, false>::send(&mut left.tx, stream, &mut scratch, seq, k as usize, 0)? as u64;
            if sent == 0 {
                // The ring is full: take what is there before sending on.
                break;
            }
            seq += sent;
        }
        left.tx.flush()?;
        receive_all(&mut r, clock, fill)?;
    }
    debug_assert!(seq & !SEQ_MASK == 0);
    let rep = &r.count.report;
    Ok(LoopbackCount {
        sent: seq,
        received: rep.counts.received,
        other: rep.counts.duplicates + rep.counts.unexpected + rep.other + rep.counts.corrupted,
        learnt: r.count.learnt,
    })
}

/// [`loopback`] on two ports looped back to each other: their queues opened, the calling
/// thread pinned to `core`, the clock calibrated. Returns the counts and the seconds the run
/// took; an error unless every frame sent was counted once (the loopback lost or changed some).
#[allow(clippy::too_many_arguments)]
pub fn loopback_ports<P: Port>(
    setup: &Setup,
    left: &mut P,
    right: &mut P,
    stream: &mut DirectionStream,
    learn: Option<&StateTable>,
    core: Option<usize>,
    seconds: f64,
    burst: usize,
    fill: usize,
) -> Res<(LoopbackCount, f64)> {
    let right_mac = right.mac();
    let (mut lq, mut rq) = (left.queues()?, right.queues()?);
    if let Some(c) = core {
        crate::pin::pin_current_thread(c).map_err(|source| EngineError::Cpu { core: c, source })?;
    }
    let clock = Clock::calibrate();
    let t0 = std::time::Instant::now();
    let c = loopback::<P>(setup, &mut lq, &mut rq, right_mac, stream, learn, &clock, seconds, burst, fill)?;
    if c.received != c.sent || c.other != 0 {
        return Err(EngineError::Port {
            side: "right",
            msg: format!(
                "the receiver counted {} of {} frames sent once ({} others): the loopback lost or changed frames",
                c.received, c.sent, c.other
            ),
        });
    }
    Ok((c, t0.elapsed().as_secs_f64()))
}

/// Poll until a poll comes back empty: at most `most` polls with frames (a queue may give fewer
/// than `RX_BURST` per poll), and the empty one. Not inlined: a profiler counts the receiver
/// here.
#[inline(never)]
fn receive_all<R: RxQueue, T: TxQueue>(r: &mut Receiver<'_, '_, R, T>, clock: &Clock, most: u64) -> Res<()> {
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
        let mut s = crate::saturate::tests::test_setup(v, 1);
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
            let c = loopback::<MemPort>(&s, &mut lq, &mut rq, rm, &mut stream, Some(&table), &clock, 0.05, 32, 300).unwrap();
            assert!(c.sent >= 300 && c.sent.is_multiple_of(300), "{c:?}");
            assert_eq!((c.received, c.other), (c.sent, 0), "{v:?}");
            assert_eq!(c.learnt, c.sent / 2, "{v:?}");
            assert!(table.read(63).is_some());
        }
    }
}
