//! lw4o6's lwAFTR (RFC 7596): the softwire end on the DUT's left interface, stateless, with a
//! binding table of (IPv4 address, port set) -> lwB4 in a BPF hash map, as two tc programs
//! (tcx) that share [`super::aftr`]'s encapsulation and decapsulation.
//!
//! - ingress: an IPv4-in-IPv6 packet to the lwAFTR is decapsulated only when the binding of
//!   its inner source (IPv4 address and the port set of its source port) names the packet's
//!   outer source; otherwise it is dropped (RFC 7596 5.2: a packet that does not match a
//!   binding is not forwarded);
//! - egress: an IPv4 packet whose destination (address and the port set of its destination
//!   port) has a binding is encapsulated to that lwB4; one without is dropped.
//!
//! Port sets follow RFC 7597's PSID with offset 0 ([`LW4O6_PSID_BITS`] bits: PSID = port >> 10,
//! 64 sets of 1,024 consecutive ports). The lwB4 does the NAPT (RFC 7596 5.1), so the lwAFTR
//! keeps no per-flow state: the stateful procedures have nothing to measure here.
//!
//! What it does not do (docs/lab.md): ICMP (its identifier as the port), fragments, IPv4
//! headers with options, hairpinning between lwB4s, ICMPv6 errors about the tunnel.

use std::net::{Ipv4Addr, Ipv6Addr};
use std::os::fd::{AsRawFd, OwnedFd};

use xlat_bpf::{half, Alu, Asm, Cond, Insn, Size, BPF_FUNC_MAP_LOOKUP_ELEM, BPF_MAP_TYPE_HASH, FP, R0, R1, R2, R4, R5, R6, R9};

use super::aftr::{addr, attach_pair, decapsulate, encapsulate, headers, softwire_to, udp_or_tcp, verdicts, OUTER};
use super::kind::TcPrograms;
use crate::error::LabError;
use crate::names::{lw4o6_rule, v6, DSLITE_AFTR, LW4O6_BINDINGS, LW4O6_PSID_BITS, LW4O6_TESTER_PSID, TESTER_LEFT_IPV4, TESTER_LEFT_IPV6};
use xlat_traffic::maprule::Ce;

/// lw4o6's DUT.
pub(crate) static LWAFTR: TcPrograms = TcPrograms {
    name: "lwaftr",
    attach,
    ces_by_the_rule: false,
    tester: || (lw4o6_rule(), Some(LW4O6_TESTER_PSID)),
};

/// Bytes of a binding table key: the IPv4 address as in the packet, then the PSID as a
/// host-order u32 (as the program stores them at fp-8).
const KEY: usize = 8;
/// Bytes of a binding table value: the lwB4's IPv6 address.
const VALUE: usize = 16;
/// Binding `i` of the lab's table: (IPv4 address, PSID, lwB4). Binding 0 is the tester's:
/// 198.18.0.2, PSID 1 (ports 1024-2047), 2001:2::2; binding i is the i-th (address, PSID) after
/// it in [`lw4o6_rule`]'s order (PSID 2 .. 63 of 198.18.0.2, then PSID 0 .. 63 of 198.18.0.3,
/// ...) with lwB4 2001:2::2 + i: what the tester's `left.map` (with `binding_psid`) sends from.
pub fn binding(i: u32) -> (Ipv4Addr, u16, Ipv6Addr) {
    let b4 = v6(TESTER_LEFT_IPV6).unwrap_or(Ipv6Addr::UNSPECIFIED);
    let ce = lw4o6_rule().and_then(|r| {
        let own = Ce {
            ipv4: TESTER_LEFT_IPV4.parse().ok()?,
            psid: LW4O6_TESTER_PSID,
        };
        r.ce(r.index(own)? + u64::from(i))
    });
    let ce = ce.unwrap_or(Ce {
        ipv4: Ipv4Addr::UNSPECIFIED,
        psid: 0,
    });
    (ce.ipv4, ce.psid, Ipv6Addr::from(u128::from(b4) + u128::from(i)))
}

/// The ports of PSID `psid`.
pub fn port_set(psid: u16) -> (u16, u16) {
    let shift = 16 - LW4O6_PSID_BITS;
    (psid << shift, ((u32::from(psid) + 1) << shift).saturating_sub(1).min(65535) as u16)
}

/// The binding table key of (address, PSID), as the programs build it.
fn key(v4: Ipv4Addr, psid: u16) -> [u8; KEY] {
    let mut k = [0u8; KEY];
    k[..4].copy_from_slice(&v4.octets());
    k[4..].copy_from_slice(&u32::from(psid).to_ne_bytes());
    k
}

/// Build the binding table key of the IPv4 packet whose header starts at `ip` (from r2): its
/// address at `addr_at` and the PSID of its port at `port_at` (both from the header's start;
/// the header is 20 bytes) go to fp-8 and fp-4; to "drop" unless the packet is a UDP or TCP
/// packet, not a fragment, without IPv4 options. Then r9 keeps r2 and r1, r2 are the lookup's
/// arguments; r0 is the lwB4's address, or "drop".
fn lookup(a: &mut Asm, map: i32, ip: i16, addr_at: i16, port_at: i16) {
    udp_or_tcp(a, ip);
    a.emit(&[
        Insn::load(Size::W, R4, R2, ip + addr_at),
        Insn::store(Size::W, FP, -8, R4),
        Insn::load(Size::H, R4, R2, ip + 20 + port_at),
        Insn::to_be(R4, 16),
        Insn::alu(Alu::Rsh, R4, 16 - i32::from(LW4O6_PSID_BITS)),
        Insn::store(Size::W, FP, -4, R4),
        Insn::alu_reg(Alu::Mov, R9, R2),
    ])
    .emit(&Insn::load_map(R1, map))
    .emit(&[
        Insn::alu_reg(Alu::Mov, R2, FP),
        Insn::alu(Alu::Add, R2, -8),
        Insn::call(BPF_FUNC_MAP_LOOKUP_ELEM),
    ])
    .jump(Cond::Eq, R0, 0, "drop");
}

