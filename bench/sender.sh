#!/usr/bin/env bash
# Sender efficiency (BENCHMARKS.md): frames per second that one core sends into a
# discarding sink (DPDK's net_null), ours against dpdk-testpmd's txonly mode in the same run, on
# the same vdev and the same core, for IPv4 64-byte and IPv6 84-byte frames (sizes with FCS: 60
# and 80 bytes are handed to the backend). Each measurement is repeated REPS times, ours and
# testpmd alternating; printed are the medians, one line per measurement:
#
#   <what> <ip version> <ours frames/s> <testpmd frames/s> <ours/testpmd>
#   fixed 4 23000000 22000000 1.05
#
# Usage: bench/sender.sh [--set KEY=VALUE]...     (the --set arguments go to OURS_CMD as they are)
#
# Environment:
#   REPS=5 DURATION=5 CORE=1 MAIN_CORE=0   repetitions, seconds per run, the sending core, and the
#                                          core of testpmd's main lcore (it only prints stats)
#   WHAT=fixed                             the first column (the kind of traffic OURS_CMD sends)
#   IPS="4 6"                              the lines to measure (IPv4 64 bytes, IPv6 84 bytes)
#   TESTPMD_LEN                            testpmd's frame length without FCS (default: the line's
#                                          size - 4), for modes whose frames are longer
#   OURS_CMD                               our sender; it gets `--set ip=4|6 --set size=64|84
#                                          --set seconds=S --set core=C --set port=net_null0`, then
#                                          the script's own --set arguments, and must print a line
#                                          `tx_fps=<frames/s>` (or set OURS_PARSE). Default:
#                                          bench/xlatperf_sender.sh, xlatperf's own sender
#                                          (XLATPERF=path of the binary, default target/release).
#   OURS_PARSE                             a filter from OURS_CMD's stdout to frames/s
#   TESTPMD=dpdk-testpmd                   Debian 12: `apt-get install dpdk-dev`
#   HUGE=1                                 both on hugepages, as deployed (scripts/setup.sh
#                                          reserves them; testpmd --in-memory); HUGE=0: both
#                                          --no-huge (the figures before session 26)
#
# How testpmd gives frames/s without its prompt (DPDK 22.11): without -i, testpmd starts
# forwarding at once; `--stats-period 1` makes it print the port statistics every second until
# it gets SIGINT or SIGTERM, each with a line `Tx-pps: <n>`: the transmitted frames divided by
# the TSC time since the previous display (net_null counts every frame it is given). Creating
# its mempool without hugepages takes a second or two, so the first displays read 0 and the first
# non-zero one covers only part of its period: both are dropped, and the median of the remaining
# displays is testpmd's figure. testpmd's txonly mode builds IPv4/UDP frames only: for the
# "IPv6 84-byte" line it sends 80-byte IPv4 frames, which cost the sink and the mbuf path the
# same. Both take a burst of 32 mbufs from the pool per rte_eth_tx_burst, but the work per mbuf
# differs: testpmd (pkt_burst_prepare in app/test-pmd/txonly.c) resets each mbuf's headroom and
# sets its length, flags and segment fields, and copies the 42 bytes of Ethernet, IPv4 and UDP
# headers, all fixed, with no UDP checksum and no payload written; xlatperf copies its whole
# template only into an mbuf that does not hold it yet, skips rte_pktmbuf_reset for a recycled
# mbuf whose length and cookie still match, and writes in every frame the varying fields, the
# 64-bit payload field, the UDP checksum (and the IPv4 header checksum when an address varies).
set -euo pipefail

REPS=${REPS:-5}
DURATION=${DURATION:-5}
CORE=${CORE:-1}
MAIN_CORE=${MAIN_CORE:-0}
WHAT=${WHAT:-fixed}
TESTPMD=${TESTPMD:-dpdk-testpmd}
OURS_PARSE=${OURS_PARSE:-"sed -n 's/^tx_fps=//p'"}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
DEFAULT_OURS=$ROOT/bench/xlatperf_sender.sh
OURS_CMD=${OURS_CMD:-$DEFAULT_OURS}

SETS=()
while [ $# -gt 0 ]; do
    case $1 in
        --set) [ $# -ge 2 ] || { echo "--set needs KEY=VALUE" >&2; exit 2; }; SETS+=(--set "$2"); shift 2 ;;
        --set=*) SETS+=(--set "${1#--set=}"); shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done

command -v "$TESTPMD" > /dev/null || { echo "$TESTPMD not found: apt-get install dpdk-dev" >&2; exit 1; }
if [ "$OURS_CMD" = "$DEFAULT_OURS" ] && [ ! -x "${XLATPERF:-$ROOT/target/release/xlatperf}" ]; then
    (cd "$ROOT" && cargo build --release -q -p xlatperf --features dpdk)
fi

