//! mapt's border relay (RFC 7599): stateless translation between the CEs' IPv6 and the IPv4
//! side, by the mapping rule ([`MapRule`], computed in eBPF as mape's BR does, [`super::mapbr`])
//! and the Default Mapping Rule's /96 prefix (RFC 6052), as two tc programs (tcx) on the DUT's
//! left interface that change the packet's protocol in place (`bpf_skb_change_proto`):
//!
//! - ingress: an IPv6 UDP or TCP packet to the DMR prefix is translated to IPv4 (RFC 7915
//!   section 5.1) only when its source is the address the rule gives the IPv4 address in its
//!   interface identifier and its source port (RFC 7599 section 5.2, RFC 7597 section 6); the
//!   IPv4 destination is the prefix's last 32 bits. Anything else to the prefix is dropped;
//! - egress: an IPv4 UDP or TCP packet to an address and port the rule gives a CE is translated
//!   to IPv6 (RFC 7915 section 4.1) from the DMR prefix with its source embedded, to that CE's
//!   address; anything else is dropped.
//!
//! The TCP or UDP checksum follows the pseudo-header's change of addresses (the length and the
//! protocol are the same in both); the IPv4 header gets its own checksum. The kernel forwards
//! the IPv4 packet between the two, so TTL and hop limit go down once per direction. IPv4's
//! Identification is 0, DF set above 1,260 bytes (RFC 7915 section 5.1); traffic class and
//! type of service are copied, the flow label is 0.
//!
//! What it does not do (docs/lab.md): ICMP and ICMPv6, fragments, IPv4 options and IPv6
//! extension headers, UDP with a zero checksum (dropped, RFC 7915 section 4.5's default),
//! CE-to-CE hairpinning, Forwarding Mapping Rules other than the Basic one.

use std::net::Ipv6Addr;

use xlat_bpf::{
    half, Alu, Asm, Cond, Insn, Size, BPF_FUNC_CSUM_DIFF, BPF_FUNC_L4_CSUM_REPLACE, BPF_FUNC_SKB_CHANGE_PROTO, BPF_F_MARK_MANGLED_0,
    BPF_F_PSEUDO_HDR, FP, R0, R1, R2, R3, R4, R5, R6, R9,
};
use xlat_traffic::maprule::MapRule;

use super::aftr::{attach_pair, headers, store_bytes, verdicts, words};
use super::kind::TcPrograms;
use super::mapbr::{address_and_port, ce_address, ipv4_to_a_ce, source_is_the_ce};
use crate::error::LabError;
use crate::names::{map_rule, v6, MAPT_DMR};

/// mapt's DUT.
pub(crate) static MAPTBR: TcPrograms = TcPrograms {
    name: "maptbr",
    attach,
    ces_by_the_rule: true,
    tester: || (map_rule(), None),
};

/// IPv4's "don't fragment" above this many bytes (RFC 7915 section 5.1).
const DF_ABOVE: i32 = 1260;

