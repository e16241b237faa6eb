//! Where a trial's frames are stamped: which clock reading a latency, PDV or IPDV figure is
//! the difference of.

use serde::{Deserialize, Serialize};

/// The stamps one direction's delays were taken with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StampSource {
    /// The tester's own clock read in user space: the sender when the frame is in the
    /// backend's buffer, the receiver when it polls the frame out (both include the tester's
    /// scheduling delays).
    #[default]
    User,
    /// The kernel's software stamps where the frame crosses the driver.
    Kernel,
    /// The NIC's clock.
    Hardware,
}

impl StampSource {
    /// The name in the configuration (`tester.timestamps`) and in reports.
    pub fn name(self) -> &'static str {
        match self {
            StampSource::User => "user",
            StampSource::Kernel => "kernel",
            StampSource::Hardware => "hardware",
        }
    }

    /// For a human: what stamped the frames.
    pub fn describe(self) -> &'static str {
        match self {
            StampSource::User => "the tester's own clock read in user space, its scheduling delays included",
            StampSource::Kernel => "the kernel's software stamps where the frame crosses the driver",
            StampSource::Hardware => "the NIC's clock",
        }
    }
}
