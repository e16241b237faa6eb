//! The paged set against a plain one (a bool per frame), on frame counts around page sizes,
//! and the memory it gives back.

use super::*;
use xlat_testkit::rng::Rng;

/// The highest `i < sent` with `!model[i]`.
fn model_last_missing(model: &[bool], sent: u64) -> Option<u64> {
    (0..sent.min(model.len() as u64)).rev().find(|&i| !model[i as usize])
}

impl Seen {
    /// How many sequence numbers have arrived (for the receiver's tests too).
    pub(in crate::trial) fn len(&self) -> u64 {
        let mut n = 0;
        for (p, page) in self.pages.iter().enumerate() {
            n += match page {
                Page::Untouched => 0,
                Page::Filling { bits, .. } => ones(&bits[..]) - self.padding(p),
                Page::Full => page_cap(self.total, p),
            };
        }
        n
    }

    /// Pages that hold bits.
    fn held(&self) -> usize {
        self.pages.iter().filter(|p| matches!(p, Page::Filling { .. })).count()
    }
}

#[test]
fn a_frame_counts_once_and_a_full_page_is_given_back() {
    let total = 2 * PAGE_SEQS + 100;
    let mut s = Seen::new(total);
    assert!(s.insert(5));
    assert!(!s.insert(5), "a duplicate");
    assert!(!s.insert(total), "beyond the total");
    assert_eq!((s.len(), s.held()), (1, 1));
    for seq in 0..PAGE_SEQS {
        s.insert(seq);
    }
    assert_eq!((s.len(), s.held()), (PAGE_SEQS, 0), "page 0 is full: its bits are gone");
    assert!(!s.insert(7), "a duplicate into a full page");
    // The last page holds 100.
    for seq in 2 * PAGE_SEQS..total {
        assert!(s.insert(seq));
    }
    assert_eq!(s.held(), 0);
    assert_eq!(s.last_missing(total), Some(2 * PAGE_SEQS - 1), "page 1 never came");
    assert_eq!(s.last_missing(PAGE_SEQS), None);
    assert_eq!(s.last_missing(PAGE_SEQS + 1), Some(PAGE_SEQS));
    // A one-frame last page is full at its first frame.
    let mut s = Seen::new(PAGE_SEQS + 1);
    assert!(s.insert(PAGE_SEQS));
    assert_eq!((s.held(), s.len()), (0, 1));
}

#[test]
fn the_highest_hole_below_sent() {
    let mut s = Seen::new(256);
    for seq in 0..256 {
        s.insert(seq);
    }
    assert_eq!(s.last_missing(256), None);
    let mut s = Seen::new(256);
    for seq in (0..256).filter(|&q| q != 69) {
        s.insert(seq);
    }
    assert_eq!(s.last_missing(256), Some(69));
    // Bits at or above `sent` do not count.
    let mut s = Seen::new(128);
    for seq in 0..67 {
        s.insert(seq);
    }
    assert_eq!(s.last_missing(67), None);
    assert_eq!(s.last_missing(68), Some(67));
    assert_eq!(Seen::new(0).last_missing(10), None);
}

#[test]
fn the_same_answers_as_a_bool_per_frame() {
    let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15);
    for round in 0..40 {
        let total = [1, 63, 64, 65, PAGE_SEQS - 1, PAGE_SEQS, PAGE_SEQS + 1, 3 * PAGE_SEQS + 77][round % 8];
        let (mut a, mut b) = (Seen::new(total), Seen::new(total));
        let (mut ma, mut mb) = (vec![false; total as usize], vec![false; total as usize]);
        // Mostly in order with a share lost, some repeated, some late: as frames come.
        let loss = rng.below(4);
        for seq in 0..total {
            for (s, m) in [(&mut a, &mut ma), (&mut b, &mut mb)] {
                if rng.below(100) < loss {
                    continue;
                }
                let q = if rng.below(50) == 0 { rng.below(total) } else { seq };
                assert_eq!(s.insert(q), !m[q as usize], "total {total}, seq {q}");
                m[q as usize] = true;
            }
        }
        let count = |m: &[bool]| m.iter().filter(|&&x| x).count() as u64;
        assert_eq!(a.len(), count(&ma));
        for sent in [0, 1, total / 2, total - 1, total, total + 5] {
            assert_eq!(a.last_missing(sent), model_last_missing(&ma, sent), "total {total}, sent {sent}");
        }
        // Holes in ranges (a catch-up window's loss), across pages and past the total.
        for (from, to) in [(0, total), (total / 3, total / 2 + 70), (1, PAGE_SEQS + 3), (total / 2, total + 9)] {
            let want = (from..to.min(total)).filter(|&i| !ma[i as usize]).count() as u64;
            assert_eq!(a.missing_in(from, to), want, "total {total}, {from}..{to}");
        }
        let both = ma.iter().zip(&mb).filter(|(x, y)| **x && **y).count() as u64;
        assert_eq!(a.absorb(b), both);
        let union: Vec<bool> = ma.iter().zip(&mb).map(|(x, y)| *x || *y).collect();
        assert_eq!(a.len(), count(&union));
        assert_eq!(a.last_missing(total), model_last_missing(&union, total));
        for q in 0..total.min(1000) {
            assert_eq!(a.insert(q), !union[q as usize], "after the merge, seq {q}");
        }
    }
}

#[test]
fn a_lossless_run_holds_no_more_than_the_pages_in_flight() {
    // Two sending queues, chunks of 1,000 frames each in turn, the queues' frames interleaved
    // as they arrive: at no time more than two pages hold bits.
    let total = 20 * PAGE_SEQS;
    let mut s = Seen::new(total);
    let mut most = 0;
    for k in 0..total / 2000 {
        for i in 0..1000 {
            s.insert(2000 * k + i);
            s.insert(2000 * k + 1000 + i);
            if i % 50 == 0 {
                most = most.max(s.held());
            }
        }
    }
    assert_eq!((s.len(), s.held(), most), (total / 2000 * 2000, 1, 2));
}
