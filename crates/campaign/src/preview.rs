//! `campaign --dry-run`: what a campaign would do, before it does anything.

use std::path::Path;

use crate::estimate::human_seconds;
use crate::manifest::Manifest;
use crate::plan::Plan;

/// What `campaign --dry-run` prints: the runs and their commands, the labs, the DUT commands
/// ([`crate::commands`]) and the estimated time.
pub fn dry_run(plan: &Plan, m: &Manifest, dir: &Path) -> String {
    let mut s = format!(
        "campaign {}{}: {} runs ({} tests, {} procedures, {} repetitions) into {}\n",
        plan.name,
        m.shard.map(|s| format!(", shard {s}")).unwrap_or_default(),
        m.runs.len(),
        plan.tests.len(),
        plan.procedures.len(),
        plan.repetitions,
        dir.display()
    );
    let (mut total, mut unknown) = (0.0, 0);
    for r in &m.runs {
        let est = match r.estimate_s {
            Some(e) => {
                total += e;
                human_seconds(e)
            }
            None => {
                unknown += 1;
                "not estimated".into()
            }
        };
        s.push_str(&format!("{}  ({est})\n    {}\n", r.id, r.command.join(" ")));
    }
    for t in &m.tests {
        if let Some(lab) = &t.lab {
            s.push_str(&format!(
                "test {}: xlatperf lab up {lab} --replace {} before its runs, xlatperf lab down after\n",
                t.name,
                t.lab_options.join(" ")
            ));
        }
    }
    for line in crate::commands::listing(m) {
        s.push_str(&line);
        s.push('\n');
    }
    s.push_str(&format!("estimated time: {}", human_seconds(total)));
    if unknown > 0 {
        s.push_str(&format!(" plus {unknown} runs whose time depends on the DUT"));
    }
    s.push('\n');
    s
}