/// Ingress: translate IPv6 to the DMR prefix `dmr` (a /96) from the CE the rule gives its
/// source's IPv4 address and port to IPv4; drop any other packet to the prefix.
pub(crate) fn to_ipv4_program(dmr: Ipv6Addr, rule: &MapRule) -> xlat_bpf::Result<Vec<Insn>> {
    let mut a = Asm::new();
    a.emit(&[Insn::alu_reg(Alu::Mov, R6, R1)]);
    headers(&mut a, 14 + 40 + 8);
    a.emit(&[Insn::load(Size::H, R4, R2, 12)]).jump(Cond::Ne, R4, half(0x86dd), "pass");
    for (k, w) in words(dmr).into_iter().take(3).enumerate() {
        a.emit(&[Insn::load(Size::W, R4, R2, 14 + 24 + 4 * k as i16)])
            .jump32(Cond::Ne, R4, w, "pass");
    }
    // r9 = the next header: UDP or TCP right after the IPv6 header, nothing else.
    a.emit(&[Insn::load(Size::B, R9, R2, 14 + 6)])
        .jump(Cond::Eq, R9, 17, "l4")
        .jump(Cond::Ne, R9, 6, "drop")
        .label("l4");
    // The source is the CE the rule gives the IPv4 address in its interface identifier (bytes
    // 10..14) and the source port.
    address_and_port(&mut a, 14 + 8 + 10, 14 + 40);
    ce_address(&mut a, rule);
    source_is_the_ce(&mut a);
    // The IPv4 header at fp-24..fp-4. Word 0: version 4, IHL 5, the traffic class, the total
    // length (r5: the payload length + 20).
    a.emit(&[
        Insn::load(Size::W, R4, R2, 14),
        Insn::to_be(R4, 32),
        Insn::alu(Alu::Rsh, R4, 20),
        Insn::alu(Alu::And, R4, 0xff),
        Insn::alu(Alu::Lsh, R4, 16),
        Insn::load(Size::H, R5, R2, 14 + 4),
        Insn::to_be(R5, 16),
        Insn::alu(Alu::Add, R5, 20),
        Insn::alu_reg(Alu::Or, R4, R5),
        Insn::alu(Alu::Or, R4, 0x4500_0000),
        Insn::to_be(R4, 32),
        Insn::store(Size::W, FP, -24, R4),
        // Word 1: Identification 0, no fragment, DF above 1,260 bytes.
        Insn::store_imm(Size::W, FP, -20, 0),
    ])
    .jump(Cond::Le, R5, DF_ABOVE, "df")
    .emit(&[Insn::store_imm(Size::H, FP, -18, half(0x4000))])
    .label("df")
    // Word 2: the TTL (the hop limit), the protocol (the next header), checksum 0 for now.
    .emit(&[
        Insn::load(Size::B, R4, R2, 14 + 7),
        Insn::alu(Alu::Lsh, R4, 24),
        Insn::alu_reg(Alu::Mov, R5, R9),
        Insn::alu(Alu::Lsh, R5, 16),
        Insn::alu_reg(Alu::Or, R4, R5),
        Insn::to_be(R4, 32),
        Insn::store(Size::W, FP, -16, R4),
        // The addresses, as they are in memory: the source's embedded IPv4, the destination's
        // last 32 bits.
        Insn::load(Size::W, R4, R2, 14 + 8 + 10),
        Insn::store(Size::W, FP, -12, R4),
        Insn::load(Size::W, R4, R2, 14 + 24 + 12),
        Insn::store(Size::W, FP, -8, R4),
    ]);
    // The IPv6 addresses at fp-64..fp-32, for the pseudo-header's difference.
    for k in 0..4 {
        a.emit(&[
            Insn::load(Size::DW, R4, R2, 14 + 8 + 8 * k),
            Insn::store(Size::DW, FP, -64 + 8 * k, R4),
        ]);
    }
    header_checksum(&mut a, -24);
    pseudo_header_change(&mut a, (-64, 32), (-12, 8), 14 + 40);
    change_proto(&mut a, 0x0800, -24, 20);
    verdicts(a)
}

