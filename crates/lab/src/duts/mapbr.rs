//! mape's border relay (RFC 7597): the softwire end on the DUT's left interface, stateless and
//! without a table: every CE's address follows from the mapping rule ([`MapRule`]), so the two
//! tc programs (tcx, sharing [`super::aftr`]'s encapsulation and decapsulation) compute it from
//! the packet, in eBPF, with the rule's figures as constants.
//!
//! - ingress: an IPv4-in-IPv6 packet to the BR is decapsulated only when its outer source is the
//!   address the rule gives its inner source address and source port (RFC 7597 section 8.1);
//!   a port in no port set, an address outside the rule or any other outer source is dropped;
//! - egress: an IPv4 packet to an address and port the rule gives a CE is encapsulated to that
//!   CE's address; anything else is dropped.
//!
//! The address, as two 64-bit halves (the end-user prefix is at most a /64): the high half is
//! the rule IPv6 prefix with the EA bits (IPv4 suffix, then PSID) after it; the low half is the
//! interface identifier, 16 zero bits, the IPv4 address, the PSID (RFC 7597 section 6).
//!
//! What it does not do (docs/lab.md): ICMP, fragments, IPv4 options, CE-to-CE hairpinning,
//! Forwarding Mapping Rules other than the Basic one.

use std::net::Ipv6Addr;

use xlat_bpf::{half, Alu, Asm, Cond, Insn, Size, FP, R0, R1, R2, R4, R5, R6, R7, R8};
use xlat_traffic::maprule::MapRule;

use super::aftr::{addr, attach_pair, decapsulate, encapsulate, headers, softwire_to, udp_or_tcp, verdicts, OUTER};
use super::kind::TcPrograms;
use crate::error::LabError;
use crate::names::{map_rule, DSLITE_AFTR};

/// mape's DUT.
pub(crate) static MAPBR: TcPrograms = TcPrograms {
    name: "mapbr",
    attach,
    ces_by_the_rule: true,
    tester: || (map_rule(), None),
};

/// The rule's CE address for the IPv4 address in r4 and the port in r5 (both numbers, in host
/// order): its high half to r7, its low half to r8 (numbers: the first address byte is the
/// top byte); to "drop" when the rule gives no CE that address and port. Uses r0 and r1.
pub(crate) fn ce_address(a: &mut Asm, rule: &MapRule) {
    let (p4, l4) = rule.ipv4_prefix();
    let (p6, l6) = rule.ipv6_prefix();
    let (q, off, ea) = (u32::from(rule.psid_len()), u32::from(rule.psid_offset()), u32::from(rule.ea_len()));
    let mask4 = if l4 == 0 { 0 } else { u32::MAX << (32 - u32::from(l4)) };
    // The address is in the rule IPv4 prefix (a 32-bit compare: the immediates are sign-extended).
    a.emit(&[Insn::alu_reg(Alu::Mov, R7, R4), Insn::alu(Alu::And, R7, mask4 as i32)])
        .jump32(Cond::Ne, R7, u32::from(p4) as i32, "drop");
    // r0 = the PSID of the port; a port in the left-out first range (its first `a` bits 0) has none.
    a.emit(&[Insn::alu(Alu::Mov, R0, 0)]);
    if q > 0 {
        if off > 0 {
            a.emit(&[Insn::alu_reg(Alu::Mov, R0, R5), Insn::alu(Alu::Rsh, R0, (16 - off) as i32)])
                .jump(Cond::Eq, R0, 0, "drop");
        }
        a.emit(&[
            Insn::alu_reg(Alu::Mov, R0, R5),
            Insn::alu(Alu::Rsh, R0, (16 - off - q) as i32),
            Insn::alu(Alu::And, R0, ((1u32 << q) - 1) as i32),
        ]);
    }
    // r7 = the EA bits (IPv4 suffix, then the PSID) in their place after the rule IPv6 prefix,
    // or'd with the prefix's high half.
    if ea > 0 {
        a.emit(&[
            Insn::alu_reg(Alu::Mov, R7, R4),
            Insn::alu(Alu::And, R7, (!mask4) as i32),
            Insn::alu(Alu::Lsh, R7, q as i32),
            Insn::alu_reg(Alu::Or, R7, R0),
            Insn::alu(Alu::Lsh, R7, (64 - u32::from(l6) - ea) as i32),
        ]);
        // (The suffix mask may be 0xffffffff, sign-extended to all ones: r4's high half is 0.)
    } else {
        a.emit(&[Insn::alu(Alu::Mov, R7, 0)]);
    }
    a.emit(&Insn::load_imm64(R1, (u128::from(p6) >> 64) as u64));
    a.emit(&[
        Insn::alu_reg(Alu::Or, R7, R1),
        // r8 = 16 zero bits, the IPv4 address, the PSID.
        Insn::alu_reg(Alu::Mov, R8, R4),
        Insn::alu(Alu::Lsh, R8, 16),
        Insn::alu_reg(Alu::Or, R8, R0),
    ]);
}

