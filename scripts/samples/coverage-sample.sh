#!/usr/bin/env bash
# Runs the coverage example (docs/coverage.md): line and branch coverage of
# a .NET program at JIT time, from its Portable PDB, without rebuilding it.
# At shutdown it writes coverage-<pid>.info (lcov) and coverage-<pid>.xml
# (Cobertura). Provisions the runtime and the test programs when needed
# (scripts/provision/provision-dotnet.sh) and builds the profiler first. The
# program's output goes to stdout; where the files are, and how to open
# them (with their branches), go to stderr.
#
#   bash scripts/samples/coverage-sample.sh                       # tests/e2e/roslyn/Coverage
#   bash scripts/samples/coverage-sample.sh PATH/App.dll [ARGS...] # with App.pdb beside it, or embedded
#
# One run, one set of files: the script first removes the files its
# previous run wrote into the directory (listed in .coverage-sample.files
# there), and only those; a file of yours there stays (and is named).
# Exit code: the program's own (3 for the Coverage sample) when the
# profiler wrote its report; 70 when it wrote none. The last line on
# stderr says which (`coverage-sample: ok: ...; the program exited 3`).
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

sample_clear_last_run "$out" coverage-sample
cd "$(dirname "$dll")"
status=0
env DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 \
    CORECLR_ENABLE_PROFILING=1 \
    CORECLR_PROFILER='{2B8C6E57-9E0D-4F1A-8C3B-5D7A1E9F4C60}' \
    CORECLR_PROFILER_PATH="$library" \
    CORPROF_COVERAGE_DIR="$out" \
    "$host" exec --runtimeconfig "$config" "$dll" "$@" || status=$?
sample_note_run "$out" coverage-sample 'coverage-*.info' 'coverage-*.xml'
info=$(grep -m1 '\.info$' "$out/.coverage-sample.files" || true)
if [ -n "$info" ]; then
    info="$out/$info"
    echo "coverage-sample: wrote $out/coverage-<pid>.{info,xml}: $(paste -sd ' ' "$out/.coverage-sample.files")" >&2
    echo "coverage-sample: open with: genhtml --rc lcov_branch_coverage=1 -o $out/html $info (then $out/html/index.html), lcov --rc lcov_branch_coverage=1 --summary $info, or ReportGenerator: .cache/tools/reportgenerator '-reports:${info%.info}.xml' -targetdir:$out/report (bash scripts/provision/install-coverage-readers.sh installs it)" >&2
    sample_finish coverage-sample "$status" ok "wrote $info"
fi
sample_finish coverage-sample "$status" failed "the profiler wrote no report to $out (its messages above; docs/coverage.md)"
