#!/usr/bin/env bash
# The whole test suite, as CI runs it (as root on Debian 12): installs what it needs, checks
# formatting and lints, then runs unit, integration and lab tests (network namespaces with
# real DUTs) with the dpdk backend built in, in the ci profile (Cargo.toml: release without LTO).
set -euo pipefail
cd "$(dirname "$0")/.."
# Packages, toolchain and Python environments; not the release build (the tests build it).
XLAT_SETUP_BUILD=0 ./scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PATH"

echo "== rustfmt"
cargo fmt --all -- --check
echo "== clippy"
cargo clippy --profile ci --locked --workspace --all-targets --features xlatperf/dpdk -- -D warnings
echo "== tests"
# A test that cannot run here (not root, a tool missing) skips by returning early, which cargo
# counts as a pass and whose message it hides: each skip also appends a line to XLAT_SKIP_LOG,
# and any line there fails the suite below. (With CI=true a skip panics at once.)
XLAT_SKIP_LOG=$(mktemp /tmp/xlatperf-skips.XXXXXX)
export XLAT_SKIP_LOG
# Every run of a trial judged by the tester's own timing, and every retry of an invalid one,
# is a line here (crates/testkit/src/retry.rs); more than one retry per ten runs over
# the suite fails it below.
XLAT_RETRY_LOG=$(mktemp /tmp/xlatperf-retries.XXXXXX)
export XLAT_RETRY_LOG
# Lab tests create namespaces named xlat-*: leave none behind, even when a test fails.
trap 'target/ci/xlatperf lab down >/dev/null 2>&1 || true; rm -f "$XLAT_SKIP_LOG" "$XLAT_RETRY_LOG"' EXIT
# The summaries below are printed also when a test failed (they help to tell why).
status=0
cargo test --profile ci --locked --no-fail-fast --workspace --features xlatperf/dpdk 2>&1 | tee /tmp/xlatperf-test.log || status=$?
# The fuzz targets (a workspace of their own) build and run, two seconds each: the real run is
# `fuzz/run.sh 600` (BENCHMARKS.md).
echo "== fuzz targets"
JOBS=2 fuzz/run.sh 2 || status=$?
left=$(ip netns list | grep -c '^xlat-' || true)
if [ "$left" != 0 ]; then
    echo "Error: tests left $left xlat- namespaces behind" >&2
    exit 1
fi
passed=$(grep -E '^test result:' /tmp/xlatperf-test.log | awk '{p+=$4; f+=$6} END {print p+0}')
failed=$(grep -E '^test result:' /tmp/xlatperf-test.log | awk '{p+=$4; f+=$6} END {print f+0}')
echo "$passed passed, $failed failed"
runs=$(grep -c '^run ' "$XLAT_RETRY_LOG" || true)
retries=$(grep -c '^retry ' "$XLAT_RETRY_LOG" || true)
echo "timing-judged trials: $runs runs, $retries of them retries of an invalid trial"
grep '^retry ' "$XLAT_RETRY_LOG" | sed 's/^/  /' || true
if [ "$retries" -gt 3 ] && [ $((retries * 10)) -gt "$runs" ]; then
    echo "Error: more than one run in ten was a retry of an invalid trial (listed above)" >&2
    exit 1
fi
if [ "$status" != 0 ]; then
    echo "Error: cargo test failed (exit $status)" >&2
    exit "$status"
fi
if [ -s "$XLAT_SKIP_LOG" ]; then
    echo "Error: $(wc -l < "$XLAT_SKIP_LOG") tests skipped instead of running:" >&2
    sed 's/^/  /' "$XLAT_SKIP_LOG" >&2
    exit 1
fi
