//! The Internet checksum (RFC 1071): one's complement sums of 16-bit words, folded and
//! complemented. (The per-frame patcher in xlat-traffic updates checksums by adding the new
//! field values to a template's sum, RFC 1624 equation 3 with every old value zero.)

/// Add `data` as big-endian 16-bit words to a running 32-bit one's complement accumulator.
/// An odd trailing byte is padded with a zero byte, as RFC 1071 says.
#[inline]
pub fn add_bytes(mut acc: u32, data: &[u8]) -> u32 {
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        acc = add16(acc, u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = chunks.remainder() {
        acc = add16(acc, u16::from_be_bytes([*last, 0]));
    }
    acc
}

/// The one's complement sum of `data` (big-endian 16-bit words, an odd last byte padded with
/// zero), folded to 16 bits; the same value as `fold(add_bytes(0, data))`, for checking whole
/// received frames. Summed 64 bits at a time in the machine's byte order, with the carries
/// added back (RFC 1071 section 2: (A) byte order independence, the sum of the byte-swapped
/// words being the byte-swapped sum; (B) deferred carries), and the folded sum swapped back.
#[inline]
pub fn sum(data: &[u8]) -> u16 {
    // 128 bits hold the sum of 2^64 words: no carry is lost, and each addition is an add with
    // carry.
    let mut acc: u128 = 0;
    let mut words = data.chunks_exact(8);
    for w in &mut words {
        acc += u128::from(u64::from_ne_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]));
    }
    // The rest, at even offsets: a 32-bit, a 16-bit piece and the odd byte padded with zero
    // (a piece's native value is the sum of its 16-bit words modulo 0xffff, 2^16 being 1).
    let mut rest = words.remainder();
    if let [a, b, c, d, tail @ ..] = rest {
        acc += u128::from(u32::from_ne_bytes([*a, *b, *c, *d]));
        rest = tail;
    }
    if let [a, b, tail @ ..] = rest {
        acc += u128::from(u16::from_ne_bytes([*a, *b]));
        rest = tail;
    }
    if let [a] = rest {
        acc += u128::from(u16::from_ne_bytes([*a, 0]));
    }
    // The high half is below 2^64 - 1 (at most 2^64 words): one end-around carry at most, and
    // after it none (the low sum wrapped, so it is small).
    let (s, c) = (acc as u64).overflowing_add((acc >> 64) as u64);
    u16::from_be(fold64(s + u64::from(c)))
}

/// Add one 16-bit word to the accumulator, folding the carry at once so that it never overflows.
#[inline]
pub fn add16(acc: u32, w: u16) -> u32 {
    let s = acc + u32::from(w);
    (s & 0xffff) + (s >> 16)
}

/// Fold the accumulator to 16 bits (the one's complement sum, not yet complemented), in one
/// addition: the high half of `acc + rotate(acc, 16)` is the sum of the two halves with its
/// end-around carry (the carry of the low halves' sum lands in it). 0 only for 0.
#[inline(always)]
pub fn fold(acc: u32) -> u16 {
    (acc.wrapping_add(acc.rotate_right(16)) >> 16) as u16
}

/// Fold a 64-bit accumulator to 16 bits: the same trick on its 32-bit halves (their end-around
/// sum keeps the value modulo 0xffff, 2^32 - 1 being a multiple of it), then [`fold`]. Sums of
/// 16- and 32-bit pieces fold to the same value, because 2^16 and 2^32 are 1 modulo 0xffff.
/// 0 only for 0.
#[inline(always)]
pub fn fold64(acc: u64) -> u16 {
    fold((acc.wrapping_add(acc.rotate_right(32)) >> 32) as u32)
}

/// The checksum field value for data whose one's complement sum is `acc`.
#[inline]
pub fn finish(acc: u32) -> u16 {
    !fold(acc)
}

/// The UDP rule (RFC 768, RFC 8200): a computed checksum of zero is transmitted as all ones,
/// because zero means "no checksum" over IPv4 and is forbidden over IPv6.
#[inline]
pub fn udp_nonzero(c: u16) -> u16 {
    if c == 0 {
        0xffff
    } else {
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_sum_equals_the_word_by_word_sum() {
        let mut x = 0x1234_5678_9abc_def0u64;
        for len in 0..200 {
            let data: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            assert_eq!(sum(&data), fold(add_bytes(0, &data)), "len {len}");
        }
        assert_eq!(sum(&[0xff; 1501]), fold(add_bytes(0, &[0xff; 1501])));
        // At every alignment of the slice in memory, and with every word all ones (carries
        // out of every 64-bit addition).
        let ones = [0xffu8; 64];
        for start in 0..8 {
            for len in 0..=56 {
                let d = &ones[start..start + len];
                assert_eq!(sum(d), fold(add_bytes(0, d)), "start {start} len {len}");
            }
        }
    }

    /// The folds give exactly what folding halves step by step gives (the value in 1..=0xffff
    /// congruent modulo 0xffff; 0 for 0), on edge values and random ones.
    #[test]
    fn the_rotating_folds_equal_stepwise_folding() {
        fn stepwise(mut a: u64) -> u16 {
            while a > 0xffff {
                a = (a & 0xffff) + (a >> 16);
            }
            a as u16
        }
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let edges = [
            0,
            1,
            0xffff,
            0x1_0000,
            0xffff_ffff,
            0x1_0000_0000,
            0xffff_0000_ffff,
            u64::MAX,
            u64::MAX - 1,
        ];
        let random = (0..1_000_000).map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x >> (x % 64)
        });
        for a in edges.into_iter().chain(random) {
            assert_eq!(fold64(a), stepwise(a), "{a:#x}");
            assert_eq!(fold(a as u32), stepwise(u64::from(a as u32)), "{:#x}", a as u32);
        }
    }

    #[test]
    fn rfc1071_example() {
        // RFC 1071 section 3 example: the sum of 0001 f203 f4f5 f6f7 is ddf2 (folded).
        let d = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(fold(add_bytes(0, &d)), 0xddf2);
        assert_eq!(finish(add_bytes(0, &d)), !0xddf2);
    }

    #[test]
    fn odd_length_pads_with_zero() {
        assert_eq!(fold(add_bytes(0, &[0xab])), 0xab00);
        assert_eq!(fold(add_bytes(0, &[0x12, 0x34, 0xab])), 0x1234 + 0xab00);
    }

    #[test]
    fn udp_zero_rule() {
        assert_eq!(udp_nonzero(0), 0xffff);
        assert_eq!(udp_nonzero(1), 1);
    }
}
