#!/usr/bin/env bash
# Instructions per frame of dpdk-testpmd's txonly sender (burst 32, net_null vdev), counted by
# valgrind's callgrind as bench/instructions.sh counts xlatperf's: testpmd runs twice, SHORT and
# LONG seconds (stopped with SIGINT; `--stats-period 1` keeps it forwarding until then, where
# its prompt would read the end of stdin and stop at once), and the difference of the counts over the difference of
# the frames sent (its final TX-total) leaves out start-up. The like-for-like figure beside
# xlatperf's `fixedreset` line: the same work per mbuf, the same DPDK libraries and driver.
# (Valgrind hides AVX-512: testpmd's Debian build does not use it on this path either.)
#   bench/testpmd_instructions.sh        one line: testpmd <ip version> <instructions per frame>
# Environment: IP (4: 60-byte frames; 6: 80-byte frames, still IPv4 as bench/sender.sh sends
# them), SHORT (default 12), LONG (default 24), TESTPMD (default dpdk-testpmd).
set -euo pipefail
command -v valgrind >/dev/null || { echo "Error: valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }
TESTPMD=${TESTPMD:-dpdk-testpmd}
command -v "$TESTPMD" >/dev/null || { echo "Error: $TESTPMD not found (apt-get install dpdk)" >&2; exit 1; }
IP=${IP:-4}; SHORT=${SHORT:-12}; LONG=${LONG:-24}
len=60; [ "$IP" = 6 ] && len=80
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
# frames sent and instructions counted in one run of SECONDS seconds
run() {
    local log=$work/log
    timeout -s INT "$1" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$TESTPMD" \
        --no-huge -m 1024 --no-pci --no-shconf --vdev net_null0 -l 0,1 --main-lcore 0 -- \
        --no-mlockall --forward-mode=txonly --txpkts="$len" --burst=32 --txq=1 --rxq=1 --nb-cores=1 --stats-period 1 \
        > "$log" 2>&1 < /dev/null || true
    local frames ir
    frames=$(awk '/TX-total:/ { print $NF; exit }' "$log")
    ir=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$log")
    if [ -z "$frames" ] || [ -z "$ir" ]; then
        echo "Error: no count from testpmd (its log follows)" >&2
        tail -n 30 "$log" >&2
        return 1
    fi
    echo "$frames $ir"
}
short=$(run "$SHORT")
long=$(run "$LONG")
read -r f1 i1 <<<"$short"
read -r f2 i2 <<<"$long"
awk -v ip="$IP" -v f1="$f1" -v i1="$i1" -v f2="$f2" -v i2="$i2" \
    'BEGIN { df = f2 - f1; if (df <= 0) { print "Error: no more frames in the long run" > "/dev/stderr"; exit 1 }
             printf "testpmd %s %.1f\n", ip, (i2 - i1) / df }'
