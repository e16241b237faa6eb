#!/usr/bin/env bash
# Every lab DUT's throughput with the DUT on its own CPU (`lab up T`: RPS steers its processing to
# the DUT's CPU) against the way the lab measured before (`lab up T --no-steering`: the kernel DUT
# runs on the CPU that sends to it, the tester's), the two alternating REPS times in one run.
# RFC 2544 binary search, bidirectional, 2 s trials, 5 % error; the stateful DUTs with phase 1 of
# N connections before every trial. Prints one line per run, then the medians:
#
#   <dut> <steered|unsteered> <throughput fps per direction> <bound> <DUT CPU busy in the trial
#   above the result, %> <DUT CPU busy in the result's trial, %>
#
# Usage: bench/lab_placement.sh [DUTS]   DUTS: router4 nat44-10k nat44-100k nat44-1m nat64 xlat464
#        dslite lw4o6 (default: all)     Environment: REPS=3 MAX_RATE=400000 X=path
# Needs root and the lab tools; runs under the lab lock and takes the lab down at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
X=${X:-target/release/xlatperf}
REPS=${REPS:-3}
MAX_RATE=${MAX_RATE:-400000}
OUT=${OUT:-/tmp/xlat-lab-placement}
DUTS=${1:-router4 nat44-10k nat44-100k nat44-1m nat64 xlat464 dslite lw4o6}
mkdir -p "$OUT"
[ -x "$X" ] || cargo build --release -q
exec 9>/tmp/xlat-lab.lock
flock 9
trap '"$X" lab down >/dev/null 2>&1 || true' EXIT

# The stateful DUTs' phase 1: N connections, every combination of the ports once.
stateful_args() {
    case "$1" in
        nat44-10k) echo "--preliminary-frames 10000 --set traffic.forward_ports.sport.max=10009" ;;
        nat44-100k) echo "--preliminary-frames 100000 --set traffic.forward_ports.sport.max=10099" ;;
        nat44-1m) echo "--preliminary-frames 1000000" ;;
        nat64 | dslite) echo "--preliminary-frames 10000 --set traffic.forward_ports.sport.max=10009" ;;
        xlat464) echo "--preliminary-frames 10000 --set traffic.forward_ports.sport.max=10009" ;;
        *) echo "" ;;
    esac
}

summary() { # FILE: throughput bound busy-above busy-at
    python3 - "$1" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["results"][0]["result"]["runs"][0]
b = r.get("bound", {})
def busy(t):
    l = (t.get("load") or {}).get("dut")
    return "-" if l is None else f"{100 * l['busy']:.0f}"
at = [t for t in r["trials"] if t["rate"] == r["throughput"] and t.get("pass")]
above = [t for t in r["trials"] if t["rate"] == b.get("rate") and t.get("pass") is False]
print(r["throughput"], b.get("by", "-"), busy(above[-1]) if above else "-", busy(at[-1]) if at else "-")
EOF
}

lines=$OUT/lines.txt
: > "$lines"
for dut in $DUTS; do
    topology=${dut%%-*}
    for rep in $(seq "$REPS"); do
        for mode in steered unsteered; do
            flag=""
            [ "$mode" = unsteered ] && flag="--no-steering"
            conf=$("$X" lab up "$topology" --replace $flag 2>/dev/null | tail -1)
            json=$OUT/$dut-$mode-$rep.json
            # shellcheck disable=SC2046
            "$X" throughput -c "$conf" --max-rate "$MAX_RATE" --error 5% --duration 2 --timeout 300 \
                $(stateful_args "$dut") --json "$json" > "$OUT/$dut-$mode-$rep.txt" 2>&1 || true
            if [ -s "$json" ]; then
                line="$dut $mode $(summary "$json")"
            else
                line="$dut $mode failed (see $OUT/$dut-$mode-$rep.txt)"
            fi
            echo "$line" | tee -a "$lines"
        done
    done
done

echo "== medians (dut mode throughput, bounds seen, DUT busy above / at)"
python3 - "$lines" <<'EOF'
import sys, statistics
rows = {}
for l in open(sys.argv[1]):
    w = l.split()
    if len(w) < 6 or w[2] == "failed":
        continue
    rows.setdefault((w[0], w[1]), []).append(w[2:])
for (dut, mode), rs in rows.items():
    tp = statistics.median(int(r[0]) for r in rs)
    bounds = ",".join(sorted(set(r[1] for r in rs)))
    num = lambda i: [float(r[i]) for r in rs if r[i] != "-"]
    above = f"{statistics.median(num(2)):.0f}" if num(2) else "-"
    at = f"{statistics.median(num(3)):.0f}" if num(3) else "-"
    print(f"{dut:<11} {mode:<9} {tp:>9.0f} {bounds:<14} {above:>4} {at:>4}  (n={len(rs)})")
EOF
