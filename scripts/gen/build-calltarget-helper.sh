#!/usr/bin/env bash
# Builds the CallTarget helper assembly (docs/instrumentation.md): the
# contract and the shipped integrations in calltarget/ (CallTargetState,
# CallTargetReturn<T>, LogIntegration, NoopIntegration, CountingIntegration,
# the StartupHook class), every other .cs file a user adds to calltarget/,
# and any EXTRA.cs files given.
#
#   bash scripts/gen/build-calltarget-helper.sh OUT.dll [EXTRA.cs...]
#
# It is built once, with the .NET SDK (its Roslyn, current C#), for the
# oldest runtime the project serves: netcoreapp3.1, so that the same
# assembly loads on every runtime from 3.1 to 11.0 whatever CORPROF_RUNTIME
# says: a Release build of scripts/lib/csharp/Sources.csproj, its intermediate
# files under .cache/calltarget-helper/obj/ (OUT.pdb, a portable PDB, lands
# beside OUT.dll). Needs only
# the SDK and NuGet (for the netcoreapp3.1 reference pack, restored once).
#
# OUT.dll's file name (without .dll) is the assembly name the profiler
# references: pass the same path as CORPROF_CALLTARGET_HELPER and in
# DOTNET_STARTUP_HOOKS. The assembly has no version attributes (0.0.0.0,
# the version the profiler's AssemblyRef names). Prints OUT.dll's absolute
# path.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
readonly TFM=netcoreapp3.1

die() {
    echo "build-calltarget-helper: error: $*" >&2
    exit 1
}
say() {
    echo "build-calltarget-helper: $*" >&2
}

[ $# -ge 1 ] || die "usage: build-calltarget-helper.sh OUT.dll [EXTRA.cs...]"
out="$1"
shift
sources=("$ROOT"/calltarget/*.cs)
[ -f "${sources[0]}" ] || die "no C# sources in $ROOT/calltarget"
for f in "$@"; do
    [ -f "$f" ] || die "no such file: $f"
    case "$f" in *.cs) ;; *) die "not a .cs file: $f" ;; esac
    sources+=("$(cd "$(dirname "$f")" && pwd)/$(basename "$f")")
done
# shellcheck source=scripts/lib/install-lib.sh
. "$ROOT/scripts/lib/install-lib.sh"
build_helper_dll calltarget-helper "$TFM" "$out" "${sources[@]}"
out="$helper_out"
say "built $out for $TFM (loads on .NET Core 3.1 and every later runtime)"
echo "$out"
