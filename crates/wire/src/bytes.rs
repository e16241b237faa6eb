//! Big-endian reads that never panic: `None` when the slice is too short.

/// Read a big-endian u16 at `off`, or `None` when the slice is too short.
#[inline]
pub fn be16(b: &[u8], off: usize) -> Option<u16> {
    let s = b.get(off..off.checked_add(2)?)?;
    Some(u16::from_be_bytes([s[0], s[1]]))
}

/// Read a big-endian u64 at `off`, or `None` when the slice is too short.
#[inline]
pub fn be64(b: &[u8], off: usize) -> Option<u64> {
    let s = b.get(off..off.checked_add(8)?)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(s);
    Some(u64::from_be_bytes(a))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_big_endian_and_none_past_the_end() {
        let b = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09];
        assert_eq!(be16(&b, 0), Some(0x0102));
        assert_eq!(be16(&b, 7), Some(0x0809));
        assert_eq!(be64(&b, 1), Some(0x0203_0405_0607_0809));
        for n in 0..b.len() {
            assert_eq!(be16(&b[..n], n.saturating_sub(1)), None, "{n} bytes");
        }
        assert_eq!(be64(&b[..8], 1), None);
        assert_eq!(be16(&b, usize::MAX), None);
        assert_eq!(be64(&b, usize::MAX - 3), None);
    }
}
