#!/bin/bash
# Throughput with a stateful DUT, in the style of siitperf's scripts/binary-rate-alg.sh-sf:
# a binary search on the phase 2 rate, each step with its own phase 1 (N = M connections at
# R); the whole test is run again while it says "Failed to fill state table" (siitperf's loop
# has no bound; this one stops after 3). A step passes when both directions received
# xpts * r frames. An "invalid" trial (the tester missed its own schedule, e.g. phase 1 ended
# more than 1/R late because another process took the core) is run again too, three runs in all
# with the fills, as binary-search.sh does; only one that stays invalid fails the step
# (siitperf's script fails it at once, which on a shared machine gives a throughput too low).
# Each run and retry is a line in $XLAT_RETRY_LOG when it is set (scripts/test.sh judges them).
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
		[ -n "$XLAT_RETRY_LOG" ] && echo "run stateful-throughput.sh rate $r" >> "$XLAT_RETRY_LOG"
		if grep -q 'Failed to fill state table' temp.out; then
			echo "rate $r: Failed to fill state table, again"
		elif grep -q invalid temp.out && [ $attempt -lt 3 ]; then
			echo "rate $r: invalid, again: $(grep invalid temp.out | head -1)"
			[ -n "$XLAT_RETRY_LOG" ] && echo "retry stateful-throughput.sh rate $r: $(grep invalid temp.out | head -1)" >> "$XLAT_RETRY_LOG"
			sleep 1 # out of what took the core, if it was brief
		else
			break
		fi
	done
	if grep -q 'Failed to fill state table' temp.out; then echo "Failed to fill state table 3 times"; exit 1; fi
	if grep -q 'Error:' temp.out; then echo "Error occurred, testing must stop."; cat temp.out; exit 1; fi
	fwd_rec=$(grep 'Forward frames received:' temp.out | awk '{print $4}')
	rev_rec=$(grep 'Reverse frames received:' temp.out | awk '{print $4}')
	expected=$((xpts*r))
	if grep -q invalid temp.out; then
		echo "rate $r: invalid: $(grep invalid temp.out | head -1)"
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
