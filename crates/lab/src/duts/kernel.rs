//! The Linux kernel forwarding (router4, router6): the lab's cabling, addresses and forwarding
//! switches are the whole DUT.

use super::kind::DutKind;
use crate::error::LabError;
use crate::report::UpOptions;
use crate::state::LabState;
use crate::topologies::Topology;

pub(crate) struct Kernel;

impl DutKind for Kernel {
    fn name(&self) -> &'static str {
        "kernel"
    }

    fn build(&self, _t: Topology, _st: &mut LabState, _opts: &UpOptions) -> Result<(), LabError> {
        Ok(())
    }
}
