#!/bin/bash
# A throughput search in the style of siitperf's binary-rate-alg.sh: it runs ./build/siitperf-tp
# in the current directory (siitperf.conf beside it) and reads the lines siitperf prints. Used
# unchanged by xlatperf's tests (crates/cli/tests/lab_siitperf_dir.rs) against a directory that
# `xlatperf lab up <topology> --siitperf-dir DIR` prepared.
# Parameters as siitperf's scripts set them at their top; L, H and E may come from the environment.
fs=84      # IPv6 frame size
xpts=2     # duration of a trial (s)
to=2000    # global timeout (ms)
n=2        # foreground share n/m
m=2
l=${L:-1000}      # a rate known to pass
h=${H:-40000}     # a rate known to fail
e=${E:-1000}      # the search error
while [ $((h - l)) -gt $e ]; do
    r=$(((l + h) / 2))
    for attempt in 1 2 3; do
        ./build/siitperf-tp $fs $r $xpts $to $n $m >rate.$r.out 2>&1
        if grep -q "Error:" rate.$r.out; then
            echo "Error at rate $r:"; cat rate.$r.out; exit 1
        fi
        grep -q invalid rate.$r.out || break
        echo "invalid trial at rate $r, again"
    done
    fwd_rec=$(grep "Forward frames received:" rate.$r.out | awk '{print $4}')
    rev_rec=$(grep "Reverse frames received:" rate.$r.out | awk '{print $4}')
    expected=$((r * xpts))
    echo "rate $r: forward $fwd_rec reverse $rev_rec of $expected"
    if [ "$fwd_rec" -ge $expected ] && [ "$rev_rec" -ge $expected ]; then
        l=$r
    else
        h=$r
    fi
done
echo "Throughput: $l"
