#!/usr/bin/env bash
# What CallTarget costs a start-up-heavy real program (docs/performance.md,
# "CallTarget"): Roslyn (csc.dll of the .NET SDK on PATH) compiling
# tests/e2e/roslyn/WebApp/Program.cs against the SDK's own reference packs
# (Microsoft.NETCore.App.Ref and Microsoft.AspNetCore.App.Ref), run on the
# provisioned runtime (scripts/provision/provision-dotnet.sh; `dotnet exec
# --fx-version`). The SDK 10's Roslyn runs on 10.0 and later only, so
# CORPROF_RUNTIME must be 10.0 (the default) or 11.0. A start-up, where a
# profiler that watches every JIT compilation and every inlining decision
# pays. Roslyn's ReadyToRun code is used, so its targets are precompiled
# and wrapped by ReJIT. (docs/performance.md's figures were taken with
# Roslyn 3.4 of the .NET Core 3.1 SDK on CoreCLR 8.0.4, which did not use
# its ReadyToRun code: nearly all of that run was JIT compilation.)
#
# Configurations, the example at its defaults (release build,
# NoopIntegration):
#   none         no profiler
#   calltarget   examples/call_target.rs wrapping TARGETS (default: three
#                methods Roslyn runs once per compilation)
#   noinline     the same with CORPROF_CALLTARGET_DISABLE_INLINING=1 (the
#                opt-in that turns inlining off for the whole process)
# RUNS rounds (default 7) after one untimed warm-up round, the order of the
# configurations rotated each round; prints the median CPU time (user +
# system, the process and its threads: what the JIT and the profiler
# spend, less disturbed than wall time by other work on a shared machine)
# and wall time of each, their ratios to `none`, and every round's CPU
# ratio.
#
#   bash scripts/bench/bench-calltarget-startup.sh
#   RUNS=11 bash scripts/bench/bench-calltarget-startup.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

die() { printf 'bench-calltarget-startup: error: %s\n' "$*" >&2; exit 1; }
log() { printf 'bench-calltarget-startup: %s\n' "$*" >&2; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

runs="${RUNS:-7}"
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive integer, got '$runs'"
targets="${TARGETS:-Microsoft.CodeAnalysis.CSharp!Microsoft.CodeAnalysis.CSharp.CSharpCompilation::Create;Microsoft.CodeAnalysis!Microsoft.CodeAnalysis.CommonCompiler::Run;Microsoft.CodeAnalysis.CSharp!Microsoft.CodeAnalysis.CSharp.CSharpSyntaxTree::ParseText}"

log "provisioning (scripts/provision/provision-dotnet.sh)"
rt_out=$(bash scripts/provision/provision-dotnet.sh) || die "provisioning failed; see .cache/provision-dotnet.log"
value() { printf '%s\n' "$1" | sed -n "s/^$2=//p" | tail -n 1; }
host=$(value "$rt_out" DOTNET_HOST)
version=$(value "$rt_out" DOTNET_RUNTIME_VERSION)
case "$version" in
    1[0-9].* | [2-9][0-9].*) ;;
    *) die "the .NET SDK's Roslyn needs .NET 10 or later; CORPROF_RUNTIME picked $version (use 10.0 or 11.0)" ;;
esac
helper="$(value "$rt_out" E2E_PROGRAMS_DIR)/CallTargetProbe/CallTargetProbe.dll"
# The SDK's Roslyn and reference packs: the newest of each.
sdk_root=$(dirname "$(readlink -f "$(command -v dotnet)")")
csc=$(find "$sdk_root/sdk" -path '*/Roslyn/bincore/csc.dll' 2>/dev/null | sort -V | tail -n 1)
ref_dir() { find "$sdk_root/packs/$1" -mindepth 3 -maxdepth 3 -path '*/ref/net*' -type d 2>/dev/null | sort -V | tail -n 1; }
netcore_refs=$(ref_dir Microsoft.NETCore.App.Ref)
aspnet_refs=$(ref_dir Microsoft.AspNetCore.App.Ref)
[ -f "$csc" ] && [ -x "$host" ] && [ -f "$helper" ] || die "no csc.dll in the SDK at $sdk_root, host or CallTargetProbe helper"
[ -d "$netcore_refs" ] && [ -d "$aspnet_refs" ] || die "no Microsoft.NETCore.App.Ref or Microsoft.AspNetCore.App.Ref pack in $sdk_root/packs"
log "building examples/call_target.rs (release)"
cargo build --quiet --release --example call_target || die "cargo build failed"
library="$PWD/target/release/examples/libcall_target.so"

