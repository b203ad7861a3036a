#!/usr/bin/env bash
# Runs the JIT tracer example on a sample .NET program: provisions a .NET
# runtime when needed (scripts/provision-dotnet.sh), builds the profiler,
# and runs the program with it. Method names stream to stderr as the runtime
# JIT-compiles them; the program's own output goes to stdout.
#
#   bash scripts/trace-sample.sh [Basics|Rewrite|JitHeavy]
set -euo pipefail
cd "$(dirname "$0")/.."
program="${1:-Basics}"

summary=$(bash scripts/provision-dotnet.sh) || exit 1
value() { printf '%s\n' "$summary" | sed -n "s/^$1=//p" | tail -n 1; }
host=$(value DOTNET_HOST)
programs=$(value E2E_PROGRAMS_DIR)
[ -n "$host" ] && [ -n "$programs" ] || { echo "error: provisioning printed no DOTNET_HOST/E2E_PROGRAMS_DIR" >&2; exit 1; }
[ -f "$programs/$program/$program.dll" ] || { echo "error: no sample program '$program' (try Basics, Rewrite or JitHeavy)" >&2; exit 1; }

cargo build --quiet --example jit_tracer
library="$PWD/target/debug/examples/libjit_tracer.so"

cd "$programs/$program"
exec env DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 \
    CORECLR_ENABLE_PROFILING=1 \
    CORECLR_PROFILER='{DF63A541-5A33-4611-8829-F4E495985EE3}' \
    CORECLR_PROFILER_PATH="$library" \
    "$host" exec --runtimeconfig "$program.runtimeconfig.json" "$program.dll"
