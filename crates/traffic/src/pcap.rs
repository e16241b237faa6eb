//! A minimal writer of classic pcap files (LINKTYPE_ETHERNET), for dumping test frames to look
//! at them with Wireshark or tshark.

use std::io::{self, Write};

/// pcap's magic number for microsecond timestamps, written in native byte order.
pub const MAGIC_USEC: u32 = 0xa1b2_c3d4;
/// LINKTYPE_ETHERNET.
pub const LINKTYPE_ETHERNET: u32 = 1;
pub const SNAPLEN: u32 = 65_535;

/// Writes a pcap global header and then one record per frame.
#[derive(Debug)]
pub struct PcapWriter<W: Write> {
    w: W,
}

impl<W: Write> PcapWriter<W> {
    /// Start a pcap stream on `w` (writes the 24-byte global header).
    pub fn new(mut w: W) -> io::Result<Self> {
        let mut h = [0u8; 24];
        h[0..4].copy_from_slice(&MAGIC_USEC.to_ne_bytes());
        h[4..6].copy_from_slice(&2u16.to_ne_bytes());
        h[6..8].copy_from_slice(&4u16.to_ne_bytes());
        // thiszone and sigfigs stay 0.
        h[16..20].copy_from_slice(&SNAPLEN.to_ne_bytes());
        h[20..24].copy_from_slice(&LINKTYPE_ETHERNET.to_ne_bytes());
        w.write_all(&h)?;
        Ok(PcapWriter { w })
    }

    /// Append `frame` (from the Ethernet header, without FCS) with timestamp `ts_ns` (ns since
    /// the epoch, stored with microsecond resolution). Frames longer than the snap length are
    /// truncated, with their original length recorded.
    pub fn write_frame(&mut self, ts_ns: u64, frame: &[u8]) -> io::Result<()> {
        let incl = frame.len().min(SNAPLEN as usize);
        let orig = u32::try_from(frame.len()).unwrap_or(u32::MAX);
        let mut r = [0u8; 16];
        r[0..4].copy_from_slice(&((ts_ns / 1_000_000_000) as u32).to_ne_bytes());
        r[4..8].copy_from_slice(&(((ts_ns % 1_000_000_000) / 1000) as u32).to_ne_bytes());
        r[8..12].copy_from_slice(&(incl as u32).to_ne_bytes());
        r[12..16].copy_from_slice(&orig.to_ne_bytes());
        self.w.write_all(&r)?;
        self.w.write_all(&frame[..incl])
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }

    /// The underlying writer, flushed.
    pub fn into_inner(mut self) -> io::Result<W> {
        self.w.flush()?;
        Ok(self.w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_of_header_and_record() {
        let mut p = PcapWriter::new(Vec::new()).unwrap();
        p.write_frame(1_500_000_123_456, &[1, 2, 3]).unwrap();
        let b = p.into_inner().unwrap();
        assert_eq!(b.len(), 24 + 16 + 3);
        let u32_at = |o: usize| u32::from_ne_bytes(b[o..o + 4].try_into().unwrap());
        assert_eq!(u32_at(0), MAGIC_USEC);
        assert_eq!(u32_at(20), 1);
        assert_eq!(u32_at(24), 1500);
        assert_eq!(u32_at(28), 123);
        assert_eq!(u32_at(32), 3);
        assert_eq!(u32_at(36), 3);
        assert_eq!(&b[40..], &[1, 2, 3]);
    }
}