/// Ingress: decapsulate IPv4-in-IPv6 to `aftr` from the lwB4 that the binding of its inner
/// source names, drop it from any other.
pub(crate) fn decap_program(aftr: Ipv6Addr, map: i32) -> xlat_bpf::Result<Vec<Insn>> {
    let mut a = Asm::new();
    softwire_to(&mut a, aftr, OUTER + 20 + 4);
    lookup(&mut a, map, OUTER as i16, 12, 0);
    // The bound lwB4 against the outer source (bytes 8..24 of the IPv6 header).
    for k in 0..4 {
        a.emit(&[Insn::load(Size::W, R4, R0, 4 * k), Insn::load(Size::W, R5, R9, 14 + 8 + 4 * k)])
            .jump_reg(Cond::Ne, R4, R5, "drop");
    }
    decapsulate(&mut a);
    verdicts(a)
}

/// Egress: encapsulate an IPv4 packet from `aftr` to the lwB4 its destination is bound to.
pub(crate) fn encap_program(aftr: Ipv6Addr, map: i32) -> xlat_bpf::Result<Vec<Insn>> {
    let mut a = Asm::new();
    a.emit(&[Insn::alu_reg(Alu::Mov, R6, R1)]);
    headers(&mut a, 14 + 20 + 4);
    a.emit(&[Insn::load(Size::H, R4, R2, 12)]).jump(Cond::Ne, R4, half(0x0800), "pass");
    lookup(&mut a, map, 14, 16, 2);
    // The lwB4 is the outer destination (fp-24..fp-8); the headers are at r2 again.
    for k in 0..4 {
        a.emit(&[Insn::load(Size::W, R4, R0, 4 * k), Insn::store(Size::W, FP, -24 + 4 * k, R4)]);
    }
    a.emit(&[Insn::alu_reg(Alu::Mov, R2, R9)]);
    encapsulate(&mut a, aftr);
    verdicts(a)
}

/// The lab's binding table: [`LW4O6_BINDINGS`] entries of [`binding`].
fn table() -> xlat_bpf::Result<OwnedFd> {
    let map = xlat_bpf::map_create_sized(BPF_MAP_TYPE_HASH, KEY as u32, VALUE as u32, LW4O6_BINDINGS, "xlat_lw4o6")?;
    for i in 0..LW4O6_BINDINGS {
        let (v4, psid, b4) = binding(i);
        xlat_bpf::map_update(&map, &key(v4, psid), &b4.octets())?;
    }
    Ok(map)
}

/// Fill the binding table, load both programs and attach them to the DUT's left interface (in
/// the DUT's namespace): the programs hold the table, and all go when the namespace goes.
fn attach() -> Result<(), LabError> {
    let aftr = addr(DSLITE_AFTR);
    attach_pair(move || {
        let map = table()?;
        let fd = map.as_raw_fd();
        let programs = [
            (decap_program(aftr, fd)?, "xlat_lwaftr_in"),
            (encap_program(aftr, fd)?, "xlat_lwaftr_out"),
        ];
        Ok((programs, Some(map)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_testers_binding_is_the_first_and_bindings_are_distinct() {
        assert_eq!(binding(0), ("198.18.0.2".parse().unwrap(), 1, "2001:2::2".parse().unwrap()));
        assert_eq!(port_set(1), (1024, 2047));
        assert_eq!(port_set(63), (64512, 65535));
        assert_eq!(binding(62).1, 63);
        assert_eq!(binding(63), ("198.18.0.3".parse().unwrap(), 0, "2001:2::41".parse().unwrap()));
        assert_eq!(binding(127), ("198.18.0.4".parse().unwrap(), 0, "2001:2::81".parse().unwrap()));
        let keys: std::collections::HashSet<_> = (0..LW4O6_BINDINGS).map(|i| key(binding(i).0, binding(i).1)).collect();
        assert_eq!(keys.len(), LW4O6_BINDINGS as usize);
        // Every bound address stays in the block routed back into the softwire (198.18.0.0/16).
        assert_eq!(binding(LW4O6_BINDINGS - 1).0.octets()[..2], [198, 18]);
    }

    /// Both programs assemble, end in verdicts, and carry the map in a 64-bit load.
    #[test]
    fn programs_assemble_with_the_map() {
        let aftr = addr(DSLITE_AFTR);
        for p in [decap_program(aftr, 7).unwrap(), encap_program(aftr, 7).unwrap()] {
            assert_eq!(p.last().unwrap().code, xlat_bpf::EXIT);
            assert!(p.len() < 120, "{}", p.len());
            assert!(p.iter().any(|i| i.code == xlat_bpf::LD_DW_IMM && i.imm == 7));
        }
    }
}
