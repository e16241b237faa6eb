#!/usr/bin/env bash
# Benchmark: xlatperf's sender on the afxdp against the afpacket backend into a bare veth, one
# core, taking turns in one run; the ratio afxdp/afpacket (BENCHMARKS.md). PERF=1 adds where the
# time goes.   bench/afxdp_sender.sh [SECONDS] [RUNS] [--set KEY=VALUE ...]   (bench/veth_sender.sh)
exec env BACKENDS="afxdp afpacket" "$(dirname "$0")/veth_sender.sh" "$@"
