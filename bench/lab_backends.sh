#!/usr/bin/env bash
# Lab router4's bidirectional throughput with each tester backend and queue count (afpacket and
# afxdp, 1 and 2 queues per port): the campaign bench/plans/lab_backends.toml (what it
# measures is said there), then its summaries as a table: per configuration the throughput
# (frames/s per direction), the rate at which the tester's own sending or dropping bounded the
# search if it did (tester_bound_fps), and the bound (dut, tester, dut_or_tester).
#
# Usage: bench/lab_backends.sh    Environment: X=path OUT=dir (its results; emptied first)
# Needs root and the lab tools; the campaign runs under the lab lock and takes the lab down.
set -euo pipefail
cd "$(dirname "$0")/.."
X=${X:-target/release/xlatperf}
OUT=${OUT:-/tmp/xlat-lab-backends}
[ -x "$X" ] || cargo build --release -q
rm -rf "$OUT"
"$X" campaign bench/plans/lab_backends.toml --dir "$OUT" >&2
"$X" report "$OUT" --table | awk -F'\t' 'NR == 1 || $5 == "throughput_fps" || $5 == "tester_bound_fps"'
