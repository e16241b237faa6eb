#!/usr/bin/env bash
# The stateless IPv4aaS DUTs beside router4 on the same host, against the number of subscribers
# (lw4o6, mape, mapt with 1, 1,000 and 10,000 lwB4s or CEs; router4 as the yardstick): the
# campaign bench/plans/ipv4aas.toml (what it measures is said there), then its summaries as a
# table: per DUT and number of subscribers the median, minimum and maximum over the
# repetitions of the throughput (frames/s per direction) and of the DUT's CPU busy share in the
# trial at the figure, and the bounds the searches reported (dut, tester, dut_or_tester). The
# campaign runs test by test (each lab up once), under the lab lock, and takes the lab down.
#
# Usage: bench/ipv4aas.sh    Environment: X=path OUT=dir (its results; emptied first)
# Needs root and the lab tools.
set -euo pipefail
cd "$(dirname "$0")/.."
X=${X:-target/release/xlatperf}
OUT=${OUT:-/tmp/xlat-ipv4aas}
[ -x "$X" ] || cargo build --release -q
rm -rf "$OUT"
"$X" campaign bench/plans/ipv4aas.toml --dir "$OUT" >&2
"$X" report "$OUT" --table | awk -F'\t' 'NR == 1 || $5 == "throughput_fps" || $5 == "dut_busy_pct"'
