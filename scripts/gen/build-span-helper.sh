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
# shellcheck source=scripts/lib/install-lib.sh
. "$ROOT/scripts/lib/install-lib.sh"
build_helper_dll span-helper "$TFM" "$out" "$ROOT/spans/SpanHelper.cs"
out="$helper_out"
echo "$out"
