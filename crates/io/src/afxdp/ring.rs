//! The rings shared with the kernel and the memory mappings behind them.

use super::abi::{XdpRingOffset, FRAME_SIZE, XDP_RING_NEED_WAKEUP};
use crate::{IoError, Result};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU32, Ordering};

/// Entries a producer may still write: the ring's size less what the consumer has not taken.
#[inline]
pub fn ring_free(size: u32, producer: u32, consumer: u32) -> u32 {
    size.wrapping_sub(producer.wrapping_sub(consumer))
}

/// Entries a consumer may read.
#[inline]
pub fn ring_ready(producer: u32, consumer: u32) -> u32 {
    producer.wrapping_sub(consumer)
}

/// The start of the UMEM frame holding `addr` (an address the kernel handed back may point
/// past the frame's start, by the headroom).
#[inline]
pub fn frame_base(addr: u64) -> u64 {
    addr & !(FRAME_SIZE as u64 - 1)
}

/// A memory mapping, unmapped on drop.
pub(super) struct Mmap {
    pub(super) base: *mut u8,
    pub(super) len: usize,
}

// SAFETY: the mapping is plain memory; who touches which part is ruled by the rings.
unsafe impl Send for Mmap {}
unsafe impl Sync for Mmap {}

impl Drop for Mmap {
    fn drop(&mut self) {
        // SAFETY: base/len came from a successful mmap and are unmapped once.
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) };
    }
}

pub(super) fn mmap(len: usize, fd: RawFd, offset: libc::off_t, what: &str) -> Result<Mmap> {
    let (flags, fd) = if fd < 0 {
        (libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE, -1)
    } else {
        (libc::MAP_SHARED | libc::MAP_POPULATE, fd)
    };
    // SAFETY: a fresh mapping; the result is checked.
    let base = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, flags, fd, offset) };
    if base == libc::MAP_FAILED {
        return Err(IoError::last_os(format!("mmap {what}")));
    }
    Ok(Mmap {
        base: base as *mut u8,
        len,
    })
}

/// A ring shared with the kernel: producer and consumer indexes, flags, descriptors.
pub(super) struct Ring {
    pub(super) _map: Mmap,
    pub(super) producer: *const AtomicU32,
    pub(super) consumer: *const AtomicU32,
    pub(super) flags: *const AtomicU32,
    pub(super) descs: *mut u8,
    pub(super) size: u32,
    /// Our own index (the producer's for a producer ring, the consumer's for a consumer ring).
    pub(super) local: u32,
}

// SAFETY: one Ring is used by one thread at a time; the kernel's side goes through atomics.
unsafe impl Send for Ring {}

impl Ring {
    pub(super) fn map(fd: &OwnedFd, off: &XdpRingOffset, size: u32, desc_size: usize, pgoff: libc::off_t, what: &str) -> Result<Ring> {
        let len = off.desc as usize + size as usize * desc_size;
        let m = mmap(len, fd.as_raw_fd(), pgoff, what)?;
        let at = |o: u64| m.base.wrapping_add(o as usize);
        let r = Ring {
            producer: at(off.producer) as *const AtomicU32,
            consumer: at(off.consumer) as *const AtomicU32,
            flags: at(off.flags) as *const AtomicU32,
            descs: at(off.desc),
            size,
            local: 0,
            _map: m,
        };
        Ok(r)
    }

    #[inline]
    pub(super) fn producer(&self) -> &AtomicU32 {
        // SAFETY: the kernel's offsets point into the mapping, at 4-byte aligned u32s.
        unsafe { &*self.producer }
    }

    #[inline]
    pub(super) fn consumer(&self) -> &AtomicU32 {
        // SAFETY: as above.
        unsafe { &*self.consumer }
    }

    #[inline]
    pub(super) fn needs_wakeup(&self) -> bool {
        // SAFETY: as above.
        unsafe { &*self.flags }.load(Ordering::Relaxed) & XDP_RING_NEED_WAKEUP != 0
    }

    /// Descriptor slot of index `i` (any index: it wraps), of type T.
    #[inline]
    pub(super) fn slot<T>(&self, i: u32) -> *mut T {
        let k = (i & (self.size - 1)) as usize;
        // SAFETY: k < size and the mapping holds size descriptors of this type.
        unsafe { (self.descs as *mut T).add(k) }
    }

    // Producer side.
    #[inline]
    pub(super) fn free(&self) -> u32 {
        ring_free(self.size, self.local, self.consumer().load(Ordering::Acquire))
    }

    #[inline]
    pub(super) fn submit(&mut self, n: u32) {
        self.local = self.local.wrapping_add(n);
        self.producer().store(self.local, Ordering::Release);
    }

    // Consumer side.
    #[inline]
    pub(super) fn ready(&self) -> u32 {
        ring_ready(self.producer().load(Ordering::Acquire), self.local)
    }

    #[inline]
    pub(super) fn release(&mut self, n: u32) {
        self.local = self.local.wrapping_add(n);
        self.consumer().store(self.local, Ordering::Release);
    }
}
