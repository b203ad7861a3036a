#!/usr/bin/env bash
# Cost of the enter/leave/tailcall hooks on a real CoreCLR: the CallHeavy
# program (Fib(30) and 3,000,000 calls of a small method: 5,692,537 calls,
# each with an enter and a leave hook; see docs/hooks.md) run
#   (a) with no profiler,
#   (b) with tests/fixtures/elt_nothing.rs: corprof's fast-path trampolines and
#       facade hooks that do nothing (every function hooked),
#   (c) with scripts/bench/bench-hooks-floor.c, CORPROF_FLOOR_MODE=bare: a C
#       profiler whose hooks are empty C functions (the floor),
#   (d) the same C profiler, CORPROF_FLOOR_MODE=saving: assembly hooks that
#       save the same registers as corprof's and call an empty C function,
#   (e) with examples/call_tree.rs (fast path, CORPROF_CALLTREE_FILTER=
#       E2E.CallHeavy): shadow stacks, call counts and times,
#   (f) tests/fixtures/elt_nothing.rs with ELT_NOTHING_ENTER_ONLY=1: enter hooks
#       only (no leave or tail-call hook installed: the runtime's stub).
# The C profiler is compiled with gcc here. Configurations are interleaved
# (a b c d e f a b c d e f ...) after one untimed warm-up run of each. Two
# times per run: the program's own timing of its call-heavy section
# (`section_us`, Stopwatch) and the process's wall time. Prints a markdown
# table of medians and ratios, and the hooks' cost per call (enter + leave)
# over the floor.
#
#   bash scripts/bench/bench-hooks.sh            # 9 timed runs per configuration
#   RUNS=15 bash scripts/bench/bench-hooks.sh
#
# Environment: RUNS (default 9); COMPlus_TieredCompilation (default 0 for
# every run alike, so no configuration runs tier-0 code); CORPROF_RUNTIME
# picks the runtime (scripts/provision/provision-dotnet.sh; 10.0 when unset). Linux
# x86-64 only (the C floor).
set -euo pipefail
cd "$(dirname "$0")/../.."

die() { printf 'bench-hooks: error: %s\n' "$*" >&2; exit 1; }
log() { printf 'bench-hooks: %s\n' "$*" >&2; }

runs="${RUNS:-9}"
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive integer, got '$runs'"
tiered="${COMPlus_TieredCompilation:-0}"
[ "$(uname -sm)" = "Linux x86_64" ] || die "the C floor is written for Linux x86-64"
command -v gcc >/dev/null || die "gcc is needed to build the C floor (apt-get install gcc)"

NOTHING_CLSID="{6D2A9E41-0B7C-4F35-8E16-C94A2B7D3F58}"
FLOOR_CLSID="{5A0F3B21-9C4E-4D7A-B12E-6F8D3C5B7A90}"
CALL_TREE_CLSID="{3C1F5E2A-7B9D-4E61-A8C4-5D2E9F0B1A73}"
CALLHEAVY_EXIT=46

log "provisioning (scripts/provision/provision-dotnet.sh)"
provision_out=$(bash scripts/provision/provision-dotnet.sh) || die "provisioning failed; see .cache/provision-dotnet.log"
DOTNET_HOST="" DOTNET_RUNTIME_VERSION="" E2E_PROGRAMS_DIR="" CORPROF_DOTNET_MODE=""
while IFS='=' read -r key value; do
    case "$key" in
        DOTNET_HOST | DOTNET_RUNTIME_VERSION | E2E_PROGRAMS_DIR | CORPROF_DOTNET_MODE) printf -v "$key" '%s' "$value" ;;
    esac
done <<<"$provision_out"
[ -x "$DOTNET_HOST" ] || die "provisioning printed no usable DOTNET_HOST"
program_dir="$E2E_PROGRAMS_DIR/CallHeavy"
[ -f "$program_dir/CallHeavy.dll" ] || die "CallHeavy was not built in $program_dir"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

log "building the C floor (gcc -O2) and examples elt_nothing, call_tree (release)"
floor_lib="$scratch/libfloor.so"
gcc -O2 -shared -fPIC -o "$floor_lib" scripts/bench/bench-hooks-floor.c || die "gcc failed on scripts/bench/bench-hooks-floor.c"
artifacts=$(cargo build --release --example elt_nothing --example call_tree \
    --message-format=json 2>/dev/null) || die "cargo build --release failed (run it by hand to see why)"
library() {
    python3 -c 'import json, sys
name = sys.argv[1]
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == name:
        for f in m["filenames"]:
            if f.endswith(".so"):
                print(f)' "$1" <<<"$artifacts"
}
nothing_lib=$(library elt_nothing)
tree_lib=$(library call_tree)
[ -f "$nothing_lib" ] || die "libelt_nothing.so not found among cargo's artifacts"
[ -f "$tree_lib" ] || die "libcall_tree.so not found among cargo's artifacts"

