//! One trial: a sender and a receiver per active direction, paced by the TSC, counting loss,
//! duplicates and reordering separately, answering ARP and NDP for the tester's addresses, and
//! checking its own timing. Returns a [`TrialReport`]; what the report means is the bench
//! crate's business.
//!
//! On a 2-core machine each port gets one worker thread that both sends its direction and
//! receives the other (its receiver also answers ARP/NDP); a CPU plan that puts a port's sender
//! and receiver on different cores splits them into two threads.

pub mod clock;
pub mod delay;
pub mod neighbour;
pub mod pin;
pub mod report;
pub mod saturate;
pub mod spec;
pub mod trial;

pub use clock::Clock;
pub use report::PdvReport;
pub use report::{DirectionReport, TrialReport};
pub use spec::{CpuPlan, LatencySpec, PdvSpec, RateChange, SpecError, TrialSpec};
pub use trial::{EngineError, Tester, TOLERANCE};
