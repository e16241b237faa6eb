#!/usr/bin/env bash
# Benchmark: xlatperf's sender (the trial's hot path, unpaced) on kernel backends into one end
# of a veth pair with no DUT, one core, in one run: with several backends they take turns
# (afxdp, afpacket, afxdp, ...) so that the machine's load falls on all alike. Prints the median
# frames/s of RUNS runs per backend and IP version and, with two backends, the ratio first/second.
#   bench/veth_sender.sh [SECONDS] [RUNS] [--set KEY=VALUE ...]
# Environment: BACKENDS="afxdp afpacket" (the default; one or more of afxdp, afpacket),
#   XLATPERF=path, PERF=1: afterwards one more run per backend and IP version under
#   `perf record -a -g`, and the share of the samples in the kernel, in user space and in the
#   system-call entry (where the CPU time goes: the sender's own code or the kernel's path).
# Needs root; creates namespace xlat-procedures and removes it on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-3}; RUNS=${2:-5}; shift $(( $# >= 2 ? 2 : $# )) || true
read -r -a BACKENDS <<< "${BACKENDS:-afxdp afpacket}"
X=${XLATPERF:-target/release/xlatperf}
NS=xlat-procedures
TMP=$(mktemp -d)
CONF=$TMP/bench.toml
cleanup() { ip netns del $NS 2>/dev/null || true; rm -rf "$TMP"; }
trap cleanup EXIT
ip netns del $NS 2>/dev/null || true
ip netns add $NS
ip -n $NS link add xlat-ba type veth peer name xlat-bb
ip -n $NS link set xlat-ba up
ip -n $NS link set xlat-bb up
cat > "$CONF" <<TOML
[tester]
backend = "afpacket"
left_port = "xlat-ba"
right_port = "xlat-bb"
netns = "$NS"
[left]
ip_version = 4
ipv4_real = "198.18.0.2"
ipv6_real = "2001:2::2"
dut_mac = "02:00:00:00:00:02"
[right]
ip_version = 4
ipv4_real = "198.19.0.2"
ipv6_real = "2001:2:0:8000::2"
dut_mac = "02:00:00:00:00:01"
[traffic]
reverse = false
TOML
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
# send <backend> <ip version> [wrapper ...]: frames/s of one run
send() {
    local b=$1 v=$2
    shift 2
    "$@" "$X" bench-sender -c "$CONF" --seconds "$SECS" --frame-size 84 --core 0 \
        --set tester.backend="$b" --set left.ip_version="$v" --set right.ip_version="$v" "${EXTRA[@]}" \
        2>/dev/null | awk '/sender frames\/s/ {print $3}'
}
EXTRA=("$@")
for v in 4 6; do
    size=$([ "$v" = 4 ] && echo 64 || echo 84)
    for b in "${BACKENDS[@]}"; do : > "$TMP/$b"; done
    for _ in $(seq "$RUNS"); do
        for b in "${BACKENDS[@]}"; do send "$b" "$v" >> "$TMP/$b"; done
    done
    medians=()
    for b in "${BACKENDS[@]}"; do
        m=$(median < "$TMP/$b")
        medians+=("$m")
        echo "$b-veth $v ${size}B median $m frames/s (runs: $(tr '\n' ' ' < "$TMP/$b"))"
    done
    if [ "${#BACKENDS[@]}" -ge 2 ]; then
        echo "ratio ${BACKENDS[0]}/${BACKENDS[1]} IPv$v: $(awk -v a="${medians[0]}" -v b="${medians[1]}" 'BEGIN {printf "%.2f", a/b}')"
    fi
    if [ "${PERF:-0}" = 1 ]; then
        for b in "${BACKENDS[@]}"; do
            fps=$(send "$b" "$v" perf record -q -o "$TMP/perf.data" -a -g --)
            perf report -i "$TMP/perf.data" --no-children --sort dso --stdio -g none 2>/dev/null > "$TMP/dso"
            perf report -i "$TMP/perf.data" --no-children --sort sym --stdio -g none 2>/dev/null > "$TMP/sym"
            kernel=$(awk '/\[kernel/ {s += $1} END {printf "%.1f", s}' "$TMP/dso")
            user=$(awk '/%/ && !/\[kernel/ && !/^#/ {s += $1} END {printf "%.1f", s}' "$TMP/dso")
            sys=$(awk '/entry_SYSCALL|do_syscall_64|__sys_sendto|__x64_sys_sendto|__libc_sendto|syscall_exit/ {s += $1} END {printf "%.1f", s}' "$TMP/sym")
            echo "perf $b IPv$v: $fps frames/s; samples in the kernel $kernel %, in user space $user %, system-call entry and exit $sys %"
            echo "  hottest: $(grep '%' "$TMP/sym" | grep -v '^#' | head -5 | awk '{printf "%s %s; ", $1, $3}')"
        done
    fi
done
