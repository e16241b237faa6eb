#!/bin/bash
# Maximum connection establishment rate, in the style of siitperf's scripts/binary-rate-alg.sh-R:
# a binary search on R with N = M connections; phase 2 is one frame per second for a second.
# A step passes when the Responder received all N frames of phase 1 and nothing says invalid;
# "Failed to fill state table" fails it, any other Error: stops the search. An "invalid" trial
# (phase 1 ended more than 1/R late: the tester missed its own schedule) is run again, three runs
# in all, as binary-search.sh does (siitperf's script fails the step at once, which on a shared
# machine gives a rate too low); each run and retry is a line in $XLAT_RETRY_LOG when it is set.
max=${MAX:-80000}   # upper bound of R
N=${N:-10000}; M=$N
T=500; fs=84; to=500; n=2; m=2
e=${E:-2000}
startcmd=${STARTCMD:-true}
l=0; h=$max
for (( i=1; $((h-l)) > $e; i++ ))
do
	$startcmd
	r=$(((h+l)/2))
	D=$((1000*N/r+2*T))
	for attempt in 1 2 3; do
		./build/siitperf-tp $fs 1 1 $to $n $m $N $M $r $T $D > temp.out 2>&1
		[ -n "$XLAT_RETRY_LOG" ] && echo "run conn-rate.sh R $r" >> "$XLAT_RETRY_LOG"
		grep -q invalid temp.out && [ $attempt -lt 3 ] || break
		echo "R $r: invalid, again: $(grep invalid temp.out | head -1)"
		[ -n "$XLAT_RETRY_LOG" ] && echo "retry conn-rate.sh R $r: $(grep invalid temp.out | head -1)" >> "$XLAT_RETRY_LOG"
		sleep 1 # out of what took the core, if it was brief
		$startcmd
	done
	error=$(grep 'Error:' temp.out)
	if [ -n "$error" ]; then
		failedtofill=$(grep 'Failed to fill state table' temp.out)
		if [ -z "$failedtofill" ]; then
			echo "Error occurred, testing must stop."; cat temp.out; exit 1
		fi
	fi
	invalid=$(grep 'invalid' temp.out)
	pre_rec=$(grep 'Preliminary frames received:' temp.out | awk '{print $4}')
	if [ -z "$failedtofill" ] && [ -z "$invalid" ] && [ $pre_rec -eq $N ]; then
		echo "R $r: PASSED"
		l=$r
	else
		echo "R $r: FAILED (received $pre_rec of $N)"
		h=$r
	fi
	failedtofill=""
done
echo "Connection establishment rate: $l"
