#!/usr/bin/env bash
# The CI guard of CallTarget's cost in instructions (docs/performance.md,
# "CallTarget"): CallTargetBench (a NoInlining `int Add(int, int)` called N
# times) under valgrind --tool=callgrind, unwrapped and wrapped for
# CorProf.CallTarget.NoopIntegration, with inlining on
# (CORPROF_CALLTARGET_INLINING=1) and off (the example's default). The
# instructions per call are (Ir at HIGH calls - Ir at LOW calls) /
# (HIGH - LOW) over the whole process, so start-up and JIT work cancel; the
# instructions the wrapping adds per call (noop - unwrapped) must stay
# within 5% (and 2 instructions) of the figures measured when the guard was
# written (NOOP_INLINE_IR, NOOP_NOINLINE_IR below). Fails, never skips.
#
#   bash scripts/calltarget-guard.sh
#
# Needs valgrind (installed with apt-get when missing and running as root).
# About a minute on a 2-core machine.
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."

die() { printf 'calltarget-guard: error: %s\n' "$*" >&2; exit 1; }
log() { printf 'calltarget-guard: %s\n' "$*" >&2; }
# shellcheck source=scripts/callgrind-common.sh
. scripts/callgrind-common.sh

LOW=100000
HIGH=600000
# Instructions added per call, measured with this script on CoreCLR 3.1.23
# (x86-64) when it was written.
NOOP_INLINE_IR="${NOOP_INLINE_IR:-14.03}"
NOOP_NOINLINE_IR="${NOOP_NOINLINE_IR:-83.21}"
SLACK=1.05

if ! command -v valgrind >/dev/null; then
    [ "$(id -u)" = 0 ] || die "valgrind is missing; install Debian's valgrind package (apt-get install valgrind)"
    mkdir -p target
    (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends valgrind) \
        >target/apt-valgrind.log 2>&1 || die "could not install valgrind with apt-get (see target/apt-valgrind.log)"
fi
valgrind --version >/dev/null 2>&1 || die "valgrind is installed but does not run"

log "provisioning (scripts/provision-dotnet.sh)"
cg_provision
bench="$E2E_PROGRAMS_DIR/CallTargetBench/CallTargetBench.dll"
helper="$E2E_PROGRAMS_DIR/CallTargetProbe/CallTargetProbe.dll"
[ -f "$bench" ] && [ -f "$helper" ] || die "CallTargetBench or CallTargetProbe was not built in $E2E_PROGRAMS_DIR"
log "building examples/call_target.rs (release)"
artifacts=$(cargo build --release --example call_target --message-format=json 2>/dev/null) \
    || die "cargo build --release failed (run it by hand to see why)"
library=$(cg_cargo_library "$artifacts" call_target)
[ -f "$library" ] || die "libcall_target not found among cargo's artifacts"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

run() { # target inlining calls; prints Ir
    local target=$1 inlining=$2 calls=$3 out="$scratch/cg.$1.$2.$3" code=0
    env DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 DOTNET_CLI_TELEMETRY_OPTOUT=1 \
        COMPlus_TieredCompilation=0 DOTNET_TieredCompilation=0 \
        CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER='{8D2E4A61-3B7C-4F59-A0E8-C51F9B27D364}' \
        CORECLR_PROFILER_PATH="$library" \
        DOTNET_STARTUP_HOOKS="$helper" CORPROF_CALLTARGET_HELPER="$helper" \
        CORPROF_CALLTARGET="CallTargetBench!E2E.CallTargetBench.Program::$target" \
        CORPROF_CALLTARGET_INTEGRATION=CorProf.CallTarget.NoopIntegration \
        CORPROF_CALLTARGET_INLINING="$inlining" \
        valgrind --tool=callgrind "--callgrind-out-file=$out" \
        "$DOTNET_HOST" exec "$bench" "$calls" >"$scratch/stdout" 2>"$scratch/stderr" || code=$?
    [ "$code" -eq 0 ] || { tail -n 20 "$scratch/stderr" >&2; die "CallTargetBench ($target, inlining $inlining, $calls) exited with $code"; }
    grep -q "^calls=$calls " "$scratch/stdout" || die "CallTargetBench ($target, $calls) printed no result"
    if [ "$target" = Add ]; then
        grep -q '^calltarget: wrapped E2E.CallTargetBench.Program::Add$' "$scratch/stderr" \
            || die "Add was not wrapped (inlining $inlining): $(cat "$scratch/stderr")"
    fi
    cg_total "$out"
}
per_call() { # target inlining; prints Ir per call
    local low high
    log "CallTargetBench under callgrind: $1, inlining $2, $LOW and $HIGH calls"
    low=$(run "$1" "$2" "$LOW")
    high=$(run "$1" "$2" "$HIGH")
    awk -v l="$low" -v h="$high" -v n=$((HIGH - LOW)) 'BEGIN { printf "%.2f", (h - l) / n }'
}

status=0
echo "CallTarget, instructions per call of Add (valgrind --tool=callgrind, whole process), .NET $DOTNET_RUNTIME_VERSION:"
echo
echo "| inlining | unwrapped | NoopIntegration | added | measured when written | limit | |"
echo "|---|---:|---:|---:|---:|---:|---|"
for inlining in 1 0; do
    plain=$(per_call Unused "$inlining")
    noop=$(per_call Add "$inlining")
    added=$(awk -v a="$noop" -v b="$plain" 'BEGIN { printf "%.2f", a - b }')
    if [ "$inlining" = 1 ]; then base=$NOOP_INLINE_IR; label=on; else base=$NOOP_NOINLINE_IR; label=off; fi
    limit=$(awk -v b="$base" -v s="$SLACK" 'BEGIN { l = b * s; if (l < b + 2) l = b + 2; printf "%.2f", l }')
    ok=$(awk -v a="$added" -v l="$limit" 'BEGIN { print (a <= l) ? "ok" : "FAIL" }')
    echo "| $label | $plain | $noop | $added | $base | $limit | $ok |"
    [ "$ok" = ok ] || status=1
done
[ "$status" -eq 0 ] || die "the wrapping adds more instructions per call than allowed (see the table)"
