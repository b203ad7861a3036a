#!/usr/bin/env bash
# JIT-time cost of wrapping methods with CallTarget: the JitHeavy program
# (2,000 small static methods, each called once) under the release build of
# examples/call_target.rs with CountingIntegration, wrapping 1,000 of them
# (E2E.JitHeavy.C0..C19::M0..M49) against wrapping one, in interleaved runs;
# the process's CPU time (user + system, /usr/bin/time). Prints the medians
# and (1,000 - 1) wraps' cost per wrapped method. BASELINE_LIB=PATH adds a
# third and fourth column: the same two runs with another build of the
# example (for instance one built from an older commit), interleaved too.
#
#   bash scripts/bench/bench.sh wrapjit
#   RUNS=15 BASELINE_LIB=/tmp/old/libcall_target.so bash scripts/bench/bench-wrap-jit.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
die() { printf 'bench-wrap-jit: error: %s\n' "$*" >&2; exit 1; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
runs="${RUNS:-9}"
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive integer, got '$runs'"
[ -x /usr/bin/time ] || die "/usr/bin/time is missing (Debian's time package)"
out=$(bash scripts/provision/provision-dotnet.sh) || die "provisioning failed"
value() { printf '%s\n' "$out" | sed -n "s/^$1=//p" | tail -n 1; }
host=$(value DOTNET_HOST); dir="$(value E2E_PROGRAMS_DIR)/JitHeavy"
cargo build --quiet --release --example call_target || die "cargo build failed"
lib="$PWD/target/release/examples/libcall_target.so"
scratch=$(mktemp -d); trap 'rm -rf "$scratch"' EXIT
bash scripts/gen/build-calltarget-helper.sh "$scratch/CorProf.CallTarget.dll" >/dev/null || die "helper build failed"
many=$(python3 -c "print(';'.join(f'JitHeavy!E2E.JitHeavy.C{c}::M{m}' for c in range(20) for m in range(50)))")
one='JitHeavy!E2E.JitHeavy.C0::M0'
# run LIB TARGETS -> CPU seconds; fails unless every target ran wrapped.
run() {
    local n; n=$(tr ';' '\n' <<<"$2" | wc -l)
    CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER='{8D2E4A61-3B7C-4F59-A0E8-C51F9B27D364}' \
    CORECLR_PROFILER_PATH="$1" CORPROF_CALLTARGET="$2" \
    CORPROF_CALLTARGET_HELPER="$scratch/CorProf.CallTarget.dll" DOTNET_STARTUP_HOOKS="$scratch/CorProf.CallTarget.dll" \
    CORPROF_CALLTARGET_INTEGRATION=CorProf.CallTarget.CountingIntegration DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 \
        /usr/bin/time -o "$scratch/time" -f "%U %S" "$host" exec --runtimeconfig "$dir/JitHeavy.runtimeconfig.json" \
        "$dir/JitHeavy.dll" >/dev/null 2>"$scratch/err" || [ $? = 44 ] || die "JitHeavy failed: $(tail -3 "$scratch/err")"
    grep -q "calltarget counts begin $n end $n " "$scratch/err" || die "not every target ran wrapped: $(grep counts "$scratch/err")"
    awk '{print $1 + $2}' "$scratch/time"
}
libs=("$lib"); [ -z "${BASELINE_LIB:-}" ] || libs+=("$BASELINE_LIB")
for i in $(seq "$runs"); do
    for k in "${!libs[@]}"; do
        echo "$(run "${libs[$k]}" "$many")" >>"$scratch/many-$k"
        echo "$(run "${libs[$k]}" "$one")" >>"$scratch/one-$k"
    done
done
echo "## JIT-time cost of wrapping (scripts/bench/bench-wrap-jit.sh)"
echo
echo "JitHeavy, CountingIntegration, $runs interleaved runs, medians of CPU seconds (user + system):"
echo
echo "| build | 1,000 targets | 1 target | per wrapped method |"
echo "|---|---:|---:|---:|"
for k in "${!libs[@]}"; do
    m=$(median <"$scratch/many-$k"); o=$(median <"$scratch/one-$k")
    python3 -c "print(f'| ${libs[$k]} | {$m:.3f} s | {$o:.3f} s | {($m - $o) / 999 * 1e6:.0f} us |')"
done