/// r4 = the IPv4 address at `addr_at`, r5 = the port at `port_at` (from r2), as numbers.
pub(crate) fn address_and_port(a: &mut Asm, addr_at: i16, port_at: i16) {
    a.emit(&[
        Insn::load(Size::W, R4, R2, addr_at),
        Insn::to_be(R4, 32),
        Insn::load(Size::H, R5, R2, port_at),
        Insn::to_be(R5, 16),
    ]);
}

/// Ingress: decapsulate IPv4-in-IPv6 to `br` from the CE the rule gives its inner source address
/// and port; drop it from any other source.
pub(crate) fn decap_program(br: Ipv6Addr, rule: &MapRule) -> xlat_bpf::Result<Vec<Insn>> {
    let mut a = Asm::new();
    softwire_to(&mut a, br, OUTER + 20 + 4);
    udp_or_tcp(&mut a, OUTER as i16);
    address_and_port(&mut a, OUTER as i16 + 12, OUTER as i16 + 20);
    ce_address(&mut a, rule);
    source_is_the_ce(&mut a);
    decapsulate(&mut a);
    verdicts(a)
}

/// Egress: encapsulate an IPv4 packet from `br` to the CE the rule gives its destination address
/// and port; drop any other IPv4 packet.
pub(crate) fn encap_program(br: Ipv6Addr, rule: &MapRule) -> xlat_bpf::Result<Vec<Insn>> {
    let mut a = Asm::new();
    ipv4_to_a_ce(&mut a, rule, 14 + 20 + 4);
    encapsulate(&mut a, br);
    verdicts(a)
}

/// To "drop" unless the packet's IPv6 source (bytes 8..24 of the header after Ethernet, from
/// r2: mape's outer source, mapt's source) is the CE address in r7 and r8.
pub(crate) fn source_is_the_ce(a: &mut Asm) {
    a.emit(&[Insn::load(Size::DW, R4, R2, 14 + 8), Insn::to_be(R4, 64)])
        .jump_reg(Cond::Ne, R4, R7, "drop")
        .emit(&[Insn::load(Size::DW, R4, R2, 14 + 16), Insn::to_be(R4, 64)])
        .jump_reg(Cond::Ne, R4, R8, "drop");
}

/// The start of an egress program (skb in r1, kept in r6): the first `len` bytes readable at
/// r2, on to "pass" unless the packet is IPv4, to "drop" unless it is UDP or TCP to an address
/// and port the rule gives a CE; that CE's address at fp-24..fp-8 in network order.
pub(crate) fn ipv4_to_a_ce(a: &mut Asm, rule: &MapRule, len: i32) {
    a.emit(&[Insn::alu_reg(Alu::Mov, R6, R1)]);
    headers(a, len);
    a.emit(&[Insn::load(Size::H, R4, R2, 12)]).jump(Cond::Ne, R4, half(0x0800), "pass");
    udp_or_tcp(a, 14);
    address_and_port(a, 14 + 16, 14 + 20 + 2);
    ce_address(a, rule);
    a.emit(&[
        Insn::to_be(R7, 64),
        Insn::store(Size::DW, FP, -24, R7),
        Insn::to_be(R8, 64),
        Insn::store(Size::DW, FP, -16, R8),
    ]);
}

/// Load both programs for the lab's rule and attach them to the DUT's left interface.
fn attach() -> Result<(), LabError> {
    let rule = map_rule().ok_or_else(|| LabError::InvalidInput("mape's mapping rule (lab names.rs) is not a usable rule".into()))?;
    let br = addr(DSLITE_AFTR);
    let programs = [
        (decap_program(br, &rule)?, "xlat_mapbr_in"),
        (encap_program(br, &rule)?, "xlat_mapbr_out"),
    ];
    attach_pair(move || Ok((programs, None)))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    /// RFC 7599 Appendix A's Basic Mapping Rule (example 1): {2001:db8::/40, 192.0.2.0/24, 16}.
    pub(crate) fn example_rule() -> MapRule {
        MapRule::new(("2001:db8::".parse().unwrap(), 40), (Ipv4Addr::new(192, 0, 2, 0), 24), 16, 6).unwrap()
    }

    /// RFC 7599 Appendix A's Basic Mapping Rule: both programs assemble and end in verdicts,
    /// and carry the rule's figures (its IPv4 prefix compared, its IPv6 prefix's high half
    /// loaded, the PSID's 8 bits masked).
    #[test]
    fn programs_carry_the_rule() {
        let rule = example_rule();
        let br: Ipv6Addr = "2001:db8:ffff::1".parse().unwrap();
        for p in [decap_program(br, &rule).unwrap(), encap_program(br, &rule).unwrap()] {
            assert_eq!(p.last().unwrap().code, xlat_bpf::EXIT);
            assert!(p.len() < 120, "{}", p.len());
            assert!(
                p.iter().any(|i| i.code == 0x56 && i.imm == 0xc000_0200_u32 as i32),
                "the IPv4 prefix"
            );
            let hi = (u128::from("2001:db8::".parse::<Ipv6Addr>().unwrap()) >> 64) as u64;
            assert!(p
                .windows(2)
                .any(|w| w[0].code == 0x18 && w[0].imm == hi as u32 as i32 && w[1].imm == (hi >> 32) as i32));
            assert!(p.iter().any(|i| i.code == 0x57 && i.imm == 0xff), "the PSID mask");
        }
    }
}
