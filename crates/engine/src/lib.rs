//! One trial: senders and receivers per active direction, paced by the TSC, counting loss,
//! duplicates, reordering and corruption separately, answering ARP and NDP for the tester's
//! addresses, and checking its own timing and its own drops. Returns a [`TrialReport`]; what the
//! report means is the procedures' business (`xlat_procedures`) and the results crate's (`xlat_results`).
//!
//! | module | holds |
//! | --- | --- |
//! | [`trial`] | [`Tester`]: the ports, address resolution, and `run_trial` in four steps (check, plan, run, assemble) |
//! | `trial/schedule.rs` | when each frame is due (RFC 2544 section 23), which frames carry latency tags |
//! | `trial/sender.rs` | one direction's sender: a burst per call, prompt catch-up, per-frame stamps |
//! | `trial/receiver.rs` | one port's receiver: the per-frame count (`Count::test_frame`), ARP/NDP answers |
//! | `trial/worker.rs` | the per-core loop (`worker_loop`) with its deadline, failure and abort checks |
//! | [`neighbour`] | ARP and NDP: answering, resolving the DUT, announcing the tester's addresses |
//! | `delay`, `report`, `spec` | re-exported from `xlat-trial`: the trial boundary's types, which the engine fills in |
//! | [`load`] | the DUT's and the tester's CPU load over a trial, from `/proc/stat` and `/proc/softirqs` |
//! | [`clock`], [`pin`] | the TSC clock; pinning and priority of worker threads |
//! | [`bench`] | the performance harness: the benchmarks' streams, the sender flat out, the receiver on a looped-back pair |
//!
//! Threads: one per core that has a role. By default each port gets its own core, its worker
//! sending the port's direction and receiving the other; a [`CpuPlan`] that gives roles the same
//! core puts them in one thread (on 2 CPUs the lab's TAYGA topologies run all four on CPU 0).

pub mod bench;
pub mod clock;
pub mod load;
pub mod neighbour;
pub mod pin;
pub mod trial;

// The trial boundary's types live in xlat-trial (the procedures use them without the engine);
// re-exported so that the engine's users keep one import path.
pub use xlat_trial::{delay, report, spec};

pub use clock::Clock;
pub use report::PdvReport;
pub use report::{DirectionReport, HookRun, PreliminaryReport, TrialReport};
pub use spec::{CpuPlan, LatencySpec, PdvSpec, PhaseTwoAfter, PreliminarySpec, RateChange, SpecError, TrialSpec};
pub use trial::{EngineError, Tester, TOLERANCE};
