//! Hugepages as DPDK needs them: what the kernel has reserved (`/proc/meminfo`), whether EAL's
//! arguments ask for them (everything but `--no-huge`), and what a port's mempool takes, so that
//! a tester without enough says how many it needs and how to get them instead of EAL's "Cannot
//! init memory".

use crate::{IoError, Result};

/// A backend error with message `msg` (as `eal`'s: this module is below it).
fn backend(msg: impl Into<String>) -> IoError {
    IoError::Backend(msg.into())
}

/// The hugepages of the default size, from `/proc/meminfo`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HugePages {
    /// Pages reserved (`HugePages_Total`).
    pub total: u64,
    /// Pages not in use (`HugePages_Free`).
    pub free: u64,
    /// Bytes per page (`Hugepagesize`).
    pub page_bytes: u64,
}

impl HugePages {
    /// The counts in `meminfo` (the text of `/proc/meminfo`); `None` without them.
    pub fn parse(meminfo: &str) -> Option<HugePages> {
        let field = |name: &str| {
            meminfo.lines().find_map(|l| {
                let rest = l.strip_prefix(name)?.strip_prefix(':')?;
                rest.split_whitespace().next()?.parse::<u64>().ok()
            })
        };
        Some(HugePages {
            total: field("HugePages_Total")?,
            free: field("HugePages_Free")?,
            page_bytes: field("Hugepagesize")?.checked_mul(1024)?,
        })
    }

    /// This host's, or `None` when the kernel says nothing of hugepages.
    pub fn of_host() -> Option<HugePages> {
        HugePages::parse(&std::fs::read_to_string("/proc/meminfo").ok()?)
    }

    /// Pages needed for `bytes`.
    pub fn pages_for(&self, bytes: u64) -> u64 {
        bytes.div_ceil(self.page_bytes.max(1))
    }

    fn summary(&self) -> String {
        format!(
            "{} of {} hugepages of {} kB free (/proc/meminfo)",
            self.free,
            self.total,
            self.page_bytes / 1024
        )
    }
}

/// What scripts/setup.sh reserves: what the suite's DPDK runs need side by side.
const SETUP_PAGES: u64 = 512;

/// How to reserve `pages` pages in all (at least what scripts/setup.sh reserves), as the error
/// says it.
fn how(pages: u64) -> String {
    let pages = pages.max(SETUP_PAGES);
    format!(
        "reserve them as root (scripts/setup.sh does: `echo {pages} > /proc/sys/vm/nr_hugepages`), or run without hugepages \
         by giving \"--no-huge\" in tester.eal_args"
    )
}

/// True when EAL's `args` use hugepages (everything but `--no-huge`).
pub fn wanted(args: &[String]) -> bool {
    !args.iter().any(|a| a == "--no-huge")
}

/// The memory EAL's `-m MB` / `--socket-mem` asks for up front, bytes; `None` when neither is
/// given (EAL then takes hugepages as it needs them).
pub fn asked_bytes(args: &[String]) -> Option<u64> {
    let value = |opt: &str| {
        args.iter().enumerate().find_map(|(i, a)| {
            a.strip_prefix(&format!("{opt}="))
                .map(str::to_string)
                .or_else(|| (a == opt).then(|| args.get(i + 1).cloned()).flatten())
        })
    };
    let mb: u64 = match (value("-m"), value("--socket-mem")) {
        (Some(m), _) => m.trim().parse().ok()?,
        (None, Some(per_socket)) => per_socket.split(',').filter_map(|s| s.trim().parse::<u64>().ok()).sum(),
        (None, None) => return None,
    };
    Some(mb * 1024 * 1024)
}

/// Before EAL starts with `args`: with hugepages wanted, `pages` (this host's) must have one
/// free at all, and the pages `-m` asks for; the error says how many and how to get them.
pub fn check_before_eal(args: &[String], pages: Option<HugePages>) -> Result<()> {
    if !wanted(args) {
        return Ok(());
    }
    let Some(p) = pages else {
        return Err(backend("DPDK needs hugepages and this kernel reports none (no HugePages_Total in /proc/meminfo); give \"--no-huge\" in tester.eal_args"));
    };
    let need = asked_bytes(args).map_or(1, |b| p.pages_for(b));
    if p.free < need {
        let asked = asked_bytes(args).map_or(String::new(), |b| format!(" for EAL's {} MB (-m)", b / (1024 * 1024)));
        return Err(backend(format!(
            "DPDK needs {need} free hugepage{}{asked} and this host has {}: {}",
            if need == 1 { "" } else { "s" },
            p.summary(),
            how(p.total + need - p.free)
        )));
    }
    Ok(())
}

