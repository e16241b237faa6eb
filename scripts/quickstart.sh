#!/usr/bin/env bash
# Set everything up and run a real measurement: a lab DUT (the Linux kernel forwarding IPv4 in
# a network namespace) and a throughput search against it, then take the lab down.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
X=target/release/xlatperf
trap '$X lab down >/dev/null 2>&1 || true' EXIT
$X demo
