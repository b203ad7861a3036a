#!/usr/bin/env bash
# Profiler overhead on a real CoreCLR: wall time of the JitHeavy program
# (thousands of distinct methods and generic instantiations, each JIT-compiled
# once; see docs/e2e.md) run
#   (a) with no profiler,
#   (b) with examples/jit_tracer.rs naming every JIT-compiled method into a
#       file (JIT_TRACER_OUTPUT),
#   (c) with examples/runtime_events.rs (GC, exception, load and thread
#       events; summary written to a file at shutdown).
# The configurations are interleaved (A B C A B C ...) after one untimed
# warm-up run of each, so drift (caches, other load) hits all three alike.
# Prints a markdown table: median, min and max seconds, and the ratios of
# the medians to (a); and how many methods the tracer named.
#
#   bash scripts/bench-runtime.sh            # 7 timed runs per configuration
#   RUNS=15 bash scripts/bench-runtime.sh
#
# Environment: RUNS (default 7, at least 1); CORPROF_DOTNET as for
# scripts/provision-dotnet.sh; runtime settings such as COMPlus_TieredCompilation
# (.NET Core 3.1 ignores the DOTNET_ prefix) pass through to every run alike. The examples are built in release mode.
set -euo pipefail
cd "$(dirname "$0")/.."

die() { printf 'bench-runtime: error: %s\n' "$*" >&2; exit 1; }
log() { printf 'bench-runtime: %s\n' "$*" >&2; }

runs="${RUNS:-7}"
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive integer, got '$runs'"

JIT_TRACER_CLSID="{DF63A541-5A33-4611-8829-F4E495985EE3}"
RUNTIME_EVENTS_CLSID="{C5E5A2F1-3B7D-4C59-9E1A-2F0B6D8C4A17}"
JITHEAVY_EXIT=44

# --- Provision: reuse the KEY=VALUE lines the script prints. ---------------
log "provisioning (scripts/provision-dotnet.sh)"
provision_out=$(bash scripts/provision-dotnet.sh) || die "provisioning failed; see .cache/provision-dotnet.log"
DOTNET_HOST="" DOTNET_RUNTIME_VERSION="" E2E_PROGRAMS_DIR="" CORPROF_DOTNET_MODE=""
while IFS='=' read -r key value; do
    case "$key" in
        DOTNET_HOST | DOTNET_RUNTIME_VERSION | E2E_PROGRAMS_DIR | CORPROF_DOTNET_MODE) printf -v "$key" '%s' "$value" ;;
    esac
done <<<"$provision_out"
[ -x "$DOTNET_HOST" ] || die "provisioning printed no usable DOTNET_HOST"
program_dir="$E2E_PROGRAMS_DIR/JitHeavy"
[ -f "$program_dir/JitHeavy.dll" ] || die "JitHeavy was not built in $program_dir"

# --- Build the example profilers in release mode and locate them. ----------
log "building examples jit_tracer and runtime_events (release)"
artifacts=$(cargo build --release --example jit_tracer --example runtime_events \
    --message-format=json 2>/dev/null) || die "cargo build --release failed (run it by hand to see why)"
library() { # the cdylib cargo reported for example $1
    python3 -c 'import json, sys
name = sys.argv[1]
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == name:
        for f in m["filenames"]:
            if f.endswith((".so", ".dylib", ".dll")):
                print(f)' "$1" <<<"$artifacts"
}
tracer_lib=$(library jit_tracer)
events_lib=$(library runtime_events)
[ -f "$tracer_lib" ] || die "libjit_tracer not found among cargo's artifacts"
[ -f "$events_lib" ] || die "libruntime_events not found among cargo's artifacts"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
trace_file="$scratch/jit-trace.txt"
events_file="$scratch/runtime-events.txt"

