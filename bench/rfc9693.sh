#!/usr/bin/env bash
# RFC 9693's four metrics and a sweep over the number of connections, on the lab's nat44 and
# nat64 (whole-system figures: tester and DUT share this machine). Prints one line per figure
# and keeps every JSON, CSV and plot in $OUT (default /tmp/xlat-rfc9693).
#
#   bench/rfc9693.sh                 # both DUTs
#   TOPOLOGIES=nat44 bench/rfc9693.sh
#   TOPOLOGIES="nat64 xlat464" bench/rfc9693.sh   # any stateful topology (nat66 too)
#   SWEEP=10k,100k,1M bench/rfc9693.sh
#
# Needs root and the lab tools (scripts/setup.sh installs them). Runs under the lab lock.
set -euo pipefail
cd "$(dirname "$0")/.."
X=${X:-target/release/xlatperf}
OUT=${OUT:-/tmp/xlat-rfc9693}
TOPOLOGIES=${TOPOLOGIES:-nat44 nat64}
N=${N:-100000}
SWEEP=${SWEEP:-10k,100k,1M}
CAP=${CAP:-200000}
mkdir -p "$OUT"
[ -x "$X" ] || cargo build --release -q
exec 9>/tmp/xlat-lab.lock
flock 9
trap '"$X" lab down >/dev/null 2>&1 || true' EXIT

metric() { # FILE JQ-PATH
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); v=d
for k in sys.argv[2].split("."):
    v=v[int(k)] if k.isdigit() else v[k]
print(v)' "$1" "$2"
}

for t in $TOPOLOGIES; do
  conf=$("$X" lab up "$t" --replace | tail -1)
  echo "== $t ($(date -u +%FT%TZ))"
  "$X" conn-rate -c "$conf" --connections "$N" --max-rate 300000 --error 10000 --validate \
    --timeout 500 --retries 2 --json "$OUT/$t-conn-rate.json" >"$OUT/$t-conn-rate.txt"
  cr=$(metric "$OUT/$t-conn-rate.json" results.0.result.runs.0.rate)
  cb=$(metric "$OUT/$t-conn-rate.json" results.0.result.runs.0.tester_bound)
  echo "$t conn-rate --validate, N=$N: $cr connections/s (tester bound: $cb)"
  if [ "$cr" = None ]; then
    echo "$t: no validated rate (the tester was late at every rate: is the machine busy?); phase 1 at 20,000/s below"
    safe=20000
  else
    safe=$((cr / 2))
  fi
  "$X" throughput -c "$conf" --max-rate 300000 --error 1% --short 2 --duration 10 --timeout 500 --retries 2 \
    --preliminary-frames "$N" --preliminary-rate "$safe" --json "$OUT/$t-throughput.json" >"$OUT/$t-throughput.txt"
  tp=$(metric "$OUT/$t-throughput.json" results.0.result.runs.0.throughput)
  tb=$(metric "$OUT/$t-throughput.json" results.0.result.runs.0.bounded_by_tester)
  echo "$t stateful throughput, N=$N at R=$safe: $tp frames/s per direction (bounded by the tester: $tb)"
  "$X" teardown-rate -c "$conf" --connections "$N" --rate "$safe" --timeout 500 \
    --json "$OUT/$t-teardown.json" >"$OUT/$t-teardown.txt"
  td=$(metric "$OUT/$t-teardown.json" results.0.result.runs.0.rate_cps)
  echo "$t teardown-rate, N=$N: $td connections/s ($(metric "$OUT/$t-teardown.json" results.0.result.runs.0.full_s) s full, $(metric "$OUT/$t-teardown.json" results.0.result.runs.0.empty_s) s empty)"
  "$X" conn-rate -c "$conf" --connections "$SWEEP" --max-rate 300000 --error 10000 --validate --timeout 500 \
    --retries 2 --json "$OUT/$t-sweep.json" --csv "$OUT/$t-sweep.csv" --plot "$OUT/$t-sweep.svg" >"$OUT/$t-sweep.txt"
  echo "$t conn-rate sweep over connections ($SWEEP):"
  tail -n +2 "$OUT/$t-sweep.csv" | cut -d, -f1,3 | sed 's/^/    /'
  "$X" lab down >/dev/null
  conf=$("$X" lab up "$t" --replace --conntrack-max "$CAP" | tail -1)
  "$X" conntrack-capacity -c "$conf" --c0 $((CAP / 4)) --max-rate "$safe" --error $((safe / 2)) --resolution $((CAP / 200)) \
    --timeout 500 --retries 2 --json "$OUT/$t-capacity.json" --plot "$OUT/$t-capacity.svg" >"$OUT/$t-capacity.txt"
  echo "$t conntrack-capacity, nf_conntrack_max=$CAP: $(metric "$OUT/$t-capacity.json" results.0.result.runs.0.capacity) connections (first too many: $(metric "$OUT/$t-capacity.json" results.0.result.runs.0.first_too_many))"
  "$X" lab down >/dev/null
done
