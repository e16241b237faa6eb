#!/usr/bin/env bash
# Lab router4 bidirectional throughput (RFC 2544 binary search, 5 s trials, 1 % error) with
# each tester backend and queue count, one after the other in one run: afpacket and afxdp, 1
# and 2 queues per port (`lab up router4 --backend B --queues Q`). Whole-system figures: the
# tester and the DUT (the kernel forwarding IPv4) share this machine's cores, so each line says
# whether the tester, not the DUT, bounded the search (a rate at which the tester's own sending
# was too slow or it dropped frames itself). Prints one line per configuration:
#
#   <backend> <queues> <throughput frames/s per direction> <tester bound frames/s or none>
#
# Usage: bench/lab_backends.sh    Environment: MAX_RATE=3000000 DURATION=5 X=path
# Needs root and the lab tools; runs under the lab lock and takes the lab down at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
X=${X:-target/release/xlatperf}
MAX_RATE=${MAX_RATE:-3000000}
DURATION=${DURATION:-5}
OUT=${OUT:-/tmp/xlat-lab-backends}
mkdir -p "$OUT"
[ -x "$X" ] || cargo build --release -q
exec 9>/tmp/xlat-lab.lock
flock 9
trap '"$X" lab down >/dev/null 2>&1 || true' EXIT

field() { # FILE KEY: a top-level field of the throughput result
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); r=d["results"][0]["result"]["runs"][0]
v=r.get(sys.argv[2]); print("none" if v is None else v)' "$1" "$2"
}

for backend in afpacket afxdp; do
    for queues in 1 2; do
        conf=$("$X" lab up router4 --replace --backend "$backend" --queues "$queues" | tail -1)
        json=$OUT/$backend-$queues.json
        "$X" throughput -c "$conf" --max-rate "$MAX_RATE" --error 1% --duration "$DURATION" --timeout 500 \
            --json "$json" > "$OUT/$backend-$queues.txt" 2>&1
        echo "$backend $queues $(field "$json" throughput) $(field "$json" tester_bound)"
    done
done
