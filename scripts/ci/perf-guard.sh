#!/usr/bin/env bash
# The CI guard of the speed claims in docs/performance.md: exact instruction
# counts (valgrind --tool=callgrind) on small programs, compared with the
# hand-written C baselines in the same run. Fails when a claim is false.
#
#   1. JIT tracer: examples/jit_tracer.rs and benches/jit_tracer.c on the
#      provisioned JitHeavy (2,000 methods and 512 generic instantiations;
#      about 2,800 methods named), instructions per named method inside the
#      JITCompilationStarted handler (scripts/bench/callgrind-breakdown.py). Both
#      must name the same methods (the same lines), and Rust <= 1.02 x C.
#   2. Fast-path ELT hooks: tests/fixtures/elt_nothing.rs against the C floor of
#      scripts/bench/bench-hooks-floor.c (`saving`: assembly hooks saving the same
#      registers and calling an empty C function; `bare`: empty C hooks) on
#      CallHeavy. Instructions inside the hooks (the trampolines and what
#      they call) per call of Mix (an enter and a leave hook):
#      (Ir at MIX_HIGH calls - Ir at MIX_LOW calls) / (MIX_HIGH - MIX_LOW),
#      so start-up and the framework's own hooked calls cancel. Rust must be
#      <= 1.05 x `saving`; the `bare` ratio is printed for information.
#      Last, elt_nothing with enter hooks only (ELT_NOTHING_ENTER_ONLY=1:
#      FunctionHooks::LEAVE and TAILCALL false), counting the runtime's
#      default stub too: at least 15 instructions per call below all three
#      (no leave trampoline may run).
#   3. CallTarget: scripts/ci/calltarget-guard.sh (instructions the wrapping
#      adds per call of a NoInlining Add, NoopIntegration against unwrapped,
#      at the defaults (tiering on, inlining on, tier-1 code counted) and
#      with tiering off: within 5% of the figures measured when written).
#
#   bash scripts/ci/perf-guard.sh
#
# Needs Linux x86-64 (the C floor), valgrind (installed with apt-get when
# missing and running as root) and a C compiler; fails, never skips, when
# one is missing. Runs in about 70 s on a 2-core machine
# (plus about a minute for the release build of the two examples when cold).
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/../.."

die() { printf 'perf-guard: error: %s\n' "$*" >&2; exit 1; }
log() { printf 'perf-guard: %s\n' "$*" >&2; }
# shellcheck source=scripts/lib/callgrind-common.sh
. scripts/lib/callgrind-common.sh

JIT_RATIO_MAX=1.02
HOOK_RATIO_MAX=1.05
FIB_N=15
MIX_LOW=20000
MIX_HIGH=120000
started=$(date +%s)

[ "$(uname -sm)" = "Linux x86_64" ] || die "the C baselines are written for Linux x86-64"
command -v valgrind >/dev/null || install_apt_packages target/apt-valgrind.log valgrind
valgrind --version >/dev/null 2>&1 || die "valgrind is installed but does not run"
command -v cc >/dev/null || die "a C compiler (cc) is needed for the C baselines (apt-get install gcc)"

log "provisioning (scripts/provision/provision-dotnet.sh)"
cg_provision
jit_dir="$E2E_PROGRAMS_DIR/JitHeavy"
hooks_dir="$E2E_PROGRAMS_DIR/CallHeavy"
[ -f "$jit_dir/JitHeavy.dll" ] || die "JitHeavy was not built in $jit_dir"
[ -f "$hooks_dir/CallHeavy.dll" ] || die "CallHeavy was not built in $hooks_dir"

log "building examples jit_tracer and elt_nothing (release) and the C baselines (cc -O2)"
artifacts=$(cargo build --release --example jit_tracer --example elt_nothing --message-format=json 2>/dev/null) \
    || die "cargo build --release failed (run it by hand to see why)"
tracer_lib=$(cg_cargo_library "$artifacts" jit_tracer)
nothing_lib=$(cg_cargo_library "$artifacts" elt_nothing)
[ -f "$tracer_lib" ] || die "libjit_tracer not found among cargo's artifacts"
[ -f "$nothing_lib" ] || die "libelt_nothing not found among cargo's artifacts"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
c_lib="$scratch/libjit_tracer_c.so"
floor_lib="$scratch/libfloor.so"
cc -O2 -shared -fPIC -o "$c_lib" benches/jit_tracer.c || die "compiling benches/jit_tracer.c failed"
# -fno-ipa-icf: the empty hooks must stay distinct functions (not folded
# into one another or into the empty callbacks) for the bare toggles.
cc -O2 -fno-ipa-icf -shared -fPIC -o "$floor_lib" scripts/bench/bench-hooks-floor.c \
    || die "compiling scripts/bench/bench-hooks-floor.c failed"

