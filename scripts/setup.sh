#!/usr/bin/env bash
# Install what xlatperf needs on Debian 12 (as root) and build it in release mode.
# `scripts/setup.sh --runtime` (the quickstart's): what running xlatperf needs: the lab's DUTs
# (iproute2, nftables, tayga, conntrack), DPDK 22.11 for the dpdk backend, a C toolchain and
# Rust. Without it (the test command's) also what only the suite needs: tshark for the tests'
# independent frame checks, the Debian package's tooling, chromium, Slurm and munge, AFL++ and
# the Python environments. Reserves hugepages for the dpdk backend (below);
# `scripts/setup.sh --release-hugepages` gives them back.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" != 0 ]; then
    echo "Error: run as root (it installs Debian packages; the lab needs network namespaces)" >&2
    exit 1
fi

# Hugepages, as a DPDK testbed runs: at least XLAT_HUGEPAGES 2 MiB pages (default 512: 1 GiB,
# what the suite's DPDK tests need side by side) reserved, and hugetlbfs mounted on
# /dev/hugepages. What was there before is saved once in $HUGE_SAVED (the page count, and
# whether the mount was ours); --release-hugepages puts it back. XLAT_HUGEPAGES=0 reserves none.
HUGE_SAVED=/var/lib/xlatperf/hugepages.saved
HUGE_NR=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
hugetlbfs_mounted() { awk '$2 == "/dev/hugepages" && $3 == "hugetlbfs" { found = 1 } END { exit !found }' /proc/mounts; }
if [ "${1:-}" = --release-hugepages ]; then
    if [ ! -f "$HUGE_SAVED" ]; then
        echo "hugepages: nothing to give back ($HUGE_SAVED does not exist: setup.sh changed nothing)"
        exit 0
    fi
    read -r nr ours < "$HUGE_SAVED"
    if [ "$ours" = 1 ] && hugetlbfs_mounted; then
        umount /dev/hugepages
    fi
    echo "$nr" > "$HUGE_NR"
    rm -f "$HUGE_SAVED"
    echo "hugepages: back to $(cat "$HUGE_NR") pages of 2 MiB$([ "$ours" = 1 ] && echo ", /dev/hugepages unmounted")"
    exit 0
fi

suite=1
if [ "${1:-}" = --runtime ]; then
    suite=0
fi

# installed PKG: whether dpkg has PKG installed.
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
# apt's package lists, fetched at most once per run.
updated=0
update_once() { [ "$updated" = 1 ] || apt-get update -qq; updated=1; }

# What running xlatperf needs.
PKGS=(build-essential pkg-config curl ca-certificates iproute2 nftables tayga conntrack libdpdk-dev dpdk dpdk-dev ethtool procps)
# What only the suite needs: tshark's independent checks, Python for the reference and browser
# tests, and the Debian package (scripts/package.sh) and its test: debhelper, lintian, and the
# shells whose completions the package installs (bash-completion's loader, zsh, fish) with man-db.
if [ "$suite" = 1 ]; then
    PKGS+=(tshark python3 python3-venv debhelper lintian man-db bash-completion zsh fish)
