#!/usr/bin/env bash
# Coverage-guided fuzzing of every reader of outside input, with AFL++ through afl.rs on stable
# Rust (cargo-afl, which scripts/setup.sh installs): each target runs for SECONDS, seeded from
# the repository's own files (examples/*.conf, examples/*.toml, examples/campaigns/*.toml; each
# siitperf.conf with command lines of the three programs, for siitperf_args) and
# from valid frames, a pcap file and result documents that make_seeds writes. Prints a table:
#
#   target  seconds  inputs_tried  inputs_per_s  paths  crashes  hangs
#
# and exits 1 if any target crashed (the inputs are listed: each becomes a unit test).
#
#   fuzz/run.sh SECONDS [TARGET...]     (targets: siitperf_conf siitperf_args toml_config plan result_doc
#                                        frame pcap)
#
# Environment: JOBS=N targets at a time (default 1), OUT=DIR to keep the corpora and crashes
# (default: a temporary directory, removed at the end).
set -euo pipefail
cd "$(dirname "$0")"
export PATH="$HOME/.cargo/bin:$PATH"
secs=${1:?usage: fuzz/run.sh SECONDS [TARGET...]}
shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(siitperf_conf siitperf_args toml_config plan result_doc frame pcap)
JOBS=${JOBS:-1}
keep=${OUT:-}
OUT=${OUT:-$(mktemp -d /tmp/xlat-fuzz.XXXXXX)}
mkdir -p "$OUT"
[ -n "$keep" ] || trap 'rm -rf "$OUT"' EXIT

cargo afl build --release --locked -q
seeds=$OUT/seeds
rm -rf "$seeds"
target/release/make_seeds "$seeds"
mkdir -p "$seeds/siitperf_conf" "$seeds/toml_config" "$seeds/plan"
cp ../examples/*.conf "$seeds/siitperf_conf/"
cp ../examples/*.toml "$seeds/toml_config/"
cp ../examples/campaigns/*.toml "$seeds/plan/"
# siitperf_args: a siitperf.conf, NUL, then argv a line each (fuzz_targets/siitperf_args.rs).
mkdir -p "$seeds/siitperf_args"
n=0
for conf in ../examples/*.conf; do
    for line in "siitperf-tp 84 10000 10 2000 2 2" "siitperf-tp 84 10000 10 2000 2 2 100000 100000 50000 500 3000" \
        "siitperf-lat 84 10000 10 2000 2 2 5 500" "siitperf-lat 84 10000 10 2000 2 2 100000 100000 50000 500 3000 5 500" \
        "siitperf-pdv 1538 10000 10 2000 2 1 1000" "siitperf-pdv 84 10000 10 2000 5 3 8 6 1000 1 1000 0"; do
        { cat "$conf"; printf '\0%s' "$line" | tr ' ' '\n'; } >"$seeds/siitperf_args/$n"
        n=$((n + 1))
    done
done

# A container's core_pattern pipes to a handler AFL cannot see; no CPU frequency governor to
# check; the two cores may be shared (no binding); no screen.
export AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_SKIP_CPUFREQ=1 AFL_NO_AFFINITY=1 AFL_NO_UI=1

fuzz_one() { # TARGET
    local t=$1
    rm -rf "$OUT/$t"
    # -V: stop after SECONDS; the outer timeout is the deadline should AFL not stop.
    timeout $((secs + 120)) cargo afl fuzz -V "$secs" -i "$seeds/$t" -o "$OUT/$t" "target/release/$t" \
        >"$OUT/$t.log" 2>&1 || { echo "Error: afl-fuzz $t failed:" >&2; tail -n 20 "$OUT/$t.log" >&2; return 1; }
}

running=0
for t in "${targets[@]}"; do
    fuzz_one "$t" &
    running=$((running + 1))
    if [ "$running" -ge "$JOBS" ]; then
        wait -n
        running=$((running - 1))
    fi
done
wait

stat() { awk -F' *: *' -v k="$2" '$1 == k {print $2}' "$OUT/$1/default/fuzzer_stats"; }
printf '%-14s %8s %13s %13s %7s %8s %6s\n' target seconds inputs_tried inputs_per_s paths crashes hangs
crashed=0
for t in "${targets[@]}"; do
    execs=$(stat "$t" execs_done)
    run=$(( $(stat "$t" last_update) - $(stat "$t" start_time) ))
    crashes=$(stat "$t" saved_crashes)
    printf '%-14s %8s %13s %13s %7s %8s %6s\n' "$t" "$run" "$execs" "$((execs / (run > 0 ? run : 1)))" \
        "$(stat "$t" corpus_count)" "$crashes" "$(stat "$t" saved_hangs)"
    if [ "$crashes" != 0 ]; then
        crashed=1
        ls "$OUT/$t/default/crashes/" | grep -v README | sed "s|^|  crash: $OUT/$t/default/crashes/|"
    fi
done
if [ "$crashed" = 1 ]; then
    echo "Error: crashes found (kept in $OUT: run with OUT=DIR to keep them); make each input a unit test" >&2
    trap - EXIT
    exit 1
fi
