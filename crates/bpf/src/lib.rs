//! eBPF programs written as instructions, and the bpf(2) calls that load and attach them.
//!
//! xlatperf's programs are a few dozen instructions each: the afxdp backend's XDP program
//! (which frames go to the socket) and the lab's tc programs (the decapsulation and
//! encapsulation of dslite's AFTR and of lw4o6's lwAFTR, whose binding table is a hash map). Written here as instructions, they need no compiler and no libbpf; the
//! kernel's verifier checks them at load time and its log comes back in the error.
//!
//! | module | what |
//! | --- | --- |
//! | `error` | [`BpfError`] |
//! | `insn` | [`Insn`], the opcodes, and [`Asm`], a program with named jump targets |
//! | `sys` | `bpf(2)`: program load (with the verifier's log), maps (XSKMAP, hash), XDP links, tcx attachment |

mod error;
mod insn;
mod sys;

pub use error::{BpfError, Result};
pub use insn::*;
pub use sys::*;
