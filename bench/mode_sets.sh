#!/usr/bin/env bash
# The configuration overrides of each traffic mode of bench/modes.sh (and bench/instructions.sh):
# `mode_sets MODE` prints them (nothing for fixed), or fails for an unknown mode.
P="--set traffic.forward_ports.sport.variation=pseudorandom --set traffic.forward_ports.dport.variation=pseudorandom"
I="--set left.ip_variation.variation=pseudorandom --set right.ip_variation.variation=pseudorandom"
# Many MAP CEs (the lab's rule, 1,000 CEs from 198.18.0.2 PSID 1): each frame's CE and port.
M="--set left.map.rule_ipv6=2001:2:0:c000::/50 --set left.map.rule_ipv4=198.18.0.0/22 --set left.map.ea_bits=14 --set left.map.subscribers=1000"
CE=2001:2:0:c021:0:c612:2:1
S="--set stateful.mode=initiator-left --set right.ip_version=4 --set right.ipv6_virt=64:ff9b::c613:2"
mode_sets() {
    case $1 in
        fixed) echo ;;
        # fixed frames with testpmd txonly's work per mbuf: reset, headers written (like for like)
        fixedreset) echo "--set reset=1" ;;
        ports) echo $P ;;
        ips) echo $I ;;
        both) echo "$P $I" ;;
        rsport) echo "--set traffic.forward_ports.sport.variation=pseudorandom" ;;
        isport) echo "--set traffic.forward_ports.sport.variation=increasing" ;;
        rdport) echo "--set traffic.forward_ports.dport.variation=pseudorandom" ;;
        idport) echo "--set traffic.forward_ports.dport.variation=increasing" ;;
        nets) echo "--set right.num_nets=256" ;;
        netsports) echo "$P --set right.num_nets=256" ;;
        # The Responder is IPv4: "ip 6" is then the Initiator of a stateful NAT64.
        enum) echo "$P $S --set stateful.enumerate_ports=pseudorandom" ;;
        enuminc) echo "$P $S --set stateful.enumerate_ports=increasing" ;;
        enumips) echo "$I $S --set stateful.enumerate_ips=pseudorandom" ;;
        # The Responder's phase 2 sender on 10,000 connections, each frame's pseudorandomly.
        responder) echo "$S --set stateful.responder_tuples=pseudorandom --set responder=10000" ;;
        # MAP-E's CE side (IPv4 in IPv6: inner source, outer source, source port) and MAP-T's
        # (IPv6: source and source port), 1,000 CEs.
        mape) echo "$M --set left.ip_version=4 --set left.tunnel.local=$CE --set left.tunnel.remote=2001:2::1" ;;
        mapt) echo "$M --set left.ip_version=6 --set left.ipv6_real=$CE --set left.ipv4_virt=198.18.0.2 --set right.ip_version=4 --set right.ipv6_virt=2001:2:0:6464::c613:2" ;;
        *) echo "unknown mode $1 (fixed fixedreset ports ips both rsport isport rdport idport nets netsports enum enuminc enumips responder mape mapt)" >&2; return 2 ;;
    esac
}