/// Egress: translate an IPv4 packet to an address and port the rule gives a CE to IPv6, from
/// the DMR prefix `dmr` (a /96) with the IPv4 source embedded to that CE; drop any other IPv4
/// packet.
pub(crate) fn to_ipv6_program(dmr: Ipv6Addr, rule: &MapRule) -> xlat_bpf::Result<Vec<Insn>> {
    let mut a = Asm::new();
    // The IPv6 header at fp-48..fp-8: the destination (the CE) at fp-24, the source (the DMR
    // prefix and the IPv4 source) at fp-40.
    ipv4_to_a_ce(&mut a, rule, 14 + 20 + 8);
    // r9 = the protocol; a UDP packet without a checksum cannot get one here.
    a.emit(&[Insn::load(Size::B, R9, R2, 14 + 9)])
        .jump(Cond::Ne, R9, 17, "checksummed")
        .emit(&[Insn::load(Size::H, R4, R2, 14 + 20 + 6)])
        .jump(Cond::Eq, R4, 0, "drop")
        .label("checksummed");
    for (k, w) in words(dmr).into_iter().take(3).enumerate() {
        a.emit(&[Insn::store_imm(Size::W, FP, -40 + 4 * k as i16, w)]);
    }
    a.emit(&[
        Insn::load(Size::W, R4, R2, 14 + 12),
        Insn::store(Size::W, FP, -28, R4),
        // Word 0: version 6, the type of service as the traffic class, flow label 0.
        Insn::load(Size::B, R4, R2, 14 + 1),
        Insn::alu(Alu::Lsh, R4, 20),
        Insn::alu(Alu::Or, R4, 0x6000_0000),
        Insn::to_be(R4, 32),
        Insn::store(Size::W, FP, -48, R4),
        // Word 1: the payload length (total length - 20), the next header (the protocol), the
        // hop limit (the TTL).
        Insn::load(Size::H, R4, R2, 14 + 2),
        Insn::to_be(R4, 16),
        Insn::alu(Alu::Sub, R4, 20),
        Insn::alu(Alu::Lsh, R4, 16),
        Insn::alu_reg(Alu::Mov, R5, R9),
        Insn::alu(Alu::Lsh, R5, 8),
        Insn::alu_reg(Alu::Or, R4, R5),
        Insn::load(Size::B, R5, R2, 14 + 8),
        Insn::alu_reg(Alu::Or, R4, R5),
        Insn::to_be(R4, 32),
        Insn::store(Size::W, FP, -44, R4),
        // The IPv4 addresses at fp-56..fp-48, for the pseudo-header's difference.
        Insn::load(Size::DW, R4, R2, 14 + 12),
        Insn::store(Size::DW, FP, -56, R4),
    ]);
    pseudo_header_change(&mut a, (-56, 8), (-40, 32), 14 + 20);
    change_proto(&mut a, 0x86dd, -48, 40);
    verdicts(a)
}

/// The IPv4 header at `at` (fp-relative, 20 bytes, its checksum field 0) gets its checksum:
/// the folded one's-complement sum from `bpf_csum_diff`, complemented.
fn header_checksum(a: &mut Asm, at: i32) {
    a.emit(&[
        Insn::alu(Alu::Mov, R1, 0),
        Insn::alu(Alu::Mov, R2, 0),
        Insn::alu_reg(Alu::Mov, R3, FP),
        Insn::alu(Alu::Add, R3, at),
        Insn::alu(Alu::Mov, R4, 20),
        Insn::alu(Alu::Mov, R5, 0),
        Insn::call(BPF_FUNC_CSUM_DIFF),
    ]);
    for _ in 0..2 {
        a.emit(&[
            Insn::alu_reg(Alu::Mov, R1, R0),
            Insn::alu(Alu::Rsh, R1, 16),
            Insn::alu(Alu::And, R0, 0xffff),
            Insn::alu_reg(Alu::Add, R0, R1),
        ]);
    }
    a.emit(&[Insn::alu(Alu::Xor, R0, 0xffff), Insn::store(Size::H, FP, (at + 10) as i16, R0)]);
}

