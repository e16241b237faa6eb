//! How a direction's frames are shared among the queues of its port: chunks of consecutive
//! sequence numbers dealt out in turn, queue `q` of `n` sending chunks `q`, `q + n`, ..., each
//! frame at its own time in the direction's schedule, so the queues together keep the
//! direction's rate and every frame keeps its one sequence number.

/// Which frames of a direction one sender sends: chunks of `chunk` consecutive sequence
/// numbers, chunk `k` by queue `k % queues`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Split {
    pub(super) queue: u64,
    pub(super) queues: u64,
    pub(super) chunk: u64,
}

/// With one queue (`queues` 1) every method treats the direction as one chunk.
impl Split {
    /// The queue that sends frame `seq`.
    #[inline]
    pub(super) fn queue_of(&self, seq: u64) -> u64 {
        if self.queues <= 1 {
            0
        } else {
            (seq / self.chunk) % self.queues
        }
    }

    /// This queue's first frame.
    pub(super) fn first(&self) -> u64 {
        if self.queues <= 1 {
            0
        } else {
            self.queue * self.chunk
        }
    }

    /// After this queue sent frame `seq - 1`: its next frame (`seq` itself within a chunk,
    /// else the start of its next chunk).
    #[inline]
    pub(super) fn next_from(&self, seq: u64) -> u64 {
        if self.queues <= 1 || !seq.is_multiple_of(self.chunk) {
            seq
        } else {
            seq.saturating_add((self.queues - 1).saturating_mul(self.chunk))
        }
    }

    /// The end of the chunk that frame `seq` is in.
    #[inline]
    pub(super) fn chunk_end(&self, seq: u64) -> u64 {
        if self.queues <= 1 {
            u64::MAX
        } else {
            (seq / self.chunk + 1).saturating_mul(self.chunk)
        }
    }

    /// How many of a direction's `total` frames this queue sends.
    #[cfg(test)]
    pub(super) fn share(&self, total: u64) -> u64 {
        if self.queues <= 1 {
            return total;
        }
        let span = self.chunk * self.queues;
        let (rounds, rest) = (total / span, total % span);
        rounds * self.chunk + rest.saturating_sub(self.queue * self.chunk).min(self.chunk)
    }
}

#[cfg(test)]
mod tests {
    use super::Split;

    /// The frames queue `q` of `queues` sends, by walking it as the sender does.
    fn walk(split: Split, total: u64) -> Vec<u64> {
        let mut out = Vec::new();
        let mut seq = split.first();
        while seq < total {
            out.push(seq);
            seq = split.next_from(seq + 1);
        }
        out
    }

    #[test]
    fn queues_share_every_frame_once_in_chunks() {
        for (queues, chunk, total) in [(2, 32, 1000), (3, 7, 100), (2, 32, 10), (4, 1, 9), (1, u64::MAX, 77)] {
            let mut all = Vec::new();
            for queue in 0..queues {
                let s = Split { queue, queues, chunk };
                let mine = walk(s, total);
                assert_eq!(mine.len() as u64, s.share(total), "share of {s:?}");
                assert!(mine.iter().all(|q| s.queue_of(*q) == queue));
                all.extend(mine);
            }
            all.sort_unstable();
            assert_eq!(all, (0..total).collect::<Vec<_>>(), "{queues} queues, chunks of {chunk}");
        }
        let s = Split {
            queue: 1,
            queues: 2,
            chunk: 32,
        };
        assert_eq!((s.first(), s.chunk_end(40), s.next_from(64)), (32, 64, 96));
        let one = Split {
            queue: 0,
            queues: 1,
            chunk: 64,
        };
        assert_eq!(
            (one.share(500), one.first(), one.chunk_end(70), one.next_from(128)),
            (500, 0, u64::MAX, 128)
        );
    }
}
