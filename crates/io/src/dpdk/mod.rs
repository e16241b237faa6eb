//! The `dpdk` backend (cargo feature `dpdk`): DPDK 22.11 ethdev ports, for line rate on real NICs
//! and for the `net_null`, `net_ring` and `net_af_packet` virtual devices in tests.
//!
//! Use: [`eal_init`] once per process with the EAL arguments (for example
//! `--no-huge -m 1024 --no-pci --vdev net_null0 -l 0`), then [`DpdkPort::open`] each port by
//! port id (`"0"`) or device name (`"net_null0"`), then [`Port::queues`]. A port has one receive
//! queue and two transmit queues: 0 for traffic, 1 for control frames (ARP/NDP answers).
//!
//! The frame path has no allocation and no system call: a transmit burst takes mbufs from the
//! pool as they are (one bulk get), the caller's fill writes each frame straight into its mbuf,
//! then one `rte_eth_tx_burst`; a receive burst is one `rte_eth_rx_burst` and one bulk free.
//!
//! Recycled mbufs are not reset when their sender cookie says they already hold a frame of the
//! same kind and length (see [`TxQueue::tx_burst_cookie`]): the cookie and the length sit in the
//! last 16 bytes of the mbuf's headroom, and a non-zero cookie vouches that the mbuf's header is
//! as the sender left it (reset, with that length; drivers do not change the header of a frame
//! they transmit). Every other user of the pool's mbufs clears the cookie: the receive path and
//! the pool's creation; a plain [`TxQueue::tx_burst`] writes cookie 0. So a sender that patches
//! recycled frames touches neither the mbuf header nor the unchanged bytes of the frame. Threads that
//! use the queues are registered with EAL on their first burst (and unregistered when they end),
//! so that they get a per-lcore mempool cache as EAL's own lcores do.

mod ffi;

use crate::{IoError, Port, Queues, Result, RxQueue, TxQueue};
use ffi::{RteMbuf, RteMempool};
use std::cell::Cell;
use std::collections::HashSet;
use std::ffi::{c_char, c_int, c_uint, CStr, CString};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use xlat_wire::MacAddr;

/// The most frames one transmit call handles; a larger `n` is cut to this.
pub const MAX_TX_BURST: usize = 64;
/// The most frames one receive call returns.
pub const MAX_RX_BURST: usize = 32;

/// Options of [`DpdkPort::open`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DpdkOptions {
    /// Receive descriptors wanted; the driver may adjust (`rte_eth_dev_adjust_nb_rx_tx_desc`).
    pub rx_desc: u16,
    /// Transmit descriptors wanted per transmit queue; adjusted likewise.
    pub tx_desc: u16,
    /// The per-lcore mempool cache size (at most 512).
    pub mempool_cache: u32,
    /// The longest frame (without FCS) the port must send or receive in one mbuf. Mbufs get
    /// max(2048, this) bytes of data room; above 1514 the port's MTU is raised to match.
    pub max_frame_len: usize,
    /// Receive frames to any destination MAC (drivers that cannot are left as they are).
    pub promiscuous: bool,
    /// How long `open` waits for the link to come up. It does not fail on a link still down:
    /// [`Port::link_up`] tells.
    pub link_timeout: Duration,
}

impl Default for DpdkOptions {
    fn default() -> Self {
        DpdkOptions {
            rx_desc: 1024,
            tx_desc: 1024,
            mempool_cache: 256,
            max_frame_len: 1514,
            promiscuous: true,
            link_timeout: Duration::from_secs(5),
        }
    }
}

