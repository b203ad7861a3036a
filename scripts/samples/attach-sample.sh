#!/usr/bin/env bash
# Attaches profilers to a running .NET program: provisions a .NET runtime
# when needed (scripts/provision/provision-dotnet.sh), builds the `attach` example and
# the `live_patch` profiler, starts the program, lists the .NET processes
# (`attach list`), and attaches `live_patch`, which changes a constant in a
# running method by ReJIT and reverts it after a few seconds.
#
#   bash scripts/samples/attach-sample.sh
#       The `Attach` sample: a loop printing the value its method `Value()`
#       returns; `value=41` becomes `value=42` for 2 seconds. Exits with the
#       sample's own exit code (45).
#   bash scripts/samples/attach-sample.sh PATH/App.dll 'App!Ns.Type::Method OLD NEW [SECONDS]' [ARGS...]
#       Your own program (built with scripts/samples/compile-csharp.sh), run with
#       ARGS: it must still be running a second after it starts, and the
#       method must load OLD itself and be [MethodImpl(NoInlining)]
#       (docs/attach.md, "Your own program"). Waits for the program to exit
#       and exits with its exit code.
#
# The program's output goes to stdout, the profiler's and the attach
# program's to stderr.
set -euo pipefail
cd "$(dirname "$0")/../.."

# shellcheck source=scripts/lib/sample-lib.sh
. scripts/lib/sample-lib.sh
sample_provision

own=
if [ $# -gt 0 ]; then
    case "$1" in *.dll) ;; *) echo "usage: attach-sample.sh [PATH/App.dll 'App!Ns.Type::Method OLD NEW [SECONDS]' [ARGS...]]" >&2; exit 2 ;; esac
    [ $# -ge 2 ] || { echo "error: say what to patch: attach-sample.sh $1 'Assembly!Namespace.Type::Method OLD NEW [SECONDS]'" >&2; exit 2; }
    sample_own_program "$1"
    own="$dll"
    patch="$2"
    shift 2
fi

cargo build --quiet --example attach --example live_patch
attach="$PWD/target/debug/examples/attach"
library="$PWD/target/debug/examples/liblive_patch.so"
sync=$(mktemp -d)
trap 'rm -rf "$sync"' EXIT

if [ -n "$own" ]; then
    cd "$(dirname "$own")"
    env DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 \
        "$host" exec --runtimeconfig "${own%.dll}.runtimeconfig.json" "$own" "$@" &
else
    cd "$programs/Attach"
    env DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 \
        "$host" exec --runtimeconfig Attach.runtimeconfig.json Attach.dll --sync-dir "$sync" --seconds 30 &
    patch='Attach!E2E.Attach.Program::Value 41 42 2'
fi
pid=$!
# The runtime opens its diagnostics endpoint early in startup; wait for it.
for _ in $(seq 50); do
    "$attach" list 2>/dev/null | grep -q "^$pid " && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
done
sleep 0.5
if ! kill -0 "$pid" 2>/dev/null; then
    echo "attach-sample: the program exited before the attach: make it run longer (a loop, or an argument)" >&2
    wait "$pid"
    exit
fi
echo "--- attach list" >&2
"$attach" list >&2
echo "--- attach $pid live_patch '$patch'" >&2
"$attach" "$pid" "$library" 7E4D2C1B-9A8F-4E3D-B2C1-0F9E8D7C6B5A "$patch" >&2 || true
if [ -z "$own" ]; then
    sleep 3
    touch "$sync/stop"
fi
wait "$pid"
