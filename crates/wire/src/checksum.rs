//! The Internet checksum (RFC 1071) and its incremental update (RFC 1624).

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
/// zero), folded to 16 bits; the same value as `fold(add_bytes(0, data))`, summed 32 bits at a
/// time into a 64-bit accumulator (RFC 1071 section 2 (B): deferred carries), for checking
/// whole received frames.
#[inline]
pub fn sum(data: &[u8]) -> u16 {
    let mut acc: u64 = 0;
    let mut words = data.chunks_exact(4);
    for w in &mut words {
        acc += u64::from(u32::from_be_bytes([w[0], w[1], w[2], w[3]]));
    }
    let rest = words.remainder();
    let mut tail = [0u8; 4];
    tail[..rest.len()].copy_from_slice(rest);
    acc += u64::from(u32::from_be_bytes(tail));
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// Add one 16-bit word to the accumulator, folding the carry at once so that it never overflows.
#[inline]
pub fn add16(acc: u32, w: u16) -> u32 {
    let s = acc + u32::from(w);
    (s & 0xffff) + (s >> 16)
}

/// Fold the accumulator to 16 bits (the one's complement sum, not yet complemented).
#[inline]
pub fn fold(mut acc: u32) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// The checksum field value for data whose one's complement sum is `acc`.
#[inline]
pub fn finish(acc: u32) -> u16 {
    !fold(acc)
}

/// RFC 1624 equation 3: the new checksum after a 16-bit word changed from `old` to `new`,
/// `HC' = ~(~HC + ~m + m')`.
#[inline]
pub fn update16(hc: u16, old: u16, new: u16) -> u16 {
    let acc = add16(add16(u32::from(!hc), !old), new);
    !fold(acc)
}

/// RFC 1624 update for a 32-bit field (two words).
#[inline]
pub fn update32(hc: u16, old: u32, new: u32) -> u16 {
    let hc = update16(hc, (old >> 16) as u16, (new >> 16) as u16);
    update16(hc, old as u16, new as u16)
}

/// RFC 1624 update for a 64-bit field (four words), computed in one pass.
#[inline]
pub fn update64(hc: u16, old: u64, new: u64) -> u16 {
    let mut acc = u32::from(!hc);
    for i in 0..4 {
        let sh = 48 - 16 * i;
        acc = add16(acc, !((old >> sh) as u16));
        acc = add16(acc, (new >> sh) as u16);
    }
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

    fn full(words: &[u16]) -> u16 {
        finish(words.iter().fold(0, |a, w| add16(a, *w)))
    }

    #[test]
    fn incremental_equals_full_recomputation() {
        // A deterministic sweep over many word values, including the 0x0000/0xffff corners of
        // RFC 1624 section 3 where equation 2 goes wrong and equation 3 does not.
        let mut x: u32 = 0x1234_5678;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let mut words = [0u16, 0xffff, (x >> 16) as u16, x as u16, 0x8000];
            let hc = full(&words);
            let idx = (x % 5) as usize;
            let old = words[idx];
            let new = match x % 7 {
                0 => 0,
                1 => 0xffff,
                _ => (x >> 7) as u16,
            };
            words[idx] = new;
            let expect = full(&words);
            let got = update16(hc, old, new);
            // One's complement has two zeros; both are the same checksum value.
            let same = got == expect || (got == 0 && expect == 0xffff) || (got == 0xffff && expect == 0);
            assert!(same, "words {words:?} old {old:#x} new {new:#x}: {got:#x} != {expect:#x}");
        }
    }

    #[test]
    fn rfc1624_section4_example() {
        // RFC 1624 section 4: HC=0xDD2F, m=0x5555 -> m'=0x3285 gives HC'=0x0000.
        assert_eq!(update16(0xdd2f, 0x5555, 0x3285), 0x0000);
    }

    #[test]
    fn update64_matches_word_updates() {
        let hc = 0x1b2c;
        let (old, new) = (0x0123_4567_89ab_cdefu64, 0xfedc_ba98_7654_3210u64);
        let mut h = hc;
        for i in 0..4 {
            let sh = 48 - 16 * i;
            h = update16(h, (old >> sh) as u16, (new >> sh) as u16);
        }
        let a = update64(hc, old, new);
        assert!(a == h || (a == 0 && h == 0xffff) || (a == 0xffff && h == 0));
    }

    #[test]
    fn udp_zero_rule() {
        assert_eq!(udp_nonzero(0), 0xffff);
        assert_eq!(udp_nonzero(1), 1);
    }
}
