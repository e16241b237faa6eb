//! Pinning the calling thread to one CPU core.

/// Why the calling thread could not be pinned to a core.
#[derive(Debug, thiserror::Error)]
pub enum PinError {
    #[error("CPU core {0} does not exist")]
    NoSuchCore(usize),
    #[error("cannot pin to CPU core {core} (this process may use {cores} cores)")]
    Affinity {
        core: usize,
        cores: usize,
        #[source]
        source: std::io::Error,
    },
}

/// Pin the calling thread to `core`; an error names the core and how many the machine has.
pub fn pin_current_thread(core: usize) -> Result<(), PinError> {
    let n = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    if core >= libc::CPU_SETSIZE as usize {
        return Err(PinError::NoSuchCore(core));
    }
    // SAFETY: cpu_set_t is plain data; CPU_SET writes inside it (core < CPU_SETSIZE).
    let r = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(core, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if r != 0 {
        return Err(PinError::Affinity {
            core,
            cores: n,
            source: std::io::Error::last_os_error(),
        });
    }
    Ok(())
}

/// The cores this process may run on, in order.
pub fn allowed_cores() -> Vec<usize> {
    // SAFETY: cpu_set_t is plain data filled by sched_getaffinity.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return vec![0];
        }
        (0..libc::CPU_SETSIZE as usize).filter(|c| libc::CPU_ISSET(*c, &set)).collect()
    }
}

/// Raise the calling thread's scheduling weight to nice -20 where permitted (root), so that
/// ordinary processes on a shared machine preempt a sender less often. Real-time scheduling is
/// not used on purpose: in the lab the DUT's forwarding runs in softirq context on the same
/// cores, and a spinning real-time thread would starve ksoftirqd. Returns whether it worked.
pub fn raise_priority() -> bool {
    // SAFETY: gettid and setpriority have no memory preconditions.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, -20) == 0
    }
}
