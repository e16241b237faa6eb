#!/usr/bin/env bash
# The tester's full-trial rate through the DPDK DUT (`lab up dpdk-fwd`: dpdk-testpmd in MAC mode
# between vhost-user ports on the DUT's CPU, the tester's DPDK virtio-user ports and all four of
# its roles on the other CPU, both on hugepages): trials at RATES frames/s per direction,
# bidirectional and unidirectional (forward only), REPS times each, then a throughput search of
# each kind. Prints one line per trial:
#
#   trial <bi|uni> <rate> <rep> <valid> <lost fwd> <lost rev> <max lag us> <p99.9 lag us> <stalls> <tester CPU busy %>
#
# and per search: search <bi|uni> <throughput fps per direction> <bound> <tester-bound rate or ->
# then the human result lines of a latency and a PDV measurement at LAT_RATE frames/s per
# direction (the tester's own clock: DPDK ports give no kernel stamps).
#
# The lab bounds the tester's lag at 4,096 frames (half a virtio ring): a trial whose sender fell
# further behind is invalid (docs/lab.md, dpdk-fwd). Usage: bench/dpdk_fwd.sh
# Environment: REPS=3 DURATION=10 RATES="100000 250000 1000000 2000000 3000000" MAX_RATE=4000000
# LAT_RATE=100000
# X=path (an xlatperf built with --features xlatperf/dpdk). Needs root, dpdk-testpmd and free
# hugepages; runs under the lab lock and takes the lab down at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
X=${X:-target/release/xlatperf}
REPS=${REPS:-3}
DURATION=${DURATION:-10}
RATES=${RATES:-100000 250000 1000000 2000000 3000000}
MAX_RATE=${MAX_RATE:-4000000}
LAT_RATE=${LAT_RATE:-100000}
OUT=$(mktemp -d /tmp/xlat-dpdk-fwd.XXXXXX)
[ -x "$X" ] || cargo build --release -q --features xlatperf/dpdk
exec 9>/tmp/xlat-lab.lock
flock 9
trap '"$X" lab down >/dev/null 2>&1 || true; rm -rf "$OUT"' EXIT
conf=$("$X" lab up dpdk-fwd --replace | tail -1)

line() { # KIND RATE REP FILE
    python3 -c 'import json,sys; v=json.load(open(sys.argv[4]))
ds = [d for d in (v["forward"], v["reverse"]) if d]
busy = (v.get("load") or {}).get("tester", {}).get("busy")
lost = [str(d["lost"]) for d in ds] + ["-"] * (2 - len(ds))
print("trial", sys.argv[1], sys.argv[2], sys.argv[3], v["valid"], *lost,
      round(max(d["max_lag_ns"] for d in ds) / 1e3), round(max(d["lag_p999_ns"] for d in ds) / 1e3),
      max(d["stalls"] for d in ds), "-" if busy is None else round(100 * busy))' "$@"
}

for kind in bi uni; do
    dirs=(); [ "$kind" = uni ] && dirs=(--set traffic.reverse=false)
    for rate in $RATES; do
        for rep in $(seq 1 "$REPS"); do
            "$X" trial -c "$conf" --rate "$rate" --duration "$DURATION" --json "$OUT/t.json" "${dirs[@]}" >/dev/null 2>&1
            line "$kind" "$rate" "$rep" "$OUT/t.json"
        done
    done
    "$X" throughput -c "$conf" --max-rate "$MAX_RATE" --error 2% --duration "$DURATION" --timeout 200 --retries 2 \
        --json "$OUT/tp.json" "${dirs[@]}" >/dev/null 2>&1
    python3 -c 'import json,sys; r=json.load(open(sys.argv[2]))["results"][0]["result"]["runs"][0]
tb = r.get("tester_bound")
print("search", sys.argv[1], r["throughput"], r["bound"]["by"], tb if tb is not None else "-")' "$kind" "$OUT/tp.json"
done
echo "latency at $LAT_RATE frames/s per direction:"
"$X" latency -c "$conf" --rate "$LAT_RATE" --duration "$DURATION" --delay 2 --retries 2 2>/dev/null | grep -E 'TL|WCL|valid' || true
echo "pdv at $LAT_RATE frames/s per direction:"
"$X" pdv -c "$conf" --rate "$LAT_RATE" --duration "$DURATION" --retries 2 2>/dev/null | grep -E 'PDV|IPDV|valid' || true
