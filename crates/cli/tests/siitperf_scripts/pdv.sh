#!/bin/bash
# A PDV run in the style of siitperf's scripts: ./build/siitperf-pdv with frame timeout 0.
fs=84; r=${R:-5000}; xpts=2; to=2000; n=2; m=2; ft=0
./build/siitperf-pdv $fs $r $xpts $to $n $m $ft >pdv.out 2>&1
if grep -q "Error:" pdv.out; then echo "Error:"; cat pdv.out; exit 1; fi
echo "Forward PDV $(grep 'Forward PDV:' pdv.out | awk '{print $3}') Reverse PDV $(grep 'Reverse PDV:' pdv.out | awk '{print $3}')"
