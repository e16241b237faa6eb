//! Tests of the trial module's planning and assembling.

use super::*;
use crate::pin::allowed_cores;

#[test]
fn a_trials_default_burst_is_the_ports_default_burst() {
    assert_eq!(xlat_trial::DEFAULT_BURST, xlat_io::DEFAULT_BURST);
}

#[test]
fn default_cores_give_each_port_its_own_core_and_a_plan_can_share_one() {
    let c = allowed_cores();
    let [l, r] = plan_cores(&CpuPlan::default(), 1)[0];
    assert_eq!(l, (c[0], c[0]));
    assert_eq!(r.0, r.1);
    let one = CpuPlan {
        left_send: Some(0),
        left_recv: Some(0),
        right_send: Some(0),
        right_recv: Some(0),
        queues: 1,
        dut: Vec::new(),
    };
    assert_eq!(plan_cores(&one, 1), vec![[(0, 0), (0, 0)]]);
}

#[test]
fn queues_take_cores_in_turn_so_each_direction_spreads() {
    let c = allowed_cores();
    let plan = plan_cores(&CpuPlan::default(), 2);
    assert_eq!(plan.len(), 2);
    // The left port's queues: the first two cores (or the one there is, twice).
    assert_eq!(plan[0][0].0, c[0]);
    assert_eq!(plan[1][0].0, c[1 % c.len()]);
    // The right port's queues after them, wrapping around.
    assert_eq!(plan[0][1].0, c[2 % c.len()]);
    assert_eq!(plan[1][1].0, c[3 % c.len()]);
    // A plan's cores are the first queue's; the second queue keeps its own.
    let one = CpuPlan {
        left_send: Some(7),
        ..CpuPlan::default()
    };
    let plan = plan_cores(&one, 2);
    assert_eq!((plan[0][0], plan[1][0].0), ((7, 7), c[1 % c.len()]));
}

#[test]
fn the_dut_cpus_are_never_chosen_for_the_tester() {
    let c = allowed_cores();
    if c.len() < 2 {
        return;
    }
    // The DUT on the last core: every queue of both ports on the others (on 2 cores, all on
    // the first), the way the lab's written config with --queues 2 runs.
    let last = *c.last().unwrap_or(&0);
    let plan = plan_cores(
        &CpuPlan {
            dut: vec![last],
            ..CpuPlan::default()
        },
        2,
    );
    for q in &plan {
        for &(s, r) in q {
            assert!(s != last && r != last, "{plan:?}");
        }
    }
    // A DUT on every core leaves the tester where it would be without one.
    let all = plan_cores(
        &CpuPlan {
            dut: c.clone(),
            ..CpuPlan::default()
        },
        2,
    );
    assert_eq!(all, plan_cores(&CpuPlan::default(), 2));
}
