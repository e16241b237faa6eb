//! Planning a run: which core runs which sender and receiver (`plan_cores`, `plan_workers`),
//! and running one worker thread per core (`run_workers`).

use super::error::{EngineError, Res};
use super::phase::dir_index;
use super::phase::TrialPlan;
use super::port::SidePort;
use super::receiver::{Count, PdvState, Receiver};
use super::sender::Sender;
use super::split::Split;
use super::worker::{run_worker, Shared, Worker};
use crate::neighbour::Neighbour;
use crate::pin::{allowed_cores, pin_current_thread};
use std::sync::atomic::Ordering;
use xlat_io::{Port, Queues, RxQueue, TxQueue};
use xlat_traffic::{Direction, Setup, SideId};
use xlat_trial::spec::CpuPlan;

/// How many frames of a direction go out in one go on one queue before the next queue's turn
/// (several queues per port): a burst's worth, so that each sender still sends whole bursts.
const QUEUE_CHUNK: u64 = 64;

/// The cores of (sender, receiver) of the left and the right port, per queue. By default each
/// port's queue gets its own core (queue `q` of the left port the `q`-th this process may use,
/// the right port's after the left's, wrapping around: on two cores with two queues each
/// direction's senders run on both); roles given the same core share one worker thread. A
/// plan's cores are those of the first queue.
pub(super) fn plan_cores(cpus: &CpuPlan, queues: usize) -> Vec<[(usize, usize); 2]> {
    // Never a core of the DUT's (a DUT on this host), unless there is no other.
    let all = allowed_cores();
    let c: Vec<usize> = all.iter().copied().filter(|c| !cpus.dut.contains(c)).collect();
    let c = if c.is_empty() { all } else { c };
    let auto = |side: usize, q: usize| -> usize {
        if c.is_empty() {
            0
        } else {
            c[(side * queues + q) % c.len()]
        }
    };
    (0..queues)
        .map(|q| {
            if q > 0 {
                return [(auto(0, q), auto(0, q)), (auto(1, q), auto(1, q))];
            }
            let left_send = cpus.left_send.unwrap_or(auto(0, 0));
            let right_send = cpus.right_send.unwrap_or(auto(1, 0));
            [
                (left_send, cpus.left_recv.unwrap_or(left_send)),
                (right_send, cpus.right_recv.unwrap_or(right_send)),
            ]
        })
        .collect()
}

