#!/usr/bin/env bash
# Compiles your own C# program with the provisioned compiler against the
# provisioned .NET runtime, and writes its runtimeconfig.json, so that it can
# be run (and profiled) the way the end-to-end tests run theirs.
#
#   bash scripts/compile-csharp.sh [--library] [--ref NAME]... FILE.cs... OUTDIR
#
# The output is OUTDIR/NAME.dll (NAME: the first file's name without .cs)
# and, for a program, OUTDIR/NAME.runtimeconfig.json. --library builds a
# class library instead (no runtimeconfig); --ref System.Net.Http adds an
# assembly of the runtime to the default set (scripts/csharp-lib.sh). It runs
# scripts/provision-dotnet.sh first (idempotent; the first run installs the
# runtime and the compiler) and prints how to run the result. Exits non-zero
# with the compiler's errors on stderr when compilation fails. Without a .NET
# SDK the compiler is Mono's mcs: C# 6 and part of C# 7 (docs/e2e.md).
# CORPROF_RUNTIME=8.0 builds for CoreCLR 8.0.4 instead of 3.1 (the default).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

die() {
    echo "compile-csharp: error: $*" >&2
    exit 1
}
say() {
    echo "compile-csharp: $*" >&2
}
logged() {
    "$@" >&2
}
usage() {
    die "usage: compile-csharp.sh [--library] [--ref NAME]... FILE.cs... OUTDIR"
}

target=exe
extra=()
args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --library) target=library ;;
        --ref)
            [ $# -ge 2 ] || usage
            extra+=("${2%.dll}")
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

env_text="$(bash "$ROOT/scripts/provision-dotnet.sh")" || die "provisioning failed (scripts/provision-dotnet.sh)"
value() { sed -n "s/^$1=//p" <<<"$env_text"; }
mode="$(value CORPROF_DOTNET_MODE)"
host="$(value DOTNET_HOST)"
version="$(value DOTNET_RUNTIME_VERSION)"
runtime_dir="$(value DOTNET_RUNTIME_DIR)"
# The assemblies to compile against: the runtime's own, or 3.1's under
# CORPROF_RUNTIME=8.0 (mcs cannot read 8.0's; see provision-dotnet.sh).
reference_dir="$(value CSHARP_REFERENCE_DIR)"
[ -n "$host" ] && [ -n "$version" ] && [ -d "$runtime_dir" ] && [ -d "$reference_dir" ] ||
    die "provisioning printed no usable runtime"

# shellcheck source=scripts/csharp-lib.sh
. "$ROOT/scripts/csharp-lib.sh"
csharp_pick_compiler "$mode" "$host"
refs_text="$(csharp_refs "$reference_dir" "${extra[@]}")" || die "a runtime assembly is missing"
mapfile -t refs <<<"$refs_text"

mkdir -p "$out_dir"
out_dir="$(cd "$out_dir" && pwd)"
log="$out_dir/$name.compile.log"
if ! csharp_compile "$target" "$out_dir/$name.dll" "$log" "${refs[@]}" -- "${sources[@]}"; then
    grep -E 'error' "$log" >&2 || cat "$log" >&2
    case "$CSHARP_COMPILER_ID" in
        Mono*)
            say "note: mcs knows C# 6 and part of C# 7: tuples, 'out var', 'is T x' and 'var (a, b) = t' work;"
            say "  local functions, 'foreach (var (a, b) in ...)', stackalloc into Span<T> and C# 8"
            say "  (switch expressions, '??=', nullable references) do not: write those lines the older way"
            ;;
    esac
    die "C# compilation failed ($CSHARP_COMPILER_ID; full output in $log)"
fi
rm -f "$log"
if [ "$target" = exe ]; then
    csharp_runtimeconfig "$out_dir/$name.runtimeconfig.json" "$version"
    say "built $out_dir/$name.dll for .NET $version; run it with:"
    say "  DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 $host $out_dir/$name.dll"
    say "profile it with the JIT tracer: bash $ROOT/scripts/trace-sample.sh $out_dir/$name.dll"
else
    say "built the library $out_dir/$name.dll for .NET $version"
fi
