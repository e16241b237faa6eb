//! The sender's hot path run flat out, for benchmarks: the same frame writing and burst
//! transmission as a trial's sender, without pacing, on the calling thread.

use crate::clock::Clock;
use xlat_io::{Result, TxQueue};
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

/// Send `stream`'s frames on `tx` in bursts of `burst` as fast as the backend takes them, for
/// `seconds`. Checks the clock once per burst.
pub fn saturate<T: TxQueue>(
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
    while now < end {
        let s0 = seq;
        let frames = stream.burst(s0, burst, &mut scratch);
        seq += tx.tx_burst_cookie(burst, |i, buf, cookie| frames.write(i, s0 + i as u64, buf, cookie))? as u64;
        now = clock.now();
    }
    tx.flush()?;
    Ok(SaturationResult {
        frames: seq,
        seconds: clock.secs(now - start),
    })
}