/// Bytes a mempool of `mbufs` mbufs of `data_room` bytes takes: each mbuf its header (two cache
/// lines), its data room and the mempool's per-object header and trailer (a cache line), the
/// whole rounded up to a page by the caller.
pub fn pool_bytes(mbufs: u32, data_room: u16) -> u64 {
    u64::from(mbufs) * (u64::from(data_room) + 128 + 64)
}

/// The error of a mempool that could not be created: with hugepages, how many it needed and how
/// many were free.
pub fn pool_error(what: String, mbufs: u32, data_room: u16, hugepages: bool, pages: Option<HugePages>) -> IoError {
    match pages.filter(|_| hugepages) {
        Some(p) => {
            let need = p.pages_for(pool_bytes(mbufs, data_room));
            backend(format!(
                "{what}: it needs about {need} hugepages and this host has {} (other processes' DPDK memory counts too): {}",
                p.summary(),
                how(p.total + need)
            ))
        }
        None => backend(format!("{what} (is EAL's -m large enough?)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MEMINFO: &str = "MemTotal:       24570000 kB\nHugePages_Total:     512\nHugePages_Free:      500\n\
                           HugePages_Rsvd:        0\nHugePages_Surp:        0\nHugepagesize:       2048 kB\n";

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn meminfo_is_read() {
        let p = HugePages::parse(MEMINFO).unwrap();
        assert_eq!(
            p,
            HugePages {
                total: 512,
                free: 500,
                page_bytes: 2 << 20
            }
        );
        assert_eq!(HugePages::parse("MemTotal: 1 kB\n"), None);
        assert_eq!(p.pages_for(1), 1);
        assert_eq!(p.pages_for(4 << 20), 2);
        assert_eq!(p.pages_for((4 << 20) + 1), 3);
    }

    #[test]
    fn eal_memory_options_are_read() {
        assert_eq!(asked_bytes(&args(&["-m", "1024", "-l", "0"])), Some(1 << 30));
        assert_eq!(asked_bytes(&args(&["-m=256"])), Some(256 << 20));
        assert_eq!(asked_bytes(&args(&["--socket-mem", "512,512"])), Some(1 << 30));
        assert_eq!(asked_bytes(&args(&["-l", "0"])), None);
        assert!(wanted(&args(&["-m", "64"])) && !wanted(&args(&["--no-huge", "-m", "64"])));
    }

    #[test]
    fn too_few_hugepages_are_an_error_that_says_how_many() {
        let p = HugePages::parse(MEMINFO).unwrap();
        assert!(check_before_eal(&args(&["-l", "0"]), Some(p)).is_ok());
        assert!(check_before_eal(&args(&["-m", "1000"]), Some(p)).is_ok());
        assert!(check_before_eal(&args(&["--no-huge"]), None).is_ok());
        let e = check_before_eal(&args(&["-m", "2048"]), Some(p)).unwrap_err().to_string();
        assert!(
            e.contains("DPDK needs 1024 free hugepages for EAL's 2048 MB (-m) and this host has 500 of 512 hugepages of 2048 kB free")
                && e.contains("echo 1036 > /proc/sys/vm/nr_hugepages")
                && e.contains("--no-huge"),
            "{e}"
        );
        let none = HugePages { free: 0, total: 0, ..p };
        let e = check_before_eal(&args(&["-l", "0"]), Some(none)).unwrap_err().to_string();
        assert!(e.contains("DPDK needs 1 free hugepage and this host has 0 of 0"), "{e}");
        assert!(e.contains("echo 512 > /proc/sys/vm/nr_hugepages"), "{e}");
        assert!(check_before_eal(&args(&["-l", "0"]), None).is_err());
    }

    #[test]
    fn a_pool_that_does_not_fit_says_what_it_needed() {
        let p = HugePages::parse(MEMINFO).unwrap();
        // 8,191 mbufs of 2,176 bytes: 19.4 MB, 10 pages of 2 MiB.
        let e = pool_error("creating a mempool".into(), 8191, 2176, true, Some(p)).to_string();
        assert!(e.contains("it needs about 10 hugepages and this host has 500 of 512"), "{e}");
        let e = pool_error("creating a mempool".into(), 8191, 2176, false, Some(p)).to_string();
        assert!(e.ends_with("(is EAL's -m large enough?)"), "{e}");
    }
}
