#!/usr/bin/env bash
# Instructions per frame of xlatperf's sender (`xlatperf bench-sender` on a DPDK net_null vdev),
# counted by valgrind's callgrind: unlike frames/s, the count does not depend on what else the
# machine runs, so two modes compare exactly on a noisy host. (Valgrind hides AVX-512: the AVX2
# code paths are counted.) Each mode runs twice, SHORT and LONG seconds; the difference of the
# counts over the difference of the frames sent leaves out start-up.
# The receiver's instructions per frame are counted beside them: `xlatperf bench-receiver` sends the
# mode's frames into a DPDK net_ring pair and a trial's receiver takes them back in full bursts on
# the same thread; callgrind counts only inside the receiving (`--toggle-collect`), over the frames
# it counted (RECV seconds). The receiver's side of `fixedreset` is `fixed`'s (the same frames);
# of the stateful phase 1 modes, the Responder's (it learns each foreground frame's tuple).
#   bench/instructions.sh [MODES]      (modes as bench/modes.sh; default "ports enum")
# One line per mode: <mode> <ip version> <sender instructions per frame> <receiver's>
# Environment: IP (4 or 6, default 4), SHORT (default 1), LONG (default 3), RECV (default 1),
# XLATPERF.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "Error: valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }
# shellcheck source=bench/mode_sets.sh
. bench/mode_sets.sh
X=${XLATPERF:-$PWD/target/release/xlatperf}
# Instructions do not depend on the page size: without hugepages by default (valgrind, and the
# figures of earlier sessions); HUGE=1 runs on them.
export HUGE=${HUGE:-0}
IP=${IP:-4}; SHORT=${SHORT:-1}; LONG=${LONG:-3}; RECV=${RECV:-1}
# The frame sizes of bench/sender.sh (with FCS): IPv4 64 bytes, IPv6 84 bytes.
size=64; [ "$IP" = 6 ] && size=84
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cat > "$work/x" <<WRAP
#!/usr/bin/env bash
exec valgrind --tool=callgrind --callgrind-out-file=/dev/null "$X" "\$@" 2>"\$VG_LOG"
WRAP
cat > "$work/r" <<WRAP
#!/usr/bin/env bash
exec valgrind --tool=callgrind --callgrind-out-file=/dev/null --toggle-collect='*receive_all*' "$X" "\$@" 2>"\$VG_LOG"
WRAP
chmod +x "$work/x" "$work/r"
# frames sent and instructions counted in one run of SECONDS seconds
run() {
    local secs=$1; shift
    local fps
    fps=$(VG_LOG="$work/log" XLATPERF="$work/x" bash bench/xlatperf_sender.sh --set ip="$IP" --set size="$size" --set seconds="$secs" --set core=1 "$@" | cut -d= -f2)
    local ir
    ir=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$work/log")
    if [ -z "$fps" ] || [ -z "$ir" ]; then
        echo "Error: no count for $* (valgrind's log follows)" >&2
        cat "$work/log" >&2
        return 1
    fi
    echo "$fps $ir $secs"
}
# the receiver's instructions per frame
receiver() {
    local frames ir
    frames=$(VG_LOG="$work/rlog" XLATPERF="$work/r" bash bench/xlatperf_sender.sh --set receiver=1 --set ip="$IP" --set size="$size" --set seconds="$RECV" --set core=1 "$@" | cut -d= -f2)
    ir=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$work/rlog")
    if [ -z "$frames" ] || [ -z "$ir" ] || [ "$frames" = 0 ]; then
        echo "Error: no receiver count for $* (valgrind's log follows)" >&2
        cat "$work/rlog" >&2
        return 1
    fi
    awk -v i="$ir" -v f="$frames" 'BEGIN { printf "%.1f", i / f }'
}
for m in ${@:-ports enum}; do
    sets=$(mode_sets "$m") || exit 2
    # shellcheck disable=SC2086
    short=$(run "$SHORT" $sets) || exit 1
    # shellcheck disable=SC2086
    long=$(run "$LONG" $sets) || exit 1
    # shellcheck disable=SC2086
    rx=$(receiver $sets) || exit 1
    read -r f1 i1 s1 <<<"$short"
    read -r f2 i2 s2 <<<"$long"
    awk -v m="$m" -v ip="$IP" -v f1="$f1" -v i1="$i1" -v s1="$s1" -v f2="$f2" -v i2="$i2" -v s2="$s2" -v rx="$rx" \
        'BEGIN { df = f2 * s2 - f1 * s1; if (df <= 0) { print "Error: no more frames in the long run" > "/dev/stderr"; exit 1 }
                 printf "%s %s %.1f %s\n", m, ip, (i2 - i1) / df, rx }'
done
