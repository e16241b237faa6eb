//! The tester as the procedures see it: `xlat_trial`'s [`TrialRunner`] over [`Tester`].

use super::error::EngineError;
use super::Tester;
use xlat_io::Port;
use xlat_trial::report::TrialReport;
use xlat_trial::spec::TrialSpec;
use xlat_trial::{TrialError, TrialRunner};

/// An engine error as a trial error: Ctrl-C (the abort flag) as interrupted, the rest as a
/// failure with its causes.
fn trial_error(e: EngineError) -> TrialError {
    match e {
        EngineError::Interrupted => TrialError::interrupted(),
        e => TrialError::new(e),
    }
}

impl<P: Port> TrialRunner for Tester<P> {
    fn run(&mut self, spec: &TrialSpec) -> Result<TrialReport, TrialError> {
        self.run_trial(spec).map_err(trial_error)
    }

    fn run_preliminary(&mut self, spec: &TrialSpec, validation: Option<u64>) -> Result<TrialReport, TrialError> {
        Tester::run_preliminary(self, spec, validation).map_err(trial_error)
    }

    fn stamp_sources(&self) -> Vec<xlat_trial::StampSource> {
        Tester::stamp_sources(self)
    }

    fn describe(&self) -> String {
        let (l, r) = self.port_names();
        let (dl, dr) = self.dut_macs();
        let m = |m: Option<xlat_wire::MacAddr>| m.map(|m| m.to_string()).unwrap_or_else(|| "?".into());
        let fc = self
            .port_settings()
            .iter()
            .map(|p| format!("{} {}", p.side, p.flow_control))
            .collect::<Vec<_>>()
            .join(", ");
        let fc = if fc.is_empty() {
            String::new()
        } else {
            format!("; flow control: {fc}")
        };
        format!("left {l} (DUT {}), right {r} (DUT {}){fc}", m(dl), m(dr))
    }

    fn ports(&self) -> Vec<xlat_trial::PortSettings> {
        self.port_settings().to_vec()
    }
}
