//! Options of an AF_XDP port.

/// The most sockets (receive queues) an AF_XDP port opens.
pub const MAX_QUEUES: u32 = 64;

/// Options of an AF_XDP port.
#[derive(Debug, Clone)]
pub struct AfXdpOptions {
    /// The `ip netns` namespace the interface lives in; `None`: the current one.
    pub netns: Option<String>,
    /// Receive frames (a power of two: also the fill and RX ring sizes).
    pub rx_frames: u32,
    /// Transmit frames (a power of two: also the TX and completion ring sizes).
    pub tx_frames: u32,
    /// Receive in promiscuous mode (AF_XDP sees every frame the interface accepts: an
    /// AF_PACKET membership holds the interface promiscuous while the port is open).
    pub promisc: bool,
    /// Attach the program in generic (SKB) mode without trying driver mode first.
    pub generic: bool,
    /// Sockets, one per receive queue of the interface from queue 0 on, each with its own UMEM
    /// (see [`Port::open_queues`](crate::Port::open_queues)); the interface must have no more receive queues than this,
    /// or frames on the others would reach the kernel instead of the tester.
    pub queues: u32,
}

impl Default for AfXdpOptions {
    fn default() -> Self {
        AfXdpOptions {
            netns: None,
            rx_frames: 8192,
            tx_frames: 4096,
            promisc: false,
            generic: false,
            queues: 1,
        }
    }
}
