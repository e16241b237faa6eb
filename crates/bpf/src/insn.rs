//! eBPF instructions (linux/bpf_common.h, linux/bpf.h) and a program builder with labels.

use crate::error::{BpfError, Result};

/// One eBPF instruction (struct bpf_insn): opcode, dst_reg in the low and src_reg in the high
/// nibble, offset, immediate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Insn {
    pub code: u8,
    pub regs: u8,
    pub off: i16,
    pub imm: i32,
}

// Instruction classes.
const LDX: u8 = 0x01;
const ST: u8 = 0x02;
const STX: u8 = 0x03;
const ALU: u8 = 0x04;
const JMP: u8 = 0x05;
const JMP32: u8 = 0x06;
const ALU64: u8 = 0x07;
// Sources: an immediate or a register.
const K: u8 = 0x00;
const X: u8 = 0x08;
const MEM: u8 = 0x60;

/// Access sizes of loads and stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Size {
    B = 0x10,
    H = 0x08,
    W = 0x00,
    DW = 0x18,
}

/// 64-bit arithmetic operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alu {
    Add = 0x00,
    Sub = 0x10,
    Or = 0x40,
    And = 0x50,
    Lsh = 0x60,
    Rsh = 0x70,
    Xor = 0xa0,
    Mov = 0xb0,
}

/// Jump conditions (unsigned comparisons).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cond {
    Always = 0x00,
    Eq = 0x10,
    Gt = 0x20,
    Ge = 0x30,
    Ne = 0x50,
    Le = 0xb0,
}

// Opcodes the XDP program of the afxdp backend uses (class | op | source).
pub const MOV64_X: u8 = ALU64 | Alu::Mov as u8 | X;
pub const MOV64_K: u8 = ALU64 | Alu::Mov as u8 | K;
pub const ADD64_K: u8 = ALU64 | Alu::Add as u8 | K;
pub const LDX_W: u8 = LDX | MEM | Size::W as u8;
pub const LDX_H: u8 = LDX | MEM | Size::H as u8;
/// BPF_LD | BPF_IMM | BPF_DW: a 64-bit immediate over two instructions.
pub const LD_DW_IMM: u8 = 0x18;
/// The src_reg of a 64-bit immediate load that names a map by its descriptor.
pub const BPF_PSEUDO_MAP_FD: u8 = 1;
pub const JGT_X: u8 = JMP | Cond::Gt as u8 | X;
pub const JEQ_K: u8 = JMP | Cond::Eq as u8 | K;
pub const CALL: u8 = JMP | 0x80;
pub const EXIT: u8 = JMP | 0x90;
/// BPF_ALU | BPF_END | BPF_TO_BE: the low `imm` bits (16, 32, 64) in network order.
const TO_BE: u8 = ALU | 0xd0 | 0x08;

/// Registers: r0 return value, r1-r5 arguments, r6-r9 kept across calls, r10 frame pointer.
pub const R0: u8 = 0;
pub const R1: u8 = 1;
pub const R2: u8 = 2;
pub const R3: u8 = 3;
pub const R4: u8 = 4;
pub const R5: u8 = 5;
pub const R6: u8 = 6;
pub const R7: u8 = 7;
pub const R8: u8 = 8;
pub const R9: u8 = 9;
pub const FP: u8 = 10;

