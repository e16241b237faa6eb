#!/bin/bash
# A stateful trial in the style of siitperf's scripts: ./build/siitperf-tp with N M R T D, the
# DUT's connection table emptied first (siitperf runs no DUT commands; scripts do, e.g. by ssh).
fs=84; r=${R:-5000}; xpts=2; to=2000; n=2; m=2
N=${N:-2000}; M=${M:-2000}; R=${PR:-10000}; T=1000; D=${D:-2000}
${FLUSH:-true}
./build/siitperf-tp $fs $r $xpts $to $n $m $N $M $R $T $D >stateful.out 2>&1
if grep -q "Error:" stateful.out; then echo "Error:"; cat stateful.out; exit 1; fi
expected=$((r * xpts))
fwd=$(grep "Forward frames received:" stateful.out | awk '{print $4}')
rev=$(grep "Reverse frames received:" stateful.out | awk '{print $4}')
echo "stateful: forward $fwd reverse $rev of $expected"
