//! The one interface between the procedures and whatever runs their trials.

use serde::{Deserialize, Serialize};

use crate::error::TrialError;
use crate::report::{HookRun, TrialReport};
use crate::spec::TrialSpec;
use crate::stamps::StampSource;

/// A tester port's setting that changes a figure, as read back when the port was opened
/// (every result document's `meta.ports`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortSettings {
    /// "left" or "right".
    pub side: String,
    /// The port as its backend names it ("dpdk:net_tap0", "xlat-tl in xlat-tester").
    pub port: String,
    /// Ethernet flow control (IEEE 802.3x PAUSE) as read back: "off", "on" (PAUSE frames
    /// honoured and sent), "rx-pause" (honoured only), "tx-pause" (sent only), or "unsupported"
    /// (the port has none: no PAUSE frames either way); asked for by `tester.flow_control`.
    pub flow_control: String,
}

/// Performs trials. The engine's `Tester` implements it over real ports; the binary wraps it
/// (DUT commands around each trial, Ctrl-C); `xlat_testkit::sim::SimDut` implements it for tests.
/// The procedures (`xlat-procedures`) drive nothing else and never touch hardware themselves.
pub trait TrialRunner {
    /// Run one trial as `spec` says and report what was sent and received (with a rate change,
    /// the sequence number of the last lost frame: system recovery needs it). A stateful
    /// `spec` runs phase 1 first. Everything the trial is, is in `spec` (its directions, its
    /// stamps, when phase 2 runs and what runs before it): a runner that cannot do what the
    /// spec asks refuses it (`TrialErrorKind::Unsupported`), never runs something else.
    fn run(&mut self, spec: &TrialSpec) -> Result<TrialReport, TrialError>;

    /// Run the preliminary phase of `spec` (stateful) alone, no phase 2 (RFC 9693's connection
    /// establishment rate), followed by a validation phase at `validation` frames/s when given
    /// (the Responder sends once to every learnt tuple; its direction's report counts what
    /// came back). Runners that cannot say so.
    fn run_preliminary(&mut self, spec: &TrialSpec, validation: Option<u64>) -> Result<TrialReport, TrialError> {
        let _ = (spec, validation);
        Err(TrialError::unsupported("running phase 1 alone"))
    }

    /// Run the DUT command of configuration key `key` (e.g. `dut.delete_all`) and return how
    /// many seconds it took; an error if it is not configured, fails or overruns its deadline.
    fn time_dut_command(&mut self, key: &str) -> Result<f64, TrialError> {
        Err(TrialError::unsupported(format!("running the DUT command {key}")))
    }

    /// Run `spec` and, `after_s` seconds after the trial began, the DUT command of
    /// configuration key `key` alongside it (a device reset, RFC 6201). The command's record
    /// comes back with the report; a command that fails or overruns its deadline (the rest of
    /// the trial) is in the record (`exit_status` not 0 or `None`), not an error. An error if
    /// the command is not configured.
    fn run_with_dut_command(&mut self, spec: &TrialSpec, key: &str, after_s: f64) -> Result<(TrialReport, HookRun), TrialError> {
        let _ = (spec, after_s);
        Err(TrialError::unsupported(format!("running the DUT command {key} during a trial")))
    }

    /// The timestamp sources this runner's ports can give and it reads, best first (the
    /// self-test measures the tester's latency floor with each). Runners that cannot say
    /// so: only the tester's own clock.
    fn stamp_sources(&self) -> Vec<StampSource> {
        vec![StampSource::User]
    }

    /// The ports and the DUT, for a human header ("left ... (DUT ...), right ...").
    fn describe(&self) -> String {
        String::new()
    }

    /// The ports' settings that change a figure (flow control), as read back; runners without
    /// real ports: none.
    fn ports(&self) -> Vec<PortSettings> {
        Vec::new()
    }
}

impl<T: TrialRunner + ?Sized> TrialRunner for &mut T {
    fn run(&mut self, spec: &TrialSpec) -> Result<TrialReport, TrialError> {
        (**self).run(spec)
    }

    fn run_preliminary(&mut self, spec: &TrialSpec, validation: Option<u64>) -> Result<TrialReport, TrialError> {
        (**self).run_preliminary(spec, validation)
    }

    fn time_dut_command(&mut self, key: &str) -> Result<f64, TrialError> {
        (**self).time_dut_command(key)
    }

    fn run_with_dut_command(&mut self, spec: &TrialSpec, key: &str, after_s: f64) -> Result<(TrialReport, HookRun), TrialError> {
        (**self).run_with_dut_command(spec, key, after_s)
    }

    fn stamp_sources(&self) -> Vec<StampSource> {
        (**self).stamp_sources()
    }

    fn describe(&self) -> String {
        (**self).describe()
    }

    fn ports(&self) -> Vec<PortSettings> {
        (**self).ports()
    }
}
