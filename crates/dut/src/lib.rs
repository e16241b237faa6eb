//! The DUT's commands: each a process run with `sh -c` under a deadline, killed with its
//! process group when it overruns, timed and recorded ([`hooks::run_command`]); and
//! [`hooks::Hooks`], the [`xlat_trial::TrialRunner`] that runs a configuration's DUT commands
//! around the trials of any other runner. The procedures (`xlat_procedures`) run no process: the
//! binary wraps its tester in [`hooks::Hooks`].

pub mod hooks;

pub use hooks::Hooks;
