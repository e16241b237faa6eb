//! dslite's AFTR (RFC 6333): the softwire end on the DUT's left interface, as two tc programs
//! (tcx) of a few dozen eBPF instructions, plus nftables NAT44 with a connection-tracking zone
//! per B4 (setup.rs's ruleset).
//!
//! This kernel has no IPv4-in-IPv6 tunnel device (no `ip6tnl`), so the tunnel is made here:
//! - ingress: an IPv6 packet to the AFTR's address whose next header is IPv4 (4, RFC 2473) loses
//!   its outer header and goes on as IPv4; its mark is the B4's identity, the low 16 bits of its
//!   outer source address (the B4s live in [`DSLITE_B4_PREFIX`], a /112). The NAT keeps each
//!   B4's connections apart by that mark (a conntrack zone), so B4s may use the same IPv4
//!   addresses and ports, as RFC 6333 section 6.6 requires;
//! - egress: an IPv4 packet whose mark names a B4 (a reply: the NAT restores the mark it kept
//!   in the connection) gets an outer IPv6 header from the AFTR to that B4 (hop limit 64,
//!   traffic class and flow label 0) and leaves as IPv6.
//!
//! The NAT44 is [`super::masquerade`]'s table with [`b4_chains`] in it.
//!
//! What it does not do (docs/lab.md): fragmentation or reassembly of the outer packet (the link
//! MTU is raised instead), ICMPv6 errors about the tunnel, other next headers in the tunnel.

use std::net::Ipv6Addr;

use xlat_bpf::{
    half, word, Alu, Asm, Cond, Insn, Size, BPF_ADJ_ROOM_MAC, BPF_FUNC_SKB_ADJUST_ROOM, BPF_FUNC_SKB_PULL_DATA, BPF_FUNC_SKB_STORE_BYTES,
    BPF_F_ADJ_ROOM_DECAP_L3_IPV4, BPF_PROG_TYPE_SCHED_CLS, BPF_TCX_EGRESS, BPF_TCX_INGRESS, FP, R0, R1, R2, R3, R4, R5, R6, R7, R8,
    SKB_DATA, SKB_DATA_END, SKB_MARK, TC_ACT_OK, TC_ACT_SHOT,
};

use super::kind::DutKind;
use crate::error::LabError;
use crate::names::{v6, DSLITE_AFTR, DSLITE_B4_PREFIX, DUT_LEFT, DUT_NS, DUT_RIGHT};
use crate::report::UpOptions;
use crate::state::LabState;
use crate::topologies::Topology;

/// dslite's DUT.
pub(crate) struct Aftr;

impl DutKind for Aftr {
    fn name(&self) -> &'static str {
        "aftr"
    }

    fn build(&self, t: Topology, st: &mut LabState, opts: &UpOptions) -> Result<(), LabError> {
        super::masquerade::start(t, st, opts, &b4_chains())?;
        attach()?;
        super::kind::route_to_the_b4s(t)
    }
}

/// The per-B4 NAT (RFC 6333 6.6): the AFTR's decapsulation marks each packet with its B4's
/// identity; the mark chooses the connection-tracking zone of the original direction, so that
/// B4s may use the same IPv4 addresses and ports, and is kept in the connection, so that a
/// reply gets it back and the encapsulation knows its B4. nftables sets a zone from a map only
/// (a mark is not an integer to it): the map holds every identity, 1 to 65535.
fn b4_chains() -> String {
    let elements: Vec<String> = (1..=u16::MAX).map(|i| format!("{i} : {i}")).collect();
    format!(
        "\tmap b4zone {{ typeof meta mark : ct zone; elements = {{ {} }} }}\n\
         \tchain b4zone {{ type filter hook prerouting priority raw; policy accept; iifname \"{DUT_LEFT}\" ct original zone set meta mark map @b4zone; }}\n\
         \tchain b4mark {{ type filter hook prerouting priority mangle; policy accept; iifname \"{DUT_LEFT}\" ct mark set meta mark; iifname \"{DUT_RIGHT}\" meta mark set ct mark; }}\n",
        elements.join(", ")
    )
}

