#!/usr/bin/env bash
# Install what xlatperf needs on Debian 12 (as root) and build it in release mode.
# Debian packages: the lab's DUTs (iproute2, nftables, tayga, conntrack), tshark for the tests'
# independent frame checks, DPDK 22.11 for the dpdk backend, and a C toolchain.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" != 0 ]; then
    echo "Error: run as root (it installs Debian packages; the lab needs network namespaces)" >&2
    exit 1
fi

PKGS=(build-essential pkg-config curl ca-certificates iproute2 nftables tayga conntrack tshark libdpdk-dev dpdk dpdk-dev ethtool procps)
missing=()
for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "== installing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # tshark asks whether non-root users may capture: answer no, non-interactively.
    echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
    apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null 2>&1; then
    if [ -x "$HOME/.cargo/bin/cargo" ]; then
        export PATH="$HOME/.cargo/bin:$PATH"
    else
        echo "== installing Rust with rustup (Debian 12's rustc is too old)"
        curl -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal --component rustfmt,clippy
        export PATH="$HOME/.cargo/bin:$PATH"
    fi
fi

echo "== building xlatperf (release, with the dpdk backend)"
cargo build --release --locked --features dpdk -p xlatperf
test -x target/release/xlatperf
echo "== built target/release/xlatperf"
