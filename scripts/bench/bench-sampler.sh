#!/usr/bin/env bash
# Overhead of the sampling profiler on a real CoreCLR (docs/performance.md,
# "Sampler"; docs/sampling.md). The Sampling program's bench mode runs a
# fixed amount of CPU-bound work (ROUNDS rounds of Hot and Warm) on 4
# threads; rounds alternate a run without a profiler and a run under the
# release build of examples/sampler.rs at its defaults (99 Hz, allocation
# sampling on), after one untimed warm-up pair. Prints the medians of the
# process's CPU time (user + system, /usr/bin/time) and wall time, and their
# ratios, for each sampling mode (signal: per-thread signals, the default on
# Linux x86-64; suspend-runtime: every thread stopped per sample; the three
# configurations in a rotating order each round); then, for 4, 16 and 64 threads, the pause per sample (suspend to
# resume: median and 99th percentile, from the sampler's summary.txt); then
# the cost per allocation of each allocation source on allocation-bound
# work (ALLOCS small objects, interleaved with runs without a profiler):
# allocation-tick (GCAllocationTick events, .NET 5 and later) and
# object-allocated (the ObjectAllocated callback).
#
#   bash scripts/bench/bench.sh sampler          # 7 rounds
#   RUNS=11 ROUNDS=20000 bash scripts/bench/bench-sampler.sh
#   OVERHEAD_ONLY=1 bash scripts/bench/bench-sampler.sh   # the first table only
#   CONFIGS="none signal recorder" OVERHEAD_ONLY=1 bash scripts/bench/bench-sampler.sh   # the flight recorder with three rules
#
# CORPROF_RUNTIME picks the provisioned runtime (scripts/provision/provision-dotnet.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."

die() { printf 'bench-sampler: error: %s\n' "$*" >&2; exit 1; }
log() { printf 'bench-sampler: %s\n' "$*" >&2; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

runs="${RUNS:-7}"
rounds="${ROUNDS:-10000}"
allocs="${ALLOCS:-50000000}"
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive integer, got '$runs'"
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive integer, got '$rounds'"
[[ "$allocs" =~ ^[1-9][0-9]*$ ]] || die "ALLOCS must be a positive integer, got '$allocs'"
[ -x /usr/bin/time ] || die "/usr/bin/time is missing (Debian's time package)"

log "provisioning (scripts/provision/provision-dotnet.sh)"
provision_out=$(bash scripts/provision/provision-dotnet.sh) || die "provisioning failed; see .cache/provision-dotnet.log"
value() { printf '%s\n' "$provision_out" | sed -n "s/^$1=//p" | tail -n 1; }
host=$(value DOTNET_HOST)
version=$(value DOTNET_RUNTIME_VERSION)
program="$(value E2E_PROGRAMS_DIR)/Sampling/Sampling.dll"
[ -x "$host" ] && [ -f "$program" ] || die "provisioning printed no usable DOTNET_HOST or Sampling program"
log "building examples/sampler.rs (release)"
cargo build --quiet --release --example sampler || die "cargo build failed"
library="$PWD/target/release/examples/libsampler.so"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# run CONFIG MODE ARGS... -> "cpu_seconds wall_seconds": the program's
# MODE (bench or allocbench) without a profiler (CONFIG none) or under the
# sampler at its defaults (sampler), or with allocations from
# GCAllocationTick (tick) or ObjectAllocated (objects). Fails when the
# program does not finish its work, or the sampler wrote no profile.
run() {
    local config="$1" mode="$2" out dir="$scratch/profile"
    shift 2
    rm -rf "$dir"
    local -a profiler=()
    if [ "$config" != none ]; then
        profiler=(CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER='{7A3E9C51-2B8D-4F06-9E1A-C4D5B6A70819}'
            CORECLR_PROFILER_PATH="$library" CORPROF_SAMPLER_DIR="$dir")
    fi
    case "$config" in
    signal) profiler+=(CORPROF_SAMPLER_MODE=signal) ;;
    suspend) profiler+=(CORPROF_SAMPLER_MODE=suspend-runtime) ;;
    tick) profiler+=(CORPROF_SAMPLER_ALLOC_SOURCE=allocation-tick) ;;
    objects) profiler+=(CORPROF_SAMPLER_ALLOC_SOURCE=object-allocated) ;;
    # Signal mode with the flight recorder and three rules that do not fire
    # (issue 49: the recorder's cost).
    recorder) profiler+=(CORPROF_SAMPLER_MODE=signal
        "CORPROF_SAMPLER_TRIGGERS=cpu:100%:60s;gc-pause:10s;exception:System.TimeoutException:1000000:1s") ;;
    esac
    local status=0
    out=$(env DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 "${profiler[@]}" \
        /usr/bin/time -f 'time %e %U %S' "$host" "$program" "$mode" "$@" 2>"$scratch/err") || status=$?
    # The program exits with 37 when it did its work.
    [ "$status" = 37 ] && [ "$out" = "$mode done" ] ||
        die "$config: the program failed (exit $status, output '$out'): $(cat "$scratch/err")"
    if [ "$config" != none ]; then
        [ -s "$dir/profile.pb.gz" ] || die "the sampler wrote no profile: $(cat "$scratch/err")"
        cp "$dir/summary.txt" "$scratch/summary.txt"
    fi
    awk '/^time / {printf "%.3f %.3f\n", $3 + $4, $2}' "$scratch/err"
}

