//! Campaigns and their report: a plan of many procedure runs (test descriptions x procedures x
//! axes x repetitions) run as one resumable job into one directory ([`plan`], [`manifest`],
//! [`run`], [`estimate`]; a part of it on one of several testbeds: [`shard`]; what it would
//! do: [`preview`]; the shell commands it gives the DUT: [`commands`]), and one self-contained
//! HTML page that reads a campaign directory or any directory of xlatperf's JSON results
//! ([`report`]).
//!
//! Nothing here measures: each run is an xlatperf command of its own, started as a process, and
//! the report reads the JSON documents those commands write.

pub mod commands;
pub mod estimate;
pub mod manifest;
pub mod plan;
pub mod preview;
pub mod report;
pub mod run;
pub mod shard;