base_env=(
    -u CORECLR_PROFILER_PATH_64 -u JIT_TRACER_OUTPUT -u CORPROF_FLOOR_MODE -u ELT_NOTHING_ENTER_ONLY
    DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
    CORECLR_ENABLE_PROFILING=1
)

# --- 1. The JIT tracers. -----------------------------------------------------
jit_run() { # label clsid library toggle-array-name
    local label=$1 clsid=$2 lib=$3 code=0
    local -n toggles=$4
    (cd "$jit_dir" && env "${base_env[@]}" "CORECLR_PROFILER=$clsid" "CORECLR_PROFILER_PATH=$lib" \
        "JIT_TRACER_OUTPUT=$scratch/trace.$label" \
        valgrind --tool=callgrind "--callgrind-out-file=$scratch/cg.jit.$label" "${toggles[@]}" \
        "$DOTNET_HOST" exec --runtimeconfig JitHeavy.runtimeconfig.json JitHeavy.dll) \
        >"$scratch/stdout" 2>"$scratch/stderr" || code=$?
    [ "$code" -eq 44 ] || { tail -n 20 "$scratch/stderr" >&2; die "JitHeavy ($label) exited with $code, expected 44"; }
    grep -qx 'checksum matches generator: True' "$scratch/stdout" || die "JitHeavy ($label) printed a wrong checksum"
    [ -s "$scratch/trace.$label" ] || die "the $label tracer wrote no trace"
}
log "JitHeavy under callgrind: Rust tracer"
jit_run rust "$JIT_TRACER_CLSID" "$tracer_lib" CG_RUST_JIT_HANDLER
log "JitHeavy under callgrind: C tracer"
jit_run c "$C_TRACER_CLSID" "$c_lib" CG_C_JIT_HANDLER
if ! cmp -s <(sort "$scratch/trace.rust") <(sort "$scratch/trace.c"); then
    diff <(sort "$scratch/trace.rust") <(sort "$scratch/trace.c") | head -n 10 >&2
    die "the Rust and C tracers named different methods"
fi
methods=$(grep -c '^jit: ' "$scratch/trace.rust" || true)
own=$(grep -c '^jit: E2E\.JitHeavy\.' "$scratch/trace.rust" || true)
[ "$own" -ge 2000 ] || die "the tracers named only $own of JitHeavy's own methods (expected at least 2,000)"
jit_rust=$(cg_handler_per_method "$scratch/cg.jit.rust" "$(basename "$tracer_lib")" "$methods" rust)
jit_c=$(cg_handler_per_method "$scratch/cg.jit.c" "$(basename "$c_lib")" "$methods" c)
awk -v r="$jit_c" 'BEGIN { exit !(r >= 1000) }' \
    || die "the C tracer's handler ran only $jit_c instructions per method: the toggle did not match it"
awk -v r="$jit_rust" 'BEGIN { exit !(r >= 1000) }' \
    || die "the Rust tracer's handler ran only $jit_rust instructions per method: the toggle did not match it"
jit_ratio=$(awk -v r="$jit_rust" -v c="$jit_c" 'BEGIN { printf "%.4f", r / c }')

# --- 2. The hooks. -----------------------------------------------------------
# The calls Fib(FIB_N) makes: 2 * Fib(FIB_N + 1) - 1.
fib_calls=$(awk -v n="$FIB_N" 'BEGIN { a = 0; b = 1; for (i = 0; i < n + 1; i++) { t = a + b; a = b; b = t } print 2 * a - 1 }')
hook_run() { # label clsid library extra-env toggle-array-name mix-calls; prints Ir
    local label=$1 clsid=$2 lib=$3 extra=$4 mix=$6 code=0 out
    local -n toggles=$5
    out="$scratch/cg.hooks.$label.$mix"
    (cd "$hooks_dir" && env "${base_env[@]}" "CORECLR_PROFILER=$clsid" "CORECLR_PROFILER_PATH=$lib" \
        ${extra:+"$extra"} COMPlus_TieredCompilation=0 \
        valgrind --tool=callgrind "--callgrind-out-file=$out" "${toggles[@]}" \
        "$DOTNET_HOST" exec --runtimeconfig CallHeavy.runtimeconfig.json CallHeavy.dll "$FIB_N" "$mix") \
        >"$scratch/stdout" 2>"$scratch/stderr" || code=$?
    [ "$code" -eq 46 ] || { tail -n 20 "$scratch/stderr" >&2; die "CallHeavy ($label, $mix) exited with $code, expected 46"; }
    grep -v '^section_us=' "$scratch/stdout" >"$scratch/results.$label.$mix"
    grep -qx "calls=$((fib_calls + mix))" "$scratch/results.$label.$mix" \
        || die "CallHeavy ($label, $mix) did not report $((fib_calls + mix)) calls (Fib($FIB_N) and $mix of Mix)"
    cg_total "$out"
}
per_call() { # label clsid library extra-env toggle-array-name; prints Ir per Mix call
    local low high
    log "CallHeavy under callgrind: $1, $MIX_LOW and $MIX_HIGH calls of Mix"
    low=$(hook_run "$@" "$MIX_LOW")
    high=$(hook_run "$@" "$MIX_HIGH")
    awk -v l="$low" -v h="$high" -v n=$((MIX_HIGH - MIX_LOW)) 'BEGIN { printf "%.2f", (h - l) / n }'
}
hook_rust=$(per_call rust "$NOTHING_CLSID" "$nothing_lib" "" CG_RUST_HOOKS)
hook_saving=$(per_call saving "$FLOOR_CLSID" "$floor_lib" CORPROF_FLOOR_MODE=saving CG_FLOOR_SAVING_HOOKS)
hook_bare=$(per_call bare "$FLOOR_CLSID" "$floor_lib" CORPROF_FLOOR_MODE=bare CG_FLOOR_BARE_HOOKS)
hook_enter=$(per_call enter-only "$NOTHING_CLSID" "$nothing_lib" ELT_NOTHING_ENTER_ONLY=1 CG_RUST_ENTER_ONLY_HOOKS)
for label in saving bare enter-only; do
    cmp -s "$scratch/results.rust.$MIX_HIGH" "$scratch/results.$label.$MIX_HIGH" \
        || die "CallHeavy printed different results with the $label floor than with corprof's hooks"
