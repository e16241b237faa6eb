//! The test-frame payload: the 8 bytes `IDENTIFY`, a 64-bit field (sequence number, latency tag
//! or timestamp id, big-endian), then padding in the RFC 2544 appendix C pattern (00 01 02 ...).

/// The 8 bytes that start every test frame's payload.
pub const SIGNATURE: [u8; 8] = *b"IDENTIFY";
/// The signature as a native-endian u64, for a single compare on the receive path.
pub const SIGNATURE_NE: u64 = u64::from_ne_bytes(SIGNATURE);
/// Where the 64-bit field starts in the payload: after the signature.
pub const FIELD_OFFSET: usize = SIGNATURE.len();
/// The shortest payload: the signature and the 64-bit field.
pub const MIN_LEN: usize = FIELD_OFFSET + 8;

/// Write the payload: signature, `field`, and the padding pattern to the end of `buf`.
pub fn write(buf: &mut [u8], field: u64) -> Option<()> {
    if buf.len() < MIN_LEN {
        return None;
    }
    buf[..FIELD_OFFSET].copy_from_slice(&SIGNATURE);
    buf[FIELD_OFFSET..MIN_LEN].copy_from_slice(&field.to_be_bytes());
    for (i, b) in buf[MIN_LEN..].iter_mut().enumerate() {
        *b = i as u8;
    }
    Some(())
}

/// The 64-bit field when `buf` starts with the signature.
#[inline]
pub fn field(buf: &[u8]) -> Option<u64> {
    let s = buf.get(..MIN_LEN)?;
    let mut sig = [0u8; 8];
    sig.copy_from_slice(&s[..FIELD_OFFSET]);
    if u64::from_ne_bytes(sig) != SIGNATURE_NE {
        return None;
    }
    crate::bytes::be64(s, FIELD_OFFSET)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real payload: the signature, field 0x0100_0000_0000_002a, four bytes of padding.
    const FIXTURE: [u8; 20] = [
        b'I', b'D', b'E', b'N', b'T', b'I', b'F', b'Y', 0x01, 0, 0, 0, 0, 0, 0, 0x2a, 0, 1, 2, 3,
    ];

    #[test]
    fn fixture_parses_and_every_prefix_is_none() {
        assert_eq!(field(&FIXTURE), Some(0x0100_0000_0000_002a));
        for n in 0..MIN_LEN {
            assert_eq!(field(&FIXTURE[..n]), None, "{n} bytes");
        }
        let mut b = FIXTURE;
        b[0] = b'i';
        assert_eq!(field(&b), None, "another signature");
    }

    #[test]
    fn a_written_payload_reads_back() {
        let mut b = [0xeeu8; 20];
        write(&mut b, 0x0100_0000_0000_002a).unwrap();
        assert_eq!(b, FIXTURE);
        assert_eq!(write(&mut b[..MIN_LEN - 1], 1), None);
        // The padding pattern wraps after 256 bytes (RFC 2544 appendix C).
        let mut long = [0u8; MIN_LEN + 300];
        write(&mut long, 7).unwrap();
        assert_eq!(long[MIN_LEN + 255..MIN_LEN + 258], [255, 0, 1]);
    }
}
