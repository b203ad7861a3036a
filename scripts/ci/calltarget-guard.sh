#!/usr/bin/env bash
# The CI guard of CallTarget's cost in instructions (docs/performance.md,
# "CallTarget"): CallTargetBench (a NoInlining `int Add(int, int)` called N
# times after a warm-up) under valgrind --tool=callgrind, unwrapped and
# wrapped for CorProf.CallTarget.NoopIntegration, at the runtime's and the
# example's defaults (tiered compilation on, inlining on), and as an extra
# row with tiered compilation off. The instructions per call are
# (Ir at HIGH calls - Ir at LOW calls) / (HIGH - LOW) over the whole
# process, so start-up, JIT work and the warm-up (a fixed number of rounds)
# cancel; the instructions the wrapping adds per call (noop - unwrapped)
# must stay within 5% (and 2 instructions) of the figures measured when the
# guard was written (NOOP_DEFAULT_IR, NOOP_TIERING_OFF_IR below).
#
# That the tier-1 code is what is counted at the defaults: the per-call
# count there must be at most 5% above the tiering-off one (one optimized
# compilation at the first call) for both programs. Tier-0 code runs
# several times the instructions (with COMPlus_TC_CallCounting=0, which
# keeps every method at tier 0, 3.1.23 with an mcs-built helper: 19.96
# unwrapped and 170.86 wrapped per call, against 12.17 and 19.60 at the
# defaults); tier 1 runs fewer
# than tiering off, being compiled once the integration's static class is
# initialized (no initialization checks left). Fails, never skips.
#
#   bash scripts/ci/calltarget-guard.sh
#
# Needs valgrind (installed with apt-get when missing and running as root).
# A few minutes on a 2-core machine.
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/../.."

die() { printf 'calltarget-guard: error: %s\n' "$*" >&2; exit 1; }
log() { printf 'calltarget-guard: %s\n' "$*" >&2; }
# shellcheck source=scripts/lib/callgrind-common.sh
. scripts/lib/callgrind-common.sh

LOW=100000
HIGH=600000
# The warm-up: rounds of 10,000 calls, 20 ms apart (CallTargetBench): 4 s
# of wall time at least, for the tier-1 compilations, which run on a
# background thread, slow under valgrind and slower on a busy machine (60
# rounds sufficed on a quiet one, not at load average 20).
WARMUP_ROUNDS=200
# Instructions added per call, measured with this script on CoreCLR 3.1.3
# (x86-64) with the helper (CallTargetProbe: calltarget/*.cs) built by the
# .NET SDK 10.0.401's Roslyn, as scripts/gen/build-calltarget-helper.sh builds
# it for users: tiering off 21.61 to 22.64 in seven runs (three by hand,
# four clean-clone CI runs); at the defaults 19.92 to 23.26. The base is the
# largest seen, so the
# guard does not flake, and it still fails on what it is for (a box per
# call adds about 130 instructions; tier-0 code about 150). Roslyn compiles
# `in CallTargetState` as a by-ref, whose address the wrapper passes, and
# that costs the state local its register: the same runs with the helper
# compiled by Mono's mcs (which compiles `in` by value; the figures below
# were first measured with it, on 3.1.23) added 13.80 and 13.96 with
# tiering off, 15.12 and 18.44 at the defaults (was 14.15 and, of five
# runs, 7.43 to 20.04).
NOOP_DEFAULT_IR="${NOOP_DEFAULT_IR:-23.26}"
NOOP_TIERING_OFF_IR="${NOOP_TIERING_OFF_IR:-22.64}"
SLACK=1.05
# Four runs are few: the defaults' limit is 20% above the largest.
DEFAULT_SLACK=1.20

command -v valgrind >/dev/null || install_apt_packages target/apt-valgrind.log valgrind
valgrind --version >/dev/null 2>&1 || die "valgrind is installed but does not run"

log "provisioning (scripts/provision/provision-dotnet.sh)"
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

