#!/usr/bin/env bash
# Runs the coverage example (docs/coverage.md): line and branch coverage of
# a .NET program at JIT time, from its Portable PDB, without rebuilding it.
# At shutdown it writes coverage-<pid>.info (lcov) and coverage-<pid>.xml
# (Cobertura). Provisions the runtime and the test programs when needed
# (scripts/provision/provision-dotnet.sh) and builds the profiler first. The
# program's output goes to stdout; the script exits with its exit code (3
# for the Coverage sample) and prints where the files are, and how to open
# them, on stderr.
#
#   bash scripts/samples/coverage-sample.sh                       # tests/e2e/roslyn/Coverage
#   bash scripts/samples/coverage-sample.sh PATH/App.dll [ARGS...] # with App.pdb beside it, or embedded
#
# CORPROF_COVERAGE_DIR: where the files go (default: target/coverage).
# CORPROF_COVERAGE_INCLUDE, CORPROF_COVERAGE_EXCLUDE ([assembly]type globs)
# and CORPROF_COVERAGE_BRANCHES pass through. CORPROF_RUNTIME picks the
# runtime (10.0 when unset; 3.1, 8.0, 9.0, 11.0).
set -euo pipefail
cd "$(dirname "$0")/../.."

# shellcheck source=scripts/lib/sample-lib.sh
. scripts/lib/sample-lib.sh
sample_provision

if [ $# -eq 0 ]; then
    dll="$programs/Coverage/Coverage.dll"
    config="${dll%.dll}.runtimeconfig.json"
else
    case "$1" in *.dll) ;; *) echo "usage: coverage-sample.sh [PATH/App.dll [ARGS...]]" >&2; exit 2 ;; esac
    sample_own_program "$1"
    shift
fi

out="${CORPROF_COVERAGE_DIR:-$PWD/target/coverage}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

cargo build --quiet --release --example coverage
library="$PWD/target/release/examples/libcoverage.so"

cd "$(dirname "$dll")"
before=$(ls "$out" 2>/dev/null | grep -c '^coverage-.*\.info$' || true)
status=0
env DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 \
    CORECLR_ENABLE_PROFILING=1 \
    CORECLR_PROFILER='{2B8C6E57-9E0D-4F1A-8C3B-5D7A1E9F4C60}' \
    CORECLR_PROFILER_PATH="$library" \
    CORPROF_COVERAGE_DIR="$out" \
    "$host" exec --runtimeconfig "$config" "$dll" "$@" || status=$?
after=$(ls "$out" 2>/dev/null | grep -c '^coverage-.*\.info$' || true)
if [ "$after" -gt "$before" ]; then
    echo "coverage-sample: wrote $out/coverage-<pid>.{info,xml}" >&2
    echo "coverage-sample: open with: genhtml -o $out/html $out/coverage-*.info (then $out/html/index.html), lcov --summary $out/coverage-*.info, or ReportGenerator: .cache/tools/reportgenerator '-reports:$out/coverage-*.xml' -targetdir:$out/report (bash scripts/provision/install-coverage-readers.sh installs it)" >&2
else
    echo "coverage-sample: the profiler wrote nothing to $out (see docs/coverage.md)" >&2
fi
exit "$status"
