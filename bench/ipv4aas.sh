#!/usr/bin/env bash
# The stateless IPv4aaS DUTs beside router4 on the same host, against the number of subscribers:
# RFC 2544 throughput (binary search, bidirectional, 2 s trials, 5 % error) through the lab's
# lw4o6 (lwAFTR, binding table), mape (MAP-E BR) and mapt (MAP-T BR) with N lwB4s or CEs on the
# left (`--set left.map.subscribers=N`, each frame's subscriber and port pseudorandom), and
# through router4 (the kernel forwarding IPv4, no subscribers) as the yardstick. The DUT on its
# own CPU (`lab up` steers it there). Every configuration REPS times, the DUTs alternating within
# a repetition; one line per run, then the medians:
#
#   <dut> <subscribers> <throughput fps per direction> <bound> <DUT CPU busy in the result's trial, %>
#
# Usage: bench/ipv4aas.sh [DUTS]   DUTS: router4 lw4o6 mape mapt (default: all)
# Environment: REPS=3 SUBS="1 1000 10000" MAX_RATE=400000 X=path OUT=dir
# Needs root and the lab tools; runs under the lab lock and takes the lab down at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
X=${X:-target/release/xlatperf}
REPS=${REPS:-3}
SUBS=${SUBS:-1 1000 10000}
MAX_RATE=${MAX_RATE:-400000}
OUT=${OUT:-/tmp/xlat-ipv4aas}
DUTS=${1:-router4 lw4o6 mape mapt}
mkdir -p "$OUT"
[ -x "$X" ] || cargo build --release -q
exec 9>/tmp/xlat-lab.lock
flock 9
trap '"$X" lab down >/dev/null 2>&1 || true' EXIT

summary() { # FILE: throughput bound busy-at
    python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["results"][0]["result"]["runs"][0]
b = r.get("bound", {})
# The trial that passed at the figure: at its rate, or late at the rate it offered.
tp = r["throughput"]
at = [t for t in r["trials"] if t.get("pass") and (t.get("passed_at") or t["rate"]) == tp]
l = (at[-1].get("load") or {}).get("dut") if at else None
print(r["throughput"], b.get("by", "-"), "-" if l is None else f"{100 * l['busy']:.0f}")
PY
}

lines=$OUT/lines.txt
: > "$lines"
for rep in $(seq "$REPS"); do
    for dut in $DUTS; do
        conf=$("$X" lab up "$dut" --replace 2>/dev/null | tail -1)
        subs=$SUBS
        [ "$dut" = router4 ] && subs=-
        for n in $subs; do
            set_args=()
            [ "$n" != - ] && set_args=(--set "left.map.subscribers=$n")
            json=$OUT/$dut-$n-$rep.json
            "$X" throughput -c "$conf" --max-rate "$MAX_RATE" --error 5% --duration 2 --timeout 300 \
                "${set_args[@]+"${set_args[@]}"}" --json "$json" > "$OUT/$dut-$n-$rep.txt" 2>&1 || true
            if [ -s "$json" ]; then
                line="$dut $n $(summary "$json")"
            else
                line="$dut $n failed (see $OUT/$dut-$n-$rep.txt)"
            fi
            echo "$line" | tee -a "$lines"
        done
    done
done

echo "== medians (dut subscribers throughput, bounds seen, DUT busy at the result)"
python3 - "$lines" <<'PY'
import sys, statistics
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 5 or f[2] == "failed":
        continue
    r = rows.setdefault((f[0], f[1]), ([], set(), []))
    r[0].append(float(f[2]))
    r[1].add(f[3])
    if f[4] != "-":
        r[2].append(float(f[4]))
for (dut, n), (fps, bounds, busy) in rows.items():
    b = f"{statistics.median(busy):.0f}" if busy else "-"
    print(f"{dut} {n} {statistics.median(fps):.0f} {'/'.join(sorted(bounds))} {b}")
PY
