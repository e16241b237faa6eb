//! DPDK's Environment Abstraction Layer: initialising it once per process ([`eal_init`] and the
//! arguments it gets), the TSC, making the threads that call the burst functions lcores, and
//! the error helpers every DPDK call shares.

use super::ffi;
use crate::{IoError, Result};
use std::cell::Cell;
use std::ffi::{c_char, c_int, CStr, CString};
use std::sync::{Mutex, MutexGuard};

/// A backend error with message `msg`.
pub(super) fn backend(msg: impl Into<String>) -> IoError {
    IoError::Backend(msg.into())
}

/// DPDK's text for an errno value (positive or negative).
fn strerror(err: c_int) -> String {
    // SAFETY: rte_strerror returns a pointer to a static or thread-local NUL-terminated string.
    unsafe { CStr::from_ptr(ffi::rte_strerror(err.abs())) }
        .to_string_lossy()
        .into_owned()
}

/// An error from a DPDK call that returns a negative errno.
pub(super) fn call_err(what: impl std::fmt::Display, ret: c_int) -> IoError {
    backend(format!("{what}: {} ({ret})", strerror(ret)))
}

/// An error from a DPDK call that sets `rte_errno`.
pub(super) fn errno_err(what: impl std::fmt::Display) -> IoError {
    // SAFETY: reads the calling thread's rte_errno.
    let e = unsafe { ffi::xlat_errno() };
    backend(format!("{what}: {} ({e})", strerror(e)))
}

/// Lock `m`, also after a panic of another holder.
pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // The guarded data stays consistent across a panic: take it anyway.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

// ---------------------------------------------------------------------------------------------
// EAL

enum EalState {
    Uninit,
    Up(Vec<String>),
    Failed(String),
}

static EAL: Mutex<EalState> = Mutex::new(EalState::Uninit);

/// The arguments EAL gets: a program name, then `--in-memory` (`--no-shconf` with `--no-huge`,
/// which cannot be combined with `--in-memory`) unless the caller chose one of these, a file
/// prefix or a process type: a tester is always a primary process and needs no files in
/// /var/run/dpdk, so that several testers and testpmd can run side by side. Then `args`.
fn eal_argv(args: &[String]) -> Vec<String> {
    let mut argv = vec!["xlatperf".to_string()];
    let chooses = |opt: &str| args.iter().any(|a| a == opt || a.starts_with(&format!("{opt}=")));
    if !["--in-memory", "--no-shconf", "--file-prefix", "--proc-type"]
        .iter()
        .any(|o| chooses(o))
    {
        argv.push(if chooses("--no-huge") { "--no-shconf" } else { "--in-memory" }.into());
    }
    argv.extend(args.iter().cloned());
    argv
}

/// Initialise DPDK's EAL with `args` (EAL options only, without a program name). EAL can be
/// initialised once per process: a second call with the same arguments does nothing, one with
/// other arguments is an error, and so is any call after a failed one.
///
/// The calling thread's CPU affinity is restored afterwards (EAL pins it to the main lcore):
/// xlatperf pins its own threads.
pub fn eal_init(args: &[String]) -> Result<()> {
    let mut st = lock(&EAL);
    match &*st {
        EalState::Up(prev) if prev.as_slice() == args => return Ok(()),
        EalState::Up(prev) => {
            return Err(backend(format!(
                "DPDK's EAL is already initialised with {prev:?}; it cannot be initialised again with {args:?}"
            )))
        }
        EalState::Failed(e) => return Err(backend(format!("DPDK's EAL failed to initialise earlier in this process: {e}"))),
        EalState::Uninit => {}
    }
    // Without enough hugepages EAL fails with "Cannot init memory": say how many instead.
    super::huge::check_before_eal(args, super::huge::HugePages::of_host())?;
    let mut cargs = Vec::new();
    for a in eal_argv(args) {
        match CString::new(a) {
            Ok(c) => cargs.push(c),
            Err(_) => return Err(backend(format!("EAL argument with a NUL byte: {args:?}"))),
        }
    }
    // EAL may keep pointers into argv and permutes the array: both live for the whole process.
    let argv: &'static mut [*mut c_char] = Vec::leak(cargs.into_iter().map(CString::into_raw).collect());
    let argc = argv.len() as c_int;
    let affinity = get_affinity();
    // SAFETY: argv holds argc valid NUL-terminated strings that are never freed; the EAL mutex
    // makes this the only call in the process.
    let ret = unsafe { ffi::rte_eal_init(argc, argv.as_mut_ptr()) };
    if let Some(set) = affinity {
        set_affinity(&set);
    }
    if ret < 0 {
        let e = errno_err(format!("rte_eal_init({:?})", eal_argv(args)));
        *st = EalState::Failed(e.to_string());
        return Err(e);
    }
    *st = EalState::Up(args.to_vec());
    Ok(())
}

