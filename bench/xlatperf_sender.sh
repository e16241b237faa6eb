#!/usr/bin/env bash
# OURS_CMD for bench/sender.sh: xlatperf's own sender (`xlatperf bench-sender`, the trial's hot
# path unpaced) on a DPDK net_null vdev. Takes bench/sender.sh's `--set ip=4|6 --set size=N
# --set seconds=S --set core=C --set port=net_null0`, `--set reset=1` (bench-sender
# --reset-mbufs) and `--set responder=N` (bench-sender --responder N); every other --set KEY=VALUE goes to
# xlatperf as a configuration override (e.g. --set traffic.forward_ports.sport.variation=pseudorandom).
# Prints `tx_fps=<frames/s>`. With `--set receiver=1` it runs the receiver's benchmark instead
# (`xlatperf bench-receiver`: the same frames sent into a net_ring pair and taken back by a
# trial's receiver on the same core; `reset=1` changes nothing there) and prints
# `rx_frames=<frames counted>`. On hugepages unless HUGE=0 (then --no-huge).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
X=${XLATPERF:-$ROOT/target/release/xlatperf}
ip=4; size=64; seconds=5; core=1; port=net_null0; receiver=0; reset=0; pass=(); extra=()
while [ $# -gt 0 ]; do
    [ "$1" = --set ] && [ $# -ge 2 ] || { echo "usage: --set KEY=VALUE ..." >&2; exit 2; }
    case $2 in
        ip=*) ip=${2#ip=} ;;
        size=*) size=${2#size=} ;;
        seconds=*) seconds=${2#seconds=} ;;
        core=*) core=${2#core=} ;;
        port=*) port=${2#port=} ;;
        # reset=1: every mbuf reset and its frame written whole, as testpmd txonly does.
        reset=1) reset=1 ;;
        receiver=1) receiver=1 ;;
        # responder=N: the Responder's phase 2 sender on N made-up connections.
        responder=*) extra+=(--responder "${2#responder=}") ;;
        *) pass+=(--set "$2") ;;
    esac
    shift 2
done
[ "$reset" = 1 ] && [ "$receiver" = 0 ] && extra+=(--reset-mbufs)
# siitperf's size parameter is the IPv6 frame size; IPv4 frames are 20 bytes shorter.
fs=$size; [ "$ip" = 4 ] && fs=$((size + 20))
conf=$(mktemp --suffix .toml); trap 'rm -f "$conf"' EXIT
ports=("$port" "$port"); vdev=", \"--vdev\", \"$port\""
# xlatperf adds --in-memory on hugepages itself.
mem=; [ "${HUGE:-1}" = 1 ] || mem='"--no-huge", "-m", "1024", "--no-shconf", '

[ "$receiver" = 1 ] && ports=(ring:a ring:b) && vdev=
cat > "$conf" <<TOML
[tester]
backend = "dpdk"
left_port = "${ports[0]}"
right_port = "${ports[1]}"
eal_args = [$mem"--no-pci"$vdev, "-l", "$core"]
loopback = true
[left]
ip_version = $ip
ipv4_real = "198.18.0.2"
ipv6_real = "2001:2::2"
[right]
ip_version = $ip
ipv4_real = "198.19.0.2"
ipv6_real = "2001:2:0:8000::2"
[traffic]
reverse = false
seed = 1
TOML
if [ "$receiver" = 1 ]; then
    out=$("$X" bench-receiver -c "$conf" --seconds "$seconds" --frame-size "$fs" --core "$core" ${extra[@]+"${extra[@]}"} ${pass[@]+"${pass[@]}"} 2>"${XLAT_BENCH_LOG:-/dev/null}")
    echo "rx_frames=$(printf '%s\n' "$out" | awk '/^receiver frames:/ {print $3}')"
    exit 0
fi
out=$("$X" bench-sender -c "$conf" --seconds "$seconds" --frame-size "$fs" --core "$core" ${extra[@]+"${extra[@]}"} ${pass[@]+"${pass[@]}"} 2>"${XLAT_BENCH_LOG:-/dev/null}")
echo "tx_fps=$(printf '%s\n' "$out" | awk '/sender frames\/s/ {print $3}')"
