//! Hand-written declarations of the DPDK 22.11 functions and of the shim (`csrc/shim.c`) that
//! this backend calls. DPDK's structs stay opaque: the shim reads and writes them. (The one
//! exception is the sender's own dynamic field of each mbuf, at the offset the shim registered
//! and handed out: see `xlat_pool_prepare`.)

use std::ffi::{c_char, c_int, c_uint, c_void};

/// `struct rte_mbuf`, opaque.
#[repr(C)]
pub struct RteMbuf {
    _opaque: [u8; 0],
}

/// `struct rte_mempool`, opaque.
#[repr(C)]
pub struct RteMempool {
    _opaque: [u8; 0],
}

/// `SOCKET_ID_ANY`.
pub const SOCKET_ID_ANY: c_int = -1;
/// `RTE_MAX_ETHPORTS` of Debian's build.
pub const MAX_ETHPORTS: u16 = 32;
/// `RTE_ETH_NAME_MAX_LEN`.
pub const ETH_NAME_MAX_LEN: usize = 64;
/// `RTE_PKTMBUF_HEADROOM`.
pub const PKTMBUF_HEADROOM: usize = 128;
/// `RTE_MEMPOOL_CACHE_MAX_SIZE`.
pub const MEMPOOL_CACHE_MAX_SIZE: u32 = 512;

/// `struct xlat_port_info` of the shim.
#[repr(C)]
pub struct PortInfo {
    pub max_rx_queues: u16,
    pub max_tx_queues: u16,
    pub max_rx_pktlen: u32,
    pub driver: [c_char; 64],
    pub rx_timestamp: u8,
    pub timesync: u8,
}

/// `struct xlat_port_stats` of the shim.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PortStatsRaw {
    pub ipackets: u64,
    pub opackets: u64,
    pub imissed: u64,
    pub ierrors: u64,
    pub oerrors: u64,
    pub rx_nombuf: u64,
    pub obytes: u64,
}

extern "C" {
    // EAL
    pub fn rte_eal_init(argc: c_int, argv: *mut *mut c_char) -> c_int;
    pub fn rte_strerror(errnum: c_int) -> *const c_char;
    pub fn rte_lcore_count() -> c_uint;
    pub fn rte_get_tsc_hz() -> u64;

    // ethdev
    pub fn rte_eth_dev_get_port_by_name(name: *const c_char, port_id: *mut u16) -> c_int;
    pub fn rte_eth_dev_get_name_by_port(port_id: u16, name: *mut c_char) -> c_int;
    pub fn rte_eth_dev_is_valid_port(port_id: u16) -> c_int;
    pub fn rte_eth_dev_socket_id(port_id: u16) -> c_int;
    pub fn rte_eth_dev_adjust_nb_rx_tx_desc(port_id: u16, nb_rx_desc: *mut u16, nb_tx_desc: *mut u16) -> c_int;
    pub fn rte_eth_rx_queue_setup(
        port_id: u16,
        rx_queue_id: u16,
        nb_rx_desc: u16,
        socket_id: c_uint,
        rx_conf: *const c_void,
        mb_pool: *mut RteMempool,
    ) -> c_int;
    pub fn rte_eth_dev_start(port_id: u16) -> c_int;
    pub fn rte_eth_dev_stop(port_id: u16) -> c_int;
    pub fn rte_eth_dev_close(port_id: u16) -> c_int;
    pub fn rte_eth_promiscuous_enable(port_id: u16) -> c_int;
    /// `mac_addr` is a `struct rte_ether_addr`: 6 bytes.
    pub fn rte_eth_macaddr_get(port_id: u16, mac_addr: *mut [u8; 6]) -> c_int;

    // mbuf and mempool
    pub fn rte_pktmbuf_pool_create(
        name: *const c_char,
        n: c_uint,
        cache_size: c_uint,
        priv_size: u16,
        data_room_size: u16,
        socket_id: c_int,
    ) -> *mut RteMempool;
    pub fn rte_mempool_free(mp: *mut RteMempool);
    pub fn rte_pktmbuf_free_bulk(mbufs: *mut *mut RteMbuf, count: c_uint);

    // the shim
    pub fn xlat_pool_prepare(
        pool: *mut RteMempool,
        meta_off: *mut std::os::raw::c_long,
        line_off: *mut std::os::raw::c_long,
        line: *mut std::os::raw::c_long,
    ) -> std::os::raw::c_long;
    pub fn xlat_tx_get(pool: *mut RteMempool, pkts: *mut *mut RteMbuf, n: c_uint) -> c_int;
    pub fn xlat_tx_reset(m: *mut RteMbuf, len: u16, lead: u16);
    pub fn xlat_tx_send(port: u16, queue: u16, pkts: *mut *mut RteMbuf, n: u16, total: u16) -> u16;
    pub fn xlat_rx(port: u16, queue: u16, pkts: *mut *mut RteMbuf, data: *mut *const u8, lens: *mut u16, n: u16) -> u16;
    pub fn xlat_rdtsc() -> u64;
    pub fn xlat_errno() -> c_int;
    pub fn xlat_thread_attach() -> c_int;
    pub fn xlat_thread_detach();
    pub fn xlat_port_info(port: u16, out: *mut PortInfo) -> c_int;
    pub fn xlat_port_configure(port: u16, nb_rx: u16, nb_tx: u16, mtu: u32, rss: c_int) -> c_int;
    pub fn xlat_tx_queue_setup(port: u16, queue: u16, nb_desc: u16, socket: c_uint) -> c_int;
    pub fn xlat_link_up(port: u16) -> c_int;
    pub fn xlat_flow_ctrl_get(port: u16, mode: *mut c_int) -> c_int;
    pub fn xlat_flow_ctrl_set(port: u16, mode: c_int) -> c_int;
    pub fn xlat_ring_pair(a: *const c_char, b: *const c_char, ring_size: c_uint, queues: c_uint) -> c_int;
    pub fn xlat_mempool_in_use(pool: *const RteMempool) -> c_uint;
    pub fn xlat_port_stats(port: u16, out: *mut PortStatsRaw) -> c_int;
}
