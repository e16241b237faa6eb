#!/usr/bin/env bash
# MLRsearch (RFC 9971) beside xlatperf's binary and accelerated throughput searches (issue 21),
# on lab router4 with an nftables limit of 50,000 frames/s over both directions (L = 25,000
# per direction, burst 1,000: room for a sender stall of 20 ms): how many trials and how much
# trial time each needs, and what it finds. Methods, alternating, REPS times (default 3);
# full-length trials of DURATION s (default 10), Max Load 40,000 fps, width 0.5 %:
#
#   mlr-2544   xlatperf mlrsearch, RFC 2544 rules (NDR and PDR; one full-length trial decides)
#   mlr-csit   xlatperf mlrsearch, CSIT's rules (1 s trials, duration sum 21 s, exceed ratio 0.5)
#   binary     xlatperf throughput, RFC 2544 binary search, --error 125 fps (0.5 % of L)
#   accel      xlatperf throughput --accelerated (3 phases from 1 s)
#
# One line per run: <method> <rep> <trials> <trial-s> <elapsed s> <NDR or throughput fps>
# <PDR fps or ->, then the medians per method. Usage: bench/mlrsearch.sh [REPS]
# Environment: DURATION=10 X=path. Needs root and the lab tools; takes the lab lock, removes
# the lab at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
X=${X:-target/release/xlatperf}
REPS=${1:-3}
DURATION=${DURATION:-10}
OUT=$(mktemp -d /tmp/xlat-mlr.XXXXXX)
[ -x "$X" ] || cargo build --release -q
exec 9>/tmp/xlat-lab.lock
flock 9
trap '"$X" lab down >/dev/null 2>&1 || true; rm -rf "$OUT"' EXIT

conf=$("$X" lab up router4 --replace | tail -1)
nft_dut() { ip netns exec xlat-dut nft "$@"; }
nft_dut add table inet xlat_limit
nft_dut 'add chain inet xlat_limit limiter { type filter hook forward priority 0 ; }'
nft_dut add rule inet xlat_limit limiter limit rate over 50000/second burst 1000 packets drop

figures() { # FILE: trials, trial-seconds, elapsed, and the NDR/PDR or throughput
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]["result"]["runs"][0]
g={x["goal"]["name"]: x["conditional_throughput"] for x in r.get("goals", [])}
ndr=g.get("NDR", r.get("throughput")); pdr=g.get("PDR")
f=lambda v: "-" if v is None else "%.0f" % v
print(len(r["trials"]), "%.1f" % r["trial_seconds"], "%.1f" % r["elapsed_s"], f(ndr), f(pdr))' "$1"
}

common=(-c "$conf" --timeout 300 --retries 8 --json "$OUT/r.json")
lines=()
for rep in $(seq 1 "$REPS"); do
    for m in mlr-2544 mlr-csit binary accel; do
        case $m in
        mlr-2544) "$X" mlrsearch "${common[@]}" --max-load 40000 --duration "$DURATION" >/dev/null ;;
        mlr-csit) "$X" mlrsearch "${common[@]}" --max-load 40000 --duration 1 --duration-sum 21 --exceed-ratio 0.5 >/dev/null ;;
        binary) "$X" throughput "${common[@]}" --max-rate 40000 --duration "$DURATION" --error 125 >/dev/null ;;
        accel) "$X" throughput "${common[@]}" --max-rate 40000 --duration "$DURATION" --error 125 --accelerated --short 1 >/dev/null ;;
        esac
        l="$m $rep $(figures "$OUT/r.json")"
        echo "$l"; lines+=("$l")
    done
done
echo "medians (method trials trial-s elapsed-s NDR/throughput PDR):"
printf '%s\n' "${lines[@]}" | python3 -c '
import sys, statistics
rows = {}
for line in sys.stdin:
    p = line.split()
    rows.setdefault(p[0], []).append(p[2:])
for m, rs in rows.items():
    med = lambda i: "-" if rs[0][i] == "-" else "%g" % statistics.median(float(r[i]) for r in rs)
    print(m, *(med(i) for i in range(5)))'
