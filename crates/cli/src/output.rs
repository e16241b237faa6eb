//! Printing a trial: siitperf's lines (which scripts grep), a short human summary, or JSON.

use xlat_engine::TrialReport;

/// The lines siitperf-tp prints, in its order, and a line with `invalid` when the trial is.
pub fn siitperf_lines(r: &TrialReport) -> Vec<String> {
    let mut v = Vec::new();
    for reason in &r.invalid_reasons {
        v.push(format!("Warning: {reason}."));
    }
    for (name, d) in r.directions() {
        let title = if name == "forward" { "Forward" } else { "Reverse" };
        v.push(format!("{title} frames sent: {}", d.sent));
        v.push(format!("{title} frames received: {}", d.received));
    }
    v
}

/// A short human summary of one trial.
pub fn human(r: &TrialReport) -> String {
    let mut s = String::new();
    for (name, d) in r.directions() {
        let loss = if d.sent > 0 { 100.0 * d.lost as f64 / d.sent as f64 } else { 0.0 };
        s.push_str(&format!(
            "{name:<8} sent {:>12}  received {:>12}  lost {:>10} ({loss:.4} %)  dup {:>6}  reordered {:>6}  rate {:>12.1}/s  max lag {:>9.1} us\n",
            d.sent,
            d.received,
            d.lost,
            d.duplicates,
            d.reordered,
            d.achieved_rate,
            d.max_lag_ns as f64 / 1000.0
        ));
        if d.unexpected > 0 {
            s.push_str(&format!(
                "{name:<8} {} test frames not of this trial (foreign or late)\n",
                d.unexpected
            ));
        }
    }
    if r.valid {
        let verdict = if r.total_lost() == 0 { "no loss" } else { "loss" };
        s.push_str(&format!("trial valid: {verdict}\n"));
    } else {
        for reason in &r.invalid_reasons {
            s.push_str(&format!("trial INVALID: {reason}\n"));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use xlat_engine::DirectionReport;

    #[test]
    fn siitperf_lines_and_invalid_word() {
        let mut r = TrialReport {
            valid: true,
            forward: Some(DirectionReport {
                sent: 10,
                received: 9,
                lost: 1,
                ..Default::default()
            }),
            ..Default::default()
        };
        assert_eq!(siitperf_lines(&r), vec!["Forward frames sent: 10", "Forward frames received: 9"]);
        assert!(human(&r).contains("trial valid: loss"));
        r.valid = false;
        r.invalid_reasons
            .push("Forward sending exceeded the 1.0000100000 seconds limit, the test is invalid".into());
        assert!(siitperf_lines(&r)[0].contains("invalid"));
        assert!(human(&r).contains("INVALID"));
    }
}
