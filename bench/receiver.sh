#!/usr/bin/env bash
# Receiver efficiency: does xlatperf's receiver keep up with its sender on one core? A forward
# trial over a DPDK net_ring loopback pair (no network), sender on one core and receiver on the
# other, at a rate above what the sender can do, so the sender runs flat out. The trial is
# invalid as a measurement (the sender cannot keep the rate, on purpose); its counts are what
# matter here. Prints, as the medians of REPS runs, per mode and IP version:
#   receiver <mode> <ip version> <received frames/s> <sent frames/s> <received/sent>
# A ratio of 1.00 means the receiver classified and counted every frame the sender sent.
#   bench/receiver.sh [MODES]     (modes as bench/modes.sh, default "fixed"; `fixedreset` and
#                                 `responder` are sender benchmarks only and are refused; the
#                                 phase 1 modes run a stateful trial: phase 1: 500,000 frames at 500,000 frames/s,
#                                 its Responder learning every tuple, then the measured phase 2;
#                                 their IPv6 line is NAT66, as no DUT translates IPv6 to IPv4 here)
# Environment: REPS (5), RATE (40000000), XLATPERF. The receiver's instructions per frame:
# bench/instructions.sh.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/mode_sets.sh
. "$ROOT/bench/mode_sets.sh"
X=${XLATPERF:-$ROOT/target/release/xlatperf}
REPS=${REPS:-5}; RATE=${RATE:-40000000}
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.0f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for m in ${@:-fixed}; do
    case $m in
        fixedreset|responder) echo "Error: $m is a sender benchmark (bench/modes.sh), not a trial's traffic" >&2; exit 2 ;;
    esac
    sets=$(mode_sets "$m") || exit 2
    case $m in enum*) sets="$sets --set stateful.preliminary_frames=500000 --set stateful.preliminary_rate=500000" ;; esac
    for ip in 4 6; do
        more=
        case $m in enum*) [ "$ip" = 6 ] && more="--set right.ip_version=6" ;; esac
        rx=(); tx=()
        for _ in $(seq "$REPS"); do
            # A stateful trial whose phase 1 came out invalid (its sender late by microseconds on
            # a busy host) has no phase 2 to count: up to 3 tries.
            for try in 1 2 3; do
                # shellcheck disable=SC2086
                j=$("$X" trial -c "$ROOT/examples/dpdk-ring-selftest.toml" --rate "$RATE" --duration 1 --timeout 200 --json - \
                    --set traffic.reverse=false --set left.ip_version=$ip --set right.ip_version=$ip \
                    --set tester.cpus.left_send=0 --set tester.cpus.right_recv=1 $sets $more 2>/dev/null | tail -n 1)
                if read -r r t < <(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); f=d["forward"] or sys.exit("no forward count: %s" % d.get("invalid_reasons")); s=f["send_duration_s"]; print(round(f["received"]/s), round(f["sent"]/s))' "$j"); then
                    break
                fi
                [ "$try" = 3 ] && { echo "Error: $m IPv$ip: no count in 3 tries" >&2; exit 1; }
            done
            rx+=("$r"); tx+=("$t")
        done
        mr=$(printf '%s\n' "${rx[@]}" | median); mt=$(printf '%s\n' "${tx[@]}" | median)
        echo "receiver $m $ip $mr $mt $(awk -v a="$mr" -v b="$mt" 'BEGIN { printf "%.2f", a / b }')"
    done
done
