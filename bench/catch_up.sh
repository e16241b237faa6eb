#!/usr/bin/env bash
# What the catch-up pace does to a DUT near its limit (issue 53): bidirectional trials through
# a lab DUT at RATE frames/s for DURATION s, REPS times, each pace in turn (alternating, so the
# host's pauses fall on every variant alike). With the lab's lag bound (250 frames) a sender that
# fell behind sends the bound at once and then at most PERCENT above its rate
# (`tester.catch_up_percent`); 10000 is as good as no pace (siitperf's catch-up at once after the
# bound's burst).
#
# One line per trial:
#   <dut> <percent> <rep> <valid> <lost> <lost in catch-ups> <catch-ups> <largest burst above the pace, frames> <rules>
# then per (dut, percent): trials, valid, trials that lost frames, trials invalid by lag_harm,
# the medians of lost and of lost in catch-ups.
# Usage: bench/catch_up.sh [DUTS]   DUTS: default "router4 nat44"
# Environment: RATE=100000 DURATION=5 REPS=5 PERCENTS="25 100 10000" X=path.
# Needs root; runs under the lab lock and takes the lab down at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
X=${X:-target/release/xlatperf}
RATE=${RATE:-100000}
DURATION=${DURATION:-5}
REPS=${REPS:-5}
PERCENTS=${PERCENTS:-25 100 10000}
DUTS=${1:-router4 nat44}
OUT=$(mktemp -d /tmp/xlat-catch-up.XXXXXX)
[ -x "$X" ] || cargo build --release -q
exec 9>/tmp/xlat-lab.lock
flock 9
trap '"$X" lab down >/dev/null 2>&1 || true; rm -rf "$OUT"' EXIT

line() { # DUT PERCENT REP FILE
    python3 - "$@" <<'PY'
import json, sys
dut, pct, rep, path = sys.argv[1:5]
try:
    v = json.load(open(path))
except (OSError, ValueError):
    print(dut, pct, rep, "failed - - - - -")
    sys.exit()
dirs = [d for d in (v.get("forward"), v.get("reverse")) if d]
s = lambda k: sum(d.get(k, 0) for d in dirs)
burst = max((d.get("catch_up_burst", 0) for d in dirs), default=0)
rules = ",".join(v.get("invalid_rules", [])) or "-"
print(dut, pct, rep, v.get("valid"), s("lost"), s("lost_in_catch_up"), s("catch_ups"), burst, rules)
PY
}

lines=$OUT/lines.txt
: > "$lines"
for dut in $DUTS; do
    conf=$("$X" lab up "$dut" --replace 2>/dev/null | tail -1)
    for rep in $(seq 1 "$REPS"); do
        for pct in $PERCENTS; do
            json=$OUT/$dut-$pct-$rep.json
            "$X" trial -c "$conf" --rate "$RATE" --duration "$DURATION" --timeout 500 \
                --set "tester.catch_up_percent=$pct" --json "$json" > /dev/null 2>&1 || true
            line "$dut" "$pct" "$rep" "$json" | tee -a "$lines"
        done
    done
done
echo "== per DUT and pace: trials, valid, lossy, invalid by lag_harm, median lost, median lost in catch-ups"
python3 - "$lines" <<'PY'
import sys, statistics
rows = {}
for l in open(sys.argv[1]):
    f = l.split()
    if f[3] == "failed":
        continue
    rows.setdefault((f[0], int(f[1])), []).append(f)
for (dut, pct), v in sorted(rows.items()):
    lost = [int(f[4]) for f in v]
    harm = [int(f[5]) for f in v]
    print(dut, pct, len(v), sum(f[3] == "True" for f in v), sum(x > 0 for x in lost),
          sum("lag_harm" in f[8] for f in v), statistics.median(lost), statistics.median(harm))
PY