/// Ethernet + IPv6 header: where the encapsulated IPv4 header starts.
pub(crate) const OUTER: i32 = 14 + 40;
/// IPv6's next header for IPv4 (RFC 2473).
const NH_IPV4: i32 = 4;

/// An IPv6 constant of the topology (checked by its tests; a bad one is a build defect).
pub(crate) fn addr(s: &str) -> Ipv6Addr {
    v6(s).unwrap_or(Ipv6Addr::UNSPECIFIED)
}

/// The four words of `a` as a store or a 32-bit compare sees them.
pub(crate) fn words(a: Ipv6Addr) -> [i32; 4] {
    let o = a.octets();
    [0, 4, 8, 12].map(|k| word([o[k], o[k + 1], o[k + 2], o[k + 3]]))
}

/// Ingress: decapsulate IPv4-in-IPv6 to `aftr`, the mark set to the B4's identity.
pub(crate) fn decap_program(aftr: Ipv6Addr) -> xlat_bpf::Result<Vec<Insn>> {
    let mut a = Asm::new();
    softwire_to(&mut a, aftr, OUTER);
    // The B4's identity: the last 16 bits of the outer source, in host order; 0 is none.
    a.emit(&[Insn::load(Size::H, R7, R2, 14 + 8 + 14), Insn::to_be(R7, 16)])
        .jump(Cond::Eq, R7, 0, "drop")
        .emit(&[Insn::store(Size::W, R6, SKB_MARK, R7)]);
    decapsulate(&mut a);
    verdicts(a)
}

/// Egress: encapsulate an IPv4 packet marked with a B4's identity, from `aftr` to that B4 in
/// `b4_prefix` (a /112: its last 16 bits are the identity).
pub(crate) fn encap_program(aftr: Ipv6Addr, b4_prefix: Ipv6Addr) -> xlat_bpf::Result<Vec<Insn>> {
    let b4 = b4_prefix.octets();
    let mut a = Asm::new();
    a.emit(&[Insn::alu_reg(Alu::Mov, R6, R1), Insn::load(Size::W, R7, R6, SKB_MARK)])
        .jump(Cond::Eq, R7, 0, "pass");
    headers(&mut a, 14 + 20);
    a.emit(&[Insn::load(Size::H, R4, R2, 12)]).jump(Cond::Ne, R4, half(0x0800), "pass");
    // The B4 (the outer destination, fp-24..fp-8): the prefix's first 112 bits, then the mark.
    for (k, w) in words(b4_prefix).into_iter().take(3).enumerate() {
        a.emit(&[Insn::store_imm(Size::W, FP, -24 + 4 * k as i16, w)]);
    }
    a.emit(&[
        Insn::alu(Alu::And, R7, 0xffff),
        Insn::to_be(R7, 16),
        Insn::alu(Alu::Lsh, R7, 16),
        Insn::alu(Alu::Or, R7, word([b4[12], b4[13], 0, 0])),
        Insn::store(Size::W, FP, -12, R7),
    ]);
    encapsulate(&mut a, aftr);
    verdicts(a)
}

/// The start of an ingress program (skb in r1): the first `len` bytes readable at r2 (see
/// [`headers`]), and on to "pass" unless the packet is IPv6 to `aftr` carrying IPv4 (RFC 2473).
pub(crate) fn softwire_to(a: &mut Asm, aftr: Ipv6Addr, len: i32) {
    a.emit(&[Insn::alu_reg(Alu::Mov, R6, R1)]);
    headers(a, len);
    a.emit(&[Insn::load(Size::H, R4, R2, 12)])
        .jump(Cond::Ne, R4, half(0x86dd), "pass")
        .emit(&[Insn::load(Size::B, R4, R2, 14 + 6)])
        .jump(Cond::Ne, R4, NH_IPV4, "pass");
    for (k, w) in words(aftr).into_iter().enumerate() {
        a.emit(&[Insn::load(Size::W, R4, R2, 14 + 24 + 4 * k as i16)])
            .jump32(Cond::Ne, R4, w, "pass");
    }
}

