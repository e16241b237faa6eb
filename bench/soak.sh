#!/usr/bin/env bash
# Long runs stay bounded (issue 43): a latency trial and a PDV trial of MINUTES minutes each at
# a steady RATE frames/s per direction through `lab up router4`, the tester's resident memory
# (VmRSS, and its peak VmHWM) sampled every SAMPLE_S seconds. Prints one line per sample:
#
#   soak <latency|pdv> <seconds since start> <VmRSS KiB> <VmHWM KiB>
#
# then per trial: result <latency|pdv> <RSS at the first sample after one minute> <last RSS>
# <peak> <growth after the first minute, KiB> and the procedure's own result line.
# PDV uses its bounded histogram (the default; --exact keeps every delay and grows by design).
# One trial each, never run again (--retries 0): a retry would start a second trial.
# Usage: bench/soak.sh   Environment: MINUTES=30 RATE=20000 SAMPLE_S=60 TAGS=50000 X=path
# (TAGS: the latency trial's tagged frames per direction; their stamps, 16 bytes each, are
# paged in as the tags come, spread over the trial after the delay.) ONLY=latency|pdv runs one.
# Needs root; runs under the lab lock and takes the lab down at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
X=${X:-target/release/xlatperf}
MINUTES=${MINUTES:-30}
RATE=${RATE:-20000}
TAGS=${TAGS:-50000}
ONLY=${ONLY:-}
SAMPLE_S=${SAMPLE_S:-60}
OUT=$(mktemp -d /tmp/xlat-soak.XXXXXX)
[ -x "$X" ] || cargo build --release -q --features xlatperf/dpdk
exec 9>/tmp/xlat-lab.lock
flock 9
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; "$X" lab down >/dev/null 2>&1 || true; rm -rf "$OUT"' EXIT
conf=$("$X" lab up router4 --replace | tail -1)
secs=$((MINUTES * 60))
# RFC 8219: tags after 60 s; a short soak (a try of the script) tags its second half.
delay=$((secs > 120 ? 60 : secs / 2))

soak() { # NAME ARGS...
    local name=$1
    shift
    # A deadline over the trial's own: its length, the latency's delay, five minutes to spare.
    timeout $((secs + 360)) "$X" "$@" --json "$OUT/$name.json" >"$OUT/$name.txt" 2>"$OUT/$name.err" &
    pid=$!
    local start=$SECONDS first= last= peak=0
    while kill -0 "$pid" 2>/dev/null; do
        sleep "$SAMPLE_S" &
        wait $! || true
        # The tester's process: timeout's only child (whatever the binary is called: X may be a
        # copy named otherwise, and pgrep -x would miss it).
        local child
        child=$(pgrep -P "$pid" | head -n 1 || true)
        [ -n "$child" ] || continue
        local rss hwm
        rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$child/status" 2>/dev/null || true)
        hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$child/status" 2>/dev/null || true)
        [ -n "$rss" ] || continue
        echo "soak $name $((SECONDS - start)) $rss $hwm"
        if [ -z "$first" ] && [ $((SECONDS - start)) -ge 60 ]; then first=$rss; fi
        last=$rss
        [ "$hwm" -gt "$peak" ] && peak=$hwm
    done
    local rc=0
    wait "$pid" || rc=$?
    pid=
    # An invalid trial (the tester missed its schedule: on a shared host it may) is an error of
    # the procedure at a fixed rate, not of the soak: the memory curve stands; say so.
    if [ "$rc" != 0 ]; then
        echo "note: $name exited $rc: $(tail -n 1 "$OUT/$name.err")"
        [ "$rc" = 124 ] && { echo "Error: $name outlived its deadline" >&2; exit 1; }
    fi
    echo "result $name ${first:--} ${last:--} $peak $(( ${last:-0} - ${first:-0} ))"
    grep -m 3 -iE 'latency|pdv|lost' "$OUT/$name.txt" | sed 's/^/  /' || true
}

[ "$ONLY" = pdv ] || soak latency latency -c "$conf" --rate "$RATE" --duration "$secs" --delay "$delay" --tags "$TAGS" \
    --repetitions 1 --retries 0
[ "$ONLY" = latency ] || soak pdv pdv -c "$conf" --rate "$RATE" --duration "$secs" --repetitions 1 --retries 0
