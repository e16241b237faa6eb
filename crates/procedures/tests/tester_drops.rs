//! The tester's own drop counters (frames it failed to send after its backend accepted them,
//! frames its receiving port dropped) reach every trial record and the outputs.

use xlat_procedures::*;
use xlat_results::output::{trial_csv_row, TRIALS_CSV_HEADER};
use xlat_results::text::trials_table;
use xlat_results::*;
use xlat_testkit::fake::Fake;
use xlat_testkit::sim::SimDut;

/// A SimDut whose tester reports drops: forward tx 3 / rx 4, reverse tx 5 / rx 6.
fn drops() -> Fake<'static> {
    Fake::around(SimDut::new(400_000.0, 1), |_, r| {
        for (d, (tx, rx)) in [(&mut r.forward, (3, 4)), (&mut r.reverse, (5, 6))] {
            if let Some(d) = d {
                d.counts.tester_tx_dropped = tx;
                d.counts.tester_rx_dropped = rx;
            }
        }
    })
}

#[test]
fn drops_reach_the_record_the_csv_the_table_and_the_json() {
    let r = throughput(&mut drops(), &ThroughputConfig::new(84, 1_000_000, 10_000), &mut NoProgress).unwrap();
    let t = &r.trials[0];
    let (f, v) = (t.forward.as_ref().unwrap(), t.reverse.as_ref().unwrap());
    assert_eq!((f.tester_tx_dropped, f.tester_rx_dropped), (3, 4));
    assert_eq!((v.tester_tx_dropped, v.tester_rx_dropped), (5, 6));

    let header: Vec<&str> = TRIALS_CSV_HEADER.split(',').collect();
    let row_line = trial_csv_row("throughput", 0, t);
    let row: Vec<&str> = row_line.trim_end().split(',').collect();
    assert_eq!(row.len(), header.len());
    let col = |name: &str| row[header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("no column {name}"))];
    assert_eq!(
        (
            col("fwd_tester_tx_dropped"),
            col("fwd_tester_rx_dropped"),
            col("rev_tester_tx_dropped"),
            col("rev_tester_rx_dropped")
        ),
        ("3", "4", "5", "6")
    );
    assert_eq!(col("fwd_sent"), f.sent.to_string());

    let table = trials_table(&r.trials);
    assert!(
        table.contains("fwd tester dropped tx/rx") && table.contains("3/4") && table.contains("5/6"),
        "{table}"
    );

    let json = serde_json::to_value(t).unwrap();
    assert_eq!(json["forward"]["tester_tx_dropped"], 3);
    assert_eq!(json["reverse"]["tester_rx_dropped"], 6);
    // Older documents without the fields still read.
    let mut old = json.clone();
    old["forward"].as_object_mut().unwrap().remove("tester_tx_dropped");
    let back: TrialRecord = serde_json::from_value(old).unwrap();
    assert_eq!(back.forward.unwrap().tester_tx_dropped, 0);
}

#[test]
fn recovery_trials_carry_the_drops() {
    let r = system_recovery(&mut drops(), &RecoveryConfig::new(64, 400_000), &mut NoProgress).unwrap();
    let f = r.trials[0].forward.as_ref().unwrap();
    assert_eq!((f.tester_tx_dropped, f.tester_rx_dropped), (3, 4));
    let table = r.human_table();
    assert!(table.contains("tester dropped tx/rx") && table.contains("3/4"), "{table}");
}