fn backend(msg: impl Into<String>) -> IoError {
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
fn call_err(what: impl std::fmt::Display, ret: c_int) -> IoError {
    backend(format!("{what}: {} ({ret})", strerror(ret)))
}

/// An error from a DPDK call that sets `rte_errno`.
fn errno_err(what: impl std::fmt::Display) -> IoError {
    // SAFETY: reads the calling thread's rte_errno.
    let e = unsafe { ffi::xlat_errno() };
    backend(format!("{what}: {} ({e})", strerror(e)))
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
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

fn eal_up() -> bool {
    matches!(*lock(&EAL), EalState::Up(_))
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
fn attach_thread() {
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

// ---------------------------------------------------------------------------------------------
// Ports

/// Ports open in this process: each may be opened once.
static OPEN: Mutex<Option<HashSet<u16>>> = Mutex::new(None);
/// Makes mempool names unique.
static POOLS: AtomicU32 = AtomicU32::new(0);

/// The device name of a port id.
fn port_name(port: u16) -> Option<String> {
    let mut buf = [0 as c_char; ffi::ETH_NAME_MAX_LEN];
    // SAFETY: buf has the RTE_ETH_NAME_MAX_LEN bytes the function may write.
    let r = unsafe { ffi::rte_eth_dev_get_name_by_port(port, buf.as_mut_ptr()) };
    // SAFETY: on success buf holds a NUL-terminated name.
    (r == 0).then(|| unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned())
}

/// All ports as "id (name)", for error messages.
fn port_list() -> String {
    let ports: Vec<String> = (0..ffi::MAX_ETHPORTS)
        // SAFETY: a plain query on a port id.
        .filter(|&p| unsafe { ffi::rte_eth_dev_is_valid_port(p) } == 1)
        .map(|p| format!("{p} ({})", port_name(p).unwrap_or_default()))
        .collect();
    if ports.is_empty() {
        "none (add devices with EAL's -a/--vdev options)".into()
    } else {
        ports.join(", ")
    }
}

/// The port id of a port id or device name.
fn resolve(name_or_id: &str) -> Result<u16> {
    if let Ok(id) = name_or_id.parse::<u16>() {
        // SAFETY: a plain query on a port id.
        if unsafe { ffi::rte_eth_dev_is_valid_port(id) } == 1 {
            return Ok(id);
        }
        return Err(backend(format!("DPDK port {id} does not exist; ports: {}", port_list())));
    }
    let name = pci_name(name_or_id).unwrap_or_else(|| name_or_id.to_string());
    let c = CString::new(name.as_str()).map_err(|_| backend(format!("DPDK device name with a NUL byte: {name_or_id:?}")))?;
    let mut id = 0u16;
    // SAFETY: c is a valid NUL-terminated string; id is a valid out-pointer.
    let r = unsafe { ffi::rte_eth_dev_get_port_by_name(c.as_ptr(), &mut id) };
    if r != 0 {
        let hint = if pci_name(name_or_id).is_some() {
            " (a PCI port must be bound to vfio-pci or uio_pci_generic, e.g. with dpdk-devbind.py, \
             and EAL must scan the bus: no --no-pci, or allow it with -a <address>)"
        } else {
            ""
        };
        return Err(backend(format!("DPDK device {name:?} not found{hint}; ports: {}", port_list())));
    }
    Ok(id)
}

/// A PCI address as DPDK names its ports, `dddd:bb:dd.f`, from that form or the short
/// `bb:dd.f` that `lspci` prints; `None` for other names.
fn pci_name(s: &str) -> Option<String> {
    let hex = |p: &str, n: usize| p.len() == n && p.chars().all(|c| c.is_ascii_hexdigit());
    let (rest, func) = s.rsplit_once('.')?;
    if !(func.len() == 1 && matches!(func.as_bytes()[0], b'0'..=b'7')) {
        return None;
    }
    let parts: Vec<&str> = rest.split(':').collect();
    match parts.as_slice() {
        [bus, dev] if hex(bus, 2) && hex(dev, 2) => Some(format!("0000:{}", s.to_ascii_lowercase())),
        [dom, bus, dev] if hex(dom, 4) && hex(bus, 2) && hex(dev, 2) => Some(s.to_ascii_lowercase()),
        _ => None,
    }
}

/// Create two `net_ring` ports joined back to back, named `net_ring_<a>` and `net_ring_<b>`:
/// what one transmits (on either transmit queue) the other receives. Each direction holds up
/// to `ring_size - 1` frames (a power of two; 1024 fits the default mempool, see
/// [`DpdkPort::open`]). Returns the two device names for [`DpdkPort::open`].
pub fn ring_pair(a: &str, b: &str, ring_size: u32) -> Result<(String, String)> {
    if !eal_up() {
        return Err(backend("dpdk::ring_pair before dpdk::eal_init"));
    }
    if !ring_size.is_power_of_two() {
        return Err(backend(format!("ring size {ring_size} is not a power of two")));
    }
    let ca = CString::new(a).map_err(|_| backend("ring name with a NUL byte"))?;
    let cb = CString::new(b).map_err(|_| backend("ring name with a NUL byte"))?;
    // SAFETY: both names are valid NUL-terminated strings; EAL is initialised.
    if unsafe { ffi::xlat_ring_pair(ca.as_ptr(), cb.as_ptr(), ring_size) } != 0 {
        return Err(errno_err(format!("creating the net_ring pair {a}, {b}")));
    }
    Ok((format!("net_ring_{a}"), format!("net_ring_{b}")))
}

/// Port counters from `rte_eth_stats_get`.
pub type PortStats = ffi::PortStatsRaw;

/// What the port and its queues share; the last one dropped stops and closes the device.
struct Device {
    port: u16,
    name: String,
    pool: *mut RteMempool,
    started: bool,
}

// SAFETY: Device is only read after open, and dropped once; DPDK's control functions on one port
// may be called from any thread when not called concurrently, which the Arc's drop ensures.
unsafe impl Send for Device {}
// SAFETY: shared access only reads plain fields.
unsafe impl Sync for Device {}

impl Drop for Device {
    fn drop(&mut self) {
        // SAFETY: the port was configured by DpdkPort::open; nothing uses its queues any more
        // (they hold this Device); stop and close are the documented teardown.
        unsafe {
            if self.started {
                ffi::rte_eth_dev_stop(self.port);
            }
            ffi::rte_eth_dev_close(self.port);
        }
        if !self.pool.is_null() {
            // Mbufs of this pool may still sit in another port's ring (a ring pair) or in a
            // receiver's hands: free the pool only when all are back, else leave it.
            // SAFETY: pool was created by open and is not freed elsewhere.
            unsafe {
                if ffi::xlat_mempool_in_use(self.pool) == 0 {
                    ffi::rte_mempool_free(self.pool);
                }
            }
        }
        if let Some(set) = lock(&OPEN).as_mut() {
            set.remove(&self.port);
        }
    }
}

/// An open DPDK port.
pub struct DpdkPort {
    dev: Arc<Device>,
    mac: MacAddr,
    rx_queues: u16,
    rx_desc: u16,
    tx_desc: u16,
    mbufs: u32,
    /// Writable bytes per mbuf (data room minus headroom).
    room: usize,
    /// Where a reset mbuf's data starts, from the mbuf's address.
    data_off: usize,
    opened: bool,
}

/// The mempool size for a port (see [`DpdkPort::open`]).
pub fn mempool_size(rx_queues: u16, rx_desc: u16, tx_desc: u16, cache: u32, lcores: u32) -> u32 {
    let cache_max = cache + cache.div_ceil(2);
    let n = u32::from(rx_queues) * u32::from(rx_desc)
        + 2 * u32::from(tx_desc)
        + 2 * MAX_TX_BURST as u32
        + MAX_RX_BURST as u32
        + (lcores + 4) * cache_max;
    // 2^k - 1: the mempool's ring has 2^k slots, one always free.
    (n + 1).next_power_of_two() - 1
}

impl DpdkPort {
    /// Open and start a port given by port id (`"0"`) or device name (`"net_null0"`,
    /// `"net_ring0"`, `"net_af_packet0"`, a PCI address), after [`eal_init`].
    ///
    /// The port gets 1 receive queue (all of a `net_af_packet` device's, which the receive queue
    /// reads in turn) and 2 transmit queues (0: traffic, 1: control; a `net_af_packet` device
    /// needs `qpairs=2` for that), descriptor counts as the driver
    /// adjusts them, and its own mempool of
    ///
    /// ```text
    /// rx_queues × rx_desc + 2 × tx_desc   mbufs the receive rings and both transmit rings hold
    /// + 2 × 64 + 32                   one burst in the hands of each queue's user
    /// + (lcores + 4) × 1.5 × cache    each lcore's cache may hold 1.5 × its size before it
    ///                                 flushes: EAL's lcores and up to 4 registered threads
    /// ```
    ///
    /// rounded up to 2^k − 1 mbufs ([`mempool_size`]; with the defaults and 2 lcores: 8191).
    /// The port is promiscuous if asked, and `open` waits up to `link_timeout` for its link.
    /// Dropping the port and its queues stops and closes the device; DPDK then releases it, so
    /// a device can be opened once per process.
    pub fn open(name_or_id: &str, opts: &DpdkOptions) -> Result<DpdkPort> {
        if !eal_up() {
            return Err(backend(format!("DPDK port {name_or_id:?}: dpdk::eal_init must be called first")));
        }
        let port = resolve(name_or_id)?;
        let name = port_name(port).unwrap_or_else(|| name_or_id.to_string());
        {
            let mut open = lock(&OPEN);
            if !open.get_or_insert_with(HashSet::new).insert(port) {
                return Err(backend(format!("DPDK port {port} ({name}) is already open")));
            }
        }
        let label = format!("DPDK port {port} ({name})");
        let what = |s: &str| format!("{label}: {s}");
        // From here on, dropping `dev` (on an error) stops and closes the device again.
        let mut dev = Device {
            port,
            name,
            pool: std::ptr::null_mut(),
            started: false,
        };

        // SAFETY: PortInfo is plain data; zeroed is valid.
        let mut info: ffi::PortInfo = unsafe { std::mem::zeroed() };
        // SAFETY: port is valid; info is a valid out-pointer.
        let r = unsafe { ffi::xlat_port_info(port, &mut info) };
        if r != 0 {
            return Err(call_err(what("rte_eth_dev_info_get"), r));
        }
        // SAFETY: the shim NUL-terminates the driver name.
        let driver = unsafe { CStr::from_ptr(info.driver.as_ptr()) }.to_string_lossy().into_owned();
        if info.max_rx_queues < 1 || info.max_tx_queues < 2 {
            let hint = if driver.contains("af_packet") {
                "; give the net_af_packet vdev qpairs=2"
            } else {
                ""
            };
            return Err(backend(what(&format!(
                "driver {driver} offers {} receive and {} transmit queues; xlatperf needs 1 and 2 (traffic and control){hint}",
                info.max_rx_queues, info.max_tx_queues
            ))));
        }
        let data_room = opts.max_frame_len.max(2048) + ffi::PKTMBUF_HEADROOM;
        let data_room =
            u16::try_from(data_room).map_err(|_| backend(what(&format!("max_frame_len {} is too large", opts.max_frame_len))))?;
        let mtu = if opts.max_frame_len > 1514 {
            (opts.max_frame_len - 14) as u32
        } else {
            0
        };
        // net_af_packet opens one packet socket per queue pair when the vdev is created, in one
        // fanout group that spreads received frames over them by a flow hash seeded at boot:
        // configure and read every one of its receive queues, or some frames (an ARP reply, a
        // share of the test frames) land on a queue nobody reads. Other drivers deliver
        // everything to queue 0 when only one is configured (no RSS).
        let rx_queues: u16 = if driver.contains("af_packet") {
            info.max_rx_queues.max(1)
        } else {
            1
        };
        // SAFETY: port is valid and not started.
        let r = unsafe { ffi::xlat_port_configure(port, rx_queues, 2, mtu) };
        if r != 0 {
            return Err(call_err(what(&format!("rte_eth_dev_configure ({rx_queues} rx, 2 tx queues)")), r));
        }
        let (mut rx_desc, mut tx_desc) = (opts.rx_desc, opts.tx_desc);
        // SAFETY: port is configured; both pointers are valid.
        let r = unsafe { ffi::rte_eth_dev_adjust_nb_rx_tx_desc(port, &mut rx_desc, &mut tx_desc) };
        if r != 0 {
            return Err(call_err(what("rte_eth_dev_adjust_nb_rx_tx_desc"), r));
        }
        // SAFETY: a plain query on a valid port.
        let socket = unsafe { ffi::rte_eth_dev_socket_id(port) };
        let socket = if socket < 0 { ffi::SOCKET_ID_ANY } else { socket };
        // SAFETY: EAL is initialised.
        let lcores = unsafe { ffi::rte_lcore_count() };
        let cache = opts.mempool_cache.min(ffi::MEMPOOL_CACHE_MAX_SIZE);
        let mbufs = mempool_size(rx_queues, rx_desc, tx_desc, cache, lcores);
        let pool_name =
            CString::new(format!("xlat_p{}_{}", port, POOLS.fetch_add(1, Ordering::Relaxed))).expect("no NUL in a formatted name");
        // SAFETY: pool_name is a valid NUL-terminated string; the sizes are within DPDK's limits
        // (cache <= 512 <= mbufs / 1.5).
        dev.pool = unsafe { ffi::rte_pktmbuf_pool_create(pool_name.as_ptr(), mbufs, cache, 0, data_room, socket) };
        if dev.pool.is_null() {
            return Err(errno_err(what(&format!(
                "creating a mempool of {mbufs} mbufs of {data_room} bytes (is EAL's -m large enough?)"
            ))));
        }
        // SAFETY: the pool was just created and no mbuf of it is in use.
        let data_off = unsafe { ffi::xlat_pool_prepare(dev.pool) };
        let data_off = usize::try_from(data_off).map_err(|_| {
            backend(what(
                "the mempool's mbufs do not all have their data at one offset from their header",
            ))
        })?;
        for q in 0..rx_queues {
            // SAFETY: port is configured with rx_queues receive queues; NULL rx_conf means the
            // driver's default; the pool is ours.
            let r = unsafe { ffi::rte_eth_rx_queue_setup(port, q, rx_desc, socket as c_uint, std::ptr::null(), dev.pool) };
            if r != 0 {
                return Err(call_err(what(&format!("rte_eth_rx_queue_setup({q})")), r));
            }
        }
        for q in 0..2 {
            // SAFETY: port is configured with 2 transmit queues.
            let r = unsafe { ffi::xlat_tx_queue_setup(port, q, tx_desc, socket as c_uint) };
            if r != 0 {
                return Err(call_err(what(&format!("rte_eth_tx_queue_setup({q})")), r));
            }
        }
        // SAFETY: all queues are set up.
        let r = unsafe { ffi::rte_eth_dev_start(port) };
        if r != 0 {
            return Err(call_err(what("rte_eth_dev_start"), r));
        }
        dev.started = true;
        if opts.promiscuous {
            // SAFETY: the port is started. Drivers without promiscuous mode answer -ENOTSUP,
            // which is fine: they deliver every frame anyway or cannot be helped.
            let r = unsafe { ffi::rte_eth_promiscuous_enable(port) };
            if r != 0 && r != -libc::ENOTSUP {
                return Err(call_err(what("rte_eth_promiscuous_enable"), r));
            }
        }
        let mut mac = [0u8; 6];
        // SAFETY: mac is a 6-byte rte_ether_addr.
        let r = unsafe { ffi::rte_eth_macaddr_get(port, &mut mac) };
        if r != 0 {
            return Err(call_err(what("rte_eth_macaddr_get"), r));
        }
        let room = data_room as usize - ffi::PKTMBUF_HEADROOM;
        let p = DpdkPort {
            dev: Arc::new(dev),
            mac: MacAddr(mac),
            rx_queues,
            rx_desc,
            tx_desc,
            mbufs,
            room,
            data_off,
            opened: false,
        };
        let deadline = Instant::now() + opts.link_timeout;
        while !p.link_up() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(p)
    }

    /// The DPDK port id.
    pub fn port_id(&self) -> u16 {
        self.dev.port
    }

    /// The receive and transmit descriptor counts in use (after the driver's adjustment).
    pub fn descriptors(&self) -> (u16, u16) {
        (self.rx_desc, self.tx_desc)
    }

    /// The number of mbufs in the port's mempool.
    pub fn mempool_mbufs(&self) -> u32 {
        self.mbufs
    }

    /// The port's counters.
    pub fn stats(&self) -> Result<PortStats> {
        port_stats(self.dev.port)
    }
}

impl Port for DpdkPort {
    type Tx = DpdkTx;
    type Rx = DpdkRx;

    fn name(&self) -> String {
        format!("dpdk:{}", self.dev.name)
    }

    fn mac(&self) -> MacAddr {
        self.mac
    }

    fn link_up(&self) -> bool {
        // SAFETY: a plain query on a valid port.
        unsafe { ffi::xlat_link_up(self.dev.port) == 1 }
    }

    /// An mbuf's writable bytes (frames are sent in one segment).
    fn max_frame_len(&self) -> usize {
        self.room.min(crate::MAX_FRAME_LEN)
    }

    fn queues(&mut self) -> Result<Queues<DpdkTx, DpdkRx>> {
        if self.opened {
            return Err(backend(format!("{}: queues already opened", self.name())));
        }
        self.opened = true;
        let tx = |queue| DpdkTx {
            port: self.dev.port,
            queue,
            pool: self.dev.pool,
            room: self.room,
            data_off: self.data_off,
            pkts: [std::ptr::null_mut(); MAX_TX_BURST],
            lens: [0; MAX_TX_BURST],
            oerrors_seen: None,
            _dev: self.dev.clone(),
        };
        let rx = DpdkRx {
            port: self.dev.port,
            queues: self.rx_queues,
            next: 0,
            seen: RxDrops::default(),
            pkts: [std::ptr::null_mut(); MAX_RX_BURST],
            data: [std::ptr::null(); MAX_RX_BURST],
            lens: [0; MAX_RX_BURST],
            _dev: self.dev.clone(),
        };
        Ok(Queues { tx: tx(0), ctl: tx(1), rx })
    }
}

/// A transmit queue of a DPDK port.
pub struct DpdkTx {
    port: u16,
    queue: u16,
    pool: *mut RteMempool,
    /// The writable bytes of each mbuf: data room minus headroom.
    room: usize,
    /// Where a reset mbuf's data starts, from the mbuf's address (the same for the whole pool).
    data_off: usize,
    pkts: [*mut RteMbuf; MAX_TX_BURST],
    /// Per frame of the burst: 0 when the mbuf is sent as it is, else the length to give it
    /// after a reset.
    lens: [u16; MAX_TX_BURST],
    /// The port's `oerrors` when `dropped` was last called (`None`: never).
    oerrors_seen: Option<u64>,
    /// Keeps the device open while the queue exists.
    _dev: Arc<Device>,
}

fn port_stats(port: u16) -> Result<PortStats> {
    let mut st = PortStats::default();
    // SAFETY: the port is started; st is a valid out-pointer.
    let r = unsafe { ffi::xlat_port_stats(port, &mut st) };
    if r != 0 {
        return Err(call_err(format!("DPDK port {port}: rte_eth_stats_get"), r));
    }
    Ok(st)
}

// SAFETY: a DPDK transmit queue may be used by one thread at a time, from any thread; DpdkTx is
// the only handle of its queue and `&mut self` on every call enforces one user at a time. The
// mempool is multi-producer/multi-consumer. The mbuf pointers in `pkts` are only scratch space.
unsafe impl Send for DpdkTx {}

impl DpdkTx {
    /// Take up to `want` mbufs into `self.pkts`; fewer when the pool runs low, 0 if empty.
    #[inline(always)]
    fn alloc(&mut self, want: usize) -> usize {
        let mut n = want;
        while n > 0 {
            // SAFETY: pkts has room for MAX_TX_BURST >= n pointers; pool is this port's.
            if unsafe { ffi::xlat_tx_get(self.pool, self.pkts.as_mut_ptr(), n as c_uint) } == 0 {
                return n;
            }
            n /= 2;
        }
        0
    }
}

/// The sender's metadata of an mbuf: `[length, cookie]`, the 16 bytes before a reset mbuf's data
/// (in its headroom; see the module text and `xlat_pool_prepare` in the shim).
///
/// # Safety
/// `data` must be the data pointer of a reset mbuf of our pools (RTE_PKTMBUF_HEADROOM = 128
/// bytes into its buffer), which we own.
#[inline(always)]
unsafe fn meta_of(data: *mut u8) -> (*mut u64, *mut u64) {
    (data.sub(16) as *mut u64, data.sub(8) as *mut u64)
}

impl TxQueue for DpdkTx {
    /// The port's `oerrors` since the last call (the first call only takes the baseline).
    fn dropped(&mut self) -> Result<u64> {
        let now = port_stats(self.port)?.oerrors;
        let d = self.oerrors_seen.map_or(0, |s| now.saturating_sub(s));
        self.oerrors_seen = Some(now);
        Ok(d)
    }

    #[inline]
    fn tx_burst<F: FnMut(usize, &mut [u8]) -> usize>(&mut self, n: usize, mut fill: F) -> Result<usize> {
        // A frame written without a cookie invalidates what the buffer's cookie said.
        self.tx_burst_cookie(n, |i, buf, cookie| {
            *cookie = 0;
            fill(i, buf)
        })
    }

    #[inline]
    fn tx_burst_cookie<F: FnMut(usize, &mut [u8], &mut u64) -> usize>(&mut self, n: usize, mut fill: F) -> Result<usize> {
        attach_thread();
        let got = self.alloc(n.min(MAX_TX_BURST));
        let room = self.room;
        let mut filled = 0;
        while filled < got {
            // The data of mbuf `filled` once reset: xlat_pool_prepare checked that it lies
            // `data_off` bytes after every mbuf of the pool.
            let data = (self.pkts[filled] as *mut u8).wrapping_add(self.data_off);
            // SAFETY: the mbuf is ours (taken from the pool), and its buffer has `room` bytes
            // after the headroom.
            let buf = unsafe { std::slice::from_raw_parts_mut(data, room) };
            // SAFETY: as above; the 16 bytes before the data lie in the headroom.
            let (lp, cp) = unsafe { meta_of(data) };
            // SAFETY: as above; unaligned access is allowed.
            let (old_len, old) = unsafe { (lp.read_unaligned(), cp.read_unaligned()) };
            let mut cookie = old;
            let len = fill(filled, buf, &mut cookie);
            if len == 0 || len > room {
                // The fill may have written into the buffer: nothing vouches for it any more.
                // SAFETY: as above.
                unsafe { cp.write_unaligned(0) };
                break;
            }
            // An mbuf whose cookie and length stay is sent as it is; any other gets a reset
            // and its length in the shim, and keeps the new cookie and length.
            let same = cookie != 0 && cookie == old && old_len == len as u64;
            self.lens[filled] = if same { 0 } else { len as u16 };
            if !same {
                // SAFETY: as above.
                unsafe {
                    lp.write_unaligned(len as u64);
                    cp.write_unaligned(cookie);
                }
            }
            filled += 1;
        }
        // SAFETY: pkts[..got] are ours, pkts[..filled] filled (lens as above); the queue is set
        // up and used by this thread alone. The shim frees pkts[sent..got]: they were not
        // accepted, and the caller offers those frames again.
        let sent = unsafe {
            ffi::xlat_tx_send(
                self.port,
                self.queue,
                self.pkts.as_mut_ptr(),
                self.lens.as_ptr(),
                filled as u16,
                got as u16,
            )
        };
        Ok(sent as usize)
    }
}

/// The receive queue of a DPDK port.
pub struct DpdkRx {
    port: u16,
    /// Receive queues 0..queues, read in turn.
    queues: u16,
    /// The queue read first by the next call.
    next: u16,
    /// The port's receive drop counters when `dropped` was last called.
    seen: RxDrops,
    pkts: [*mut RteMbuf; MAX_RX_BURST],
    data: [*const u8; MAX_RX_BURST],
    lens: [u16; MAX_RX_BURST],
    /// Keeps the device open while the queue exists.
    _dev: Arc<Device>,
}

// SAFETY: a DPDK receive queue may be used by one thread at a time, from any thread; DpdkRx is
// the only handle of its queue and `&mut self` on every call enforces one user at a time.
unsafe impl Send for DpdkRx {}

impl RxQueue for DpdkRx {
    #[inline]
    fn rx_burst<F: FnMut(&[u8])>(&mut self, max: usize, mut f: F) -> Result<usize> {
        attach_thread();
        let want = max.min(MAX_RX_BURST) as u16;
        // Every receive queue in turn, starting one further each call, until one has frames.
        let mut n = 0;
        for _ in 0..self.queues {
            let queue = self.next;
            self.next = (self.next + 1) % self.queues;
            // SAFETY: the arrays have room for MAX_RX_BURST >= want entries; the queue is ours
            // alone.
            n = unsafe {
                ffi::xlat_rx(
                    self.port,
                    queue,
                    self.pkts.as_mut_ptr(),
                    self.data.as_mut_ptr(),
                    self.lens.as_mut_ptr(),
                    want,
                )
            } as usize;
            if n > 0 {
                break;
            }
        }
        for i in 0..n {
            // SAFETY: data[i] and lens[i] give the first segment of a received mbuf that we own
            // until the free below (frames up to max_frame_len arrive in one segment).
            let frame = unsafe { std::slice::from_raw_parts(self.data[i], self.lens[i] as usize) };
            // (The shim cleared the mbuf's sender cookie: the device wrote it.)
            f(frame);
        }
        if n > 0 {
            // SAFETY: pkts[..n] are ours and no longer referenced.
            unsafe { ffi::rte_pktmbuf_free_bulk(self.pkts.as_mut_ptr(), n as c_uint) };
        }
        Ok(n)
    }

    /// `imissed + ierrors + rx_nombuf` of the port since the last call.
    fn dropped(&mut self) -> Result<u64> {
        let now = RxDrops::of(&port_stats(self.port)?);
        let d = now.total().saturating_sub(self.seen.total());
        self.seen = now;
        Ok(d)
    }
}

/// The receive counters of a port that count frames the port dropped.
#[derive(Debug, Clone, Copy, Default)]
struct RxDrops {
    imissed: u64,
    ierrors: u64,
    rx_nombuf: u64,
}

impl RxDrops {
    fn of(st: &PortStats) -> RxDrops {
        RxDrops {
            imissed: st.imissed,
            ierrors: st.ierrors,
            rx_nombuf: st.rx_nombuf,
        }
    }

    fn total(&self) -> u64 {
        self.imissed + self.ierrors + self.rx_nombuf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pci_addresses_take_dpdk_form() {
        assert_eq!(pci_name("01:00.0").as_deref(), Some("0000:01:00.0"));
        assert_eq!(pci_name("0000:3B:00.1").as_deref(), Some("0000:3b:00.1"));
        for other in ["net_null0", "0", "01:00", "1:00.0", "01:00.8", "0000:01:00.0x", "zz:00.0", ""] {
            assert_eq!(pci_name(other), None, "{other}");
        }
    }

    #[test]
    fn mempool_size_is_a_power_of_two_minus_one_and_covers_the_rings() {
        let n = mempool_size(1, 1024, 1024, 256, 2);
        assert_eq!(n, 8191);
        assert!(n >= 1024 + 2048 + 160 + 6 * 384);
        assert_eq!(mempool_size(1, 512, 512, 0, 1), 2047);
        // Every receive queue's ring is counted.
        assert_eq!(mempool_size(2, 512, 512, 0, 1), 4095);
        assert_eq!(mempool_size(8, 512, 512, 0, 1), 8191);
    }

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
