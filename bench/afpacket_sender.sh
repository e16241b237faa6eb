#!/usr/bin/env bash
# Benchmark: xlatperf's sender on the afpacket backend into a bare veth, one core (BENCHMARKS.md).
#   bench/afpacket_sender.sh [SECONDS] [RUNS] [--set KEY=VALUE ...]   (bench/veth_sender.sh)
exec env BACKENDS=afpacket "$(dirname "$0")/veth_sender.sh" "$@"
