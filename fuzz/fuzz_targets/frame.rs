//! A received frame as the receiver classifies it (test frame, ARP, ND, corrupt, other) and as
//! the stateful Responder reads its 4-tuple, never a panic. The seeds are valid test frames of
//! every kind (IPv4, IPv6, IPv4 in IPv6), so the fuzzer mutates frames that carry a
//! valid-looking tag: wrong lengths, checksums, versions, tunnel headers.
fn main() {
    afl::fuzz!(|data: &[u8]| {
        let _ = xlat_wire::rx::classify(data);
        let _ = xlat_wire::rx::udp_tuple(data);
    });
}
