//! The receive drops of an interface's own counters (`/proc/net/dev`'s "drop" column: the
//! kernel's `rx_dropped` + `rx_missed_errors`): frames the tester's host took from the wire, or
//! from a veth peer, and dropped before any socket saw them, such as a per-CPU backlog that was
//! full (`netdev_max_backlog`) or a NIC ring that overflowed. They are the tester's loss, never
//! the DUT's, and a socket's own statistics (`tp_drops`, XDP statistics) do not count them.
//!
//! The file ([`NET_DEV`]) is opened by the caller inside the port's network namespace, and keeps
//! reading that namespace's counters (a `/proc/net` file is bound to the namespace it was
//! opened in).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

use crate::{IoError, Result};

/// The interface counters of the calling thread's network namespace.
pub const NET_DEV: &str = "/proc/thread-self/net/dev";

/// The receive drops of one interface, read as differences.
pub struct IfRxDrops {
    file: File,
    iface: String,
    seen: u64,
    buf: String,
}

impl IfRxDrops {
    /// Open [`NET_DEV`] (in the namespace whose counters are wanted).
    pub fn open_net_dev() -> Result<File> {
        File::open(NET_DEV).map_err(|e| IoError::Os {
            what: format!("open {NET_DEV}"),
            os: e,
        })
    }

    /// The counters of `iface` in `file` ([`IfRxDrops::open_net_dev`]'s).
    pub fn new(file: File, iface: &str) -> Result<IfRxDrops> {
        let mut d = IfRxDrops {
            file,
            iface: iface.to_string(),
            seen: 0,
            buf: String::new(),
        };
        d.seen = d.total()?;
        Ok(d)
    }

    /// The interface's receive drops since it was opened or last asked.
    pub fn since_last(&mut self) -> Result<u64> {
        let now = self.total()?;
        let d = now.saturating_sub(self.seen);
        self.seen = now;
        Ok(d)
    }

    fn total(&mut self) -> Result<u64> {
        self.buf.clear();
        let read = self
            .file
            .seek(SeekFrom::Start(0))
            .and_then(|_| self.file.read_to_string(&mut self.buf));
        read.map_err(|e| IoError::Os {
            what: "read /proc/net/dev".into(),
            os: e,
        })?;
        rx_drops(&self.buf, &self.iface)
            .ok_or_else(|| IoError::Backend(format!("{}: not in /proc/net/dev (was the interface removed?)", self.iface)))
    }
}

/// The "drop" column of `iface`'s receive half in the text of `/proc/net/dev`: each line is
/// `name: bytes packets errs drop fifo frame compressed multicast` and the transmit half.
fn rx_drops(text: &str, iface: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let (name, counters) = line.split_once(':')?;
        if name.trim() != iface {
            return None;
        }
        counters.split_whitespace().nth(3)?.parse().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEV: &str = "Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:    1200      12    0    0    0     0          0         0     1200      12    0    0    0     0       0          0
xlat-tl: 9876543  123456    0  417    0     0          0         0  5555555   65432    0   99    0     0       0          0
";

    #[test]
    fn the_receive_drop_column_of_the_named_interface() {
        assert_eq!(rx_drops(DEV, "xlat-tl"), Some(417));
        assert_eq!(rx_drops(DEV, "lo"), Some(0));
        // Not a prefix match, and no interface: none.
        assert_eq!(rx_drops(DEV, "xlat-t"), None);
        assert_eq!(rx_drops(DEV, "xlat-tr"), None);
    }

    #[test]
    fn counts_from_the_namespace_it_was_opened_in() {
        // Loopback exists in every namespace; its drops are a number, read as differences.
        let mut d = IfRxDrops::new(IfRxDrops::open_net_dev().unwrap(), "lo").unwrap();
        assert_eq!(d.since_last().unwrap(), 0);
        assert!(IfRxDrops::new(IfRxDrops::open_net_dev().unwrap(), "xlat-no-such-if").is_err());
    }
}
