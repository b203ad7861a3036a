#!/usr/bin/env bash
# Profiler overhead on a real CoreCLR: wall time of the JitHeavy program
# (thousands of distinct methods and generic instantiations, each JIT-compiled
# once; see docs/e2e.md) run
#   (a) with no profiler,
#   (b) with examples/jit_tracer.rs naming every JIT-compiled method into a
#       file (JIT_TRACER_OUTPUT),
#   (c) with tests/fixtures/runtime_events.rs (GC, exception, load and thread
#       events; summary written to a file at shutdown).
# The configurations are interleaved (A B C A B C ...) after one untimed
# warm-up run of each, so drift (caches, other load) hits all three alike.
# Prints a markdown table: median, min and max seconds, and the ratios of
# the medians to (a); and how many methods the tracer named.
#
# Then the JIT tracer against a hand-written C tracer (benches/jit_tracer.c,
# compiled here with the system's cc -O2) that writes the same lines, on a
# larger generated JitHeavy (LARGE_CLASSES x LARGE_PER_CLASS methods,
# default 400 x 40 = 16,000): no profiler, Rust, C, interleaved, LARGE_RUNS
# rounds; medians of CPU time (user + system, from wait4) and wall time, and
# the Rust/C ratios. The two tracers' outputs are checked to hold the same
# lines in every round. Last, unless CALLGRIND=0, one run of each tracer
# under valgrind --tool=callgrind, collecting only inside the
# JITCompilationStarted handler, broken down per method by
# scripts/bench/callgrind-breakdown.py (exact instruction counts).
#
#   bash scripts/bench/bench-runtime.sh            # 7 timed runs per configuration
#   RUNS=15 LARGE_RUNS=21 bash scripts/bench/bench-runtime.sh
#
# Environment: RUNS (default 7, at least 1); LARGE_RUNS (default 11);
# LARGE_CLASSES, LARGE_PER_CLASS; CALLGRIND (default 1); CORPROF_RUNTIME
# picks the runtime (scripts/provision/provision-dotnet.sh; 10.0 when unset); runtime
# settings such as
# COMPlus_TieredCompilation (.NET Core 3.1 ignores the DOTNET_ prefix) pass
# through to every run alike. The examples are built in release mode.
set -euo pipefail
cd "$(dirname "$0")/../.."

die() { printf 'bench-runtime: error: %s\n' "$*" >&2; exit 1; }
log() { printf 'bench-runtime: %s\n' "$*" >&2; }

runs="${RUNS:-7}"
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive integer, got '$runs'"
large_runs="${LARGE_RUNS:-11}"
[[ "$large_runs" =~ ^[1-9][0-9]*$ ]] || die "LARGE_RUNS must be a positive integer, got '$large_runs'"
large_classes="${LARGE_CLASSES:-400}"
large_per_class="${LARGE_PER_CLASS:-40}"
[[ "$large_classes$large_per_class" =~ ^[0-9]+$ ]] || die "LARGE_CLASSES and LARGE_PER_CLASS must be positive integers"
callgrind="${CALLGRIND:-1}"

# shellcheck source=scripts/lib/callgrind-common.sh
. scripts/lib/callgrind-common.sh # JIT_TRACER_CLSID, C_TRACER_CLSID, the callgrind toggles
RUNTIME_EVENTS_CLSID="{C5E5A2F1-3B7D-4C59-9E1A-2F0B6D8C4A17}"
JITHEAVY_EXIT=44

# --- Provision: reuse the KEY=VALUE lines the script prints. ---------------
log "provisioning (scripts/provision/provision-dotnet.sh)"
provision_out=$(bash scripts/provision/provision-dotnet.sh) || die "provisioning failed; see .cache/provision-dotnet.log"
DOTNET_HOST="" DOTNET_RUNTIME_VERSION="" E2E_PROGRAMS_DIR="" CORPROF_DOTNET_MODE="" TARGET_FRAMEWORK=""
while IFS='=' read -r key value; do
    case "$key" in
        DOTNET_HOST | DOTNET_RUNTIME_VERSION | E2E_PROGRAMS_DIR | CORPROF_DOTNET_MODE | TARGET_FRAMEWORK)
            printf -v "$key" '%s' "$value" ;;
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