expected=""
# One run: prints "<section_us> <wall_us>".
run_once() { # config a|b|c|d|e|f
    local config=$1 start end code=0
    local -a env_args=(
        -u CORECLR_ENABLE_PROFILING -u CORECLR_PROFILER -u CORECLR_PROFILER_PATH
        -u CORECLR_PROFILER_PATH_64 -u CORPROF_FLOOR_MODE -u CORPROF_CALLTREE_DIR -u ELT_NOTHING_ENTER_ONLY
        DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
        "COMPlus_TieredCompilation=$tiered"
    )
    case "$config" in
        a) ;;
        b) env_args+=(CORECLR_ENABLE_PROFILING=1 "CORECLR_PROFILER=$NOTHING_CLSID" "CORECLR_PROFILER_PATH=$nothing_lib") ;;
        f) env_args+=(CORECLR_ENABLE_PROFILING=1 "CORECLR_PROFILER=$NOTHING_CLSID" "CORECLR_PROFILER_PATH=$nothing_lib"
                      ELT_NOTHING_ENTER_ONLY=1) ;;
        c) env_args+=(CORECLR_ENABLE_PROFILING=1 "CORECLR_PROFILER=$FLOOR_CLSID" "CORECLR_PROFILER_PATH=$floor_lib"
                      CORPROF_FLOOR_MODE=bare) ;;
        d) env_args+=(CORECLR_ENABLE_PROFILING=1 "CORECLR_PROFILER=$FLOOR_CLSID" "CORECLR_PROFILER_PATH=$floor_lib"
                      CORPROF_FLOOR_MODE=saving) ;;
        e) rm -rf "$scratch/tree"
           env_args+=(CORECLR_ENABLE_PROFILING=1 "CORECLR_PROFILER=$CALL_TREE_CLSID" "CORECLR_PROFILER_PATH=$tree_lib"
                      "CORPROF_CALLTREE_DIR=$scratch/tree" CORPROF_CALLTREE_FILTER=E2E.CallHeavy) ;;
    esac
    start=$(date +%s%N)
    (cd "$program_dir" && env "${env_args[@]}" "$DOTNET_HOST" exec \
        --runtimeconfig CallHeavy.runtimeconfig.json CallHeavy.dll) \
        >"$scratch/stdout" 2>"$scratch/stderr" || code=$?
    end=$(date +%s%N)
    if [ "$code" -ne "$CALLHEAVY_EXIT" ]; then
        cat "$scratch/stderr" >&2
        die "configuration ($config): CallHeavy exited with $code, expected $CALLHEAVY_EXIT"
    fi
    local results
    results=$(grep -v '^section_us=' "$scratch/stdout")
    if [ -z "$expected" ]; then expected=$results; fi
    [ "$results" = "$expected" ] || die "configuration ($config) changed the program's output"
    if [ "$config" = e ]; then
        grep -qx 'E2E.CallHeavy.Program.Main;E2E.CallHeavy.Program.Mix 3000000' "$scratch/tree/calls.folded" \
            || die "the call-tree profiler did not count the 3,000,000 calls of Mix"
    fi
    local section
    section=$(sed -n 's/^section_us=//p' "$scratch/stdout")
    echo "$section $(( (end - start) / 1000 ))"
}

log "warming up (one untimed run of each configuration)"
for config in a b c d e f; do run_once "$config" >/dev/null; done
calls=$(sed -n 's/^calls=//p' "$scratch/stdout")

declare -A sections=() walls=()
for ((i = 1; i <= runs; i++)); do
    log "round $i of $runs"
    for config in a b c d e f; do
        read -r s w <<<"$(run_once "$config")"
        sections[$config]+="$s "
        walls[$config]+="$w "
    done
done

median() { printf '%s\n' $1 | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
ratio() { awk -v x="$1" -v y="$2" 'BEGIN { printf "%.3f", x / y }'; }
per_call() { awk -v x="$1" -v y="$2" -v n="$calls" 'BEGIN { printf "%.1f", (x - y) * 1000 / n }'; }
declare -A ms=() mw=()
for config in a b c d e f; do
    ms[$config]=$(median "${sections[$config]}")
    mw[$config]=$(median "${walls[$config]}")
done

echo "## Hooks overhead on a real runtime (CallHeavy, .NET $DOTNET_RUNTIME_VERSION, $CORPROF_DOTNET_MODE)"
echo
echo "$runs timed runs per configuration, interleaved (a b c d e f ...) after one warm-up run each;"
echo "section = the program's Stopwatch over its $calls calls (each with an enter and a leave hook when hooked);"
echo "wall = the whole process. COMPlus_TieredCompilation=$tiered. Release builds; C floor built with gcc -O2."
echo
echo "| configuration | median section ms | median wall ms | section / (c) | wall / (c) | ns per call over (c) |"
echo "|---|---|---|---|---|---|"
row() {
    printf '| %s | %.1f | %.1f | %s | %s | %s |\n' "$1" "$(awk -v x="${ms[$2]}" 'BEGIN{print x/1000}')" \
        "$(awk -v x="${mw[$2]}" 'BEGIN{print x/1000}')" "$(ratio "${ms[$2]}" "${ms[c]}")" \
        "$(ratio "${mw[$2]}" "${mw[c]}")" "$(per_call "${ms[$2]}" "${ms[c]}")"
}
row "(a) no profiler" a
row "(b) corprof fast-path hooks doing nothing" b
row "(c) C floor: empty C hooks" c
row "(d) C floor: same register saves as corprof, empty C target" d
row "(e) call_tree profiler" e
row "(f) corprof enter hooks only, doing nothing (no leave/tailcall hook)" f
echo
echo "corprof's do-nothing hooks against the C floors: total (wall) time $(ratio "${mw[b]}" "${mw[c]}") x (c) and $(ratio "${mw[b]}" "${mw[d]}") x (d);"
echo "call-heavy section $(ratio "${ms[b]}" "${ms[c]}") x (c) and $(ratio "${ms[b]}" "${ms[d]}") x (d)."
for config in a b c d e f; do echo "Raw section us ($config): ${sections[$config]}"; done
for config in a b c d e f; do echo "Raw wall us ($config): ${walls[$config]}"; done
