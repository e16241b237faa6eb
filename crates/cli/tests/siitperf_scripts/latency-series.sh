#!/bin/bash
# A latency series in the style of siitperf's scripts: ./build/siitperf-lat, TL and WCL per run.
fs=84; r=${R:-5000}; xpts=3; to=2000; n=2; m=2; delay=1; ts=${TS:-50}
for i in 1 2; do
    ./build/siitperf-lat $fs $r $xpts $to $n $m $delay $ts >lat.$i.out 2>&1
    if grep -q "Error:" lat.$i.out; then echo "Error:"; cat lat.$i.out; exit 1; fi
    tl=$(grep "Forward TL:" lat.$i.out | awk '{print $3}')
    wcl=$(grep "Forward WCL:" lat.$i.out | awk '{print $3}')
    rtl=$(grep "Reverse TL:" lat.$i.out | awk '{print $3}')
    echo "run $i: Forward TL $tl WCL $wcl Reverse TL $rtl"
done
