//! Opening a DPDK port: finding it by id, name or PCI address, configuring it with one receive
//! and two transmit queues and its own mempool ([`DpdkPort::open`], [`mempool_size`]), the
//! `Device` that the port and its queues share and that closes the port when the last of
//! them goes, the port's counters, and `net_ring` pairs for tests.

use super::eal::{backend, call_err, eal_up, errno_err, lock};
use super::ffi::{self, RteMempool};
use crate::Result;
use std::collections::HashSet;
use std::ffi::{c_char, c_int, c_uint, CStr, CString};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
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
    /// [`Port::link_up`](crate::Port::link_up) tells.
    pub link_timeout: Duration,
    /// Queue sets (see [`Port::open_queues`](crate::Port::open_queues)): `queues` receive
    /// queues with RSS on addresses and ports where the device has it, and `2 × queues`
    /// transmit queues (set k: traffic k, control `queues + k`).
    pub queues: u16,
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
            queues: 1,
        }
    }
}

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
    ring_pair_queues(a, b, ring_size, 1)
}

/// [`ring_pair`] with `queues` lanes per direction (1 to 8), for ports opened with as many
/// queues: what queue set k of one port transmits, queue set k of the other receives.
pub fn ring_pair_queues(a: &str, b: &str, ring_size: u32, queues: u16) -> Result<(String, String)> {
    if !(1..=8).contains(&queues) {
        return Err(backend(format!("a net_ring pair has 1 to 8 queues, not {queues}")));
    }
    if !eal_up() {
        return Err(backend("dpdk::ring_pair before dpdk::eal_init"));
    }
    if !ring_size.is_power_of_two() {
        return Err(backend(format!("ring size {ring_size} is not a power of two")));
    }
    let ca = CString::new(a).map_err(|_| backend("ring name with a NUL byte"))?;
    let cb = CString::new(b).map_err(|_| backend("ring name with a NUL byte"))?;
    // SAFETY: both names are valid NUL-terminated strings; EAL is initialised.
    if unsafe { ffi::xlat_ring_pair(ca.as_ptr(), cb.as_ptr(), ring_size, c_uint::from(queues)) } != 0 {
        return Err(errno_err(format!("creating the net_ring pair {a}, {b}")));
    }
    Ok((format!("net_ring_{a}"), format!("net_ring_{b}")))
}

/// Port counters from `rte_eth_stats_get`.
pub type PortStats = ffi::PortStatsRaw;

/// What the port and its queues share; the last one dropped stops and closes the device.
pub(super) struct Device {
    pub(super) port: u16,
    pub(super) name: String,
    pub(super) pool: *mut RteMempool,
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
    pub(super) dev: Arc<Device>,
    pub(super) mac: MacAddr,
    pub(super) rx_queues: u16,
    /// Queue sets (the transmit queues are twice as many).
    pub(super) queues: u16,
    rx_desc: u16,
    tx_desc: u16,
    mbufs: u32,
    /// Writable bytes per mbuf (data room minus headroom).
    pub(super) room: usize,
    /// Where a reset mbuf's data starts, from the mbuf's address.
    pub(super) data_off: usize,
    /// Where the sender's metadata field (`xlat_sender_meta`) lies, from the mbuf's address.
    pub(super) meta_off: usize,
    /// Where a reset mbuf's data starts in its cache line, and the line's size (the same for
    /// every mbuf of the pool; `None` when they differ).
    pub(super) lines: Option<(usize, usize)>,
    /// True once [`Port::queues`](crate::Port::queues) has handed out the queues.
    pub(super) opened: bool,
    /// What the PMD can stamp (none of it read yet).
    pub(super) stamping: crate::Stamping,
}

/// Bytes a receive buffer holds beyond the longest frame (see [`DpdkPort::open`]).
const RX_SLACK: usize = 32;

/// The mempool size for a port with `queues` queue sets (see [`DpdkPort::open`]).
pub fn mempool_size(rx_queues: u16, queues: u16, rx_desc: u16, tx_desc: u16, cache: u32, lcores: u32) -> u32 {
    let cache_max = cache + cache.div_ceil(2);
    let q = u32::from(queues.max(1));
    let n = u32::from(rx_queues) * u32::from(rx_desc)
        + 2 * q * u32::from(tx_desc)
        + q * (2 * MAX_TX_BURST as u32 + MAX_RX_BURST as u32)
        + (lcores + 4 + 2 * q) * cache_max;
    // 2^k - 1: the mempool's ring has 2^k slots, one always free.
    (n + 1).next_power_of_two() - 1
}

