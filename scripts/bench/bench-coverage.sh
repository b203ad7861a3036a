#!/usr/bin/env bash
# Coverage's cost (bash scripts/bench/bench.sh coverage): wall time of a CPU-bound
# program (tests/e2e/roslyn/CoverageBench: 20,000,000 calls of a small
# method with a branch, Release build as provision-dotnet.sh makes it) with the
# coverage example loaded against the same program without a profiler,
# runs interleaved (ABBA), at the runtime's defaults (tiered compilation,
# ReadyToRun; coverage keeps only the instrumented methods from being
# inlined). Prints a markdown table: medians and their ratio, and the
# rewriting time per instrumented method the example reports.
#
#   bash scripts/bench/bench-coverage.sh [PAIRS]     # default 8 pairs
#
# CORPROF_RUNTIME picks the runtime (10.0 when unset; 3.1, 8.0, 9.0, 11.0).
set -euo pipefail
cd "$(dirname "$0")/../.."
pairs="${1:-8}"

die() { printf 'error: %s\n' "$*" >&2; exit 1; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# shellcheck source=scripts/lib/sample-lib.sh
. scripts/lib/sample-lib.sh
sample_provision
dll="$programs/CoverageBench/CoverageBench.dll"
[ -f "$dll" ] || die "no $dll (scripts/provision/provision-dotnet.sh builds it)"
cargo build --quiet --release --example coverage
library="$PWD/target/release/examples/libcoverage.so"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# Runs the program under python3 so that its CPU time (user + system, all
# threads, from getrusage) is measured besides the wall time: on a shared
# machine the CPU time is the steadier of the two.
cpu_run() {
    python3 -c 'import resource, subprocess, sys
status = subprocess.call(sys.argv[2:], stdout=open(sys.argv[1] + ".out", "w"), stderr=open(sys.argv[1] + ".err", "w"))
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(round((r.ru_utime + r.ru_stime) * 1000))
sys.exit(status)' "$out/run" "$@"
}

run() { # with|without -> prints "wall_ms work_ms cpu_ms"; stderr kept in $out/err
    local start end cpu
    start=$(date +%s%N)
    if [ "$1" = with ]; then
        cpu=$(cpu_run env DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 \
            CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER='{2B8C6E57-9E0D-4F1A-8C3B-5D7A1E9F4C60}' \
            CORECLR_PROFILER_PATH="$library" CORPROF_COVERAGE_DIR="$out/reports" \
            "$host" exec --runtimeconfig "${dll%.dll}.runtimeconfig.json" "$dll") ||
            die "the instrumented run failed: $(tail -n 3 "$out/run.err")"
    else
        cpu=$(cpu_run env DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 \
            "$host" exec --runtimeconfig "${dll%.dll}.runtimeconfig.json" "$dll") ||
            die "the plain run failed: $(tail -n 3 "$out/run.err")"
    fi
    end=$(date +%s%N)
    cp "$out/run.err" "$out/err"
    echo "$(( (end - start) / 1000000 )) $(sed -n 's/^elapsed_ms=//p' "$out/run.out") $cpu"
}

run without >/dev/null # warm the file cache
with=() without=() with_work=() without_work=() with_cpu=() without_cpu=() rewrite=() inlines=()
for ((i = 0; i < pairs; i++)); do
    for which in $( ((i % 2 == 0)) && echo "without with" || echo "with without"); do
        read -r wall work cpu < <(run "$which")
        if [ "$which" = with ]; then
            with+=("$wall"); with_work+=("$work"); with_cpu+=("$cpu")
            # What this instrumented run's summary said ($out/err: the last run's stderr).
            rewrite+=("$(sed -n 's/.*failed; \([0-9.]*\) us of rewriting per method.*/\1/p' "$out/err" | tail -n 1)")
            inlines+=("$(sed -n 's/.* \([0-9]*\) inlinings of instrumented methods, \([0-9]*\) refused.*/\1 inlined, \2 refused/p' "$out/err" | tail -n 1)")
        else
            without+=("$wall"); without_work+=("$work"); without_cpu+=("$cpu")
        fi
    done
done
a=$(printf '%s\n' "${without[@]}" | median)
b=$(printf '%s\n' "${with[@]}" | median)
r=$(printf '%s\n' "${rewrite[@]}" | grep . | median)
aw=$(printf '%s\n' "${without_work[@]}" | median)
bw=$(printf '%s\n' "${with_work[@]}" | median)
ac=$(printf '%s\n' "${without_cpu[@]}" | median)
bc=$(printf '%s\n' "${with_cpu[@]}" | median)
echo "## Coverage: CPU-bound program, wall time ($pairs interleaved pairs, medians; runtime $runtime_version)"
echo
echo "| run | median CPU ms (process) | median wall ms (process) | median ms of the work (the program's Stopwatch) | all runs, CPU ms |"
echo "|---|---|---|---|---|"
echo "| without a profiler | $ac | $a | $aw | ${without_cpu[*]} |"
echo "| coverage example (lines and branches) | $bc | $b | $bw | ${with_cpu[*]} |"
echo
echo "Ratio instrumented/uninstrumented: process CPU time $(python3 -c "print(f'{$bc / $ac:.2f}x')"), process wall time $(python3 -c "print(f'{$b / $a:.2f}x')"), the work alone $(python3 -c "print(f'{$bw / $aw:.2f}x')"). Rewriting per instrumented method (median of the runs): $r us. Inlinings of instrumented methods, per run: $(printf '%s\n' "${inlines[@]}" | sort | uniq -c | sed 's/^ *\([0-9]*\) /\1 runs: /' | paste -sd';' | sed 's/;/; /g')."
