//! The [`BenchResult`] implementations of MLRsearch (RFC 9971) and the reset test (RFC 6201),
//! beside the older procedures' in [`crate::result_text`].

use std::fmt::Write as _;

use crate::mlrsearch::MlrResult;
use crate::record::TrialRecord;
use crate::reset::ResetResult;
use crate::result::BenchResult;
use crate::text::{group, text_table, trials_table};
use crate::view::Procedure;

impl BenchResult for MlrResult {
    fn procedure(&self) -> Procedure {
        Procedure::Mlrsearch
    }
    fn trials(&self) -> &[TrialRecord] {
        &self.trials
    }
    fn metrics(&self) -> Vec<(String, f64)> {
        let mut m = Vec::new();
        for g in &self.goals {
            let n = g.goal.name.to_lowercase();
            if let Some(ct) = g.conditional_throughput {
                m.push((format!("{n}_conditional_throughput_fps"), ct));
            }
            if let Some(l) = g.relevant_lower_bound {
                m.push((format!("{n}_relevant_lower_bound_fps"), l as f64));
            }
            if let Some(u) = g.relevant_upper_bound {
                m.push((format!("{n}_relevant_upper_bound_fps"), u as f64));
            }
        }
        m.push(("trials".into(), self.trials.len() as f64));
        m.push(("trial_seconds".into(), self.trial_seconds));
        m
    }
    fn human_table(&self) -> String {
        let mut s = format!(
            "MLRsearch (RFC 9971), frame size {}: Min Load {} fps, Max Load {} fps, {} preceding targets per goal\n\
             {} trials, {:.1} trial-seconds ({:.1} s with timeouts){}\n\n",
            self.frame_size,
            group(self.min_load),
            group(self.max_load),
            self.preceding_targets,
            self.trials.len(),
            self.trial_seconds,
            self.elapsed_s,
            if self.complete { "" } else { "; stopped at the trial limit" }
        );
        let opt = |v: Option<u64>| v.map_or("-".to_string(), group);
        let rows: Vec<Vec<String>> = self
            .goals
            .iter()
            .map(|g| {
                let q = &g.goal;
                vec![
                    q.name.clone(),
                    format!("{}", q.loss_ratio),
                    format!("{}", q.exceed_ratio),
                    format!("{}/{}/{}", q.initial_trial_duration_s, q.final_trial_duration_s, q.duration_sum_s),
                    format!("{}", q.width),
                    opt(g.relevant_lower_bound),
                    opt(g.relevant_upper_bound),
                    g.conditional_throughput.map_or("-".to_string(), |c| group(c.round() as u64)),
                ]
            })
            .collect();
        s.push_str(&text_table(
            &[
                "goal",
                "loss ratio",
                "exceed ratio",
                "durations s (initial/final/sum)",
                "width",
                "RLB fps",
                "RUB fps",
                "conditional throughput fps",
            ],
            &rows,
        ));
        for g in &self.goals {
            if let Some(why) = &g.irregular {
                let _ = writeln!(s, "{}: irregular: {why}", g.goal.name);
            }
        }
        s.push('\n');
        s.push_str(&trials_table(&self.trials));
        s
    }
    fn headline(&self) -> String {
        let parts: Vec<String> = self
            .goals
            .iter()
            .map(|g| match g.conditional_throughput {
                Some(c) => format!("{} {} fps", g.goal.name, group(c.round() as u64)),
                None => format!("{} none", g.goal.name),
            })
            .collect();
        format!("{} B: {}", self.frame_size, parts.join(", "))
    }
}

impl BenchResult for ResetResult {
    fn procedure(&self) -> Procedure {
        Procedure::Reset
    }
    fn trials(&self) -> &[TrialRecord] {
        &self.trials
    }
    fn metrics(&self) -> Vec<(String, f64)> {
        if !self.valid {
            return Vec::new();
        }
        let mut m = Vec::new();
        for (name, d) in self.directions() {
            m.push((format!("{name}_frame_loss_reset_s"), d.frame_loss_s));
            m.push((format!("{name}_timestamp_reset_s"), d.timestamp_s));
        }
        m
    }
    fn human_table(&self) -> String {
        let mut s = format!(
            "Reset time (RFC 6201), frame size {}: {} frames/s per direction for {} s, the reset ({}) {} s in; it ran {:.3} s\n",
            self.frame_size,
            group(self.rate),
            self.duration_s,
            self.reset.command,
            self.at_s,
            self.reset.seconds
        );
        if let Some(why) = &self.invalid_reason {
            let _ = writeln!(s, "INVALID: {why}");
        }
        s.push('\n');
        let rows: Vec<Vec<String>> = self
            .directions()
            .map(|(name, d)| {
                vec![
                    name.to_string(),
                    group(d.sent),
                    group(d.lost),
                    format!("{:.6}", d.frame_loss_s),
                    format!("{:.6}", d.timestamp_s),
                    format!("{:.3}", d.gap_end_s),
                ]
            })
            .collect();
        s.push_str(&text_table(
            &[
                "direction",
                "sent",
                "lost",
                "reset s (frame loss)",
                "reset s (timestamps)",
                "gap ended at s",
            ],
            &rows,
        ));
        s.push('\n');
        s.push_str(&trials_table(&self.trials));
        s
    }
    fn headline(&self) -> String {
        if !self.valid {
            return format!("{} B: invalid", self.frame_size);
        }
        let parts: Vec<String> = self
            .directions()
            .map(|(name, d)| format!("{name} {:.3} s (frame loss) / {:.3} s (timestamps)", d.frame_loss_s, d.timestamp_s))
            .collect();
        format!("{} B: reset time {}", self.frame_size, parts.join(", "))
    }
}
