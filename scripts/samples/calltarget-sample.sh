#!/usr/bin/env bash
# Runs the call_target example (docs/instrumentation.md): wraps the named
# methods so that they call an integration's OnMethodBegin/OnMethodEnd in
# the helper assembly CallTargetHelper.dll, which the program never
# referenced. Provisions a .NET runtime when needed
# (scripts/provision/provision-dotnet.sh), builds the helper from calltarget/
# (scripts/gen/build-calltarget-helper.sh) and the profiler, and runs the
# program with the five variables it needs. The program's output goes to
# stdout, the profiler's messages and the integration's lines
# (LogIntegration: `calltarget begin ...`) to stderr; the script exits
# with the program's own exit code (44 for the CallTarget sample).
#
#   bash scripts/samples/calltarget-sample.sh                           # the CallTarget sample
#   bash scripts/samples/calltarget-sample.sh PATH/App.dll TARGETS [ARGS...]
#
# TARGETS: `;`-separated `Assembly!Namespace.Type::Method` (quote it; a
# generic type is named with its arity, 'App!Shop.Repository`1::Find').
# A target may name its own integration: 'App!Ns.Type::Method=Ns.Integration'.
# Extra settings pass through from the environment:
# CORPROF_CALLTARGET_INTEGRATION=CorProf.CallTarget.CountingIntegration (or
# NoopIntegration; default LogIntegration), CORPROF_CALLTARGET_REJIT=1,
# CORPROF_CALLTARGET_VERBOSE=1, CORPROF_CALLTARGET_DISABLE_INLINING=1.
# CORPROF_CALLTARGET_HELPER=PATH/X.dll uses a helper you built yourself
# (docs/instrumentation.md, "Writing an integration").
set -euo pipefail
cd "$(dirname "$0")/../.."

# shellcheck source=scripts/lib/sample-lib.sh
. scripts/lib/sample-lib.sh
sample_provision
if [ -n "${CORPROF_CALLTARGET_HELPER:-}" ]; then
    [ -f "$CORPROF_CALLTARGET_HELPER" ] || { echo "error: no such file: CORPROF_CALLTARGET_HELPER=$CORPROF_CALLTARGET_HELPER" >&2; exit 1; }
    helper="$(cd "$(dirname "$CORPROF_CALLTARGET_HELPER")" && pwd)/$(basename "$CORPROF_CALLTARGET_HELPER")"
else
    helper=$(bash scripts/gen/build-calltarget-helper.sh "$PWD/.cache/calltarget-helper/CallTargetHelper.dll") || exit 1
fi

if [ $# -eq 0 ]; then
    dll="$programs/CallTarget/CallTarget.dll"
    targets='CallTarget!E2E.CallTarget.Program::Add;CallTarget!E2E.CallTarget.Program::Fail'
else
    case "$1" in *.dll) ;; *) echo "usage: calltarget-sample.sh [PATH/App.dll 'App!Namespace.Type::Method;...' [ARGS...]]" >&2; exit 2 ;; esac
    [ $# -ge 2 ] || { echo "error: name the methods to wrap: calltarget-sample.sh $1 'Assembly!Namespace.Type::Method'" >&2; exit 2; }
    sample_own_program "$1"
    targets="$2"
    shift 2
fi
config="${dll%.dll}.runtimeconfig.json"

cargo build --quiet --example call_target
library="$PWD/target/debug/examples/libcall_target.so"

cd "$(dirname "$dll")"
exec env DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 \
    CORECLR_ENABLE_PROFILING=1 \
    CORECLR_PROFILER='{8D2E4A61-3B7C-4F59-A0E8-C51F9B27D364}' \
    CORECLR_PROFILER_PATH="$library" \
    DOTNET_STARTUP_HOOKS="$helper" \
    CORPROF_CALLTARGET_HELPER="$helper" \
    CORPROF_CALLTARGET="$targets" \
    "$host" exec --runtimeconfig "$config" "$dll" "$@"