/// True once [`eal_init`] has succeeded.
pub(super) fn eal_up() -> bool {
    matches!(*lock(&EAL), EalState::Up(_))
}

/// True when EAL is up on hugepages (its arguments have no `--no-huge`).
pub(super) fn eal_on_hugepages() -> bool {
    matches!(&*lock(&EAL), EalState::Up(args) if super::huge::wanted(args))
}

fn get_affinity() -> Option<libc::cpu_set_t> {
    // SAFETY: cpu_set_t is plain data; zeroed is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: set is a valid cpu_set_t of the size passed.
    let r = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    (r == 0).then_some(set)
}

fn set_affinity(set: &libc::cpu_set_t) {
    // SAFETY: set is a valid cpu_set_t of the size passed. A failure leaves EAL's pinning.
    unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) };
}

/// The TSC (`rte_rdtsc`).
pub fn rdtsc() -> u64 {
    // SAFETY: reads the time-stamp counter; no memory is touched.
    unsafe { ffi::xlat_rdtsc() }
}

/// EAL's TSC frequency in Hz (0 before [`eal_init`]).
pub fn tsc_hz() -> u64 {
    if !eal_up() {
        return 0;
    }
    // SAFETY: EAL is initialised; the call reads a calibrated value.
    unsafe { ffi::rte_get_tsc_hz() }
}

// ---------------------------------------------------------------------------------------------
// Threads: register the threads that call the burst functions as lcores.

/// Whether this thread is an lcore (EAL's own, or registered by us), or could not be made one.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Lcore {
    Unknown,
    Yes,
    No,
}

/// Unregisters the thread when it ends (thread-local destructor).
struct Registration;

impl Drop for Registration {
    fn drop(&mut self) {
        // SAFETY: this thread registered itself with rte_thread_register and ends now.
        unsafe { ffi::xlat_thread_detach() };
    }
}

thread_local! {
    static LCORE: Cell<Lcore> = const { Cell::new(Lcore::Unknown) };
    static REGISTRATION: Cell<Option<Registration>> = const { Cell::new(None) };
}

/// Make the calling thread an lcore if it is not one yet: one thread-local read per burst.
#[inline(always)]
pub(super) fn attach_thread() {
    if LCORE.with(|c| c.get()) == Lcore::Unknown {
        attach_thread_slow();
    }
}

#[cold]
fn attach_thread_slow() {
    // SAFETY: EAL is initialised (a queue exists); registers the calling thread only.
    let r = unsafe { ffi::xlat_thread_attach() };
    if r == 1 {
        REGISTRATION.with(|g| g.set(Some(Registration)));
    }
    // Without a free lcore id (r < 0) the thread works, only without a mempool cache.
    LCORE.with(|c| c.set(if r >= 0 { Lcore::Yes } else { Lcore::No }));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eal_argv_adds_program_name_and_in_memory() {
        let a = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(eal_argv(&a(&["--no-pci"])), a(&["xlatperf", "--in-memory", "--no-pci"]));
        assert_eq!(eal_argv(&a(&["--file-prefix=x"])), a(&["xlatperf", "--file-prefix=x"]));
        assert_eq!(eal_argv(&a(&["--no-huge"])), a(&["xlatperf", "--no-shconf", "--no-huge"]));
        assert_eq!(
            eal_argv(&a(&["--in-memory", "-l", "0"])),
            a(&["xlatperf", "--in-memory", "-l", "0"])
        );
    }
}
