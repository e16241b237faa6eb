//! The 64-bit field of every test frame and the transmit stamps the sender leaves for the
//! receiver: what one writes and the other reads, defined once.

/// Transmit timestamps of the last `TS_RING` frames of a direction, for per-frame delays: entry
/// `seq % TS_RING` holds `tsc << 8 | caught_up << 7 | (seq / TS_RING) % 128`, so a receiver can
/// tell a stale entry from the frame's own, and a frame sent in a catch-up (whose delay is left
/// out) from one sent on schedule.
pub(super) const TS_RING: usize = 1 << 22;
/// In an entry: the frame was sent inside a catch-up window.
pub(super) const TS_CATCH_UP: u64 = 0x80;
/// In a latency tag's transmit stamp: the tag was sent inside a catch-up window.
pub(super) const TAG_CATCH_UP: u64 = 1 << 63;

/// The top byte of the 64-bit field carries a trial tag, so that a straggler from an earlier
/// trial is never counted in a later one; the low 56 bits are the sequence number.
pub(super) const TAG_SHIFT: u32 = 56;
pub(super) const SEQ_MASK: u64 = (1 << TAG_SHIFT) - 1;

/// A latency tag's transmit stamp taken at `tsc` (`catch_up`: sent inside a catch-up window).
#[inline]
pub(super) fn tag_stamp(tsc: u64, catch_up: bool) -> u64 {
    tsc | (u64::from(catch_up) * TAG_CATCH_UP)
}

/// A transmit stamp entry for frame `seq` sent at `tsc` (`catch_up`: inside a catch-up window).
#[inline]
pub(super) fn ts_entry(seq: u64, tsc: u64, catch_up: bool) -> u64 {
    (tsc << 8) | (u64::from(catch_up) * TS_CATCH_UP) | ts_epoch(seq)
}

/// The epoch bits an entry for frame `seq` must carry: the sequence number's bits above the
/// ring's (a division by a power of two, compiled to a shift).
#[inline]
pub(super) fn ts_epoch(seq: u64) -> u64 {
    (seq / TS_RING as u64) & 0x7f
}
