#!/bin/bash
# Throughput with a stateful DUT, in the style of siitperf's scripts/binary-rate-alg.sh-sf:
# a binary search on the phase 2 rate, each step with its own phase 1 (N = M connections at
# R); the whole test is run again while it says "Failed to fill state table" (siitperf's loop
# has no bound; this one stops after 3). A step passes when both directions received
# xpts * r frames; an "invalid" line fails it.
max=${MAX:-40000}
N=${N:-10000}; M=$N; R=${PR:-20000}; T=500
D=$((1000*N/R+2*T))
fs=84; xpts=2; to=500; n=2; m=2
e=${E:-1000}
startcmd=${STARTCMD:-true}
l=0; h=$max
for (( i=1; $((h-l)) > $e; i++ ))
do
	r=$(((h+l)/2))
	for attempt in 1 2 3; do
		$startcmd
		./build/siitperf-tp $fs $r $xpts $to $n $m $N $M $R $T $D > temp.out 2>&1
		grep -q 'Failed to fill state table' temp.out || break
		echo "rate $r: Failed to fill state table, again"
	done
	if grep -q 'Failed to fill state table' temp.out; then echo "Failed to fill state table 3 times"; exit 1; fi
	if grep -q 'Error:' temp.out; then echo "Error occurred, testing must stop."; cat temp.out; exit 1; fi
	fwd_rec=$(grep 'Forward frames received:' temp.out | awk '{print $4}')
	rev_rec=$(grep 'Reverse frames received:' temp.out | awk '{print $4}')
	expected=$((xpts*r))
	if grep -q invalid temp.out; then
		echo "rate $r: invalid"
		h=$r
	elif [ $fwd_rec -eq $expected ] && [ $rev_rec -eq $expected ]; then
		echo "rate $r: forward $fwd_rec reverse $rev_rec of $expected PASSED"
		l=$r
	else
		echo "rate $r: forward $fwd_rec reverse $rev_rec of $expected FAILED"
		h=$r
	fi
done
echo "Throughput: $l"
