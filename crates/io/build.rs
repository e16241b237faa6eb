//! Build script of xlat-io. Without the `dpdk` feature it does nothing (and needs no DPDK).
//!
//! With `dpdk`: finds libdpdk (Debian 12: `apt-get install libdpdk-dev`, DPDK 22.11) with
//! pkg-config, compiles `csrc/shim.c` (the wrappers of DPDK's static inline functions) with the
//! exact cflags pkg-config gives (they carry `-include rte_config.h` and `-march=corei7`, the
//! instruction-set baseline Debian built DPDK for; the headers need at least SSE4.2), and links the
//! DPDK libraries dynamically. `librte_net_ring` is linked explicitly for `dpdk::ring_pair`; the
//! other drivers are loaded by EAL from its plugin directory at run time.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "dpdk")]
    dpdk::build();
}

#[cfg(feature = "dpdk")]
mod dpdk {
    use std::process::Command;

    const MIN_VERSION: &str = "22.11";

    fn fail(msg: &str) -> ! {
        // Cargo shows a failed build script's stderr; a panic would add a backtrace.
        eprintln!("error: {msg}");
        std::process::exit(1);
    }

    pub fn build() {
        println!("cargo:rerun-if-changed=csrc/shim.c");
        println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
        println!("cargo:rerun-if-env-changed=PKG_CONFIG");
        // Probe without emitting link lines yet: the shim must come first on the link line (rustc
        // links with --as-needed, so a library is kept only for objects before it).
        let lib = match pkg_config::Config::new()
            .atleast_version(MIN_VERSION)
            .cargo_metadata(false)
            .probe("libdpdk")
        {
            Ok(lib) => lib,
            Err(e) => fail(&format!(
                "the `dpdk` feature of xlat-io needs DPDK >= {MIN_VERSION} found by pkg-config as `libdpdk` \
                 (Debian 12: `apt-get install libdpdk-dev pkg-config`): {e}"
            )),
        };
        // pkg-config's cflags as they are: the pkg-config crate keeps only -I and -D, but DPDK's
        // headers also need `-include rte_config.h` and the -march the library was built for.
        let pkg_config = std::env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".into());
        let out = Command::new(&pkg_config).args(["--cflags", "libdpdk"]).output();
        let cflags = match out {
            Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
            Ok(o) => fail(&format!(
                "`{pkg_config} --cflags libdpdk` failed: {}",
                String::from_utf8_lossy(&o.stderr)
            )),
            Err(e) => fail(&format!("cannot run `{pkg_config}`: {e}")),
        };
        let mut build = cc::Build::new();
        build.file("csrc/shim.c").opt_level(3).warnings(true).extra_warnings(true);
        let mut flags = cflags.split_whitespace();
        while let Some(f) = flags.next() {
            if f == "-include" {
                if let Some(h) = flags.next() {
                    build.flag("-include").flag(h);
                }
            } else if let Some(dir) = f.strip_prefix("-I") {
                build.include(dir);
            } else {
                build.flag(f);
            }
        }
        // Unused-parameter warnings come from DPDK's own inline functions.
        build.flag_if_supported("-Wno-unused-parameter");
        build.compile("xlat_dpdk_shim");
        for dir in &lib.link_paths {
            println!("cargo:rustc-link-search=native={}", dir.display());
        }
        for l in &lib.libs {
            println!("cargo:rustc-link-lib=dylib={l}");
        }
        // The ring driver's rte_eth_from_rings() (for dpdk::ring_pair); a plugin like the others,
        // but with a public library name, so it can be linked.
        println!("cargo:rustc-link-lib=dylib=rte_net_ring");
    }
}
