//! RFC 9971 (MLRsearch) definitions that turn trial results into a search's answer: the
//! [`Target`] a load is classified for, [`classify`] (Load Classification, as the RFC's
//! Appendix A computes it), the Relevant Bounds of a set of measured loads ([`relevant_bounds`]),
//! and the Conditional Throughput ([`conditional_throughput`], as its Appendix B computes it). The search that
//! chooses the loads is [`crate::mlrsearch`]; nothing here runs a trial.
//!
//! Vocabulary, as in the RFC: a **full-length** trial lasts at least the Goal Final Trial
//! Duration, a **short** one less; a **high-loss** trial has a Trial Loss Ratio above the Goal
//! Loss Ratio, a **low-loss** one at most that. A load is a **Lower Bound** when even the
//! pessimistic view (every missing second of the Goal Duration Sum high-loss) keeps the
//! high-loss share at most the Goal Exceed Ratio, an **Upper Bound** when even the optimistic
//! view (every missing second low-loss) exceeds it, **Undecided** otherwise.

pub use xlat_results::mlrsearch::Classification;

/// What a load is classified against: a Search Goal's loss ratio, exceed ratio, final trial
/// duration and duration sum (for a goal's own target), or the coarser values of one of the
/// targets the search passes through before it (see [`crate::mlrsearch`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Target {
    pub loss_ratio: f64,
    pub exceed_ratio: f64,
    /// Trials at least this long are full-length, seconds.
    pub final_duration_s: f64,
    pub duration_sum_s: f64,
}

/// One trial's result as load classification sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrialResult {
    /// Trial Effective Duration, seconds.
    pub duration_s: f64,
    /// Trial Loss Ratio: frames lost over frames sent, every direction together.
    pub loss_ratio: f64,
}

/// The four duration sums of the trials at one load (RFC 9971 Appendix A's inputs).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DurationSums {
    pub full_low_loss_s: f64,
    pub full_high_loss_s: f64,
    pub short_low_loss_s: f64,
    pub short_high_loss_s: f64,
}

impl DurationSums {
    pub fn of(trials: &[TrialResult], target: &Target) -> DurationSums {
        let mut s = DurationSums::default();
        for t in trials {
            let high = t.loss_ratio > target.loss_ratio;
            let slot = match (t.duration_s >= target.final_duration_s, high) {
                (true, false) => &mut s.full_low_loss_s,
                (true, true) => &mut s.full_high_loss_s,
                (false, false) => &mut s.short_low_loss_s,
                (false, true) => &mut s.short_high_loss_s,
            };
            *slot += t.duration_s;
        }
        s
    }
}

/// Classify a load from its trials (RFC 9971 Appendix A): short low-loss trials may balance
/// short high-loss ones (at the exceed ratio's odds) but never count towards a lower bound;
/// a missing part of the duration sum counts as low-loss for the optimistic view and as
/// high-loss for the pessimistic one.
pub fn classify(trials: &[TrialResult], target: &Target) -> Classification {
    let s = DurationSums::of(trials, target);
    let x = target.exceed_ratio;
    let balancing_s = s.short_low_loss_s * x / (1.0 - x);
    let effective_high_loss_s = s.full_high_loss_s + (s.short_high_loss_s - balancing_s).max(0.0);
    let effective_full_sum_s = s.full_low_loss_s + effective_high_loss_s;
    let missing_s = (target.duration_sum_s - effective_full_sum_s).max(0.0);
    let pessimistic_high_loss_s = effective_high_loss_s + missing_s;
    let limit_s = x * effective_full_sum_s.max(target.duration_sum_s);
    let optimistic_is_lower = effective_high_loss_s <= limit_s;
    let pessimistic_is_lower = pessimistic_high_loss_s <= limit_s;
    match (optimistic_is_lower, pessimistic_is_lower) {
        (true, true) => Classification::LowerBound,
        (false, false) => Classification::UpperBound,
        _ => Classification::Undecided,
    }
}

