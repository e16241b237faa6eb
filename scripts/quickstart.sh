#!/usr/bin/env bash
# Set everything up and run a real measurement against a lab DUT (the Linux kernel forwarding
# IPv4 in a network namespace), then take the lab down again.
set -euo pipefail
cd "$(dirname "$0")/.."
# What running xlatperf needs (not the suite's browser, Slurm, packaging tools or fuzzer).
./scripts/setup.sh --runtime
X=target/release/xlatperf
if $X demo --help >/dev/null 2>&1; then
    exec $X demo
fi
trap '$X lab down >/dev/null 2>&1 || true' EXIT
conf=$($X lab up router4 --replace | tail -n 1)
echo "== one bidirectional trial through the router4 DUT: 20000 frames/s for 5 s"
$X trial -c "$conf" --rate 20000 --duration 5 --timeout 500