fi
missing=()
for p in "${PKGS[@]}"; do
    installed "$p" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "== installing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    update_once
    # tshark asks whether non-root users may capture: answer no, non-interactively.
    echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
    apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if [ "$suite" = 1 ]; then
    # The report's browser test: headless chromium alone, without the desktop it recommends.
    if ! installed chromium; then
        echo "== installing Debian packages: chromium (headless, for the report's browser test)"
        export DEBIAN_FRONTEND=noninteractive
        update_once
        apt-get install -y -qq --no-install-recommends chromium >/dev/null
    fi

    # Slurm and munge for spreading a campaign over testbeds (examples/campaigns/slurm/) and its test,
    # which runs a Slurm of its own (scripts/slurm-local.sh): installed without starting their
    # system services (a policy-rc.d that refuses every start, only while dpkg runs, only if the
    # machine has none).
    SLURM_PKGS=(slurmctld slurmd slurm-client munge)
    smissing=()
    for p in "${SLURM_PKGS[@]}"; do
        installed "$p" || smissing+=("$p")
    done
    if [ ${#smissing[@]} -gt 0 ]; then
        echo "== installing Debian packages: ${smissing[*]} (their services not started)"
        export DEBIAN_FRONTEND=noninteractive
        policy=/usr/sbin/policy-rc.d made_policy=0
        if [ ! -e "$policy" ]; then
            made_policy=1
            printf '#!/bin/sh\n# scripts/setup.sh (xlatperf), while it installs Slurm: start no service\nexit 101\n' > "$policy"
            chmod 755 "$policy"
            trap 'rm -f "$policy"' EXIT
        fi
        update_once
        apt-get install -y -qq --no-install-recommends "${smissing[@]}" >/dev/null
        if [ "$made_policy" = 1 ]; then rm -f "$policy"; trap - EXIT; fi
    fi
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
if [ "$suite" = 1 ]; then
    # AFL++ through afl.rs for fuzz/run.sh (its install builds AFL++ for this rustc), at one version.
    AFL_VERSION=0.18.2
    if ! cargo afl --version 2>/dev/null | grep -q "$AFL_VERSION"; then
        echo "== cargo-afl $AFL_VERSION (fuzz/run.sh)"
        cargo install -q --locked --force cargo-afl --version "$AFL_VERSION"
    fi

    # A Python virtual environment in .venv/NAME holding one PyPI package at one pinned version
    # (made again when the version differs): venv NAME PACKAGE VERSION WHAT.
    venv() {
        local dir=".venv/$1" package=$2 version=$3
        if ! "$dir/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('$package') != '$version')" 2>/dev/null; then
            echo "== $package $version ($4) in $dir"
            rm -rf "$dir"
            /usr/bin/python3 -m venv "$dir"
            "$dir/bin/pip" install -q --disable-pip-version-check "$package==$version"
        fi
    }
    # The MLRsearch authors' implementation, which crates/procedures/tests/mlrsearch_reference.rs
    # compares xlatperf's RFC 9971 search against (no dependencies).
    venv mlrsearch MLRsearch 1.2.1 "the RFC 9971 reference"
    # The report's browser test (crates/cli/tests/lab_campaign.rs) drives Debian's chromium over
    # the DevTools protocol with websocket-client (no dependencies).
    venv report websocket-client 1.8.0 "the report's browser test"
fi

want=${XLAT_HUGEPAGES:-512}
if [ "$want" -gt 0 ]; then
    have=$(cat "$HUGE_NR")
    ours=0
    hugetlbfs_mounted || ours=1
    if [ "$have" -lt "$want" ] || [ "$ours" = 1 ]; then
        mkdir -p "$(dirname "$HUGE_SAVED")"
        # The state before the first change only: a second run must not save its own.
        [ -f "$HUGE_SAVED" ] || echo "$have $ours" > "$HUGE_SAVED"
    fi
    if [ "$have" -lt "$want" ]; then
        echo "$want" > "$HUGE_NR"
        got=$(cat "$HUGE_NR")
        echo "== hugepages: $have -> $got pages of 2 MiB (vm.nr_hugepages; undo: scripts/setup.sh --release-hugepages)"
        [ "$got" -ge "$want" ] || echo "Warning: the kernel reserved only $got of $want hugepages (memory too fragmented?); DPDK runs that need more will say so" >&2
    fi
    if [ "$ours" = 1 ]; then
        mkdir -p /dev/hugepages
        mount -t hugetlbfs nodev /dev/hugepages
        echo "== hugepages: hugetlbfs mounted on /dev/hugepages (undo: scripts/setup.sh --release-hugepages)"
    fi
fi

# scripts/test.sh sets XLAT_SETUP_BUILD=0: its `cargo test --release` builds every crate and
# target/release/xlatperf itself (with other features and profile, so nothing of this build
# would be reused: building here too cost CI minutes).
if [ "${XLAT_SETUP_BUILD:-1}" != 0 ]; then
    echo "== building xlatperf (release, with the dpdk backend)"
    cargo build --release --locked --features dpdk -p xlatperf
    test -x target/release/xlatperf
    echo "== built target/release/xlatperf"
fi
