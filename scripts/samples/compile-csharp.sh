#!/usr/bin/env bash
# Builds your own C# program with the .NET SDK for the provisioned runtime,
# so that it can be run (and profiled) the way the end-to-end tests run
# theirs.
#
#   bash scripts/samples/compile-csharp.sh [--library] [--ref NAME]... FILE.cs... OUTDIR
#
# The output is OUTDIR/NAME.dll (NAME: the first file's name without .cs)
# with its portable PDB and, for a program, OUTDIR/NAME.runtimeconfig.json
# naming the runtime CORPROF_RUNTIME picks (10.0 when unset; 3.1, 8.0, 9.0,
# 11.0). The files are compiled by the SDK's Roslyn (current C#) as a
# Release build of scripts/lib/csharp/Sources.csproj, its intermediate files in
# OUTDIR/obj/ (every assembly of the target framework's reference pack is
# referenced; --ref is accepted for older command lines and has no effect). --library builds a
# class library instead. It runs scripts/provision/provision-dotnet.sh first
# (idempotent) and prints how to run the result. Exits non-zero with the
# compiler's errors on stderr when compilation fails.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

die() {
    echo "compile-csharp: error: $*" >&2
    exit 1
}
say() {
    echo "compile-csharp: $*" >&2
}
usage() {
    die "usage: compile-csharp.sh [--library] [--ref NAME]... FILE.cs... OUTDIR"
}

output_type=Exe
args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --library) output_type=Library ;;
        --ref)
            [ $# -ge 2 ] || usage
            shift
            ;;
        -*) usage ;;
        *) args+=("$1") ;;
    esac
    shift
done
[ ${#args[@]} -ge 2 ] || usage
out_dir="${args[-1]}"
unset 'args[-1]'
sources=()
for f in "${args[@]}"; do
    [ -f "$f" ] || die "no such file: $f"
    case "$f" in *.cs) ;; *) die "not a .cs file: $f" ;; esac
    sources+=("$(cd "$(dirname "$f")" && pwd)/$(basename "$f")")
done
name="$(basename "${sources[0]}" .cs)"

env_text="$(bash "$ROOT/scripts/provision/provision-dotnet.sh")" || die "provisioning failed (scripts/provision/provision-dotnet.sh)"
value() { sed -n "s/^$1=//p" <<<"$env_text" | tail -n 1; }
host="$(value DOTNET_HOST)"
version="$(value DOTNET_RUNTIME_VERSION)"
tfm="$(value TARGET_FRAMEWORK)"
[ -n "$host" ] && [ -n "$version" ] && [ -n "$tfm" ] || die "provisioning printed no usable runtime"

mkdir -p "$out_dir"
out_dir="$(cd "$out_dir" && pwd)"
# shellcheck source=scripts/lib/install-lib.sh
. "$ROOT/scripts/lib/install-lib.sh"
csharp_build "$name" "$output_type" "$tfm" "$out_dir" "$out_dir/obj/$name" "${sources[@]}" \
    -- "-p:RuntimeFrameworkVersion=$version" ||
    die "C# compilation failed (the .NET SDK's Roslyn; full output in $out_dir/obj/$name/build.log)"
if [ "$output_type" = Exe ]; then
    say "built $out_dir/$name.dll for .NET $version; run it with:"
    say "  DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 $host $out_dir/$name.dll"
    say "profile it with the JIT tracer: bash $ROOT/scripts/samples/trace-sample.sh $out_dir/$name.dll"
else
    say "built the library $out_dir/$name.dll for .NET $version"
fi
