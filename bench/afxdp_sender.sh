#!/usr/bin/env bash
# Benchmark: xlatperf's sender (the trial's hot path, unpaced) on the afxdp and the afpacket
# backend into one end of a veth pair with no DUT, one core, in one run: the two backends take
# turns (afxdp, afpacket, afxdp, ...) so that the machine's load falls on both alike. Prints
# the median frames/s of N runs per backend and IP version, and the afxdp/afpacket ratio.
#   bench/afxdp_sender.sh [SECONDS] [RUNS] [--set KEY=VALUE ...]
# Needs root; creates namespace xlat-bench and removes it on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-3}; RUNS=${2:-5}; shift $(( $# >= 2 ? 2 : $# )) || true
X=${XLATPERF:-target/release/xlatperf}
NS=xlat-bench
cleanup() { ip netns del $NS 2>/dev/null || true; rm -f "$CONF"; }
CONF=$(mktemp --suffix .toml)
trap cleanup EXIT
ip netns del $NS 2>/dev/null || true
ip netns add $NS
ip -n $NS link add xlat-ba type veth peer name xlat-bb
ip -n $NS link set xlat-ba up
ip -n $NS link set xlat-bb up
cat > "$CONF" <<TOML
[tester]
backend = "afxdp"
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
for v in 4 6; do
    xdp=(); afp=()
    for _ in $(seq "$RUNS"); do
        for b in afxdp afpacket; do
            fps=$($X bench-sender -c "$CONF" --seconds "$SECS" --frame-size 84 --core 0 \
                  --set tester.backend=$b --set left.ip_version=$v --set right.ip_version=$v "$@" 2>/dev/null \
                  | awk '/sender frames\/s/ {print $3}')
            if [ $b = afxdp ]; then xdp+=("$fps"); else afp+=("$fps"); fi
        done
    done
    size=$([ $v = 4 ] && echo 64 || echo 84)
    mx=$(printf '%s\n' "${xdp[@]}" | median); mp=$(printf '%s\n' "${afp[@]}" | median)
    echo "afxdp-veth $v ${size}B median $mx frames/s (runs: ${xdp[*]})"
    echo "afpacket-veth $v ${size}B median $mp frames/s (runs: ${afp[*]})"
    echo "ratio afxdp/afpacket IPv$v: $(awk -v a="$mx" -v b="$mp" 'BEGIN {printf "%.2f", a/b}')"
done
