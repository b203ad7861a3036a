#!/usr/bin/env bash
# Builds the CallTarget helper assembly (docs/instrumentation.md): the
# contract and the shipped integrations in calltarget/ (CallTargetState,
# CallTargetReturn<T>, LogIntegration, NoopIntegration, CountingIntegration,
# the StartupHook class), every other .cs file a user adds to calltarget/,
# and any EXTRA.cs files given, compiled with the provisioned C# compiler
# (mcs, or the SDK's Roslyn) against the reference assemblies provisioning
# names for the chosen runtime (CSHARP_REFERENCE_DIR: 3.1's assemblies for
# both 3.1 and 8.0; scripts/provision-dotnet.sh; CORPROF_RUNTIME picks the
# runtime).
#
#   bash scripts/build-calltarget-helper.sh OUT.dll [EXTRA.cs...]
#
# OUT.dll's file name (without .dll) is the assembly name the profiler
# references: pass the same path as CORPROF_CALLTARGET_HELPER and in
# DOTNET_STARTUP_HOOKS.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

die() {
    echo "build-calltarget-helper: error: $*" >&2
    exit 1
}
say() {
    echo "build-calltarget-helper: $*" >&2
}
logged() {
    "$@" >&2
}

[ $# -ge 1 ] || die "usage: build-calltarget-helper.sh OUT.dll [EXTRA.cs...]"
out="$1"
shift
case "$out" in *.dll) ;; *) die "the output must end in .dll: $out" ;; esac
sources=("$ROOT"/calltarget/*.cs)
[ -f "${sources[0]}" ] || die "no C# sources in $ROOT/calltarget"
for f in "$@"; do
    [ -f "$f" ] || die "no such file: $f"
    case "$f" in *.cs) ;; *) die "not a .cs file: $f" ;; esac
    sources+=("$(cd "$(dirname "$f")" && pwd)/$(basename "$f")")
done

env_text="$(bash "$ROOT/scripts/provision-dotnet.sh")" || die "provisioning failed (scripts/provision-dotnet.sh)"
value() { sed -n "s/^$1=//p" <<<"$env_text" | tail -n 1; }
mode="$(value CORPROF_DOTNET_MODE)"
host="$(value DOTNET_HOST)"
version="$(value DOTNET_RUNTIME_VERSION)"
runtime_dir="$(value DOTNET_RUNTIME_DIR)"
# The assemblies to compile against: the runtime's own on 3.1, 3.1's on 8.0
# (mcs cannot read 8.0's System.Private.CoreLib; docs/e2e.md).
reference_dir="$(value CSHARP_REFERENCE_DIR)"
[ -n "$host" ] && [ -n "$version" ] && [ -d "$runtime_dir" ] && [ -d "$reference_dir" ] ||
    die "provisioning printed no usable runtime"

# shellcheck source=scripts/csharp-lib.sh
. "$ROOT/scripts/csharp-lib.sh"
csharp_pick_compiler "$mode" "$host"
refs_text="$(csharp_refs "$reference_dir")" || die "a runtime assembly is missing"
mapfile -t refs <<<"$refs_text"

mkdir -p "$(dirname "$out")"
out="$(cd "$(dirname "$out")" && pwd)/$(basename "$out")"
log="$out.compile.log"
if ! csharp_compile library "$out" "$log" "${refs[@]}" -- "${sources[@]}"; then
    grep -E 'error' "$log" >&2 || cat "$log" >&2
    die "C# compilation failed ($CSHARP_COMPILER_ID; full output in $log)"
fi
rm -f "$log"
say "built $out for .NET $version ($CSHARP_COMPILER_ID)"
echo "$out"
