#!/usr/bin/env bash
# Multi-queue sender scaling (BENCHMARKS.md, issue 14): frames per second that xlatperf's
# sender puts into DPDK's net_null with one queue on one core against two queues on two cores
# (tester.queues = 2: one sender per queue set, the second on the next core), in one run,
# alternating, for the traffic modes of bench/modes.sh (default: fixed, ports - RFC 4814
# pseudorandom ports - and both - ports and addresses), IPv4 64-byte and IPv6 84-byte frames.
# Printed are the medians, one line per measurement:
#
#   <mode> <ip version> <1 queue frames/s> <2 queues frames/s> <2 queues / 1 queue>
#
# Usage: bench/queues.sh [MODES]    Environment: REPS=5 DURATION=5 CORE=0 XLATPERF=path
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${REPS:-5}
DURATION=${DURATION:-5}
CORE=${CORE:-0}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
X=${XLATPERF:-target/release/xlatperf}
[ -x "$X" ] || cargo build --release -q -p xlatperf --features dpdk

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print 0; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.0f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# shellcheck source=bench/mode_sets.sh
. bench/mode_sets.sh

# run <queues> <ip> <size> <mode>: frames/s
run() {
    local sets=(--set "ip=$2" --set "size=$3" --set "seconds=$DURATION" --set "core=$CORE" --set "tester.queues=$1")
    local m
    m=$(mode_sets "$4") || exit 2
    # shellcheck disable=SC2086
    XLATPERF=$X bench/xlatperf_sender.sh "${sets[@]}" $m | sed -n 's/^tx_fps=//p'
}

for ports in ${@:-fixed ports both}; do
    for ip in 4 6; do
        if [ "$ip" = 4 ]; then size=64; else size=84; fi
        : > "$TMP/one"
        : > "$TMP/two"
        for rep in $(seq 1 "$REPS"); do
            a=$(run 1 "$ip" "$size" "$ports")
            b=$(run 2 "$ip" "$size" "$ports")
            echo "# rep $rep $ports IPv$ip: 1 queue $a, 2 queues $b" >&2
            echo "$a" >> "$TMP/one"
            echo "$b" >> "$TMP/two"
        done
        m1=$(median < "$TMP/one")
        m2=$(median < "$TMP/two")
        echo "$ports $ip $m1 $m2 $(awk -v a="$m1" -v b="$m2" 'BEGIN { printf "%.2f", b / a }')"
    done
done
