//! The test-frame payload: the 8 bytes `IDENTIFY`, a 64-bit field (sequence number, latency tag
//! or timestamp id, big-endian), then padding in the RFC 2544 appendix C pattern (00 01 02 ...).

pub const SIGNATURE: [u8; 8] = *b"IDENTIFY";
/// The signature as a native-endian u64, for a single compare on the receive path.
pub const SIGNATURE_NE: u64 = u64::from_ne_bytes(SIGNATURE);
pub const FIELD_OFFSET: usize = 8;
pub const MIN_LEN: usize = 16;

/// Write the payload: signature, `field`, and the padding pattern to the end of `buf`.
pub fn write(buf: &mut [u8], field: u64) -> Option<()> {
    if buf.len() < MIN_LEN {
        return None;
    }
    buf[..8].copy_from_slice(&SIGNATURE);
    buf[8..16].copy_from_slice(&field.to_be_bytes());
    for (i, b) in buf[16..].iter_mut().enumerate() {
        *b = i as u8;
    }
    Some(())
}

/// The 64-bit field when `buf` starts with the signature.
#[inline]
pub fn field(buf: &[u8]) -> Option<u64> {
    let s = buf.get(..MIN_LEN)?;
    let mut sig = [0u8; 8];
    sig.copy_from_slice(&s[..8]);
    if u64::from_ne_bytes(sig) != SIGNATURE_NE {
        return None;
    }
    crate::be64(s, FIELD_OFFSET)
}