/// The loss ratio of the Conditional Throughput (RFC 9971 Appendix B): the full-length trials
/// sorted by loss ratio, the missing part of the duration sum counted as loss ratio 1, and the
/// quantile the exceed ratio names (on a tie the lower value: being equal to the exceed ratio is
/// allowed).
pub fn quantile_loss_ratio(trials: &[TrialResult], target: &Target) -> f64 {
    let mut full: Vec<TrialResult> = trials.iter().copied().filter(|t| t.duration_s >= target.final_duration_s).collect();
    full.sort_by(|a, b| a.loss_ratio.total_cmp(&b.loss_ratio));
    let full_sum_s: f64 = full.iter().map(|t| t.duration_s).sum();
    let mut remaining_s = full_sum_s.max(target.duration_sum_s) * (1.0 - target.exceed_ratio);
    let mut quantile: Option<f64> = None;
    for t in &full {
        if quantile.is_none() || remaining_s > 0.0 {
            quantile = Some(t.loss_ratio);
            remaining_s -= t.duration_s;
        } else {
            return quantile.unwrap_or(t.loss_ratio);
        }
    }
    if remaining_s > 0.0 {
        1.0
    } else {
        quantile.unwrap_or(1.0)
    }
}

/// Conditional Throughput at `load` (frames/s): the load times one minus the quantile loss
/// ratio of its full-length trials.
pub fn conditional_throughput(load: u64, trials: &[TrialResult], target: &Target) -> f64 {
    load as f64 * (1.0 - quantile_loss_ratio(trials, target))
}

