#!/usr/bin/env bash
# Cost of CallTarget wrapping on a real CoreCLR (docs/performance.md,
# "CallTarget"): the CallTargetBench program warms up as an application
# does (100 rounds of 10,000 calls, 20 ms apart: tiered compilation takes
# every method to its final tier), then calls a NoInlining
# `int Add(int, int)` CALLS times (default 10,000,000) and prints the time
# per call (Stopwatch), the bytes its thread allocated meanwhile
# (GC.GetAllocatedBytesForCurrentThread, exact), and the time to the final
# tier (the calls made, and the milliseconds from the first call, before
# the warm-up rounds ran within 1.5x of the measured time per call).
# Configurations, all under the release build of examples/call_target.rs
# at the runtime's and the example's defaults (tiered compilation on,
# inlining on):
#   unwrapped       the profiler loaded, its target a method never called
#   noop            Add wrapped for CorProf.CallTarget.NoopIntegration
#   counting        Add wrapped for CorProf.CallTarget.CountingIntegration
#   handcounted     unwrapped, the loop calling AddCounted: Add with
#                   CountingIntegration's two Interlocked increments written
#                   in by hand (the baseline of `counting`: what the
#                   integration's own work costs without any wrapping)
# and, as extra labelled rows, unwrapped and noop with tiered compilation
# off (a lab setting). Rounds are interleaved (every configuration once per
# round) after one untimed warm-up round; prints a markdown table of
# medians, the nanoseconds added per call against `unwrapped` of the same
# tiering setting, and bytes per call.
#
#   bash scripts/bench/bench-calltarget.sh          # 7 rounds
#   RUNS=15 CALLS=20000000 bash scripts/bench/bench-calltarget.sh
#
# CORPROF_RUNTIME picks the provisioned runtime (scripts/provision/provision-dotnet.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."

die() { printf 'bench-calltarget: error: %s\n' "$*" >&2; exit 1; }
log() { printf 'bench-calltarget: %s\n' "$*" >&2; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

runs="${RUNS:-7}"
calls="${CALLS:-10000000}"
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive integer, got '$runs'"
[[ "$calls" =~ ^[1-9][0-9]*$ ]] || die "CALLS must be a positive integer, got '$calls'"

log "provisioning (scripts/provision/provision-dotnet.sh)"
provision_out=$(bash scripts/provision/provision-dotnet.sh) || die "provisioning failed; see .cache/provision-dotnet.log"
value() { printf '%s\n' "$provision_out" | sed -n "s/^$1=//p" | tail -n 1; }
host=$(value DOTNET_HOST)
version=$(value DOTNET_RUNTIME_VERSION)
programs=$(value E2E_PROGRAMS_DIR)
[ -x "$host" ] || die "provisioning printed no usable DOTNET_HOST"
bench="$programs/CallTargetBench/CallTargetBench.dll"
helper="$programs/CallTargetProbe/CallTargetProbe.dll"
[ -f "$bench" ] && [ -f "$helper" ] || die "CallTargetBench or CallTargetProbe was not built in $programs"
log "building examples/call_target.rs (release)"
cargo build --quiet --release --example call_target || die "cargo build failed"
library="$PWD/target/release/examples/libcall_target.so"

configs=(unwrapped-default noop-default counting-default handcounted-default unwrapped-tieringoff noop-tieringoff)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# run CONFIG -> "ns_per_call bytes_per_call final_tier_calls final_tier_ms"
# (fails on a run that did not wrap what it should, or printed no result)
run() {
    local config="$1" target=Add integration=NoopIntegration tiering=() args=() out
    case "$config" in
        unwrapped-*) target=Unused ;;
        handcounted-*) target=Unused args=(--hand-counted) ;;
        counting-*) integration=CountingIntegration ;;
    esac
    case "$config" in *-tieringoff) tiering=(COMPlus_TieredCompilation=0 DOTNET_TieredCompilation=0) ;; esac
    out=$(env DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 "${tiering[@]}" \
        CORECLR_ENABLE_PROFILING=1 \
        CORECLR_PROFILER='{8D2E4A61-3B7C-4F59-A0E8-C51F9B27D364}' \
        CORECLR_PROFILER_PATH="$library" \
        DOTNET_STARTUP_HOOKS="$helper" CORPROF_CALLTARGET_HELPER="$helper" \
        CORPROF_CALLTARGET="CallTargetBench!E2E.CallTargetBench.Program::$target" \
        CORPROF_CALLTARGET_INTEGRATION="CorProf.CallTarget.$integration" \
        "$host" exec "$bench" "$calls" "${args[@]}" 2>"$scratch/err") || die "$config: the program failed: $(cat "$scratch/err")"
    if [ "$target" = Add ]; then
        grep -q '^calltarget: wrapped E2E.CallTargetBench.Program::Add$' "$scratch/err" ||
            die "$config: Add was not wrapped: $(cat "$scratch/err")"
    fi
    printf '%s\n' "$out" | sed -n 's/.*ns_per_call=\([0-9.]*\) allocated=[0-9]* bytes_per_call=\([0-9.]*\).* final_tier_calls=\([0-9a-z]*\) final_tier_ms=\([0-9a-z]*\).*/\1 \2 \3 \4/p'
}

log "warm-up round"
for c in "${configs[@]}"; do run "$c" >/dev/null; done
for ((r = 1; r <= runs; r++)); do
    log "round $r of $runs"
    for c in "${configs[@]}"; do
        read -r ns bytes tier_calls tier_ms <<<"$(run "$c")"
        [ -n "$ns" ] || die "$c printed no result"
        echo "$ns" >>"$scratch/$c.ns"
        echo "$bytes" >>"$scratch/$c.bytes"
        echo "$tier_calls" >>"$scratch/$c.tiercalls"
        echo "$tier_ms" >>"$scratch/$c.tierms"
    done
done

# The median of a column that may say "never" (sorted after every number).
median_tier() { sed 's/^never$/1e99/' | median | sed 's/^1e99$/never/'; }
echo "## CallTarget: $calls calls of NoInlining int Add(int, int), .NET $version, median of $runs interleaved rounds"
echo
echo "| configuration | tiered compilation | ns per call | added ns per call | bytes per call | calls to final tier | ms to final tier |"
echo "|---|---|---:|---:|---:|---:|---:|"
for c in "${configs[@]}"; do
    ns=$(median <"$scratch/$c.ns")
    bytes=$(sort -g "$scratch/$c.bytes" | tail -n 1)
    case "$c" in *-tieringoff) tc="off (lab)"; base=unwrapped-tieringoff ;; *) tc="on (default)"; base=unwrapped-default ;; esac
    base_ns=$(median <"$scratch/$base.ns")
    added=$(awk -v a="$ns" -v b="$base_ns" 'BEGIN {printf "%.2f", a - b}')
    echo "| ${c%-*} | $tc | $ns | $added | $bytes (max) | $(median_tier <"$scratch/$c.tiercalls") | $(median_tier <"$scratch/$c.tierms") |"
done
# Per round (the two ran back to back): counting - handcounted.
diffs=$(paste -d' ' "$scratch/counting-default.ns" "$scratch/handcounted-default.ns" | awk '{printf "%.2f\n", $1 - $2}')
echo
echo "CountingIntegration against the same counting written by hand into Add (handcounted), per round: median $(median <<<"$diffs") ns per call (rounds: $(tr '\n' ' ' <<<"$diffs"))"
echo
echo "Command: RUNS=$runs CALLS=$calls bash scripts/bench/bench.sh calltarget"
