#!/usr/bin/env bash
# Attaches profilers to a running .NET program: provisions a .NET runtime
# when needed (scripts/provision-dotnet.sh), builds the `attach` example and
# the `live_patch` profiler, starts the `Attach` sample (a loop printing the
# value its method `Value()` returns), lists the .NET processes, and attaches
# `live_patch`, which makes `Value()` return 42 instead of 41 for 2 seconds.
# The program's output goes to stdout, the profiler's to stderr; the script
# exits with the program's own exit code (45).
#
#   bash scripts/attach-sample.sh
set -euo pipefail
cd "$(dirname "$0")/.."

summary=$(bash scripts/provision-dotnet.sh) || exit 1
value() { printf '%s\n' "$summary" | sed -n "s/^$1=//p" | tail -n 1; }
host=$(value DOTNET_HOST)
programs=$(value E2E_PROGRAMS_DIR)
[ -n "$host" ] && [ -n "$programs" ] || { echo "error: provisioning printed no DOTNET_HOST/E2E_PROGRAMS_DIR" >&2; exit 1; }

cargo build --quiet --example attach --example live_patch
attach="$PWD/target/debug/examples/attach"
library="$PWD/target/debug/examples/liblive_patch.so"
sync=$(mktemp -d)
trap 'rm -rf "$sync"' EXIT

cd "$programs/Attach"
env DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 \
    "$host" exec --runtimeconfig Attach.runtimeconfig.json Attach.dll --sync-dir "$sync" --seconds 30 &
pid=$!
sleep 1
echo "--- attach list" >&2
"$attach" list >&2
echo "--- attach $pid live_patch" >&2
"$attach" "$pid" "$library" 7E4D2C1B-9A8F-4E3D-B2C1-0F9E8D7C6B5A \
    'Attach!E2E.Attach.Program::Value 41 42 2' >&2 || true
sleep 3
touch "$sync/stop"
wait "$pid"
