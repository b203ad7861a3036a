#!/usr/bin/env bash
# Runs the sampler example (docs/sampling.md): 99 times a second it samples
# the managed threads without stopping the runtime (on Linux each thread is
# interrupted by a signal on its own CPU clock and walks its own stack;
# CORPROF_SAMPLER_MODE=suspend-runtime suspends the runtime instead), and
# it samples allocations every 512 KiB on average; at shutdown it writes a
# pprof profile (profile.pb.gz: CPU, wall time, allocations, exceptions,
# lock contention), speedscope.json, folded stacks (cpu.folded,
# wall.folded, alloc.folded), a CPU flame graph (flame.svg) and
# summary.txt, and while it runs a profile-<start>-<seq>.pb.gz per period
# (and heap-<start>.{txt,pb.gz} with CORPROF_SAMPLER_HEAP_SNAPSHOT_EVERY).
# Provisions a .NET runtime when needed (scripts/provision/provision-dotnet.sh)
# and builds the profiler first. The program's output goes to stdout.
#
#   bash scripts/samples/sampler-sample.sh                       # the Sampling sample
#   bash scripts/samples/sampler-sample.sh PATH/App.dll [ARGS...]
#
# One run, one set of files: the script first removes the files its
# previous run wrote into the directory (listed in .sampler-sample.files
# there), and only those; a file of yours there stays (and is named).
# Exit code: the program's own (37 for the Sampling sample) when the
# profiler wrote its files; 70 when it wrote nothing. The last line on
# stderr says which (`sampler-sample: ok: ...; the program exited 37`),
# after where the files are and how to open them.
#
# CORPROF_SAMPLER_DIR: where the files go (default: target/sampler).
# CORPROF_SAMPLER_HZ, CORPROF_SAMPLER_MODE, CORPROF_SAMPLER_ALLOC_BYTES and
# the other CORPROF_SAMPLER_* settings pass through.
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
sample_clear_last_run "$out" sampler-sample

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
sample_note_run "$out" sampler-sample "${files[@]}" 'profile-*.pb.gz' 'heap-*.txt' 'heap-*.pb.gz'
written=$(wc -l <"$out/.sampler-sample.files")
if [ -f "$out/summary.txt" ]; then
    echo "sampler-sample: wrote $out/{profile.pb.gz,speedscope.json,cpu.folded,wall.folded,alloc.folded,flame.svg,summary.txt} ($written files of this run, listed in $out/.sampler-sample.files; the next run removes them)" >&2
    echo "sampler-sample: open with: go tool pprof -top $out/profile.pb.gz (or -http=: for the web view), or speedscope $out/speedscope.json" >&2
    sample_finish sampler-sample "$status" ok "$written files in $out"
fi
sample_finish sampler-sample "$status" failed "the profiler wrote nothing to $out (its messages above; docs/troubleshooting.md)"