/// The TCP or UDP checksum (protocol in r9) of the transport header at `l4` follows the
/// pseudo-header's addresses from the `(fp offset, length)` `from` to `to`.
fn pseudo_header_change(a: &mut Asm, from: (i32, i32), to: (i32, i32), l4: i32) {
    a.emit(&[
        Insn::alu_reg(Alu::Mov, R1, FP),
        Insn::alu(Alu::Add, R1, from.0),
        Insn::alu(Alu::Mov, R2, from.1),
        Insn::alu_reg(Alu::Mov, R3, FP),
        Insn::alu(Alu::Add, R3, to.0),
        Insn::alu(Alu::Mov, R4, to.1),
        Insn::alu(Alu::Mov, R5, 0),
        Insn::call(BPF_FUNC_CSUM_DIFF),
        Insn::alu_reg(Alu::Mov, R4, R0),
        // UDP's checksum 6 bytes into its header, and 0 is written as 0xffff; TCP's 16 bytes in.
        Insn::alu(Alu::Mov, R2, l4 + 6),
        Insn::alu(Alu::Mov, R5, BPF_F_PSEUDO_HDR | BPF_F_MARK_MANGLED_0),
    ])
    .jump(Cond::Eq, R9, 17, "udp")
    .emit(&[Insn::alu(Alu::Mov, R2, l4 + 16), Insn::alu(Alu::Mov, R5, BPF_F_PSEUDO_HDR)])
    .label("udp")
    .emit(&[
        Insn::alu_reg(Alu::Mov, R1, R6),
        Insn::alu(Alu::Mov, R3, 0),
        Insn::call(BPF_FUNC_L4_CSUM_REPLACE),
    ])
    .jump(Cond::Ne, R0, 0, "drop");
}

/// The skb in r6 becomes a packet of ethertype `proto`: its network header room changed to the
/// `len` bytes of the new header at fp+`header`, which are written there, and the ethertype.
fn change_proto(a: &mut Asm, proto: u16, header: i32, len: i32) {
    a.emit(&[
        Insn::alu_reg(Alu::Mov, R1, R6),
        Insn::alu(Alu::Mov, R2, half(proto)),
        Insn::alu(Alu::Mov, R3, 0),
        Insn::call(BPF_FUNC_SKB_CHANGE_PROTO),
    ])
    .jump(Cond::Ne, R0, 0, "drop")
    .emit(&[Insn::store_imm(Size::H, FP, -4, half(proto))]);
    store_bytes(a, 12, -4, 2);
    store_bytes(a, 14, header, len);
}

/// Load both programs for the lab's rule and DMR and attach them to the DUT's left interface.
fn attach() -> Result<(), LabError> {
    let bad = |what: &str| LabError::InvalidInput(format!("mapt's {what} (lab names.rs) is not usable"));
    let rule = map_rule().ok_or_else(|| bad("mapping rule"))?;
    let dmr = v6(MAPT_DMR).ok_or_else(|| bad("Default Mapping Rule prefix"))?;
    let programs = [
        (to_ipv4_program(dmr, &rule)?, "xlat_maptbr_in"),
        (to_ipv6_program(dmr, &rule)?, "xlat_maptbr_out"),
    ];
    attach_pair(move || Ok((programs, None)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 7599 Appendix A's Basic Mapping Rule with a /96 DMR: both programs assemble, end in
    /// verdicts, compare or store the prefix's words, and change the protocol.
    #[test]
    fn programs_carry_the_rule_and_the_prefix() {
        let rule = super::super::mapbr::tests::example_rule();
        let dmr: Ipv6Addr = "64:ff9b::".parse().unwrap();
        let first = words(dmr)[0];
        let (i, o) = (to_ipv4_program(dmr, &rule).unwrap(), to_ipv6_program(dmr, &rule).unwrap());
        for p in [&i, &o] {
            assert_eq!(p.last().unwrap().code, xlat_bpf::EXIT);
            assert!(p.len() < 200, "{}", p.len());
            assert!(p.iter().any(|i| i.code == 0x85 && i.imm == BPF_FUNC_SKB_CHANGE_PROTO));
            assert!(p.iter().any(|i| i.code == 0x85 && i.imm == BPF_FUNC_L4_CSUM_REPLACE));
        }
        assert!(i.iter().any(|i| i.code == 0x56 && i.imm == first), "the prefix compared");
        assert!(o.iter().any(|i| i.code == 0x62 && i.imm == first), "the prefix stored");
        assert!(i.iter().any(|i| i.code == 0xb7 && i.imm == half(0x0800)));
        assert!(o.iter().any(|i| i.code == 0xb7 && i.imm == half(0x86dd)));
    }
}
