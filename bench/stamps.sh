#!/usr/bin/env bash
# User against kernel timestamps (issue 26): latency (RFC 8219 7.2) and PDV (7.3) through lab
# router4 at 10,000 and 100,000 frames/s, and the latency over a veth pair looped back with no
# DUT (the tester's own floor), each with `tester.timestamps = user` and `kernel` in turn,
# alternating, REPS times (default 5). Each latency run is one trial of DURATION s with 5,000
# tags after 1 s; each PDV run one trial of PDV_DURATION s. Prints one line per run:
#
#   <what> <rate> <stamps> <rep> <fwd TL ms> <fwd WCL ms> <rev TL ms> <rev WCL ms>   (latency)
#   pdv <rate> <stamps> <rep> <fwd PDV ms> <rev PDV ms>
#
# then the medians per what, rate and stamps. Usage: bench/stamps.sh [REPS]
# Environment: DURATION=6 PDV_DURATION=4 X=path. Needs root and the lab tools; runs under the
# lab lock and removes the lab and its own namespace (xlat-sloop) at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
X=${X:-target/release/xlatperf}
REPS=${1:-5}
DURATION=${DURATION:-6}
PDV_DURATION=${PDV_DURATION:-4}
OUT=$(mktemp -d /tmp/xlat-stamps.XXXXXX)
[ -x "$X" ] || cargo build --release -q
exec 9>/tmp/xlat-lab.lock
flock 9
trap '"$X" lab down >/dev/null 2>&1 || true; ip netns del xlat-sloop 2>/dev/null || true; rm -rf "$OUT"' EXIT

conf=$("$X" lab up router4 --replace | tail -1)
ip netns del xlat-sloop 2>/dev/null || true
ip netns add xlat-sloop
ip -n xlat-sloop link add xlat-sa type veth peer name xlat-sb
ip -n xlat-sloop link set xlat-sa up
ip -n xlat-sloop link set xlat-sb up
sed -e 's/^left_port = .*/left_port = "xlat-sa"/; s/^right_port = .*/right_port = "xlat-sb"/' \
    -e 's/^netns = .*/netns = "xlat-sloop"/; s/^loopback = .*/loopback = true/' "$conf" > "$OUT/loop.toml"

summary() { # FILE KEYS...: the medians of the named summaries, in ms
    python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["results"][0]["result"]["summaries"]
print(" ".join("%.6f" % s[k]["median"] if s.get(k) and s[k]["median"] is not None else "inf" for k in sys.argv[2:]))' "$@"
}

lines=()
for rep in $(seq 1 "$REPS"); do
    for what in router4 loop; do
        c=$conf; [ "$what" = loop ] && c=$OUT/loop.toml
        for rate in 10000 100000; do
            [ "$what" = loop ] && [ "$rate" = 100000 ] && continue
            for stamps in user kernel; do
                "$X" latency -c "$c" --rate "$rate" --duration "$DURATION" --delay 1 --tags 5000 \
                    --repetitions 1 --timeout 300 --set tester.timestamps=$stamps --json "$OUT/l.json" >/dev/null
                l="latency-$what $rate $stamps $rep $(summary "$OUT/l.json" forward_tl_ms forward_wcl_ms reverse_tl_ms reverse_wcl_ms)"
                echo "$l"; lines+=("$l")
                [ "$what" = loop ] && continue
                "$X" pdv -c "$c" --rate "$rate" --duration "$PDV_DURATION" --repetitions 1 --timeout 300 \
                    --set tester.timestamps=$stamps --json "$OUT/p.json" >/dev/null
                l="pdv $rate $stamps $rep $(summary "$OUT/p.json" forward_pdv_ms reverse_pdv_ms)"
                echo "$l"; lines+=("$l")
            done
        done
    done
done
echo "medians:"
printf '%s\n' "${lines[@]}" | python3 -c '
import sys, statistics
rows = {}
for l in sys.stdin:
    p = l.split()
    rows.setdefault((p[0], p[1], p[2]), []).append([float(x) for x in p[4:]])
for k, v in rows.items():
    print(*k, *("%.6f" % statistics.median(c) for c in zip(*v)))'