/// Build the senders of the active directions and a receiver per port, and group them into one
/// worker per core.
pub(super) fn plan_workers<'s, P: Port>(
    setup: &'s Setup,
    sides: [&'s mut SidePort<P>; 2],
    trial: &TrialPlan<'s>,
    cores: Vec<[(usize, usize); 2]>,
) -> Res<Vec<Worker<'s, 's, P::Tx, P::Rx>>> {
    let mut workers: Vec<Worker<'s, 's, P::Tx, P::Rx>> = Vec::new();
    fn at<'w, 's, T: TxQueue, R: RxQueue>(workers: &'w mut Vec<Worker<'s, 's, T, R>>, core: usize) -> &'w mut Worker<'s, 's, T, R> {
        let i = match workers.iter().position(|w| w.core == core) {
            Some(i) => i,
            None => {
                workers.push(Worker {
                    core,
                    senders: Vec::new(),
                    receivers: Vec::new(),
                    cut_off: false,
                });
                workers.len() - 1
            }
        };
        &mut workers[i]
    }
    for (s, sp) in sides.into_iter().enumerate() {
        let (send_dir, recv_dir) = match sp.id {
            SideId::Left => (Direction::Forward, Direction::Reverse),
            SideId::Right => (Direction::Reverse, Direction::Forward),
        };
        let queues = sp.q.len() as u64;
        let (id, mac, dut_mac) = (sp.id, sp.mac, sp.dut_mac);
        for (q, Queues { tx, rx, ctl }) in sp.q.iter_mut().enumerate() {
            let (send_core, recv_core) = cores[q][s];
            let split = Split {
                queue: q as u64,
                queues,
                chunk: QUEUE_CHUNK,
            };
            if trial.active[dir_index(send_dir)] {
                let dut = dut_mac.ok_or(EngineError::Port {
                    side: id.name(),
                    msg: "the DUT's MAC is unknown".into(),
                })?;
                let stream = trial.phase.stream(setup, send_dir, trial.spec.frame_size, mac, dut)?;
                tx.place_frames(stream.hot_bytes());
                at(&mut workers, send_core)
                    .senders
                    .push(Sender::new(trial, send_dir, split, tx, stream));
            }
            let counting = trial.active[dir_index(recv_dir)];
            let lanes = rx.lanes().max(1);
            let mut nb = Neighbour::new(setup, id, mac);
            nb.learnt_dut_mac = dut_mac;
            let pdv = trial.spec.pdv.filter(|_| counting);
            let count = Count {
                tags: if counting { trial.tags } else { None },
                rx_ts: if counting {
                    vec![0; trial.tags.map_or(0, |p| p.count as usize)]
                } else {
                    Vec::new()
                },
                pdv: pdv.map(|p| PdvState::new(p, trial.ns_mul, trial.kernel.is_some())),
                ..Count::new(trial.tag, trial.own, trial.total, counting, split, queues as usize * lanes)
            };
            let receiver = Receiver::new((rx, ctl), nb, setup, counting.then_some(recv_dir), count)
                .timed(&trial.frame_ts[dir_index(recv_dir)], trial.kernel, trial.stamp_wait)
                .learning(if counting { trial.phase.learns(recv_dir) } else { None });
            at(&mut workers, recv_core).receivers.push(receiver);
        }
    }
    Ok(workers)
}

/// Run every worker on its own thread, pinned to its core, and wait for all of them. Returns
/// the first error of any worker (the others stop when one fails).
/// The workers after their run, and the CPUs' load over the sending.
pub(super) type Ran<'s, T, R> = (Vec<Worker<'s, 's, T, R>>, Option<xlat_trial::LoadReport>);

/// Run every worker on its core; with `cpus` (a trial whose load is read: (core of the reader,
/// the DUT's CPUs, the tester's)), also read the CPUs' load from the start to the moment every
/// sender finished (the DUT's work during the sending, not its idle timeout after it).
pub(super) fn run_workers<'s, T: TxQueue, R: RxQueue>(
    workers: Vec<Worker<'s, 's, T, R>>,
    shared: &Shared<'_>,
    cpus: (usize, &[usize], &[usize]),
) -> Res<Ran<'s, T, R>> {
    let mut load = None;
    // Set when every worker has ended (also early: a failure, an abort), so that the reader
    // never outlives them.
    let ended = std::sync::atomic::AtomicBool::new(false);
    let results: Vec<Res<Worker<'s, 's, T, R>>> = std::thread::scope(|sc| {
        let (reader_core, dut, tester) = cpus;
        let load = &mut load;
        let ended = &ended;
        sc.spawn(move || {
            // On a tester core (it sleeps 1 ms between looks), never the DUT's.
            let _ = pin_current_thread(reader_core);
            let before = crate::load::Snapshot::take();
            let hard_end = shared.hard_end;
            loop {
                let sending = shared.senders_left.iter().any(|n| n.load(Ordering::Acquire) > 0);
                if !sending || ended.load(Ordering::Acquire) || shared.clock.now() > hard_end {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            *load = before.report(&crate::load::Snapshot::take(), dut, tester);
        });
        let handles: Vec<_> = workers
            .into_iter()
            .map(|mut w| {
                sc.spawn(move || -> Res<Worker<'s, 's, T, R>> {
                    if let Err(source) = pin_current_thread(w.core) {
                        shared.failed.store(true, Ordering::Relaxed);
                        return Err(EngineError::Cpu { core: w.core, source });
                    }
                    crate::pin::raise_priority();
                    run_worker(&mut w, shared)?;
                    Ok(w)
                })
            })
            .collect();
        let joined = handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    shared.failed.store(true, Ordering::Relaxed);
                    Err(EngineError::Panicked)
                })
            })
            .collect();
        ended.store(true, Ordering::Release);
        joined
    });
    Ok((results.into_iter().collect::<Res<Vec<_>>>()?, load))
}
