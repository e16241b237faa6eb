//! Which sequence numbers of a direction have arrived: one bit each, kept in pages of
//! [`PAGE_SEQS`] that are given back as soon as every frame of theirs has come. A lossless
//! trial of any length holds only the few pages its frames are arriving in (a 30-minute
//! trial at 20,000 frames/s grew by 293 KiB a minute with one bit a frame kept to the end:
//! BENCHMARKS.md, session 29); a page with a hole stays, so that a frame arriving late into it
//! is still told from a duplicate exactly, and the last lost frame is still found.

/// Sequence numbers a page holds: 2^18, 32 KiB of bits.
const PAGE_SHIFT: u32 = 18;
pub(super) const PAGE_SEQS: u64 = 1 << PAGE_SHIFT;
const PAGE_WORDS: usize = (PAGE_SEQS / 64) as usize;

enum Page {
    /// No frame of the page has come.
    Untouched,
    /// Some have: their bits (those past the direction's last frame set from the start, so that
    /// every word of a page fills), and how many words are full.
    Filling { bits: Box<[u64; PAGE_WORDS]>, full_words: u32 },
    /// All have: the bits are given back.
    Full,
}

/// How many sequence numbers page `p` of `total` holds.
fn page_cap(total: u64, p: usize) -> u64 {
    (total - p as u64 * PAGE_SEQS).min(PAGE_SEQS)
}

/// The word of its page and the bit in it of frame `seq`.
#[inline]
fn bit_of(seq: u64) -> (usize, u64) {
    ((seq / 64) as usize % PAGE_WORDS, 1u64 << (seq % 64))
}

/// The set bits of a page's words.
fn ones(bits: &[u64]) -> u64 {
    bits.iter().map(|x| u64::from(x.count_ones())).sum()
}

impl Page {
    /// The page of frame `seq` of `total`, with that frame's bit set (out of the receiver's loop:
    /// once a page).
    #[cold]
    fn first(total: u64, seq: u64) -> Page {
        let cap = page_cap(total, (seq >> PAGE_SHIFT) as usize) as usize;
        let mut bits = Box::new([0u64; PAGE_WORDS]);
        if !cap.is_multiple_of(64) {
            bits[cap / 64] = !((1u64 << (cap % 64)) - 1);
        }
        for x in &mut bits[cap.div_ceil(64)..] {
            *x = u64::MAX;
        }
        let (w, b) = bit_of(seq);
        bits[w] |= b;
        Page::of(bits)
    }

    /// The page of `bits`: full when every word is.
    fn of(bits: Box<[u64; PAGE_WORDS]>) -> Page {
        let full_words = bits.iter().filter(|x| **x == u64::MAX).count();
        if full_words == PAGE_WORDS {
            Page::Full
        } else {
            Page::Filling {
                bits,
                full_words: full_words as u32,
            }
        }
    }
}

/// The arrived sequence numbers among `0..total`.
pub(crate) struct Seen {
    pages: Vec<Page>,
    total: u64,
}

impl Seen {
    /// Nothing arrived yet of `total` frames (no page is allocated before its first frame).
    pub(super) fn new(total: u64) -> Seen {
        let pages = (0..total.div_ceil(PAGE_SEQS)).map(|_| Page::Untouched).collect();
        Seen { pages, total }
    }

    /// The bits of page `p` set from the start: those past the last frame.
    fn padding(&self, p: usize) -> u64 {
        PAGE_SEQS - page_cap(self.total, p)
    }

    /// Note `seq`; false when it had arrived before (or is not below the total).
    #[inline]
    pub(super) fn insert(&mut self, seq: u64) -> bool {
        let p = (seq >> PAGE_SHIFT) as usize;
        if let Some(Page::Filling { bits, full_words }) = self.pages.get_mut(p) {
            let (w, b) = bit_of(seq);
            let word = &mut bits[w];
            if *word & b != 0 {
                return false;
            }
            *word |= b;
            if *word == u64::MAX {
                *full_words += 1;
                if *full_words as usize == PAGE_WORDS {
                    self.pages[p] = Page::Full;
                }
            }
            return true;
        }
        self.insert_outside_filling(seq)
    }

