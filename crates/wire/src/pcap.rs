//! Classic pcap files (LINKTYPE_ETHERNET), the format libpcap and Wireshark read: a writer of
//! frames, for dumping test frames to look at them with tshark, and a reader of what a capture
//! holds. The writer writes into any [`std::io::Write`] of the caller's and opens no file.

use std::io::{self, Write};

/// pcap's magic number for microsecond timestamps, written in native byte order.
pub const MAGIC_USEC: u32 = 0xa1b2_c3d4;
/// pcap's magic number for nanosecond timestamps.
pub const MAGIC_NSEC: u32 = 0xa1b2_3c4d;
/// LINKTYPE_ETHERNET: each record is an Ethernet frame without FCS.
pub const LINKTYPE_ETHERNET: u32 = 1;
/// The longest record the writer stores; longer frames are cut.
pub const SNAPLEN: u32 = 65_535;
/// The length of the file header.
pub const FILE_HDR_LEN: usize = 24;
/// The length of each record's header.
pub const RECORD_HDR_LEN: usize = 16;

/// Writes a pcap file header and then one record per frame.
#[derive(Debug)]
pub struct PcapWriter<W: Write> {
    w: W,
}

impl<W: Write> PcapWriter<W> {
    /// Start a pcap stream on `w` (writes the 24-byte file header: version 2.4, microsecond
    /// timestamps, [`SNAPLEN`], Ethernet).
    pub fn new(mut w: W) -> io::Result<Self> {
        let mut h = [0u8; FILE_HDR_LEN];
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
        let mut r = [0u8; RECORD_HDR_LEN];
        r[0..4].copy_from_slice(&((ts_ns / 1_000_000_000) as u32).to_ne_bytes());
        r[4..8].copy_from_slice(&(((ts_ns % 1_000_000_000) / 1000) as u32).to_ne_bytes());
        r[8..12].copy_from_slice(&(incl as u32).to_ne_bytes());
        r[12..16].copy_from_slice(&orig.to_ne_bytes());
        self.w.write_all(&r)?;
        self.w.write_all(&frame[..incl])
    }

    /// Flush the underlying writer.
    pub fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }

    /// The underlying writer, flushed.
    pub fn into_inner(mut self) -> io::Result<W> {
        self.w.flush()?;
        Ok(self.w)
    }
}

/// A pcap file of `frames`, as [`PcapWriter`] writes it, with timestamps one microsecond apart
/// from 2023-11-14 (any fixed time would do).
pub fn file_of<F: AsRef<[u8]>>(frames: &[F]) -> Vec<u8> {
    let mut b = Vec::new();
    // Writing into a Vec cannot fail.
    if let Ok(mut w) = PcapWriter::new(&mut b) {
        for (i, f) in frames.iter().enumerate() {
            let _ = w.write_frame(1_700_000_000_000_000_000 + i as u64 * 1000, f.as_ref());
        }
    }
    b
}

/// The captured bytes of each record of a classic pcap file, written in either byte order with
/// microsecond or nanosecond timestamps. `None` when `data` does not start with a pcap file
/// header or a record runs past its end.
pub fn frames(data: &[u8]) -> Option<Vec<&[u8]>> {
    let magic = data.get(..4)?;
    let le = match u32::from_le_bytes([magic[0], magic[1], magic[2], magic[3]]) {
        MAGIC_USEC | MAGIC_NSEC => true,
        m if m.swap_bytes() == MAGIC_USEC || m.swap_bytes() == MAGIC_NSEC => false,
        _ => return None,
    };
    let u32_at = |b: &[u8], o: usize| -> Option<u32> {
        let w: [u8; 4] = b.get(o..o.checked_add(4)?)?.try_into().ok()?;
        Some(if le { u32::from_le_bytes(w) } else { u32::from_be_bytes(w) })
    };
    let mut rest = data.get(FILE_HDR_LEN..)?;
    let mut out = Vec::new();
    while !rest.is_empty() {
        let incl = usize::try_from(u32_at(rest, 8)?).ok()?;
        let end = RECORD_HDR_LEN.checked_add(incl)?;
        out.push(rest.get(RECORD_HDR_LEN..end)?);
        rest = &rest[end..];
    }
    Some(out)
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

    #[test]
    fn written_frames_read_back_in_either_byte_order() {
        let frames_in: Vec<Vec<u8>> = vec![vec![1, 2, 3], vec![], (0..=255).collect()];
        let file = file_of(&frames_in);
        let got = frames(&file).unwrap();
        assert_eq!(got, frames_in.iter().map(Vec::as_slice).collect::<Vec<_>>());
        assert_eq!(frames(&file_of::<&[u8]>(&[])), Some(vec![]));
        // The same file as a big-endian (or little-endian) machine with nanosecond timestamps
        // writes it: every 32-bit header word swapped.
        let mut other = file.clone();
        let swap = |b: &mut [u8]| b.reverse();
        other[0..4].copy_from_slice(&if cfg!(target_endian = "little") {
            MAGIC_NSEC.to_be_bytes()
        } else {
            MAGIC_NSEC.to_le_bytes()
        });
        let mut at = FILE_HDR_LEN;
        for f in &frames_in {
            for w in 0..4 {
                swap(&mut other[at + 4 * w..at + 4 * w + 4]);
            }
            at += RECORD_HDR_LEN + f.len();
        }
        assert_eq!(frames(&other).unwrap(), got);
    }

    #[test]
    fn a_cut_file_or_another_format_is_none() {
        let file = file_of(&[[7u8; 10]]);
        for n in 0..file.len() {
            assert_eq!(frames(&file[..n]), if n == FILE_HDR_LEN { Some(vec![]) } else { None }, "{n} bytes");
        }
        let mut pcapng = file.clone();
        pcapng[0..4].copy_from_slice(&0x0a0d_0d0au32.to_le_bytes());
        assert_eq!(frames(&pcapng), None);
    }
}
