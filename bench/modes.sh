#!/usr/bin/env bash
# Sender efficiency in the traffic modes of Tables 4-5 of G. Lencse, "Making stateless and
# stateful network performance measurements unbiased" (2024) against testpmd txonly (burst
# 32) on the same net_null vdev and core, in one run: fixed frames, RFC 4814 pseudorandom ports,
# pseudorandom IP addresses (16 bits per side), both; fixedreset (fixed frames with testpmd's
# work per mbuf: each reset and its frame written whole, the like-for-like line); and the port modes of Table VII of
# G. Lencse, "Adding RFC 4814 random port feature to siitperf":
# rsport (pseudorandom source port), isport (increasing source port), rdport, idport (the same
# for the destination port); and those of Table VIII, with 256 destination networks per
# direction: nets (fixed ports), netsports (pseudorandom ports). And the stateful Initiator's
# phase 1 sender (RFC 9693): enum (unique pseudorandom enumeration of all RFC 4814 port pairs,
# 64,512 x 49,151 = 3.2 billion connections, computed per frame), enumips (the same over
# 65,536 x 65,536 address pairs, ports fixed), enuminc (increasing enumeration of the port pairs);
# and the Responder's phase 2 sender: responder (10,000 connections, each frame's chosen
# pseudorandomly; its frames are IPv4 in both lines: "ip 6" is then the Responder of a NAT64);
# and the CE side of MAP-E (mape: IPv4 in IPv6) and MAP-T (mapt: IPv6), 1,000 CEs, one line each.
# One line per mode and IP version:
#   <mode> <ip version> <xlatperf frames/s> <testpmd frames/s> <ratio>
# Environment as bench/sender.sh (REPS, DURATION, CORE, XLATPERF). Extra arguments: MODES to run.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/mode_sets.sh
. bench/mode_sets.sh
for mode in "${@:-fixed fixedreset ports ips both}"; do
    for m in $mode; do
        sets=$(mode_sets "$m") || exit 2
        # The MAP modes set both sides' IP versions themselves: one line, the CE side's frames
        # (64-byte IPv4 inside), and testpmd sends frames as long: MAP-E's tunnel 104 bytes,
        # MAP-T's IPv6 84 (with FCS).
        ips="4 6" len=
        case $m in mape) ips=4 len=100 ;; mapt) ips=4 len=80 ;; esac
        # shellcheck disable=SC2086
        IPS=$ips TESTPMD_LEN=$len WHAT=$m bench/sender.sh $sets
    done
done
