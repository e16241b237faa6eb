#!/usr/bin/env bash
# A stateful test (RFC 9693) through the lab's nat44 or nat64 DUT with N unique pseudorandom
# connections, and the tester's memory: one `xlatperf trial` per (N, M), the lab up once per
# topology. Prints, per run, one line:
#   <topology> N=<N> M=<M> R=<R> phase1_sent=<n> learnt=<n> valid_entries=<n> dup=<n>
#     phase2_fwd=<received>/<sent> phase2_rev=<received>/<sent> conntrack=<DUT entries>
#     max_rss_kib=<peak resident set of the xlatperf process> valid=<true|false>
# The forward ports are pseudorandom over 1000 x (N/1000) pairs, so that phase 1 enumerates
# every pair and phase 2's Initiator frames open no new connection.
#
# Usage (root; takes the lab lock): bench/stateful.sh [nat44|nat64]...
# Environment: RUNS="1000000:1000000 100000:100000 1000000:1000" (N:M pairs), R=50000 (phase 1
# rate), RATE=2000 (phase 2 rate), DURATION=2, XLATPERF=target/release/xlatperf.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
X=${XLATPERF:-$ROOT/target/release/xlatperf}
RUNS=${RUNS:-"1000000:1000000 100000:100000 1000000:1000"}
R=${R:-50000}; RATE=${RATE:-2000}; DURATION=${DURATION:-2}
exec 9>/tmp/xlat-lab.lock
flock 9
trap '"$X" lab down >/dev/null 2>&1 || true' EXIT
for topo in "${@:-nat44 nat64}"; do
    conf=$("$X" lab up "$topo" --replace | tail -n 1)
    for run in $RUNS; do
        n=${run%%:*}; m=${run##*:}
        dports=$(( (n + 999) / 1000 ))
        d=$(( 1000 * n / R + 3000 ))
        out=$(/usr/bin/time -f 'max_rss_kib=%M' "$X" trial -c "$conf" --rate "$RATE" --duration "$DURATION" --timeout 500 \
            --preliminary-frames "$n" --state-table "$m" --preliminary-rate "$R" --preliminary-timeout 1000 --phase-delay "$d" \
            --set traffic.forward_ports.sport.min=10000 --set traffic.forward_ports.sport.max=10999 \
            --set traffic.forward_ports.dport.min=1 --set traffic.forward_ports.dport.max="$dports" \
            --json - 2>&1)
        rss=$(printf '%s\n' "$out" | sed -n 's/^max_rss_kib=//p')
        json=$(printf '%s\n' "$out" | grep '^{' | tail -n 1)
        ct=$(ip netns exec xlat-dut conntrack -C)
        python3 - "$json" "$topo" "$n" "$m" "$R" "$ct" "$rss" <<'PY'
import json, sys
v = json.loads(sys.argv[1]); topo, n, m, r, ct, rss = sys.argv[2:]
p = v.get("preliminary") or {}
d = lambda k: f'{v[k]["received"]}/{v[k]["sent"]}' if v.get(k) else "-"
print(f'{topo} N={n} M={m} R={r} phase1_sent={p.get("sent")} learnt={p.get("foreground_received")} '
      f'valid_entries={p.get("valid_entries")} dup={p.get("duplicate_tuples")} phase2_fwd={d("forward")} '
      f'phase2_rev={d("reverse")} conntrack={ct} max_rss_kib={rss} valid={str(v["valid"]).lower()}')
PY
    done
    "$X" lab down >/dev/null
done