    /// [`Seen::insert`] into a page that is not filling: its first frame, or one of a full
    /// page (a duplicate), or past the total. Once a page, or once a duplicate: out of line.
    #[cold]
    #[inline(never)]
    fn insert_outside_filling(&mut self, seq: u64) -> bool {
        match self.pages.get_mut((seq >> PAGE_SHIFT) as usize) {
            Some(page @ Page::Untouched) if seq < self.total => {
                *page = Page::first(self.total, seq);
                true
            }
            _ => false,
        }
    }

    /// Take in what another receive queue saw of the same frames; how many both saw.
    pub(super) fn absorb(&mut self, o: Seen) -> u64 {
        let mut both = 0u64;
        for (p, theirs) in o.pages.into_iter().enumerate().take(self.pages.len()) {
            let (cap, padding) = (page_cap(self.total, p), self.padding(p));
            let ours = std::mem::replace(&mut self.pages[p], Page::Untouched);
            self.pages[p] = match (ours, theirs) {
                (Page::Untouched, x) | (x, Page::Untouched) => x,
                (Page::Full, Page::Full) => {
                    both += cap;
                    Page::Full
                }
                (Page::Full, Page::Filling { bits, .. }) | (Page::Filling { bits, .. }, Page::Full) => {
                    both += ones(&bits[..]) - padding;
                    Page::Full
                }
                (Page::Filling { mut bits, .. }, Page::Filling { bits: b, .. }) => {
                    for (x, y) in bits.iter_mut().zip(b.iter()) {
                        both += u64::from((*x & *y).count_ones());
                        *x |= *y;
                    }
                    both -= padding;
                    Page::of(bits)
                }
            };
        }
        both
    }

    /// The highest sequence number below `sent` that has not arrived.
    pub(super) fn last_missing(&self, sent: u64) -> Option<u64> {
        let sent = sent.min(self.total);
        for p in (0..sent.div_ceil(PAGE_SEQS) as usize).rev() {
            let start = p as u64 * PAGE_SEQS;
            let end = (start + PAGE_SEQS).min(sent);
            match &self.pages[p] {
                Page::Full => {}
                Page::Untouched => return Some(end - 1),
                Page::Filling { bits, .. } => {
                    if let Some(i) = highest_clear(&bits[..], end - start) {
                        return Some(start + i);
                    }
                }
            }
        }
        None
    }
}

impl Seen {
    /// How many of the sequence numbers `from..to` (within the total) have not arrived.
    pub(super) fn missing_in(&self, from: u64, to: u64) -> u64 {
        let to = to.min(self.total);
        let mut missing = 0;
        let mut seq = from;
        while seq < to {
            let p = (seq >> PAGE_SHIFT) as usize;
            let end = ((p as u64 + 1) * PAGE_SEQS).min(to);
            missing += match &self.pages[p] {
                Page::Full => 0,
                Page::Untouched => end - seq,
                Page::Filling { bits, .. } => (seq..end)
                    .filter(|s| {
                        let (w, b) = bit_of(*s);
                        bits[w] & b == 0
                    })
                    .count() as u64,
            };
            seq = end;
        }
        missing
    }
}

/// The highest clear bit among the first `n` bits of `bits`.
fn highest_clear(bits: &[u64], n: u64) -> Option<u64> {
    for w in (0..n.div_ceil(64) as usize).rev() {
        let valid = if w as u64 == n / 64 { (1u64 << (n % 64)) - 1 } else { u64::MAX };
        let missing = !bits[w] & valid;
        if missing != 0 {
            return Some(w as u64 * 64 + 63 - u64::from(missing.leading_zeros()));
        }
    }
    None
}

#[cfg(test)]
#[path = "seen_tests.rs"]
mod tests;
