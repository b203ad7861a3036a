#!/usr/bin/env bash
# Runs the sampler example (docs/sampling.md): 99 times a second it suspends
# the runtime, walks every managed thread and resumes, and it samples
# allocations every 512 KiB on average; at shutdown it writes a pprof
# profile (profile.pb.gz: CPU, wall time, allocations), speedscope.json,
# folded stacks (cpu.folded, wall.folded, alloc.folded), a CPU flame graph
# (flame.svg) and summary.txt. Provisions a .NET runtime when needed
# (scripts/provision/provision-dotnet.sh) and builds the profiler first. The
# program's output goes to stdout; the script exits with its exit code (37
# for the Sampling sample) and prints where the files are, and how to open
# them, on stderr.
#
#   bash scripts/samples/sampler-sample.sh                       # the Sampling sample
#   bash scripts/samples/sampler-sample.sh PATH/App.dll [ARGS...]
#
# CORPROF_SAMPLER_DIR: where the files go (default: target/sampler).
# CORPROF_SAMPLER_HZ and CORPROF_SAMPLER_ALLOC_BYTES pass through.
set -euo pipefail
cd "$(dirname "$0")/../.."

# shellcheck source=scripts/lib/sample-lib.sh
. scripts/lib/sample-lib.sh
sample_provision

if [ $# -eq 0 ]; then
    dll="$programs/Sampling/Sampling.dll"
else
    case "$1" in *.dll) ;; *) echo "usage: sampler-sample.sh [PATH/App.dll [ARGS...]]" >&2; exit 2 ;; esac
    sample_own_program "$1"
    shift
fi
config="${dll%.dll}.runtimeconfig.json"

out="${CORPROF_SAMPLER_DIR:-$PWD/target/sampler}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
files=(profile.pb.gz speedscope.json cpu.folded wall.folded alloc.folded flame.svg summary.txt)
for f in "${files[@]}"; do rm -f "${out:?}/$f"; done

cargo build --quiet --release --example sampler
library="$PWD/target/release/examples/libsampler.so"

cd "$(dirname "$dll")"
status=0
env DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 \
    CORECLR_ENABLE_PROFILING=1 \
    CORECLR_PROFILER='{7A3E9C51-2B8D-4F06-9E1A-C4D5B6A70819}' \
    CORECLR_PROFILER_PATH="$library" \
    CORPROF_SAMPLER_DIR="$out" \
    "$host" exec --runtimeconfig "$config" "$dll" "$@" || status=$?
if [ -f "$out/summary.txt" ]; then
    echo "sampler-sample: wrote $out/{profile.pb.gz,speedscope.json,cpu.folded,wall.folded,alloc.folded,flame.svg,summary.txt}" >&2
    echo "sampler-sample: open with: go tool pprof -top $out/profile.pb.gz (or -http=: for the web view), or speedscope $out/speedscope.json" >&2
else
    echo "sampler-sample: the profiler wrote nothing to $out (see docs/troubleshooting.md)" >&2
fi
exit "$status"
