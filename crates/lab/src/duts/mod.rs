//! One module per kind of DUT ([`Dut`]'s variants), each holding what is that kind's own: the
//! tools it needs, its checks of `lab up`'s options, what it builds once the lab's namespaces,
//! links, addresses and forwarding are there, what it stops at `lab down` (also after a crash,
//! without a state file), the files it leaves, and what it changes in the tester's written
//! configuration. setup.rs builds what every DUT shares and calls the DUT's module for the
//! rest; it does not branch on a kind of DUT.
//!
//! A new kind of DUT is a new module here implementing [`DutKind`] (kind.rs), its arm in
//! [`Dut::kind`] below, its [`Dut`] variant and properties (topologies.rs), its tests and
//! docs/lab.md.

pub(crate) mod aftr;
mod kernel;
mod kind;
pub(crate) mod lwaftr;
pub(crate) mod mapbr;
pub(crate) mod maptbr;
pub(crate) mod masquerade;
pub(crate) mod tayga;
pub(crate) mod testpmd;

pub(crate) use kind::{Down, DutKind};

use crate::topologies::{Dut, Topology};

impl Dut {
    /// Its module: what builds it, stops it and checks for it.
    pub(crate) fn kind(self) -> &'static dyn DutKind {
        match self {
            Dut::Kernel => &kernel::Kernel,
            Dut::Masquerade { .. } => &masquerade::Masquerade,
            Dut::TaygaStatic | Dut::TaygaPool => &tayga::Tayga,
            Dut::Aftr => &aftr::Aftr,
            Dut::Lwaftr => &lwaftr::LWAFTR,
            Dut::MapE => &mapbr::MAPBR,
            Dut::MapT => &maptbr::MAPTBR,
            Dut::Testpmd => &testpmd::Testpmd,
        }
    }
}

/// Every kind some topology uses, each once.
pub(crate) fn all() -> Vec<&'static dyn DutKind> {
    let mut kinds: Vec<&'static dyn DutKind> = Vec::new();
    for t in Topology::ALL {
        let kind = t.dut().kind();
        if !kinds.iter().any(|k| k.name() == kind.name()) {
            kinds.push(kind);
        }
    }
    kinds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_a_name_of_its_own_and_every_dut_a_kind() {
        let kinds = all();
        for t in Topology::ALL {
            assert!(kinds.iter().any(|k| k.name() == t.dut().kind().name()), "{t}");
        }
        let mut names: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), kinds.len());
    }
}