refs=()
for dll in "$netcore_refs"/*.dll "$aspnet_refs"/*.dll; do refs+=("-r:$dll"); done
source_file="$PWD/tests/e2e/roslyn/WebApp/Program.cs"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# run CONFIG -> "cpu_ms wall_ms" (fails when csc fails, or when the
# profiled runs did not wrap the targets)
run() {
    local config="$1" times
    local -a envs=()
    if [ "$config" != none ]; then
        envs=(CORECLR_ENABLE_PROFILING=1 "CORECLR_PROFILER={8D2E4A61-3B7C-4F59-A0E8-C51F9B27D364}"
            "CORECLR_PROFILER_PATH=$library" "DOTNET_STARTUP_HOOKS=$helper" "CORPROF_CALLTARGET_HELPER=$helper"
            "CORPROF_CALLTARGET=$targets" CORPROF_CALLTARGET_INTEGRATION=CorProf.CallTarget.NoopIntegration)
        [ "$config" = noinline ] && envs+=(CORPROF_CALLTARGET_DISABLE_INLINING=1)
    fi
    # GNU-less timing: bash's `time` keyword (real, user, sys in seconds).
    times=$( { TIMEFORMAT='%R %U %S'; time env DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 \
        "${envs[@]}" \
        "$host" exec --fx-version "$version" "$csc" -nologo -noconfig -nostdlib -target:exe -optimize+ -debug:portable \
        "-out:$scratch/WebApp.dll" "${refs[@]}" "$source_file" >"$scratch/out" 2>"$scratch/err"; } 2>&1) ||
        die "$config: csc failed: $(tail -n 5 "$scratch/out" "$scratch/err")"
    if [ "$config" != none ]; then
        [ "$(grep -cE '^calltarget: (ReJIT )?wrapped ' "$scratch/err")" -ge 3 ] &&
            ! grep -q -e 'unknown target' -e 'left unchanged' -e 'not instrumenting' "$scratch/err" ||
            die "$config: the targets were not all wrapped: $(grep '^calltarget: ' "$scratch/err" | head -n 8)"
    fi
    awk '{ printf "%d %d\n", ($2 + $3) * 1000, $1 * 1000 }' <<<"$times"
}

configs=(none calltarget noinline)
log "warm-up round"
for c in "${configs[@]}"; do run "$c" >/dev/null; done
for ((r = 0; r < runs; r++)); do
    log "round $((r + 1)) of $runs"
    for ((k = 0; k < ${#configs[@]}; k++)); do
        c=${configs[$(((k + r) % ${#configs[@]}))]}
        read -r cpu wall <<<"$(run "$c")"
        echo "$cpu" >>"$scratch/$c.cpu"
        echo "$wall" >>"$scratch/$c.wall"
        echo "$r $cpu" >>"$scratch/$c.rounds"
    done
done

base_cpu=$(median <"$scratch/none.cpu")
base_wall=$(median <"$scratch/none.wall")
echo "## CallTarget at start-up: Roslyn compiling WebApp/Program.cs on .NET $version, median of $runs rounds (order rotated)"
echo
echo "| configuration | CPU ms | CPU ratio to none | wall ms | wall ratio to none | per-round CPU ratios |"
echo "|---|---:|---:|---:|---:|---|"
for c in "${configs[@]}"; do
    cpu=$(median <"$scratch/$c.cpu")
    wall=$(median <"$scratch/$c.wall")
    ratios=$(paste -d' ' <(cut -d' ' -f2 "$scratch/$c.rounds") <(cut -d' ' -f2 "$scratch/none.rounds") |
        awk '{printf "%.3f ", $1 / $2}')
    printf '| %s | %s | %.3f | %s | %.3f | %s|\n' "$c" "$cpu" "$(awk -v a="$cpu" -v b="$base_cpu" 'BEGIN {print a / b}')" \
        "$wall" "$(awk -v a="$wall" -v b="$base_wall" 'BEGIN {print a / b}')" "$ratios"
done
echo
echo "Targets: $targets"
echo "Command: RUNS=$runs bash scripts/bench/bench-calltarget-startup.sh"