log "warm-up round"
# CONFIGS picks the configurations (none first), e.g. "none signal recorder".
read -r -a configs <<<"${CONFIGS:-none signal suspend}"
[ "${configs[0]}" = none ] || die "CONFIGS must start with none, got '${CONFIGS:-}'"
for c in "${configs[@]}"; do
    run "$c" bench 4 "$rounds" >/dev/null
done
for ((r = 1; r <= runs; r++)); do
    log "round $r of $runs"
    # Rotate the order: none signal suspend, signal suspend none, ...
    n=${#configs[@]}
    order=("${configs[@]:r%n}" "${configs[@]:0:r%n}")
    for c in "${order[@]}"; do
        read -r cpu wall <<<"$(run "$c" bench 4 "$rounds")"
        [ -n "$wall" ] || die "$c printed no time"
        echo "$cpu" >>"$scratch/$c.cpu"
        echo "$wall" >>"$scratch/$c.wall"
    done
done

echo "## Sampler overhead: $rounds rounds of CPU-bound work on 4 threads, .NET $version, median of $runs interleaved rounds"
echo
echo "| configuration | CPU time (s) | wall time (s) | CPU ratio | wall ratio |"
echo "|---|---:|---:|---:|---:|"
base_cpu=$(median <"$scratch/none.cpu")
base_wall=$(median <"$scratch/none.wall")
for c in "${configs[@]}"; do
    cpu=$(median <"$scratch/$c.cpu")
    wall=$(median <"$scratch/$c.wall")
    echo "| $c | $cpu | $wall | $(awk -v a="$cpu" -v b="$base_cpu" 'BEGIN {printf "%.3f", a / b}') | $(awk -v a="$wall" -v b="$base_wall" 'BEGIN {printf "%.3f", a / b}') |"
done
echo
for c in "${configs[@]:1}"; do
    echo "Per-round CPU ratios ($c / none, same round): $(paste -d' ' "$scratch/$c.cpu" "$scratch/none.cpu" | awk '{printf "%.3f ", $1 / $2}')"
    echo
done
echo "Command: CONFIGS='${configs[*]}' RUNS=$runs ROUNDS=$rounds OVERHEAD_ONLY=${OVERHEAD_ONLY:-} bash scripts/bench/bench-sampler.sh"
if [ -n "${OVERHEAD_ONLY:-}" ]; then
    exit 0
fi
echo
echo "### Pause per sample in suspend-runtime mode (suspend, walk every thread, resume), by threads"
echo
echo "| threads | samples | pause median (us) | pause p99 (us) | walks per sample |"
echo "|---:|---:|---:|---:|---:|"
for threads in 4 16 64; do
    run suspend bench "$threads" "$rounds" >/dev/null
    s() { sed -n "s/^$1=//p" "$scratch/summary.txt"; }
    awk -v t="$threads" -v n="$(s suspensions)" -v m="$(s pause_median_ns)" -v p="$(s pause_p99_ns)" -v w="$(s walks)" \
        'BEGIN {printf "| %d | %d | %.0f | %.0f | %.1f |\n", t, n, m / 1000, p / 1000, (n ? w / n : 0)}'
done

# Allocation-bound work: the cost per allocation of each source.
sources=(objects)
if [ "${version%%.*}" -ge 5 ]; then
    sources=(tick objects)
fi
log "allocation sources: ${sources[*]}"
for ((r = 1; r <= runs; r++)); do
    log "allocation round $r of $runs"
    for c in none "${sources[@]}"; do
        read -r cpu wall <<<"$(run "$c" allocbench "$allocs")"
        [ -n "$cpu" ] || die "$c printed no time"
        echo "$cpu" >>"$scratch/alloc-$c.cpu"
    done
done
echo
echo "### Allocation-bound work: $allocs small objects, by allocation source (median of $runs interleaved rounds)"
echo
echo "| allocation source | CPU time (s) | CPU ratio | added per allocation (ns) |"
echo "|---|---:|---:|---:|"
base=$(median <"$scratch/alloc-none.cpu")
for c in none "${sources[@]}"; do
    cpu=$(median <"$scratch/alloc-$c.cpu")
    name=$c
    case "$c" in
    none) name="none (no profiler)" ;;
    tick) name="allocation-tick" ;;
    objects) name="object-allocated" ;;
    esac
    awk -v n="$name" -v a="$cpu" -v b="$base" -v k="$allocs" \
        'BEGIN {printf "| %s | %.3f | %.3f | %.1f |\n", n, a, a / b, (a - b) * 1e9 / k}'
done
echo
echo "Command: RUNS=$runs ROUNDS=$rounds ALLOCS=$allocs bash scripts/bench/bench.sh sampler"
