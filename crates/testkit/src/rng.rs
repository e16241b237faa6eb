//! A small deterministic generator for tests (xorshift64*): the same values on every run, no
//! dependency.

pub struct Rng(u64);

impl Rng {
    /// A generator started from `seed` (0 is replaced: xorshift never leaves 0).
    pub fn new(seed: u64) -> Rng {
        Rng(if seed == 0 { 0x9e37_79b9_7f4a_7c15 } else { seed })
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A value in `0..n` (0 when `n` is 0), from the high bits.
    pub fn below(&mut self, n: u64) -> u64 {
        (self.next_u64() >> 11).checked_rem(n).unwrap_or(0)
    }

    /// An index into a slice of `len` elements (0 when `len` is 0).
    pub fn index(&mut self, len: usize) -> usize {
        self.below(len as u64) as usize
    }

    /// One element of `v`, which must not be empty.
    pub fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.index(v.len())]
    }
}
