//! The sender's hot path run flat out, for benchmarks: the same frame writing and burst
//! transmission as a trial's sender, without pacing, on the calling thread; and on a port's
//! queue sets, a thread each.

use super::spec::{BenchSpec, Saturation};
use crate::clock::Clock;
use crate::trial::BurstSend;
use crate::trial::EngineError;
use xlat_io::{Port, Result, TxQueue};
use xlat_traffic::{BurstScratch, DirectionStream};

/// What a saturation run achieved.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SaturationResult {
    pub frames: u64,
    pub seconds: f64,
}

impl SaturationResult {
    pub fn rate(&self) -> f64 {
        if self.seconds > 0.0 {
            self.frames as f64 / self.seconds
        } else {
            0.0
        }
    }
}

/// Bursts sent between two readings of the clock.
const CLOCK_EVERY: usize = 8;

/// Send `stream`'s frames on `tx` in bursts of `burst` as fast as the backend takes them, for
/// `seconds`. Checks the clock once per `CLOCK_EVERY` bursts. With `RESET`, every frame is written whole into
/// its buffer and the buffer vouched for by no cookie, so that a DPDK mbuf is reset
/// (`rte_pktmbuf_reset`) before it goes out: testpmd txonly's work per frame, for a
/// like-for-like comparison (a trial's sender recycles: `RESET` false).
pub fn saturate<T: TxQueue, const RESET: bool>(
    tx: &mut T,
    stream: &mut DirectionStream,
    clock: &Clock,
    seconds: f64,
    burst: usize,
) -> Result<SaturationResult> {
    let start = clock.now();
    let end = start + clock.ticks(seconds);
    let mut seq = 0u64;
    let mut now = start;
    let mut scratch = BurstScratch::new(burst);
    // The bytes written per frame: all of it with RESET, else those that change.
    tx.place_frames(if RESET { 0..stream.max_len() } else { stream.hot_bytes() });
    while now < end {
        // The clock is read once per CLOCK_EVERY bursts: testpmd's loop reads none.
        for _ in 0..CLOCK_EVERY {
            seq += BurstSend::<T, RESET>::send(tx, stream, &mut scratch, seq, burst, 0)? as u64;
        }
        now = clock.now();
    }
    tx.flush()?;
    Ok(SaturationResult {
        frames: seq,
        seconds: clock.secs(now - start),
    })
}

/// [`saturate`] on `how.queues` queue sets of `port`, each on a thread of its own pinned to a
/// core (the first to `spec.core`, the next ones to the cores after it among those this process
/// may use), each sending `stream` from its start; with `how.reset`, testpmd's work per mbuf
/// (`RESET`). Returns the sum of their rates (frames/s).
pub(super) fn saturate_port<P: Port>(
    port: &mut P,
    stream: &DirectionStream,
    spec: &BenchSpec,
    how: Saturation,
) -> std::result::Result<f64, EngineError> {
    let (queues, core, seconds, burst, reset) = (how.queues, spec.core, spec.seconds, spec.burst, how.reset);
    let sets = port.open_queues(queues.max(1))?;
    let cores = crate::pin::allowed_cores();
    let first = core.and_then(|c| cores.iter().position(|x| *x == c)).unwrap_or(0);
    let core_of = |k: usize| -> Option<usize> {
        match (core, k) {
            (c, 0) => c,
            _ if cores.is_empty() => None,
            _ => Some(cores[(first + k) % cores.len()]),
        }
    };
    let clock = Clock::calibrate();
    let results: Vec<std::result::Result<f64, EngineError>> = std::thread::scope(|sc| {
        let handles: Vec<_> = sets
            .into_iter()
            .enumerate()
            .map(|(k, mut q)| {
                let (mut stream, core, clock) = (stream.clone(), core_of(k), &clock);
                sc.spawn(move || -> std::result::Result<f64, EngineError> {
                    if let Some(c) = core {
                        crate::pin::pin_current_thread(c).map_err(|source| EngineError::Cpu { core: c, source })?;
                    }
                    // saturate() flushes the queue at its end.
                    let r = if reset {
                        saturate::<_, true>(&mut q.tx, &mut stream, clock, seconds, burst)?
                    } else {
                        saturate::<_, false>(&mut q.tx, &mut stream, clock, seconds, burst)?
                    };
                    Ok(r.rate())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or(Err(EngineError::Panicked)))
            .collect()
    });
    results.into_iter().sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use xlat_io::{Port, RxQueue};
    use xlat_traffic::{Direction, IpVersion, Variation};
    use xlat_wire::MacAddr;

    /// With `RESET` (every frame written whole) the frames are the recycled path's, frame for
    /// frame: the varying fields, the payload field and both checksums.
    #[test]
    fn reset_mode_sends_the_same_frames() {
        let mut setup = super::super::spec::tests::test_setup(IpVersion::V4, 2);
        setup.seed = Some(7);
        setup.forward_ports.sport.variation = Variation::Pseudorandom;
        setup.forward_ports.dport.variation = Variation::Pseudorandom;
        let mac = MacAddr([2, 0, 0, 0, 0, 1]);
        let stream = DirectionStream::new(&setup, Direction::Forward, 84, mac, mac).unwrap();
        let clock = Clock::calibrate();
        let mut got: Vec<Vec<Vec<u8>>> = Vec::new();
        for reset in [false, true] {
            let (mut l, mut r) = xlat_io::mem::pair(1 << 12);
            let mut tx = l.open_queues(1).unwrap().remove(0).tx;
            let mut rx = r.open_queues(1).unwrap().remove(0).rx;
            let mut s = stream.clone();
            if reset {
                saturate::<_, true>(&mut tx, &mut s, &clock, 0.02, 32).unwrap();
            } else {
                saturate::<_, false>(&mut tx, &mut s, &clock, 0.02, 32).unwrap();
            }
            let mut frames = Vec::new();
            while rx.rx_burst(64, |f| frames.push(f.to_vec())).unwrap() > 0 {}
            got.push(frames);
        }
        // At least the first burst (saturate sends one before it looks at the clock); how many
        // more depends on the machine's speed.
        let n = got[0].len().min(got[1].len());
        assert!(n >= 32, "{n} frames");
        assert!(got[0][..n] == got[1][..n]);
        let mut want = vec![0u8; 2048];
        for (seq, f) in got[1][..n].iter().enumerate().step_by(97) {
            let len = stream.write_frame(seq as u64, &mut want);
            assert_eq!(&want[..len], &f[..], "frame {seq}");
        }
    }
}
