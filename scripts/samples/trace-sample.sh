#!/usr/bin/env bash
# Runs the JIT tracer example on a .NET program: provisions a .NET runtime
# when needed (scripts/provision/provision-dotnet.sh), builds the profiler, and runs
# the program with it. The program's own output goes to stdout; the method
# names go to stderr (the tracer buffers them and writes them when its
# 64 KiB buffer fills and at shutdown, so they come after the program's
# output for a small program). The script exits with the program's exit code.
#
#   bash scripts/samples/trace-sample.sh [Basics|Rewrite|JitHeavy]   # a sample program
#   bash scripts/samples/trace-sample.sh PATH/App.dll [ARGS...]      # your own program
#
# Build your own program with scripts/samples/compile-csharp.sh (which writes the
# App.runtimeconfig.json the runtime needs next to App.dll).
set -euo pipefail
cd "$(dirname "$0")/../.."
program="${1:-Basics}"
[ $# -gt 0 ] && shift

# shellcheck source=scripts/lib/sample-lib.sh
. scripts/lib/sample-lib.sh
sample_provision

case "$program" in
    *.dll)
        sample_own_program "$program"
        ;;
    *)
        dll="$programs/$program/$program.dll"
        config="$programs/$program/$program.runtimeconfig.json"
        [ -f "$dll" ] || { echo "error: no sample program '$program' (try Basics, Rewrite or JitHeavy, or the path of your own .dll)" >&2; exit 1; }
        ;;
esac

cargo build --quiet --example jit_tracer
library="$PWD/target/debug/examples/libjit_tracer.so"

cd "$(dirname "$dll")"
exec env DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 \
    CORECLR_ENABLE_PROFILING=1 \
    CORECLR_PROFILER='{DF63A541-5A33-4611-8829-F4E495985EE3}' \
    CORECLR_PROFILER_PATH="$library" \
    "$host" exec --runtimeconfig "$config" "$dll" "$@"
