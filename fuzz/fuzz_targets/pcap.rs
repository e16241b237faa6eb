//! A pcap file as the tests' frame checks read it, never a panic.
fn main() {
    afl::fuzz!(|data: &[u8]| {
        if let Some(frames) = xlat_wire::pcap::frames(data) {
            for f in frames {
                let _ = xlat_wire::rx::classify(f);
            }
        }
    });
}
