//! One trial: a sender and a receiver per active direction, paced by the TSC, counting loss,
//! duplicates and reordering separately, answering ARP and NDP for the tester's addresses, and
//! checking its own timing. Returns a [`TrialReport`]; what the report means is the bench
//! crate's business.

pub mod report;
pub mod spec;

pub use report::{DirectionReport, TrialReport};
pub use spec::{CpuPlan, TrialSpec};
