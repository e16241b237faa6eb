//! The one hand-made [`TrialRunner`] of the tests: each trial (phase 2, and phase 1 with its
//! validation rate) answered by a closure over its spec, or another runner's reports changed by
//! one, and the DUT's timed commands by another; every spec it was asked recorded in order. A test says in a few lines what its "DUT"
//! does instead of declaring a runner type of its own.

use xlat_trial::{PreliminaryReport, TrialError, TrialReport, TrialRunner, TrialSpec};

type Trial<'a> = Box<dyn FnMut(&TrialSpec) -> Result<TrialReport, TrialError> + 'a>;
type Preliminary<'a> = Box<dyn FnMut(&TrialSpec, Option<u64>) -> Result<TrialReport, TrialError> + 'a>;
type DutCommand<'a> = Box<dyn FnMut(&str) -> Result<f64, TrialError> + 'a>;

/// A runner made of closures.
pub struct Fake<'a> {
    trial: Trial<'a>,
    preliminary: Option<Preliminary<'a>>,
    dut_command: Option<DutCommand<'a>>,
    /// Every spec asked for, phase 1 and phase 2 alike, in order.
    pub asked: Vec<TrialSpec>,
}

impl<'a> Fake<'a> {
    /// Phase 2 (and stateless) trials answered by `trial`; phase 1 alone is not supported
    /// until [`Fake::with_preliminary`].
    pub fn new(trial: impl FnMut(&TrialSpec) -> Result<TrialReport, TrialError> + 'a) -> Fake<'a> {
        Fake {
            trial: Box::new(trial),
            preliminary: None,
            dut_command: None,
            asked: Vec::new(),
        }
    }

    /// Phase 1 on its own (`TrialRunner::run_preliminary`, with the validation rate) answered
    /// by `f`; phase 2 is not supported.
    pub fn preliminary(f: impl FnMut(&TrialSpec, Option<u64>) -> Result<TrialReport, TrialError> + 'a) -> Fake<'a> {
        Fake::new(|_| Err(TrialError::unsupported("phase 2"))).with_preliminary(f)
    }

    /// This fake, with phase 1 on its own answered by `f`.
    pub fn with_preliminary(mut self, f: impl FnMut(&TrialSpec, Option<u64>) -> Result<TrialReport, TrialError> + 'a) -> Fake<'a> {
        self.preliminary = Some(Box::new(f));
        self
    }

    /// This fake, with the DUT's commands (`TrialRunner::time_dut_command`, by configuration
    /// key) timed by `f`.
    pub fn with_dut_command(mut self, f: impl FnMut(&str) -> Result<f64, TrialError> + 'a) -> Fake<'a> {
        self.dut_command = Some(Box::new(f));
        self
    }

    /// `inner`'s trials, each report changed by `edit` (which also sees the spec).
    pub fn around<R: TrialRunner + 'a>(mut inner: R, mut edit: impl FnMut(&TrialSpec, &mut TrialReport) + 'a) -> Fake<'a> {
        Fake::new(move |spec| {
            let mut r = inner.run(spec)?;
            edit(spec, &mut r);
            Ok(r)
        })
    }
}

impl TrialRunner for Fake<'_> {
    fn run(&mut self, spec: &TrialSpec) -> Result<TrialReport, TrialError> {
        self.asked.push(spec.clone());
        (self.trial)(spec)
    }

    fn run_preliminary(&mut self, spec: &TrialSpec, validation: Option<u64>) -> Result<TrialReport, TrialError> {
        self.asked.push(spec.clone());
        match &mut self.preliminary {
            Some(f) => f(spec, validation),
            None => Err(TrialError::unsupported("phase 1 on its own")),
        }
    }

    fn time_dut_command(&mut self, key: &str) -> Result<f64, TrialError> {
        match &mut self.dut_command {
            Some(f) => f(key),
            None => Err(TrialError::unsupported(format!("running the DUT command {key}"))),
        }
    }
}

/// A phase 1 report of `spec` (which must have one): every frame sent, `received` of them
/// arrived and learnt as entries; the trial invalid with siitperf's reason when that leaves
/// the state table unfilled.
pub fn phase_one(spec: &TrialSpec, received: u64) -> TrialReport {
    let p = spec.preliminary.expect("a stateful trial's spec");
    let mut r = TrialReport::of(spec);
    if received < p.state_table {
        r.invalidate(format!(
            "Failed to fill state table (valid entries: {received}, state table size: {})",
            p.state_table
        ));
    }
    r.preliminary = Some(PreliminaryReport {
        frames: p.frames,
        rate: p.rate,
        sent: p.frames,
        received,
        valid_entries: received,
        state_table: p.state_table,
        duplicate_tuples: Some(0),
        ..Default::default()
    });
    r
}
