#!/usr/bin/env bash
# Runs the call_tree example (docs/hooks.md): enter/leave hooks keep a
# shadow stack per thread, and at shutdown the profiler writes folded
# stacks (calls.folded, time.folded), a flame graph (flame.svg) and pprof
# (profile.pb.gz), and says on stderr whether every stack balanced. Provisions a .NET
# runtime when needed (scripts/provision/provision-dotnet.sh) and builds the
# profiler first. The
# program's output goes to stdout; the script exits with its exit code
# (45 for the CallTree sample) and prints where the files are on stderr.
#
#   bash scripts/samples/calltree-sample.sh                       # the CallTree sample
#   bash scripts/samples/calltree-sample.sh PATH/App.dll [ARGS...]
#
# CORPROF_CALLTREE_FILTER: hook only types whose full name starts with this
# prefix (default: E2E.CallTree for the sample; everything for your own
# program, which makes a large graph: set it to your root namespace).
# CORPROF_CALLTREE_DIR: where the files go (default: target/calltree).
set -euo pipefail
cd "$(dirname "$0")/../.."

# shellcheck source=scripts/lib/sample-lib.sh
. scripts/lib/sample-lib.sh
sample_provision

if [ $# -eq 0 ]; then
    dll="$programs/CallTree/CallTree.dll"
    filter="${CORPROF_CALLTREE_FILTER-E2E.CallTree}"
else
    case "$1" in *.dll) ;; *) echo "usage: calltree-sample.sh [PATH/App.dll [ARGS...]]" >&2; exit 2 ;; esac
    sample_own_program "$1"
    shift
    filter="${CORPROF_CALLTREE_FILTER-}"
    [ -n "$filter" ] || echo "calltree-sample: no CORPROF_CALLTREE_FILTER: hooking every method, the runtime's too" >&2
fi
config="${dll%.dll}.runtimeconfig.json"

out="${CORPROF_CALLTREE_DIR:-$PWD/target/calltree}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
rm -f "$out"/{calls.folded,time.folded,flame.svg,profile.pb.gz}

cargo build --quiet --example call_tree
library="$PWD/target/debug/examples/libcall_tree.so"

cd "$(dirname "$dll")"
status=0
env DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 \
    CORECLR_ENABLE_PROFILING=1 \
    CORECLR_PROFILER='{3C1F5E2A-7B9D-4E61-A8C4-5D2E9F0B1A73}' \
    CORECLR_PROFILER_PATH="$library" \
    CORPROF_CALLTREE_DIR="$out" \
    CORPROF_CALLTREE_FILTER="$filter" \
    "$host" exec --runtimeconfig "$config" "$dll" "$@" || status=$?
if [ -f "$out/calls.folded" ]; then
    echo "calltree-sample: wrote $out/{calls.folded,time.folded,flame.svg,profile.pb.gz}" >&2
else
    echo "calltree-sample: the profiler wrote nothing to $out (see docs/troubleshooting.md)" >&2
fi
exit "$status"
