//! Repetitions (`--repeat N`): run a procedure N times and summarise its metrics
//! ([`Repeated`], [`Summary`] and their percentiles are in `xlat_results::repeat`).

pub use xlat_results::repeat::{percentile_linear, Repeated, Summary};
use xlat_results::BenchResult;

use crate::error::{config, ProcedureError};

/// Run a procedure `n` times (`f` gets the repetition index from 0) and summarise.
pub fn repeat<T, F>(n: usize, mut f: F) -> Result<Repeated<T>, ProcedureError>
where
    T: BenchResult,
    F: FnMut(usize) -> Result<T, ProcedureError>,
{
    if n == 0 {
        return config("the number of repetitions must be at least 1");
    }
    let mut runs = Vec::with_capacity(n.min(10_000));
    for i in 0..n {
        runs.push(f(i)?);
    }
    Ok(Repeated::from_runs(runs))
}