load=$(cut -d' ' -f1 /proc/loadavg)
if awk -v l="$load" 'BEGIN { exit !(l > 0.5) }'; then
    echo "# warning: load average $load: other processes share the CPUs, figures will scatter" >&2
fi

TMP=$(mktemp -d)
TESTPMD_PID=
cleanup() {
    if [ -n "$TESTPMD_PID" ]; then kill -KILL "$TESTPMD_PID" 2> /dev/null || true; fi
    rm -rf "$TMP"
}
trap cleanup EXIT

medianf() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print 0; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print 0; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.0f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# ours <ip version> <frame size>: frames/s
ours() {
    local out
    # shellcheck disable=SC2086  # OURS_CMD is a command line
    out=$($OURS_CMD --set "ip=$1" --set "size=$2" --set "seconds=$DURATION" --set "core=$CORE" --set port=net_null0 \
        ${SETS[@]+"${SETS[@]}"} 2> "$TMP/ours.err") || { cat "$TMP/ours.err" >&2; echo "OURS_CMD failed" >&2; exit 1; }
    local fps
    fps=$(printf '%s\n' "$out" | eval "$OURS_PARSE" | tail -n 1)
    [ -n "$fps" ] || { printf '%s\n' "$out" >&2; echo "no frames/s in OURS_CMD's output" >&2; exit 1; }
    echo "$fps"
}

# EAL's memory options: hugepages (HUGE=1, the default) or none.
HUGE=${HUGE:-1}
export HUGE
eal_memory() {
    if [ "$HUGE" = 1 ]; then echo --in-memory; else echo --no-huge -m 1024 --no-shconf; fi
}

# testpmd <frame length without FCS>: frames/s
testpmd() {
    local log=$TMP/testpmd.log
    # The log exists before the loop below reads it (the redirection happens in the child).
    : > "$log"
    # shellcheck disable=SC2046  # the memory options are words
    "$TESTPMD" $(eal_memory) --no-pci --vdev net_null0 -l "$MAIN_CORE,$CORE" --main-lcore "$MAIN_CORE" -- \
        --no-mlockall --forward-mode=txonly --txpkts="$1" --burst=32 --txq=1 --rxq=1 --nb-cores=1 --stats-period 1 \
        > "$log" 2>&1 < /dev/null &
    TESTPMD_PID=$!
    # Startup (mempool creation) takes about 2 s, more on a busy machine: wait for DURATION
    # non-zero displays after the partial first one (at most DURATION + 30 s).
    local waited=0
    while [ "$(awk '/Tx-pps:/ && $2 > 0 { n++ } END { print n + 0 }' "$log")" -le "$DURATION" ]; do
        kill -0 "$TESTPMD_PID" 2> /dev/null || break
        [ "$waited" -lt $(((DURATION + 30) * 10)) ] || break
        sleep 0.1
        waited=$((waited + 1))
    done
    kill -INT "$TESTPMD_PID" 2> /dev/null || true
    local i
    for i in $(seq 1 100); do
        kill -0 "$TESTPMD_PID" 2> /dev/null || break
        sleep 0.1
    done
    kill -KILL "$TESTPMD_PID" 2> /dev/null || true
    wait "$TESTPMD_PID" 2> /dev/null || true
    TESTPMD_PID=
    local fps
    fps=$(awk '/Tx-pps:/ { if ($2 > 0) { n++; if (n > 1) print $2 } }' "$log" | median)
    [ "$fps" != 0 ] || { tail -n 30 "$log" >&2; echo "no Tx-pps from testpmd" >&2; exit 1; }
    echo "$fps"
}

for ip in ${IPS:-4 6}; do
    if [ "$ip" = 4 ]; then size=64; else size=84; fi
    len=${TESTPMD_LEN:-$((size - 4))}
    : > "$TMP/ours"
    : > "$TMP/tp"
    : > "$TMP/pairs"
    for rep in $(seq 1 "$REPS"); do
        o=$(ours "$ip" "$size")
        t=$(testpmd "$len")
        echo "# rep $rep IPv$ip $size bytes: ours $o testpmd $t" >&2
        echo "$o" >> "$TMP/ours"
        echo "$t" >> "$TMP/tp"
        awk -v o="$o" -v t="$t" 'BEGIN { printf "%.4f\n", o / t }' >> "$TMP/pairs"
    done
    # On a shared machine whole runs are slowed at random: the median of the ratios of the
    # adjacent pairs is a second, steadier view of the same figures.
    echo "# IPv$ip median of the per-repetition ratios: $(medianf < "$TMP/pairs")" >&2
    mo=$(median < "$TMP/ours")
    mt=$(median < "$TMP/tp")
    echo "$WHAT $ip $mo $mt $(awk -v o="$mo" -v t="$mt" 'BEGIN { printf "%.2f", o / t }')"
done
