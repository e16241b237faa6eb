#!/usr/bin/env bash
# What reduces the sender's stalls on a shared host (issue 26): bidirectional trials through
# lab router4 at RATE frames/s for DURATION s, REPS times, each variant in turn (alternating):
#
#   nice     the default: worker threads at nice -20 (crates/engine/src/pin.rs)
#   fifo     the whole process under SCHED_FIFO priority 1 (`chrt -f 1`): real-time class
#   fifo-rr  SCHED_RR priority 1 (`chrt -r 1`)
#
# Prints one line per trial and variant:
#   <variant> <rep> <valid> <fwd stalls> <fwd max lag us> <fwd p99.9 lag us> <rev stalls> <rev max lag us> <rev p99.9 lag us> <lost frames>
# then per variant the medians. Usage: bench/stalls.sh [REPS]   Environment: RATE=100000
# DURATION=10 X=path. Needs root; runs under the lab lock and takes the lab down at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
X=${X:-target/release/xlatperf}
REPS=${1:-5}
RATE=${RATE:-100000}
DURATION=${DURATION:-10}
OUT=$(mktemp -d /tmp/xlat-stalls.XXXXXX)
[ -x "$X" ] || cargo build --release -q
exec 9>/tmp/xlat-lab.lock
flock 9
trap '"$X" lab down >/dev/null 2>&1 || true; rm -rf "$OUT"' EXIT
conf=$("$X" lab up router4 --replace | tail -1)

line() { # VARIANT REP FILE
    python3 -c 'import json,sys; v=json.load(open(sys.argv[3]))
f, r = v["forward"], v["reverse"]
print(sys.argv[1], sys.argv[2], v["valid"], *[x for d in (f, r) for x in (d["stalls"], d["max_lag_ns"] / 1e3, d["lag_p999_ns"] / 1e3)], f["lost"] + r["lost"])' "$@"
}

lines=()
for rep in $(seq 1 "$REPS"); do
    for variant in nice fifo fifo-rr; do
        case $variant in
            nice) run=() ;;
            fifo) run=(chrt -f 1) ;;
            fifo-rr) run=(chrt -r 1) ;;
        esac
        "${run[@]}" "$X" trial -c "$conf" --rate "$RATE" --duration "$DURATION" --timeout 300 --json - > "$OUT/t.json" 2>/dev/null || true
        l=$(line "$variant" "$rep" "$OUT/t.json")
        echo "$l"; lines+=("$l")
    done
done
echo "medians (variant, valid trials, then as above):"
printf '%s\n' "${lines[@]}" | python3 -c '
import sys, statistics
rows = {}
for l in sys.stdin:
    p = l.split()
    rows.setdefault(p[0], []).append(p)
for k, v in rows.items():
    valid = sum(1 for p in v if p[2] == "True")
    cols = zip(*[[float(x) for x in p[3:]] for p in v])
    print(k, "%d/%d" % (valid, len(v)), *("%g" % statistics.median(c) for c in cols))'
