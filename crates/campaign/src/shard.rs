//! One part of a campaign spread over testbeds (`xlatperf campaign PLAN --shard K/N`): the
//! plan's runs dealt out in turn, run i (0-based, in plan order) to shard `i mod N + 1`. Every
//! run is in exactly one shard, the same on every host (the plan alone decides), the shards'
//! estimated times are as even as dealing can make them, and a run keeps its id (its number in
//! the whole plan), so that the shards' directories merge into the report of the whole plan.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The K-th of N parts of a plan's runs (K from 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

/// A `--shard` value that is not K/N with 1 <= K <= N.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--shard {given:?}: {why} (give K/N, the K-th of N parts, 1 <= K <= N, e.g. 2/4)")]
pub struct ShardError {
    pub given: String,
    pub why: &'static str,
}

impl Shard {
    /// The whole plan.
    pub const WHOLE: Shard = Shard { index: 1, count: 1 };

    /// Whether run number `i` of the plan (0-based, in plan order) is this shard's.
    pub fn holds(self, i: usize) -> bool {
        i % self.count as usize == (self.index - 1) as usize
    }

    /// The whole plan, not a part of it.
    pub fn is_whole(self) -> bool {
        self.count == 1
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = ShardError;

    fn from_str(s: &str) -> Result<Shard, ShardError> {
        let err = |why| ShardError { given: s.to_string(), why };
        let (k, n) = s.split_once('/').ok_or_else(|| err("no `/`"))?;
        let k: u32 = k.trim().parse().map_err(|_| err("K is not a whole number"))?;
        let n: u32 = n.trim().parse().map_err(|_| err("N is not a whole number"))?;
        if n == 0 {
            return Err(err("N is 0"));
        }
        if k == 0 || k > n {
            return Err(err("K is not between 1 and N"));
        }
        Ok(Shard { index: k, count: n })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// For plans of 1 to 50 runs and 1 to 8 shards: every run in exactly one shard, and the
    /// same answer on every call (a fresh value parsed from the same text).
    #[test]
    fn every_run_is_in_exactly_one_shard_the_same_every_time() {
        for runs in 1..=50usize {
            for n in 1..=8u32 {
                let shards: Vec<Shard> = (1..=n).map(|k| format!("{k}/{n}").parse().unwrap()).collect();
                for i in 0..runs {
                    let holders: Vec<u32> = shards.iter().filter(|s| s.holds(i)).map(|s| s.index).collect();
                    assert_eq!(holders.len(), 1, "run {i} of {runs} in {n} shards: {holders:?}");
                    let again: Shard = format!("{}/{n}", holders[0]).parse().unwrap();
                    assert!(again.holds(i));
                }
                // Dealt in turn: no shard has more than one run more than another.
                let sizes: Vec<usize> = shards.iter().map(|s| (0..runs).filter(|&i| s.holds(i)).count()).collect();
                let (lo, hi) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
                assert!(hi - lo <= 1, "{runs} runs in {n} shards: {sizes:?}");
            }
        }
    }

    #[test]
    fn a_bad_shard_is_refused_saying_what_is_wrong() {
        for (s, why) in [
            ("2", "no `/`"),
            ("0/3", "K is not between 1 and N"),
            ("4/3", "K is not between 1 and N"),
            ("1/0", "N is 0"),
            ("a/3", "K is not a whole number"),
            ("1/-2", "N is not a whole number"),
        ] {
            let e = s.parse::<Shard>().unwrap_err();
            assert_eq!(e.why, why, "{s}");
            assert!(e.to_string().starts_with(&format!("--shard {s:?}: {why}")), "{e}");
        }
        assert_eq!("3/8".parse::<Shard>().unwrap().to_string(), "3/8");
        assert!(Shard::WHOLE.is_whole() && (0..10).all(|i| Shard::WHOLE.holds(i)));
    }
}
