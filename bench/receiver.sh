#!/usr/bin/env bash
# Receiver efficiency: does xlatperf's receiver keep up with its sender on one core? A forward
# trial over a DPDK net_ring loopback pair (no network), sender on one core and receiver on the
# other, at a rate above what the sender can do, so the sender runs flat out. The trial is
# invalid as a measurement (the sender cannot keep the rate, on purpose); its counts are what
# matter here. Prints, as the medians of REPS runs:
#   receiver <ip version> <received frames/s> <sent frames/s> <received/sent>
# A ratio of 1.00 means the receiver classified and counted every frame the sender sent.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
X=${XLATPERF:-$ROOT/target/release/xlatperf}
REPS=${REPS:-5}; RATE=${RATE:-40000000}
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.0f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for ip in 4 6; do
    rx=(); tx=()
    for _ in $(seq "$REPS"); do
        j=$("$X" trial -c "$ROOT/examples/dpdk-ring-selftest.toml" --rate "$RATE" --duration 1 --timeout 200 --json - \
            --set traffic.reverse=false --set left.ip_version=$ip --set right.ip_version=$ip \
            --set tester.cpus.left_send=0 --set tester.cpus.right_recv=1 "$@" 2>/dev/null | tail -n 1)
        read -r r t < <(python3 -c 'import json,sys; d=json.loads(sys.argv[1])["forward"]; s=d["send_duration_s"]; print(round(d["received"]/s), round(d["sent"]/s))' "$j")
        rx+=("$r"); tx+=("$t")
    done
    mr=$(printf '%s\n' "${rx[@]}" | median); mt=$(printf '%s\n' "${tx[@]}" | median)
    echo "receiver $ip $mr $mt $(awk -v a="$mr" -v b="$mt" 'BEGIN { printf "%.2f", a / b }')"
done