# --- The JIT tracer against a hand-written C tracer, on a large program. ----
command -v cc >/dev/null || die "a C compiler (cc) is needed for the C baseline tracer"
command -v dotnet >/dev/null || die "the .NET SDK is needed to build the large program"
[ -n "$TARGET_FRAMEWORK" ] || die "provisioning printed no TARGET_FRAMEWORK"
large_dir="$scratch/large"
mkdir -p "$large_dir/src"
log "generating and building JitHeavy with $large_classes x $large_per_class methods ($TARGET_FRAMEWORK)"
python3 scripts/gen/gen-jitheavy.py "$large_dir/src/Generated.cs" --classes "$large_classes" --per-class "$large_per_class" \
    || die "gen-jitheavy.py failed"
# Built like the provisioned JitHeavy (scripts/lib/csharp/Sources.csproj: a
# Release build, no apphost, no deps.json) into $large_dir; the
# runtimeconfig is the provisioned JitHeavy's, naming the exact runtime.
# shellcheck source=scripts/lib/install-lib.sh
. scripts/lib/install-lib.sh
csharp_build JitHeavy Exe "$TARGET_FRAMEWORK" "$large_dir" "$large_dir/obj" \
    "$PWD/tests/e2e/programs/JitHeavy/Program.cs" "$large_dir/src/Generated.cs" ||
    die "building the large JitHeavy failed (see $large_dir/obj/build.log)"
cp "$program_dir/JitHeavy.runtimeconfig.json" "$large_dir/"
c_lib="$scratch/libjit_tracer_c.so"
cc -O2 -shared -fPIC -o "$c_lib" benches/jit_tracer.c || die "compiling benches/jit_tracer.c failed"
c_trace="$scratch/c-trace.txt"