run() { # target tiering calls; prints Ir
    local target=$1 tiering=$2 calls=$3 out="$scratch/cg.$1.$2.$3" code=0
    # DOTNET_GCHeapHardLimit: .NET 8's GC reserves more address space than
    # valgrind gives it ("GC heap initialization failed with error
    # 0x8007000E"); 3.1 reads only COMPlus_ and is left alone.
    env DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 DOTNET_CLI_TELEMETRY_OPTOUT=1 \
        DOTNET_GCHeapHardLimit=0x20000000 \
        COMPlus_TieredCompilation="$tiering" DOTNET_TieredCompilation="$tiering" \
        CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER='{8D2E4A61-3B7C-4F59-A0E8-C51F9B27D364}' \
        CORECLR_PROFILER_PATH="$library" \
        DOTNET_STARTUP_HOOKS="$helper" CORPROF_CALLTARGET_HELPER="$helper" \
        CORPROF_CALLTARGET="CallTargetBench!E2E.CallTargetBench.Program::$target" \
        CORPROF_CALLTARGET_INTEGRATION=CorProf.CallTarget.NoopIntegration \
        valgrind --tool=callgrind "--callgrind-out-file=$out" \
        "$DOTNET_HOST" exec "$bench" "$calls" --warmup-rounds "$WARMUP_ROUNDS" \
        >"$scratch/stdout" 2>"$scratch/stderr" || code=$?
    [ "$code" -eq 0 ] || { tail -n 20 "$scratch/stderr" >&2; die "CallTargetBench ($target, tiering $tiering, $calls) exited with $code"; }
    grep -q "^calls=$calls " "$scratch/stdout" || die "CallTargetBench ($target, $calls) printed no result"
    if [ "$target" = Add ]; then
        grep -q '^calltarget: wrapped E2E.CallTargetBench.Program::Add$' "$scratch/stderr" \
            || die "Add was not wrapped (tiering $tiering): $(cat "$scratch/stderr")"
    fi
    cg_total "$out"
}
per_call() { # target tiering; prints Ir per call
    local low high
    log "CallTargetBench under callgrind: $1, tiering $2, $LOW and $HIGH calls"
    low=$(run "$1" "$2" "$LOW")
    high=$(run "$1" "$2" "$HIGH")
    awk -v l="$low" -v h="$high" -v n=$((HIGH - LOW)) 'BEGIN { printf "%.2f", (h - l) / n }'
}

status=0
echo "CallTarget, instructions per call of Add (valgrind --tool=callgrind, whole process), .NET $DOTNET_RUNTIME_VERSION, inlining on:"
echo
echo "| tiered compilation | unwrapped | NoopIntegration | added | measured when written | limit | |"
echo "|---|---:|---:|---:|---:|---:|---|"
declare -A per
# Tiering off first: the defaults' tier check compares with it.
for tiering in 0 1; do
    if [ "$tiering" = 1 ]; then
        base=$NOOP_DEFAULT_IR slack=$DEFAULT_SLACK label="on (default)"
    else
        base=$NOOP_TIERING_OFF_IR slack=$SLACK label="off (lab)"
    fi
    limit=$(awk -v b="$base" -v s="$slack" 'BEGIN { l = b * s; if (l < b + 2) l = b + 2; printf "%.2f", l }')
    # At the defaults the noise is one-sided: a tier-1 compilation that
    # lands late (on a loaded machine: 29.38 added, where the same build
    # gave 15.21 right after) only adds instructions. Up to 3 attempts; a
    # real regression (a box per call: +130) fails every one.
    attempts=1
    if [ "$tiering" = 1 ]; then attempts=3; fi
    for attempt in $(seq "$attempts"); do
        plain=$(per_call Unused "$tiering")
        noop=$(per_call Add "$tiering")
        added=$(awk -v a="$noop" -v b="$plain" 'BEGIN { printf "%.2f", a - b }')
        ok=$(awk -v a="$added" -v l="$limit" 'BEGIN { print (a <= l) ? "ok" : "FAIL" }')
        if [ "$tiering" = 1 ]; then
            # Optimized code counted, not tier 0 (which runs 6 to 8 times
            # the instructions: 19.96 and 170.86 per call kept at tier 0): at
            # most 1.5 times the one optimized compilation of tiering off
            # (measured: 0.73 to 1.19 times).
            for pair in "plain $plain ${per[plain0]}" "noop $noop ${per[noop0]}"; do
                read -r program on off <<<"$pair"
                close=$(awk -v a="$on" -v b="$off" 'BEGIN { print (a <= 1.5 * b) ? "yes" : "no" }')
                [ "$close" = yes ] || ok=FAIL
                log "attempt $attempt: $program $on instructions per call with tiering on, $off off: tier-1 code counted: $close"
            done
        fi
        if [ "$ok" = ok ]; then break; fi
        if [ "$attempt" -lt "$attempts" ]; then
            log "attempt $attempt: added $added (limit $limit) or tier 1 not reached: measuring again"
        fi
    done
    per[plain$tiering]=$plain
    per[noop$tiering]=$noop
    echo "| $label | $plain | $noop | $added | $base | $limit | $ok (attempt $attempt) |"
    [ "$ok" = ok ] || status=1
done
[ "$status" -eq 0 ] || die "the wrapping adds more instructions per call than allowed, or tier 1 was not reached (see above)"