/// What a PMD (`driver`) with (or without) the receive timestamp offload and an IEEE 1588
/// clock can stamp. Neither is read yet, so the port claims no stamps; the detail says what
/// the PMD has.
pub(super) fn stamping_of(driver: &str, rx_timestamp: bool, timesync: bool) -> crate::Stamping {
    let yes = |b: bool| if b { "" } else { "no " };
    crate::Stamping {
        detail: format!(
            "{}receive timestamp offload, {}IEEE 1588 clock (rte_eth_timesync){} ({driver})",
            yes(rx_timestamp),
            yes(timesync),
            if rx_timestamp || timesync {
                ", which the dpdk backend does not read yet"
            } else {
                ""
            }
        ),
        ..crate::Stamping::default()
    }
}

impl DpdkPort {
    /// Open and start a port given by port id (`"0"`) or device name (`"net_null0"`,
    /// `"net_ring0"`, `"net_af_packet0"`, a PCI address), after [`eal_init`](super::eal::eal_init).
    ///
    /// The port gets `q = opts.queues` receive queues (all of a `net_af_packet` device's,
    /// which queue set k reads in turn: k, k + q, ...), with RSS on addresses and UDP ports
    /// when q > 1 and the device hashes them, and 2q transmit queues (k: traffic of set k,
    /// q + k: its control; a `net_af_packet` device needs `qpairs=2q` for that), descriptor
    /// counts as the driver adjusts them, and its own mempool of
    ///
    /// ```text
    /// rx_queues × rx_desc + 2q × tx_desc  mbufs the receive rings and the transmit rings hold
    /// + q × (2 × 64 + 32)             one burst in the hands of each queue's user
    /// + (lcores + 4 + 2q) × 1.5 × cache each lcore's cache may hold 1.5 × its size before it
    ///                                 flushes: EAL's lcores and the registered threads
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
        let queues = opts.queues.max(1);
        let tx_queues = 2 * queues;
        if info.max_rx_queues < queues || info.max_tx_queues < tx_queues {
            let hint = if driver.contains("af_packet") {
                format!("; give the net_af_packet vdev qpairs={tx_queues}")
            } else {
                String::new()
            };
            return Err(backend(what(&format!(
                "driver {driver} offers {} receive and {} transmit queues; xlatperf needs {queues} and {tx_queues} ({queues} queue set(s) of traffic and control){hint}",
                info.max_rx_queues, info.max_tx_queues
            ))));
        }
        // A receive buffer holds the longest frame plus what drivers count in a frame besides
        // (virtio: a VLAN tag and its 12-byte net header), so that a jumbo frame fits in one.
        let data_room = (opts.max_frame_len + RX_SLACK).max(2048) + ffi::PKTMBUF_HEADROOM;
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
            queues
        };
        // SAFETY: port is valid and not started.
        let r = unsafe { ffi::xlat_port_configure(port, rx_queues, tx_queues, mtu, i32::from(queues > 1)) };
        if r != 0 {
            return Err(call_err(
                what(&format!("rte_eth_dev_configure ({rx_queues} rx, {tx_queues} tx queues)")),
                r,
            ));
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
        let mbufs = mempool_size(rx_queues, queues, rx_desc, tx_desc, cache, lcores);
        let pool_name =
            CString::new(format!("xlat_p{}_{}", port, POOLS.fetch_add(1, Ordering::Relaxed))).expect("no NUL in a formatted name");
        // SAFETY: pool_name is a valid NUL-terminated string; the sizes are within DPDK's limits
        // (cache <= 512 <= mbufs / 1.5).
        dev.pool = unsafe { ffi::rte_pktmbuf_pool_create(pool_name.as_ptr(), mbufs, cache, 0, data_room, socket) };
        if dev.pool.is_null() {
            let e = errno_err(what(&format!("creating a mempool of {mbufs} mbufs of {data_room} bytes")));
            return Err(super::huge::pool_error(
                e.to_string(),
                mbufs,
                data_room,
                super::eal::eal_on_hugepages(),
                super::huge::HugePages::of_host(),
            ));
        }
        let (mut meta_off, mut line_off, mut line) = (-1, -1, 0);
        // SAFETY: the pool was just created and no mbuf of it is in use; the out parameters are
        // writable.
        let data_off = unsafe { ffi::xlat_pool_prepare(dev.pool, &mut meta_off, &mut line_off, &mut line) };
        // Frames are placed in cache lines (`TxQueue::place_frames`) when all mbufs' data lie
        // alike in theirs.
        let lines = usize::try_from(line_off)
            .ok()
            .zip(usize::try_from(line).ok())
            .filter(|&(_, l)| l > 0);
        let meta_off =
            usize::try_from(meta_off).map_err(|_| errno_err(what("registering the sender's mbuf field (rte_mbuf_dynfield_register)")))?;
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
        for q in 0..tx_queues {
            // SAFETY: port is configured with tx_queues transmit queues.
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
            queues,
            rx_desc,
            tx_desc,
            mbufs,
            room,
            data_off,
            meta_off,
            lines,
            opened: false,
            stamping: stamping_of(&driver, info.rx_timestamp != 0, info.timesync != 0),
        };
        let deadline = Instant::now() + opts.link_timeout;
        while !link_up(port) && Instant::now() < deadline {
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

/// The counters of port `port`.
pub(super) fn port_stats(port: u16) -> Result<PortStats> {
    let mut st = PortStats::default();
    // SAFETY: the port is started; st is a valid out-pointer.
    let r = unsafe { ffi::xlat_port_stats(port, &mut st) };
    if r != 0 {
        return Err(call_err(format!("DPDK port {port}: rte_eth_stats_get"), r));
    }
    Ok(st)
}

/// [`Port::flow_control`](crate::Port::flow_control) of DPDK port `port` (`name` for
/// messages): `rte_eth_dev_flow_ctrl_get`/`_set`, full PAUSE or none.
pub(super) fn flow_control(port: u16, name: &str, want: Option<bool>) -> Result<Option<crate::Pause>> {
    const NONE: c_int = 0;
    const FULL: c_int = 3;
    let get = || {
        let mut mode: c_int = -1;
        // SAFETY: a query on a valid port; mode is a writable int.
        let r = unsafe { ffi::xlat_flow_ctrl_get(port, &mut mode) };
        match r {
            0 => Ok(Some(mode)),
            r if r == -libc::ENOTSUP || r == -libc::ENOSYS => Ok(None),
            r => Err(call_err(format!("{name}: rte_eth_dev_flow_ctrl_get"), r)),
        }
    };
    let Some(now) = get()? else {
        return crate::no_flow_control(name, want);
    };
    if let Some(on) = want {
        let mode = if on { FULL } else { NONE };
        if now != mode {
            // SAFETY: a valid port; the shim reads its settings first and changes the mode.
            let r = unsafe { ffi::xlat_flow_ctrl_set(port, mode) };
            if r != 0 {
                let what = format!(
                    "{name}: Ethernet flow control {} (tester.flow_control) refused by its driver: rte_eth_dev_flow_ctrl_set",
                    if on { "on" } else { "off" }
                );
                return Err(call_err(what, r));
            }
        }
    }
    // RX_PAUSE (1): it honours PAUSE frames; TX_PAUSE (2): it sends them; FULL both.
    Ok(get()?.map(|m| crate::Pause {
        rx: m & 1 != 0,
        tx: m & 2 != 0,
    }))
}

/// True when the link of port `port` is up.
pub(super) fn link_up(port: u16) -> bool {
    // SAFETY: a plain query on a valid port.
    unsafe { ffi::xlat_link_up(port) == 1 }
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
        let n = mempool_size(1, 1, 1024, 1024, 256, 2);
        assert_eq!(n, 8191);
        assert!(n >= 1024 + 2048 + 160 + 6 * 384);
        assert_eq!(mempool_size(1, 1, 512, 512, 0, 1), 2047);
        // Every receive queue's ring is counted.
        assert_eq!(mempool_size(2, 1, 512, 512, 0, 1), 4095);
        assert_eq!(mempool_size(8, 1, 512, 512, 0, 1), 8191);
        // Two queue sets: two receive rings and four transmit rings.
        assert_eq!(mempool_size(2, 2, 512, 512, 0, 1), 4095);
        assert!(mempool_size(2, 2, 1024, 1024, 256, 2) > mempool_size(2, 1, 1024, 1024, 256, 2));
    }
}