# One run of the large program: prints "wall_seconds cpu_seconds" (CPU =
# user + system time of the process, from wait4).
timed_large() { # config n|r|c, [wrapper...]
    local config=$1; shift
    local -a env_args=(
        -u CORECLR_ENABLE_PROFILING -u CORECLR_PROFILER -u CORECLR_PROFILER_PATH
        -u CORECLR_PROFILER_PATH_64 -u JIT_TRACER_OUTPUT
        DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
    )
    case "$config" in
        n) ;;
        r) rm -f "$trace_file"
           env_args+=(CORECLR_ENABLE_PROFILING=1 "CORECLR_PROFILER=$JIT_TRACER_CLSID"
                      "CORECLR_PROFILER_PATH=$tracer_lib" "JIT_TRACER_OUTPUT=$trace_file") ;;
        c) rm -f "$c_trace"
           env_args+=(CORECLR_ENABLE_PROFILING=1 "CORECLR_PROFILER=$C_TRACER_CLSID"
                      "CORECLR_PROFILER_PATH=$c_lib" "JIT_TRACER_OUTPUT=$c_trace") ;;
    esac
    (cd "$large_dir" && python3 -c '
import os, sys, time
start = time.monotonic()
pid = os.fork()
if pid == 0:
    fd = os.open("stdout", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(fd, 1)
    fd = os.open("stderr", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(fd, 2)
    os.execvp(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
wall = time.monotonic() - start
code = os.waitstatus_to_exitcode(status)
print(f"{wall:.4f} {usage.ru_utime + usage.ru_stime:.4f} {code}")
' env "${env_args[@]}" "$@" "$DOTNET_HOST" exec --runtimeconfig JitHeavy.runtimeconfig.json JitHeavy.dll)
}

check_large() { # config, "wall cpu code"
    local code
    code=$(awk '{print $3}' <<<"$2")
    if [ "$code" -ne "$JITHEAVY_EXIT" ]; then
        cat "$large_dir/stderr" >&2
        die "large ($1): JitHeavy exited with $code, expected $JITHEAVY_EXIT"
    fi
    grep -qx 'checksum matches generator: True' "$large_dir/stdout" || die "large ($1): wrong checksum"
}

log "large program: warming up (one untimed run of each configuration)"
for config in n r c; do check_large "$config" "$(timed_large "$config")"; done

declare -a wall_n=() cpu_n=() wall_r=() cpu_r=() wall_c=() cpu_c=() round_cpu=() round_wall=()
large_named=""
for ((i = 1; i <= large_runs; i++)); do
    log "large program: round $i of $large_runs"
    read -r w c code <<<"$(timed_large n)"; check_large n "$w $c $code"; wall_n+=("$w"); cpu_n+=("$c")
    read -r w c code <<<"$(timed_large r)"; check_large r "$w $c $code"; wall_r+=("$w"); cpu_r+=("$c")
    read -r w2 c2 code <<<"$(timed_large c)"; check_large c "$w2 $c2 $code"; wall_c+=("$w2"); cpu_c+=("$c2")
    round_cpu+=("$(awk -v x="$c" -v y="$c2" 'BEGIN { printf "%.4f", x / y }')")
    round_wall+=("$(awk -v x="$w" -v y="$w2" 'BEGIN { printf "%.4f", x / y }')")
    # The same lines, in whatever order the JIT threads produced them.
    if ! cmp -s <(sort "$trace_file") <(sort "$c_trace"); then
        diff <(sort "$trace_file") <(sort "$c_trace") | head -n 10 >&2
        die "large program: the Rust and C tracers wrote different lines"
    fi
    large_named=$(grep -c '^jit: ' "$trace_file" || true)
done
large_unnamed=$(grep -c '^jit: .*(no name' "$trace_file" || true)

med() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
mw_n=$(med "${wall_n[@]}"); mc_n=$(med "${cpu_n[@]}")
mw_r=$(med "${wall_r[@]}"); mc_r=$(med "${cpu_r[@]}")
mw_c=$(med "${wall_c[@]}"); mc_c=$(med "${cpu_c[@]}")
ratio3() { awk -v x="$1" -v y="$2" 'BEGIN { printf "%.3f", x / y }'; }
overhead() { awk -v x="$1" -v y="$2" 'BEGIN { printf "%.1f ms", 1000 * (x - y) }'; }

echo
echo "## JIT tracer against a hand-written C tracer (JitHeavy, $large_classes x $large_per_class methods)"
echo
echo "$large_runs rounds, interleaved (none, Rust, C, none, ...) after one warm-up run each; CPU time is"
echo "user + system time of the whole process (wait4), wall time the same process's. The C tracer is"
echo "benches/jit_tracer.c (cc -O2); both wrote the same $large_named \`jit: ...\` lines in every round"
echo "($large_unnamed without a name)."
echo
echo "| configuration | median CPU s | median wall s | CPU / no profiler | wall / no profiler | CPU over no profiler |"
echo "|---|---|---|---|---|---|"
echo "| no profiler | $mc_n | $mw_n | 1.000 | 1.000 | |"
echo "| C tracer (benches/jit_tracer.c) | $mc_c | $mw_c | $(ratio3 "$mc_c" "$mc_n") | $(ratio3 "$mw_c" "$mw_n") | $(overhead "$mc_c" "$mc_n") |"
echo "| Rust tracer (examples/jit_tracer.rs) | $mc_r | $mw_r | $(ratio3 "$mc_r" "$mc_n") | $(ratio3 "$mw_r" "$mw_n") | $(overhead "$mc_r" "$mc_n") |"
echo
echo "Rust / C: CPU $(ratio3 "$mc_r" "$mc_c") (ratio of medians), $(med "${round_cpu[@]}") (median of the per-round ratios);"
echo "wall $(ratio3 "$mw_r" "$mw_c") (ratio of medians), $(med "${round_wall[@]}") (median of the per-round ratios)."
echo
echo "Raw CPU seconds, none: ${cpu_n[*]}"
echo "Raw CPU seconds, Rust: ${cpu_r[*]}"
echo "Raw CPU seconds, C: ${cpu_c[*]}"

if [ "$callgrind" != 0 ]; then
    command -v valgrind >/dev/null || die "valgrind is needed for the breakdown (apt-get install valgrind), or set CALLGRIND=0"
    log "large program: one run of each tracer under callgrind (about a minute each)"
    # The toggles and the breakdown are shared with scripts/ci/perf-guard.sh.
    timed_large r valgrind --tool=callgrind "--callgrind-out-file=$scratch/cg.rust" \
        "${CG_RUST_JIT_HANDLER[@]}" >/dev/null
    cg_handler_per_method "$scratch/cg.rust" "$(basename "$tracer_lib")" \
        "$(grep -c '^jit: ' "$trace_file")" rust >/dev/null
    timed_large c valgrind --tool=callgrind "--callgrind-out-file=$scratch/cg.c" \
        "${CG_C_JIT_HANDLER[@]}" >/dev/null
    cg_handler_per_method "$scratch/cg.c" "$(basename "$c_lib")" \
        "$(grep -c '^jit: ' "$c_trace")" c >/dev/null
    echo
    echo "### Where each named method's instructions go (valgrind --tool=callgrind, one run each)"
    echo
    echo "Instructions (Ir) per method inside the JITCompilationStarted handler, with the calls per method;"
    echo "a runtime method's figure includes everything it calls (inclusive)."
    echo
    python3 - "$scratch/cg.rust.json" "$scratch/cg.c.json" <<'PY'
import json, sys
rows = {}
order = []
for path in sys.argv[1:]:
    for line in open(path):
        r = json.loads(line)
        if r["part"] not in rows:
            order.append(r["part"])
            rows[r["part"]] = {}
        rows[r["part"]][r["label"]] = r
def cell(r):
    if r is None:
        return "", ""
    calls = "" if r["calls"] is None else f"{r['calls']:.2f}"
    return calls, f"{r['ir']:.0f}"
print("| part | Rust calls | Rust Ir | C calls | C Ir |")
print("|---|---|---|---|---|")
for part in order:
    rc, ri = cell(rows[part].get("rust"))
    cc, ci = cell(rows[part].get("c"))
    print(f"| {part} | {rc} | {ri} | {cc} | {ci} |")
PY
    basics_dir="$E2E_PROGRAMS_DIR/Basics"
    [ -f "$basics_dir/Basics.dll" ] || die "Basics was not built in $basics_dir"
    log "runtime_events on Basics under callgrind"
    code=0
    (cd "$basics_dir" && env DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 CORECLR_ENABLE_PROFILING=1 \
        "CORECLR_PROFILER=$RUNTIME_EVENTS_CLSID" "CORECLR_PROFILER_PATH=$events_lib" \
        "RUNTIME_EVENTS_OUTPUT=$events_file" valgrind --tool=callgrind "--callgrind-out-file=$scratch/cg.events" \
        '--toggle-collect=*VTABLE::*' "$DOTNET_HOST" exec --runtimeconfig Basics.runtimeconfig.json Basics.dll) \
        >"$scratch/stdout" 2>"$scratch/stderr" || code=$?
    [ "$code" -eq 42 ] || { cat "$scratch/stderr" >&2; die "Basics under callgrind exited with $code, expected 42"; }
    grep -qx 'runtime events summary' "$events_file" || die "the runtime-events profiler wrote no summary"
    echo
    echo "### The events profiler's callbacks (tests/fixtures/runtime_events.rs on Basics, valgrind --tool=callgrind)"
    echo
    echo "Every callback the runtime made into the profiler in one run, instructions inclusive of the"
    echo "runtime calls the profiler makes from it:"
    echo
    python3 scripts/bench/callgrind-breakdown.py --callbacks "$scratch/cg.events" "$(basename "$events_lib")" \
        || die "no callback table for runtime_events"
fi