/// Drop unless the IPv4 header at `ip` (from r2; 20 bytes, checked readable) is of a UDP or TCP
/// packet that is no fragment and has no options.
pub(crate) fn udp_or_tcp(a: &mut Asm, ip: i16) {
    a.emit(&[Insn::load(Size::B, R4, R2, ip)])
        .jump(Cond::Ne, R4, 0x45, "drop")
        .emit(&[Insn::load(Size::H, R4, R2, ip + 6), Insn::alu(Alu::And, R4, half(0x3fff))])
        .jump(Cond::Ne, R4, 0, "drop")
        .emit(&[Insn::load(Size::B, R4, R2, ip + 9)])
        .jump(Cond::Eq, R4, 17, "ports")
        .jump(Cond::Ne, R4, 6, "drop")
        .label("ports");
}

/// Remove the outer IPv6 header of the skb in r6: what is left goes on as IPv4.
pub(crate) fn decapsulate(a: &mut Asm) {
    a.emit(&[
        Insn::alu_reg(Alu::Mov, R1, R6),
        Insn::alu(Alu::Mov, R2, -40),
        Insn::alu(Alu::Mov, R3, BPF_ADJ_ROOM_MAC),
        Insn::alu(Alu::Mov, R4, BPF_F_ADJ_ROOM_DECAP_L3_IPV4),
        Insn::call(BPF_FUNC_SKB_ADJUST_ROOM),
    ])
    .jump(Cond::Ne, R0, 0, "drop")
    .emit(&[Insn::store_imm(Size::H, FP, -8, half(0x0800))]);
    store_bytes(a, 12, -8, 2);
}

/// Put an outer IPv6 header from `aftr` in front of the IPv4 packet of the skb in r6 (its
/// headers readable at r2): the destination must be at fp-24..fp-8 already. Hop limit 64,
/// traffic class and flow label 0.
pub(crate) fn encapsulate(a: &mut Asm, aftr: Ipv6Addr) {
    // The outer payload length is the IPv4 total length (same bytes); next header 4, hop
    // limit 64 after it in the same word.
    a.emit(&[
        Insn::load(Size::H, R8, R2, 14 + 2),
        Insn::alu(Alu::Or, R8, word([0, 0, NH_IPV4 as u8, 64])),
        Insn::alu_reg(Alu::Mov, R1, R6),
        Insn::alu(Alu::Mov, R2, 40),
        Insn::alu(Alu::Mov, R3, BPF_ADJ_ROOM_MAC),
        Insn::alu(Alu::Mov, R4, 0),
        Insn::call(BPF_FUNC_SKB_ADJUST_ROOM),
    ])
    .jump(Cond::Ne, R0, 0, "drop");
    // The header at fp-48..fp-8: version 6, the length word, the AFTR, the destination.
    a.emit(&[
        Insn::store_imm(Size::W, FP, -48, word([0x60, 0, 0, 0])),
        Insn::store(Size::W, FP, -44, R8),
        Insn::store_imm(Size::H, FP, -56, half(0x86dd)),
    ]);
    for (k, w) in words(aftr).into_iter().enumerate() {
        a.emit(&[Insn::store_imm(Size::W, FP, -40 + 4 * k as i16, w)]);
    }
    store_bytes(a, 14, -48, 40);
    store_bytes(a, 12, -56, 2);
}

/// The first `len` bytes of the packet (the skb in r6) readable at r2, or on to "pass": they
/// are pulled into the packet's linear part first (`bpf_skb_pull_data`), because a packet
/// socket's frames (the tester's, sent from a ring) arrive with only the Ethernet header
/// there; a shorter packet fails the pull and then the length check. r3 is the data end.
pub(crate) fn headers(a: &mut Asm, len: i32) {
    a.emit(&[
        Insn::alu_reg(Alu::Mov, R1, R6),
        Insn::alu(Alu::Mov, R2, len),
        Insn::call(BPF_FUNC_SKB_PULL_DATA),
        Insn::load(Size::W, R2, R6, SKB_DATA),
        Insn::load(Size::W, R3, R6, SKB_DATA_END),
        Insn::alu_reg(Alu::Mov, R4, R2),
        Insn::alu(Alu::Add, R4, len),
    ])
    .jump_reg(Cond::Gt, R4, R3, "pass");
}

