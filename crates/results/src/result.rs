//! [`BenchResult`]: what every procedure result offers to repetitions and to the output layer.

use crate::record::TrialRecord;
use crate::view::Procedure;

/// What every procedure result offers: its trials, the numbers summarised over repetitions, and
/// its text (the implementations are in [`crate::text`]).
pub trait BenchResult {
    /// The procedure that found it.
    fn procedure(&self) -> Procedure;
    /// Every trial, in order, retries included.
    fn trials(&self) -> &[TrialRecord];
    /// The numbers summarised over repetitions (name, value); an infinite value (a worst-case
    /// latency with lost tags) sorts last.
    fn metrics(&self) -> Vec<(String, f64)>;
    /// A plain-text table for a terminal.
    fn human_table(&self) -> String;
    /// "84 B: 123,456 fps" and the like, for the progress display and the overview.
    fn headline(&self) -> String;
}