/// The Relevant Upper Bound (the smallest load classified as an Upper Bound) and the Relevant
/// Lower Bound (the largest load classified as a Lower Bound that is smaller than the Relevant
/// Upper Bound: a lower bound above an upper bound is ignored), of loads given in increasing
/// order with their classifications.
pub fn relevant_bounds(classified: impl IntoIterator<Item = (u64, Classification)>) -> (Option<u64>, Option<u64>) {
    let mut lower = None;
    for (load, c) in classified {
        match c {
            Classification::UpperBound => return (lower, Some(load)),
            Classification::LowerBound => lower = Some(load),
            Classification::Undecided => {}
        }
    }
    (lower, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NDR_2544: Target = Target {
        loss_ratio: 0.0,
        exceed_ratio: 0.0,
        final_duration_s: 60.0,
        duration_sum_s: 60.0,
    };

    const CSIT_PDR: Target = Target {
        loss_ratio: 0.005,
        exceed_ratio: 0.5,
        final_duration_s: 1.0,
        duration_sum_s: 21.0,
    };

    fn t(duration_s: f64, loss_ratio: f64) -> TrialResult {
        TrialResult { duration_s, loss_ratio }
    }

    #[test]
    fn rfc_2544_settings_classify_by_one_full_length_trial() {
        use Classification::*;
        assert_eq!(classify(&[], &NDR_2544), Undecided);
        assert_eq!(classify(&[t(60.0, 0.0)], &NDR_2544), LowerBound);
        assert_eq!(classify(&[t(60.0, 1e-9)], &NDR_2544), UpperBound);
        // A short low-loss trial decides nothing; a short high-loss one is an upper bound at
        // exceed ratio 0 (nothing balances it).
        assert_eq!(classify(&[t(10.0, 0.0)], &NDR_2544), Undecided);
        assert_eq!(classify(&[t(10.0, 0.01)], &NDR_2544), UpperBound);
        // Loss inversion at one load: one high-loss trial is enough.
        assert_eq!(classify(&[t(60.0, 0.0), t(60.0, 0.5)], &NDR_2544), UpperBound);
    }

    #[test]
    fn an_exceed_ratio_of_a_half_needs_half_the_duration_sum_either_way() {
        use Classification::*;
        let good = |n: usize| vec![t(1.0, 0.0); n];
        let bad = |n: usize| vec![t(1.0, 0.5); n];
        // Lower bound needs good >= 10.5 s of 21 (the rest assumed bad).
        assert_eq!(classify(&good(10), &CSIT_PDR), Undecided);
        assert_eq!(classify(&good(11), &CSIT_PDR), LowerBound);
        assert_eq!(classify(&bad(10), &CSIT_PDR), Undecided);
        assert_eq!(classify(&bad(11), &CSIT_PDR), UpperBound);
        // 11 good and 11 bad: 11 <= 0.5 x 22 (equal to the exceed ratio is allowed); 12 bad:
        // 12 > 0.5 x 23.
        assert_eq!(classify(&[good(11), bad(11)].concat(), &CSIT_PDR), LowerBound);
        assert_eq!(classify(&[good(11), bad(12)].concat(), &CSIT_PDR), UpperBound);
    }

    #[test]
    fn short_low_loss_trials_balance_short_high_loss_ones_but_never_make_a_lower_bound() {
        use Classification::*;
        let target = Target {
            final_duration_s: 10.0,
            duration_sum_s: 20.0,
            ..CSIT_PDR
        };
        // 5 s short bad, 5 s short good: balancing 5 s, no effective excess: undecided.
        assert_eq!(classify(&[t(5.0, 0.1), t(5.0, 0.0)], &target), Undecided);
        // 30 s short good cannot make a lower bound.
        assert_eq!(classify(&[t(5.0, 0.0); 6], &target), Undecided);
        // 15 s short bad against 5 s short good: 10 s effective excess of 20: not above 10.
        assert_eq!(classify(&[t(5.0, 0.1), t(5.0, 0.1), t(5.0, 0.1), t(5.0, 0.0)], &target), Undecided);
        // 20 s short bad against 5 s good: 15 s effective, above 10: upper bound.
        assert_eq!(
            classify(&[t(5.0, 0.1); 4].iter().copied().chain([t(5.0, 0.0)]).collect::<Vec<_>>(), &target),
            UpperBound
        );
        // Two full-length good trials: a lower bound, whatever short good ones add.
        assert_eq!(classify(&[t(10.0, 0.0), t(10.0, 0.0), t(5.0, 0.0)], &target), LowerBound);
    }

    #[test]
    fn the_conditional_throughput_takes_the_exceed_ratio_quantile_of_the_full_length_trials() {
        // RFC 2544 settings: the one trial's loss ratio.
        assert_eq!(conditional_throughput(1000, &[t(60.0, 0.0)], &NDR_2544), 1000.0);
        // CSIT PDR: 21 trials of 1 s, sorted loss ratios 0 (x 11), 0.004 (x 10): the median
        // (with ties to the lower value) is 0.
        let mut trials = vec![t(1.0, 0.004); 10];
        trials.extend(vec![t(1.0, 0.0); 11]);
        assert_eq!(quantile_loss_ratio(&trials, &CSIT_PDR), 0.0);
        // 10 at 0, 11 at 0.004: the median is 0.004.
        let mut trials = vec![t(1.0, 0.004); 11];
        trials.extend(vec![t(1.0, 0.0); 10]);
        assert_eq!(quantile_loss_ratio(&trials, &CSIT_PDR), 0.004);
        assert!((conditional_throughput(1000, &trials, &CSIT_PDR) - 996.0).abs() < 1e-9);
        // Missing duration counts as loss ratio 1: 5 good trials of 21 s.
        assert_eq!(quantile_loss_ratio(&[t(1.0, 0.0); 5], &CSIT_PDR), 1.0);
        // Short trials do not count.
        assert_eq!(quantile_loss_ratio(&[t(0.5, 0.0)], &NDR_2544), 1.0);
    }

    #[test]
    fn relevant_bounds_ignore_lower_bounds_above_the_lowest_upper_bound() {
        use Classification::*;
        assert_eq!(relevant_bounds([]), (None, None));
        assert_eq!(relevant_bounds([(10, LowerBound), (20, LowerBound)]), (Some(20), None));
        assert_eq!(
            relevant_bounds([(10, LowerBound), (15, Undecided), (20, UpperBound)]),
            (Some(10), Some(20))
        );
        // Loss inversion: 30 is a lower bound above the upper bound 20, ignored.
        assert_eq!(
            relevant_bounds([(10, LowerBound), (20, UpperBound), (30, LowerBound)]),
            (Some(10), Some(20))
        );
        assert_eq!(relevant_bounds([(10, UpperBound), (20, LowerBound)]), (None, Some(10)));
    }
}
