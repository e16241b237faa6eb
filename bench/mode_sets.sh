#!/usr/bin/env bash
# The configuration overrides of each traffic mode of bench/modes.sh (and bench/instructions.sh):
# `mode_sets MODE` prints them (nothing for fixed), or fails for an unknown mode.
P="--set traffic.forward_ports.sport.variation=pseudorandom --set traffic.forward_ports.dport.variation=pseudorandom"
I="--set left.ip_variation.variation=pseudorandom --set right.ip_variation.variation=pseudorandom"
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
        *) echo "unknown mode $1 (fixed fixedreset ports ips both rsport isport rdport idport nets netsports enum enuminc enumips responder)" >&2; return 2 ;;
    esac
}
