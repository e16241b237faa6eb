//! The text helpers of every result ([`group`], [`text_table`], [`trials_table`],
//! [`preliminary_table`], [`trial_line`], [`clock`]); each procedure's [`crate::result::BenchResult`] implementation
//! (metrics, human tables, headlines) and the summary table of repetitions are in
//! [`crate::result_text`].

use crate::record::{state_table_not_filled, DirectionCounts, TrialRecord};

/// 1234567 -> "1,234,567".
pub fn group(n: u64) -> String {
    let s = n.to_string();
    let parts: Vec<&str> = s
        .as_bytes()
        .rchunks(3)
        .rev()
        .map(|c| std::str::from_utf8(c).unwrap_or("?"))
        .collect();
    parts.join(",")
}

/// Columns aligned: the first column left, the others right.
pub fn text_table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let cols = headers.len();
    let mut width: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate().take(cols) {
            width[i] = width[i].max(c.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            let pad = width[i].saturating_sub(c.chars().count());
            if i > 0 {
                s.push_str("  ");
            }
            if i == 0 {
                s.push_str(c);
                s.push_str(&" ".repeat(pad));
            } else {
                s.push_str(&" ".repeat(pad));
                s.push_str(c);
            }
        }
        s.trim_end().to_string()
    };
    let mut out = line(headers.to_vec());
    out.push('\n');
    out.push_str(&line(
        width
            .iter()
            .map(|&w| "-".repeat(w))
            .collect::<Vec<_>>()
            .iter()
            .map(String::as_str)
            .collect(),
    ));
    out.push('\n');
    for r in rows {
        let mut cells: Vec<&str> = r.iter().map(String::as_str).take(cols).collect();
        cells.resize(cols, "");
        out.push_str(&line(cells));
        out.push('\n');
    }
    out
}

/// The table of trials every human table ends with.
pub fn trials_table(trials: &[TrialRecord]) -> String {
    let rows: Vec<Vec<String>> = trials
        .iter()
        .map(|t| {
            let d = |d: Option<&DirectionCounts>| {
                d.map_or(("-".to_string(), "-".to_string(), "-".to_string()), |d| {
                    (
                        group(d.sent),
                        group(d.received),
                        format!("{}/{}", group(d.tester_tx_dropped), group(d.tester_rx_dropped)),
                    )
                })
            };
            let (fs, fr, fd) = d(t.forward.as_ref());
            let (rs, rr, rd) = d(t.reverse.as_ref());
            vec![
                t.index.to_string(),
                t.phase.clone(),
                group(t.rate),
                format!("{:.3}", t.duration_s),
                fs,
                fr,
                fd,
                rs,
                rr,
                rd,
                match t.pass {
                    None if t.preliminary.as_ref().is_some_and(state_table_not_filled) => "phase 1: table not filled".into(),
                    None if t.tester_bound => "invalid: tester-bound".into(),
                    None => "invalid".into(),
                    Some(true) => match t.passed_at {
                        Some(at) => format!("pass at {} (late)", group(at)),
                        None => "pass".into(),
                    },
                    Some(false) if t.possibly_tester => "fail, possibly the tester's".into(),
                    Some(false) => "fail".into(),
                },
            ]
        })
        .collect();
    let mut table = text_table(
        &[
            "#",
            "phase",
            "rate (fps)",
            "duration (s)",
            "fwd sent",
            "fwd received",
            "fwd tester dropped tx/rx",
            "rev sent",
            "rev received",
            "rev tester dropped tx/rx",
            "result",
        ],
        &rows,
    );
    if trials.iter().any(|t| t.preliminary.is_some()) {
        table.push_str("\nPreliminary phases (stateful, RFC 9693: phase 1 before each trial)\n");
        table.push_str(&preliminary_table(trials));
    }
    table
}

/// The preliminary phase of every stateful trial: frames sent and received, the foreground
/// frames learnt of those sent, the state table's valid entries of its size, the sending time
/// and the verdict (`ok`, `too slow`: the tester's limit, `not filled`: the DUT lost phase 1
/// frames at that rate), the duplicate learnt tuples when they were checked, and the DUT's own
/// count of its connections when `dut.count` read it.
pub fn preliminary_table(trials: &[TrialRecord]) -> String {
    let counted = trials
        .iter()
        .any(|t| t.preliminary.as_ref().is_some_and(|p| p.dut_connections.is_some()));
    let rows: Vec<Vec<String>> = trials
        .iter()
        .filter_map(|t| t.preliminary.as_ref().map(|p| (t, p)))
        .map(|(t, p)| {
            let mut row = vec![
                t.index.to_string(),
                group(p.rate),
                group(p.sent),
                group(p.received),
                format!("{}/{}", group(p.foreground_received), group(p.foreground_sent)),
                format!("{}/{}", group(p.valid_entries), group(p.state_table)),
                format!("{:.6}", p.send_duration_s),
                p.duplicate_tuples.map_or("-".into(), group),
            ];
            if counted {
                row.push(p.dut_connections.map_or("-".into(), group));
            }
            row.push(
                if !p.sending_valid {
                    "too slow"
                } else if !p.table_filled() {
                    "not filled"
                } else {
                    "ok"
                }
                .into(),
            );
            row
        })
        .collect();
    let mut headers = vec![
        "#",
        "rate (fps)",
        "sent",
        "received",
        "fg learnt/sent",
        "state table",
        "sending (s)",
        "dup tuples",
    ];
    if counted {
        headers.push("DUT connections");
    }
    headers.push("phase 1");
    text_table(&headers, &rows)
}

/// "1:02:03", "2:03", "0:07".
pub fn clock(seconds: f64) -> String {
    let s = if seconds.is_finite() && seconds > 0.0 {
        seconds.round() as u64
    } else {
        0
    };
    let (h, m, s) = (s / 3600, (s / 60) % 60, s % 60);
    if h > 0 {
        format!("{h}:{m:02}:{s:02}")
    } else {
        format!("{m}:{s:02}")
    }
}

/// One finished trial as a line (the progress display's `--verbose`).
pub fn trial_line(procedure: &str, context: &str, t: &TrialRecord) -> String {
    let verdict = match t.pass {
        None if t.tester_bound => format!(
            "INVALID, tester-bound: the tester cannot send at this rate ({})",
            t.invalid_reasons.join("; ")
        ),
        None => format!("INVALID ({})", t.invalid_reasons.join("; ")),
        Some(true) => match t.passed_at {
            Some(at) => format!(
                "pass at {} fps: sending ended late without loss, so it passes at the rate the tester offered ({})",
                group(at),
                t.invalid_reasons.join("; ")
            ),
            None => "pass".into(),
        },
        Some(false) if t.possibly_tester => format!(
            "fail, possibly the tester's: frames were lost only while it caught up from a pause, in every attempt ({})",
            t.invalid_reasons.join("; ")
        ),
        Some(false) => "fail".into(),
    };
    let mut s = format!(
        "{procedure} {context}trial {} {} attempt {}: {} fps x {:.3} s:",
        t.index, t.phase, t.attempt, t.rate, t.duration_s
    );
    for (name, d) in t.directions() {
        s.push_str(&format!(
            " {name} {}/{} received (tester dropped: tx {}, rx {})",
            d.received, d.sent, d.tester_tx_dropped, d.tester_rx_dropped
        ));
    }
    s.push_str(&format!(" -> {verdict}"));
    s
}

#[cfg(test)]
#[path = "text_tests.rs"]
mod tests;