impl Insn {
    pub const fn new(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> Insn {
        Insn {
            code,
            regs: (src << 4) | (dst & 0x0f),
            off,
            imm,
        }
    }

    /// The 8 bytes the kernel reads (little-endian fields on a little-endian host).
    pub fn to_bytes(self) -> [u8; 8] {
        let mut b = [0u8; 8];
        b[0] = self.code;
        b[1] = self.regs;
        b[2..4].copy_from_slice(&self.off.to_ne_bytes());
        b[4..8].copy_from_slice(&self.imm.to_ne_bytes());
        b
    }

    /// `dst op= imm` (64-bit).
    pub const fn alu(op: Alu, dst: u8, imm: i32) -> Insn {
        Insn::new(ALU64 | op as u8 | K, dst, 0, 0, imm)
    }

    /// `dst op= src` (64-bit).
    pub const fn alu_reg(op: Alu, dst: u8, src: u8) -> Insn {
        Insn::new(ALU64 | op as u8 | X, dst, src, 0, 0)
    }

    /// `dst = *(size *)(src + off)`.
    pub const fn load(size: Size, dst: u8, src: u8, off: i16) -> Insn {
        Insn::new(LDX | MEM | size as u8, dst, src, off, 0)
    }

    /// `*(size *)(dst + off) = src`.
    pub const fn store(size: Size, dst: u8, off: i16, src: u8) -> Insn {
        Insn::new(STX | MEM | size as u8, dst, src, off, 0)
    }

    /// `*(size *)(dst + off) = imm`.
    pub const fn store_imm(size: Size, dst: u8, off: i16, imm: i32) -> Insn {
        Insn::new(ST | MEM | size as u8, dst, 0, off, imm)
    }

    /// The low `bits` (16, 32 or 64) of `dst` in network byte order.
    pub const fn to_be(dst: u8, bits: i32) -> Insn {
        Insn::new(TO_BE, dst, 0, 0, bits)
    }

    /// Call helper function `helper` (arguments in r1-r5, result in r0).
    pub const fn call(helper: i32) -> Insn {
        Insn::new(CALL, 0, 0, 0, helper)
    }

    pub const fn exit() -> Insn {
        Insn::new(EXIT, 0, 0, 0, 0)
    }

    /// `dst = v`, a 64-bit immediate (two slots).
    pub const fn load_imm64(dst: u8, v: u64) -> [Insn; 2] {
        [
            Insn::new(LD_DW_IMM, dst, 0, 0, v as u32 as i32),
            Insn::new(0, 0, 0, 0, (v >> 32) as u32 as i32),
        ]
    }

    /// `dst = map` for the map whose descriptor is `fd` (a 64-bit immediate load: two slots).
    pub const fn load_map(dst: u8, fd: i32) -> [Insn; 2] {
        [Insn::new(LD_DW_IMM, dst, BPF_PSEUDO_MAP_FD, 0, fd), Insn::new(0, 0, 0, 0, 0)]
    }
}

/// The 32-bit immediate that, stored as a word, puts `bytes` into memory in this order.
pub const fn word(bytes: [u8; 4]) -> i32 {
    i32::from_ne_bytes(bytes)
}

/// The value a 16-bit load gives for the network-order `v` (an ethertype, a port).
pub const fn half(v: u16) -> i32 {
    u16::from_ne_bytes(v.to_be_bytes()) as i32
}

/// A program under construction, with jumps to named labels resolved by [`Asm::finish`].
#[derive(Debug, Default)]
pub struct Asm {
    insns: Vec<Insn>,
    labels: Vec<(&'static str, usize)>,
    jumps: Vec<(usize, &'static str)>,
}

impl Asm {
    pub fn new() -> Asm {
        Asm::default()
    }

    /// Append instructions.
    pub fn emit(&mut self, insns: &[Insn]) -> &mut Asm {
        self.insns.extend_from_slice(insns);
        self
    }

    /// The next instruction is `name`.
    pub fn label(&mut self, name: &'static str) -> &mut Asm {
        self.labels.push((name, self.insns.len()));
        self
    }

    /// `if dst cond imm goto to`.
    pub fn jump(&mut self, cond: Cond, dst: u8, imm: i32, to: &'static str) -> &mut Asm {
        self.jumps.push((self.insns.len(), to));
        self.insns.push(Insn::new(JMP | cond as u8 | K, dst, 0, 0, imm));
        self
    }

    /// `if (u32)dst cond (u32)imm goto to`: the low 32 bits only (a 64-bit comparison with an
    /// immediate sign-extends it, so a word with its high bit set would never be equal).
    pub fn jump32(&mut self, cond: Cond, dst: u8, imm: i32, to: &'static str) -> &mut Asm {
        self.jumps.push((self.insns.len(), to));
        self.insns.push(Insn::new(JMP32 | cond as u8 | K, dst, 0, 0, imm));
        self
    }

    /// `if dst cond src goto to`.
    pub fn jump_reg(&mut self, cond: Cond, dst: u8, src: u8, to: &'static str) -> &mut Asm {
        self.jumps.push((self.insns.len(), to));
        self.insns.push(Insn::new(JMP | cond as u8 | X, dst, src, 0, 0));
        self
    }

    /// `r0 = code; exit`.
    pub fn ret(&mut self, code: i32) -> &mut Asm {
        self.emit(&[Insn::alu(Alu::Mov, R0, code), Insn::exit()])
    }

    /// The instructions, every jump pointing at its label.
    pub fn finish(mut self) -> Result<Vec<Insn>> {
        for (i, (name, _)) in self.labels.iter().enumerate() {
            if self.labels[..i].iter().any(|(n, _)| n == name) {
                return Err(BpfError::Asm(format!("label {name} defined twice")));
            }
        }
        for &(at, to) in &self.jumps {
            let Some(&(_, target)) = self.labels.iter().find(|(n, _)| *n == to) else {
                return Err(BpfError::Asm(format!("jump to undefined label {to}")));
            };
            let off = target as i64 - at as i64 - 1;
            self.insns[at].off = i16::try_from(off).map_err(|_| BpfError::Asm(format!("jump to {to} too far")))?;
        }
        Ok(self.insns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Encodings as the kernel reads them (checked against llvm-objdump's reading of the same
    /// bytes: `r6 = r1` is bf 16, `r3 = *(u32 *)(r1 + 4)` is 61 13 04 00).
    #[test]
    fn encodings() {
        assert_eq!(Insn::new(MOV64_X, 6, 1, 0, 0).to_bytes(), [0xbf, 0x16, 0, 0, 0, 0, 0, 0]);
        assert_eq!(Insn::alu_reg(Alu::Mov, 6, 1), Insn::new(MOV64_X, 6, 1, 0, 0));
        assert_eq!(Insn::load(Size::W, 3, 1, 4).to_bytes(), [0x61, 0x13, 4, 0, 0, 0, 0, 0]);
        assert_eq!(Insn::load(Size::H, 4, 2, 12).code, LDX_H);
        assert_eq!(Insn::load(Size::B, 4, 2, 20).code, 0x71);
        assert_eq!(Insn::store(Size::W, FP, -8, 7).to_bytes(), [0x63, 0x7a, 0xf8, 0xff, 0, 0, 0, 0]);
        assert_eq!(Insn::store_imm(Size::H, FP, -2, 8).to_bytes(), [0x6a, 0x0a, 0xfe, 0xff, 8, 0, 0, 0]);
        assert_eq!(Insn::to_be(7, 16).to_bytes(), [0xdc, 0x07, 0, 0, 16, 0, 0, 0]);
        assert_eq!(Insn::alu(Alu::And, 7, 0xffff).to_bytes(), [0x57, 0x07, 0, 0, 0xff, 0xff, 0, 0]);
        assert_eq!(Insn::call(9).to_bytes(), [0x85, 0, 0, 0, 9, 0, 0, 0]);
        assert_eq!(Insn::exit().to_bytes(), [0x95, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(half(0x86dd).to_ne_bytes()[..2], [0x86, 0xdd]);
        assert_eq!(word([0x60, 0, 0, 0]).to_ne_bytes(), [0x60, 0, 0, 0]);
    }

    #[test]
    fn jumps_go_to_their_labels() {
        let mut a = Asm::new();
        a.jump(Cond::Eq, R1, 4, "out")
            .jump_reg(Cond::Gt, R2, R3, "out")
            .emit(&[Insn::alu(Alu::Add, R2, 1)])
            .label("back")
            .jump(Cond::Always, 0, 0, "back")
            .label("out")
            .ret(0);
        let p = a.finish().unwrap();
        assert_eq!(p.len(), 6);
        assert_eq!((p[0].code, p[0].off, p[0].imm), (0x15, 3, 4));
        assert_eq!((p[1].code, p[1].regs, p[1].off), (0x2d, 0x32, 2));
        assert_eq!((p[3].code, p[3].off), (0x05, -1));
        let mut w = Asm::new();
        w.jump32(Cond::Ne, R4, -1, "x").label("x").ret(0);
        assert_eq!(w.finish().unwrap()[0].to_bytes(), [0x56, 0x04, 0, 0, 0xff, 0xff, 0xff, 0xff]);
        let mut bad = Asm::new();
        bad.jump(Cond::Ne, R1, 0, "nowhere");
        assert!(matches!(bad.finish(), Err(BpfError::Asm(m)) if m.contains("nowhere")));
        let mut twice = Asm::new();
        twice.label("a").label("a").ret(0);
        assert!(matches!(twice.finish(), Err(BpfError::Asm(m)) if m.contains("twice")));
    }
}