# --- One run: prints its wall time in seconds. ------------------------------
run_once() { # config a|b|c
    local config=$1 start end code=0
    local -a env_args=(
        -u CORECLR_ENABLE_PROFILING -u CORECLR_PROFILER -u CORECLR_PROFILER_PATH
        -u CORECLR_PROFILER_PATH_64 -u JIT_TRACER_OUTPUT -u RUNTIME_EVENTS_OUTPUT
        DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
    )
    case "$config" in
        a) ;;
        b) rm -f "$trace_file"
           env_args+=(CORECLR_ENABLE_PROFILING=1 "CORECLR_PROFILER=$JIT_TRACER_CLSID"
                      "CORECLR_PROFILER_PATH=$tracer_lib" "JIT_TRACER_OUTPUT=$trace_file") ;;
        c) rm -f "$events_file"
           env_args+=(CORECLR_ENABLE_PROFILING=1 "CORECLR_PROFILER=$RUNTIME_EVENTS_CLSID"
                      "CORECLR_PROFILER_PATH=$events_lib" "RUNTIME_EVENTS_OUTPUT=$events_file") ;;
    esac
    start=$(date +%s%N)
    (cd "$program_dir" && env "${env_args[@]}" "$DOTNET_HOST" exec \
        --runtimeconfig JitHeavy.runtimeconfig.json JitHeavy.dll) \
        >"$scratch/stdout" 2>"$scratch/stderr" || code=$?
    end=$(date +%s%N)
    if [ "$code" -ne "$JITHEAVY_EXIT" ]; then
        cat "$scratch/stderr" >&2
        die "configuration ($config): JitHeavy exited with $code, expected $JITHEAVY_EXIT"
    fi
    grep -qx 'checksum matches generator: True' "$scratch/stdout" \
        || die "configuration ($config): JitHeavy printed a wrong checksum"
    case "$config" in
        b) [ -s "$trace_file" ] || die "the JIT tracer wrote no trace" ;;
        c) grep -qx 'runtime events summary' "$events_file" 2>/dev/null \
               || die "the runtime-events profiler wrote no summary" ;;
    esac
    awk -v s="$start" -v e="$end" 'BEGIN { printf "%.4f\n", (e - s) / 1e9 }'
}

log "warming up (one untimed run of each configuration)"
for config in a b c; do run_once "$config" >/dev/null; done

declare -a times_a=() times_b=() times_c=()
declare -a named=()
for ((i = 1; i <= runs; i++)); do
    log "round $i of $runs"
    times_a+=("$(run_once a)")
    times_b+=("$(run_once b)")
    named+=("$(grep -c '^jit: ' "$trace_file" || true)")
    times_c+=("$(run_once c)")
done

# Median (lower middle for an even count), min, max of the arguments.
stats() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { printf "%s %s %s\n", a[int((NR + 1) / 2)], a[1], a[NR] }'; }
read -r med_a min_a max_a <<<"$(stats "${times_a[@]}")"
read -r med_b min_b max_b <<<"$(stats "${times_b[@]}")"
read -r med_c min_c max_c <<<"$(stats "${times_c[@]}")"
ratio() { awk -v x="$1" -v y="$2" 'BEGIN { printf "%.2f", x / y }'; }

unnamed=$(grep -c '^jit: .*(no name' "$trace_file" || true)
own=$(grep -c '^jit: E2E\.JitHeavy\.' "$trace_file" || true)
read -r named_med named_min named_max <<<"$(stats "${named[@]}")"

echo "## Profiler overhead on a real runtime (JitHeavy, .NET $DOTNET_RUNTIME_VERSION, $CORPROF_DOTNET_MODE)"
echo
echo "$runs timed runs per configuration, interleaved (a b c a b c ...) after one warm-up run each;"
echo "wall time of the whole process (runtime start-up, JIT of every method, shutdown). Release builds of the examples."
echo "Tiered compilation: ${COMPlus_TieredCompilation:+COMPlus_TieredCompilation=$COMPlus_TieredCompilation}${COMPlus_TieredCompilation:-runtime default (on; 3.1 reads only COMPlus_TieredCompilation)}."
echo
echo "| configuration | median s | min s | max s | median / (a) |"
echo "|---|---|---|---|---|"
echo "| (a) no profiler | $med_a | $min_a | $max_a | 1.00 |"
echo "| (b) jit_tracer, every name to a file | $med_b | $min_b | $max_b | $(ratio "$med_b" "$med_a") |"
echo "| (c) runtime_events | $med_c | $min_c | $max_c | $(ratio "$med_c" "$med_a") |"
echo
if [ "$named_min" = "$named_max" ]; then
    echo "Work done in (b): the tracer named $named_med methods per run (lines \`jit: ...\` in its output),"
else
    echo "Work done in (b): the tracer named $named_min to $named_max methods per run (median $named_med; lines \`jit: ...\`),"
fi
echo "$own of them JitHeavy's own (\`E2E.JitHeavy.*\`), the rest from the framework; $unnamed without a name in the last run."
echo "Raw seconds (a): ${times_a[*]}"
echo "Raw seconds (b): ${times_b[*]}"
echo "Raw seconds (c): ${times_c[*]}"