done
# Every configuration runs at least one instruction in each of the two
# hooks of a call: less means its hooks were not installed or not matched.
for pair in "rust $hook_rust" "saving $hook_saving" "bare $hook_bare" "enter-only $hook_enter"; do
    read -r label value <<<"$pair"
    awk -v v="$value" 'BEGIN { exit !(v >= 1.9) }' \
        || die "$label: only $value instructions per call in the hooks: they were not installed or not matched"
done
# A profiler without leave and tail-call hooks (FunctionHooks::LEAVE and
# TAILCALL false) gets no leave trampoline: the JIT calls the runtime's
# one-instruction stub instead, which saves the leave trampoline's ~20.
awk -v e="$hook_enter" -v r="$hook_rust" 'BEGIN { exit !(e <= r - 15) }' \
    || die "enter-only hooks cost $hook_enter instructions per call against $hook_rust for all three: a leave hook was installed"
hook_ratio=$(awk -v r="$hook_rust" -v c="$hook_saving" 'BEGIN { printf "%.4f", r / c }')
bare_ratio=$(awk -v r="$hook_rust" -v c="$hook_bare" 'BEGIN { printf "%.2f", r / c }')

# --- Report. -----------------------------------------------------------------
jit_ok=$(awk -v r="$jit_ratio" -v m="$JIT_RATIO_MAX" 'BEGIN { print (r <= m) ? "ok" : "FAIL" }')
hook_ok=$(awk -v r="$hook_ratio" -v m="$HOOK_RATIO_MAX" 'BEGIN { print (r <= m) ? "ok" : "FAIL" }')
echo "Instructions (valgrind --tool=callgrind), .NET $DOTNET_RUNTIME_VERSION:"
echo
echo "| claim | corprof | C baseline | ratio | limit | |"
echo "|---|---|---|---|---|---|"
echo "| JIT tracer: Ir per named method in JITCompilationStarted ($methods methods) | $jit_rust | $jit_c | $jit_ratio | $JIT_RATIO_MAX | $jit_ok |"
echo "| do-nothing fast-path hooks: Ir per call (enter + leave) vs C saving floor | $hook_rust | $hook_saving | $hook_ratio | $HOOK_RATIO_MAX | $hook_ok |"
echo "| the same vs empty C hooks (bare floor; information) | $hook_rust | $hook_bare | $bare_ratio | | |"
echo "| enter hooks only (no leave/tailcall hook installed; the runtime's stub) vs bare (information) | $hook_enter | $hook_bare | $(awk -v r="$hook_enter" -v c="$hook_bare" 'BEGIN { printf "%.2f", r / c }') | | |"
echo
echo "perf-guard: $(( $(date +%s) - started )) s"
[ "$jit_ok" = ok ] || die "the Rust JIT tracer costs $jit_ratio x the C tracer per method (limit $JIT_RATIO_MAX)"
[ "$hook_ok" = ok ] || die "corprof's do-nothing hooks cost $hook_ratio x the C saving floor per call (limit $HOOK_RATIO_MAX)"

# --- 3. CallTarget. ----------------------------------------------------------
bash scripts/ci/calltarget-guard.sh || die "the CallTarget guard failed (scripts/ci/calltarget-guard.sh)"
