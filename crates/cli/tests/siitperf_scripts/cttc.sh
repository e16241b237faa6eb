#!/bin/bash
# Connection tracking table capacity, in the style of siitperf's scripts/cttc.sh: an
# exponential then a binary search over the number of connections C, each step a binary search
# for the maximum connection establishment rate at C with a validation (the Responder sends to
# every learnt tuple once: 'Reverse frames sent' must equal 'Reverse frames received').
# siitperf.conf wants 'Forward 0' and 'Responder-tuples 1' (xlatperf lab up ... --siitperf-dir
# prints this). The comparisons are siitperf's, unquoted: an empty value makes a test pass.
# Parameters (siitperf's names); the environment may set them, smaller than siitperf's so that
# a whole search takes a minute.
C0=${C0:-5000}          # a safe size to start from
alpha=${ALPHA:-1}       # validation rate = alpha * r (bash arithmetic: 1/10 works)
beta=2/10               # unacceptable drop of R in the exponential search
gamma=4/10              # unacceptable drop of R in the final binary search
E=${CAP_E:-2500}        # resolution of the capacity
max=${MAX:-1000000}     # upper bound of the rate search
T=500                   # global timeout of phase 1 (ms)
startcmd=${STARTCMD:-true}  # DUT: start with an empty connection table
stopcmd=${STOPCMD:-true}    # DUT: empty it again
countcmd=${COUNTCMD:-true}  # DUT: its number of entries
fs=84; to=500; n=2; m=2
e=${RATE_E:-125000}     # resolution of the rate search
sleept=0

echo "No, ExpIt, C0, R0, CS, RS, CT, RT, FinBinIt, C" > rate.csv
: > ratetest.log

function binary_search_for_maximum_connection_establishment_rate() {
	C=$1; l=0; h=$2; N=$C; M=$C; R=0; goon=1
	for (( i=1; ( $((h-l)) > $e ) && $goon; i++ ))
	do
		$startcmd
		r=$(((h+l)/2))
		vr=$((r*$alpha))
		duration=$(((N/vr)+1))
		D=$((1000*N/r+2*T))
		echo "Command line is: ./build/siitperf-tp $fs $vr $duration $to $n $m $N $M $r $T $D" >> ratetest.log
		./build/siitperf-tp $fs $vr $duration $to $n $m $N $M $r $T $D > temp.out 2>&1
		cat temp.out >> ratetest.log
		echo "Right after the test DUT's connection count is:" $($countcmd) >> ratetest.log
		$stopcmd
		error=$(grep 'Error:' temp.out)
		if [ -n "$error" ]; then
			failedtofill=$(grep 'Failed to fill state table' temp.out)
			if [ -n "$failedtofill" ]; then
				echo "Failed to fill state table: therefore, this iteration is failed" >> ratetest.log
			else
				echo "Error occurred, testing must stop."; cat temp.out; exit 1
			fi
		fi
		pre_rec=$(grep 'Preliminary frames received:' temp.out | awk '{print $4}')
		if [ $pre_rec -eq $N ]; then
			val_snt=$(grep 'Reverse frames sent:' temp.out | awk '{print $4}')
			val_rec=$(grep 'Reverse frames received:' temp.out | awk '{print $4}')
			if [ $val_rec -eq $val_snt ]; then
				echo "C $C r $r: Validation PASSED" >> ratetest.log
				l=$r; R=$r
			else
				echo "C $C r $r: Validation FAILED" >> ratetest.log
				h=$r
				if [ $r -lt $stoprate ]; then goon=0; fi
			fi
		else
			echo "C $C r $r: Preliminary phase FAILED" >> ratetest.log
			h=$r
			if [ $r -lt $stoprate ]; then goon=0; fi
		fi
		sleep $sleept
	done
}

stoprate=$e
binary_search_for_maximum_connection_establishment_rate $C0 $max
R0=$R
echo "C0 $C0: R0 $R0"
# (siitperf's script would search on forever with R0 = 0: every size would "pass" at rate 0.)
if [ $R0 -eq 0 ]; then echo "No rate passed with C0 connections"; exit 1; fi
for (( CS=$C0, RS=$R0, I=1; 1; CS=$CT, RS=$RT, I++ ))
do
	CT=$((2*CS))
	stoprate=$(($RS*$beta))
	binary_search_for_maximum_connection_establishment_rate $CT $RS
	RT=$R
	echo "exponential: CT $CT RT $RT (stop below $stoprate)"
	if [ $RT -lt $stoprate ]; then break; fi
done
expresult="1, $I, $C0, $R0, $CS, $RS, $CT, $RT"
for (( d=$((CT-CS)), J=1; $d>$E; d=$((CT-CS)), J++ ))
do
	C=$(((CS+CT)/2))
	stoprate=$(($RS*$gamma))
	binary_search_for_maximum_connection_establishment_rate $C $RS
	echo "final: C $C R $R (stop below $stoprate)"
	if [ $R -lt $stoprate ]; then
		CT=$C
	else
		CS=$C; RS=$R
	fi
done
echo "$expresult, $J, $CS" >> rate.csv
echo "Capacity: $CS"