/// The end of both programs: what falls through, and "pass", go on (TC_ACT_OK); "drop" drops.
pub(crate) fn verdicts(mut a: Asm) -> xlat_bpf::Result<Vec<Insn>> {
    a.label("pass").ret(TC_ACT_OK).label("drop").ret(TC_ACT_SHOT);
    a.finish()
}

/// `bpf_skb_store_bytes(skb, offset, fp + from, len, 0)`, to "drop" on failure.
pub(crate) fn store_bytes(a: &mut Asm, offset: i32, from: i32, len: i32) {
    a.emit(&[
        Insn::alu_reg(Alu::Mov, R1, R6),
        Insn::alu(Alu::Mov, R2, offset),
        Insn::alu_reg(Alu::Mov, R3, FP),
        Insn::alu(Alu::Add, R3, from),
        Insn::alu(Alu::Mov, R4, len),
        Insn::alu(Alu::Mov, R5, 0),
        Insn::call(BPF_FUNC_SKB_STORE_BYTES),
    ])
    .jump(Cond::Ne, R0, 0, "drop");
}

/// Load both programs and attach them to the DUT's left interface (in [`DUT_NS`]): they stay
/// with the interface and go when the namespace goes.
fn attach() -> Result<(), LabError> {
    let (aftr, b4) = (addr(DSLITE_AFTR), addr(DSLITE_B4_PREFIX));
    let programs = [(decap_program(aftr)?, "xlat_aftr_in"), (encap_program(aftr, b4)?, "xlat_aftr_out")];
    attach_pair(move || Ok((programs, None)))
}

/// The ingress and egress program of a softwire end (`[(instructions, name); 2]`, from
/// `build`, which runs in [`DUT_NS`] and may return a map the programs use: it is kept open
/// until they are loaded, and then lives as long as they do), loaded and attached to the
/// DUT's left interface.
pub(crate) fn attach_pair(build: impl FnOnce() -> xlat_bpf::Result<Built> + Send + 'static) -> Result<(), LabError> {
    let run = move || -> xlat_bpf::Result<()> {
        let (programs, _map) = build()?;
        let ifindex = xlat_bpf::ifindex(DUT_LEFT)?;
        for ((insns, what), hook) in programs.into_iter().zip([BPF_TCX_INGRESS, BPF_TCX_EGRESS]) {
            let prog = xlat_bpf::load(BPF_PROG_TYPE_SCHED_CLS, hook, what, &insns)?;
            xlat_bpf::tcx_attach(&prog, ifindex, hook, &format!("bpf(BPF_PROG_ATTACH) of {what} on {DUT_LEFT}"))?;
        }
        Ok(())
    };
    Ok(xlat_bpf::in_netns(&format!("/run/netns/{DUT_NS}"), run)?)
}

/// What [`attach_pair`]'s `build` returns: the two programs with their names, and the map they
/// use, if any.
pub(crate) type Built = ([(Vec<Insn>, &'static str); 2], Option<std::os::fd::OwnedFd>);

#[cfg(test)]
mod tests {
    use super::*;

    /// Both programs assemble, end in verdicts, and read the addresses as their bytes.
    #[test]
    fn programs_assemble() {
        let (aftr, b4) = (addr(DSLITE_AFTR), addr(DSLITE_B4_PREFIX));
        assert!(!aftr.is_unspecified() && !b4.is_unspecified());
        let d = decap_program(aftr).unwrap();
        let e = encap_program(aftr, b4).unwrap();
        for p in [&d, &e] {
            assert_eq!(p.last().unwrap().code, xlat_bpf::EXIT);
            assert!(p.len() < 100, "{}", p.len());
        }
        // The AFTR's first word, compared (32-bit) in the decapsulation and stored in the
        // encapsulation, is 2001:0002 as bytes.
        let w = word([0x20, 0x01, 0x00, 0x02]);
        assert!(d.iter().any(|i| i.code == 0x56 && i.imm == w));
        assert!(e.iter().any(|i| i.code == 0x62 && i.imm == w));
    }
}
