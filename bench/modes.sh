#!/usr/bin/env bash
# Sender efficiency in the traffic modes of Tables 4-5 of G. Lencse, "Making stateless and
# stateful network performance measurements unbiased" (2024) against testpmd txonly (burst
# 32) on the same net_null vdev and core, in one run: fixed frames, RFC 4814 pseudorandom ports,
# pseudorandom IP addresses (16 bits per side), both; and the port modes of Table VII of
# G. Lencse, "Adding RFC 4814 random port feature to siitperf":
# rsport (pseudorandom source port), isport (increasing source port), rdport, idport (the same
# for the destination port); and those of Table VIII, with 256 destination networks per
# direction: nets (fixed ports), netsports (pseudorandom ports). And the stateful Initiator's
# phase 1 sender (RFC 9693): enum (unique pseudorandom enumeration of all RFC 4814 port pairs,
# 64,512 x 49,151 = 3.2 billion connections, computed per frame), enumips (the same over
# 65,536 x 65,536 address pairs, ports fixed), enuminc (increasing enumeration of the port pairs).
# One line per mode and IP version:
#   <mode> <ip version> <xlatperf frames/s> <testpmd frames/s> <ratio>
# Environment as bench/sender.sh (REPS, DURATION, CORE, XLATPERF). Extra arguments: MODES to run.
set -euo pipefail
cd "$(dirname "$0")/.."
P="--set traffic.forward_ports.sport.variation=pseudorandom --set traffic.forward_ports.dport.variation=pseudorandom"
I="--set left.ip_variation.variation=pseudorandom --set right.ip_variation.variation=pseudorandom"
S="--set stateful.mode=initiator-left --set right.ip_version=4 --set right.ipv6_virt=64:ff9b::c613:2"
for mode in "${@:-fixed ports ips both}"; do
    for m in $mode; do
        case $m in
            fixed) sets="" ;;
            ports) sets=$P ;;
            ips) sets=$I ;;
            both) sets="$P $I" ;;
            rsport) sets="--set traffic.forward_ports.sport.variation=pseudorandom" ;;
            isport) sets="--set traffic.forward_ports.sport.variation=increasing" ;;
            rdport) sets="--set traffic.forward_ports.dport.variation=pseudorandom" ;;
            idport) sets="--set traffic.forward_ports.dport.variation=increasing" ;;
            nets) sets="--set right.num_nets=256" ;;
            netsports) sets="$P --set right.num_nets=256" ;;
            # The Responder is IPv4: "ip 6" is then the Initiator of a stateful NAT64.
            enum) sets="$P $S --set stateful.enumerate_ports=pseudorandom" ;;
            enuminc) sets="$P $S --set stateful.enumerate_ports=increasing" ;;
            enumips) sets="$I $S --set stateful.enumerate_ips=pseudorandom" ;;
            *) echo "unknown mode $m (fixed ports ips both rsport isport rdport idport nets netsports enum enuminc enumips)" >&2; exit 2 ;;
        esac
        # shellcheck disable=SC2086
        WHAT=$m bench/sender.sh $sets
    done
done
