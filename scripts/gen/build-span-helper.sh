#!/usr/bin/env bash
# Builds the span helper assembly (spans/SpanHelper.cs; docs/sampling.md,
# "Samples tied to spans"): a startup hook that writes the trace and span
# ids of the Activity current on each thread where the signal-mode
# sampler's handler reads them (CORPROF_SAMPLER_SPANS=1).
#
#   bash scripts/gen/build-span-helper.sh OUT.dll
#
# Built as scripts/gen/build-calltarget-helper.sh builds the CallTarget
# helper (a Release build of scripts/lib/csharp/Sources.csproj with the .NET
# SDK, intermediate files under .cache/span-helper/obj/), but for net8.0:
# ActivityListener is in System.Diagnostics.DiagnosticSource 5.0 and later,
# so the helper loads on .NET 8 and every later runtime (not on 3.1, where
# a startup hook that fails to load stops the program: do not list it
# there). Pass OUT.dll in DOTNET_STARTUP_HOOKS. Prints OUT.dll's absolute
# path.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
readonly TFM=net8.0

die() {
    echo "build-span-helper: error: $*" >&2
    exit 1
}

[ $# -eq 1 ] || die "usage: build-span-helper.sh OUT.dll"
out="$1"
case "$out" in *.dll) ;; *) die "the output must end in .dll: $out" ;; esac
command -v dotnet >/dev/null 2>&1 ||
    die "the .NET SDK is not installed: install the .NET SDK 10 (https://dot.net) and retry"
command -v flock >/dev/null 2>&1 || die "flock (Debian package util-linux) is missing"

mkdir -p "$(dirname "$out")"
out="$(cd "$(dirname "$out")" && pwd)/$(basename "$out")"
name="$(basename "$out" .dll)"
key="$(printf '%s' "$out" | sha256sum | cut -c1-16)"
project_dir="$ROOT/.cache/span-helper/obj/$name-$key"
mkdir -p "$project_dir"
exec 9>"$project_dir.lock"
flock 9
# shellcheck source=scripts/lib/install-lib.sh
. "$ROOT/scripts/lib/install-lib.sh"
csharp_build "$name" Library "$TFM" "$(dirname "$out")" "$project_dir" "$ROOT/spans/SpanHelper.cs" \
    -- -p:GenerateAssemblyInfo=false ||
    die "building the helper failed (the .NET SDK's Roslyn, $TFM; full output in $project_dir/build.log)"
[ -f "$out" ] || die "the build left no $out (see $project_dir/build.log)"
echo "$out"
