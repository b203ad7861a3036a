#!/usr/bin/env bash
# The e2e suites under load, several times in a row: whoever adds a test
# that depends on timing runs this before merging it (docs/e2e.md, "Tests
# under load").
#
#   bash scripts/ci/test-under-load.sh [RUNS] [-- cargo test arguments]
#
# Starts one CPU hog per core at the lowest priority (`nice -n 19`, a shell
# loop: the suites keep priority, as a CI machine shared with other jobs
# gives them), then runs `cargo test --test 'e2e_*'` (or the arguments after
# `--`) RUNS times (default 10) on CORPROF_RUNTIME (default 10.0), and
# prints, for each run, its result, duration and load average, and the tests
# that failed; the exit status is 1 when any run failed. The hogs end with
# the script. Everything a run printed is in target/test-under-load/run-N.log.
set -euo pipefail
cd "$(dirname "$0")/../.."

runs=10
if [ $# -gt 0 ] && [ "$1" != "--" ]; then
    runs=$1
    shift
fi
[ "${1:-}" = "--" ] && shift
if [ $# -gt 0 ]; then
    args=("$@")
else
    args=(--test 'e2e_*')
fi
case "$runs" in
'' | *[!0-9]*) echo "test-under-load: RUNS must be a number, not '$runs'" >&2; exit 2 ;;
esac

export CORPROF_RUNTIME=${CORPROF_RUNTIME:-10.0}
out=target/test-under-load
mkdir -p "$out"

# Build everything first, without load, so the runs time tests, not rustc.
cargo test --no-run "${args[@]}" >"$out/build.log" 2>&1 \
    || { echo "test-under-load: the build failed (see $out/build.log)" >&2; exit 1; }

hogs=()
cleanup() { [ ${#hogs[@]} -eq 0 ] || kill "${hogs[@]}" 2>/dev/null || true; }
trap cleanup EXIT
cores=$(nproc)
for _ in $(seq "$cores"); do
    nice -n 19 bash -c 'while :; do :; done' &
    hogs+=($!)
done
echo "test-under-load: $cores CPU hogs at nice 19; $runs runs of cargo test ${args[*]} on CORPROF_RUNTIME=$CORPROF_RUNTIME"

failed_runs=0
for n in $(seq "$runs"); do
    log="$out/run-$n.log"
    start=$(date +%s)
    if cargo test "${args[@]}" >"$log" 2>&1; then
        result=ok
    else
        result=FAILED
        failed_runs=$((failed_runs + 1))
    fi
    seconds=$(($(date +%s) - start))
    passed=$(awk '/^test result:/ { p += $4 } END { print p + 0 }' "$log")
    failed=$(awk '/^test result:/ { f += $6 } END { print f + 0 }' "$log")
    printf 'run %2d: %-6s %4d s, %d passed, %d failed, load %s\n' \
        "$n" "$result" "$seconds" "$passed" "$failed" "$(cut -d' ' -f1-3 /proc/loadavg)"
    grep -E '^test .* FAILED$' "$log" | sed 's/^/        /' || true
done
echo "test-under-load: $((runs - failed_runs)) of $runs runs passed"
[ "$failed_runs" -eq 0 ]
