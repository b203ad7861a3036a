#!/usr/bin/env bash
# corprof's one binary against Microsoft's dotnet-trace and dotnet-counters
# (docs/out-of-process.md, "Side by side with Microsoft's tools"): for each
# tool, RUNS runs (default 5; medians) against the same process (the
# Sampling program, spinning), one tool at a time:
#
# - trace: `trace collect` / `dotnet-trace collect` for 3 s (each tool's
#   default providers); start-up to the first event (from the exec to the
#   first `EventBlock` in the output file, polled every 2 ms), wall time,
#   peak RSS (/usr/bin/time -v);
# - counters: `counters collect` / `dotnet-counters collect` of
#   System.Runtime for 3 s at 1 s; start-up to the first value (the CSV's
#   second line), wall time, peak RSS;
# - ps: `corprof ps` / `dotnet-trace ps` / `dotnet-counters ps`, the
#   tools' own start-up (exec to exit, one listing), and their peak RSS;
# - sizes: the release binary (and stripped), against each tool's install
#   in .cache/tools (its store and launcher) and the .NET runtime they need.
#
#   bash scripts/bench/bench.sh oop
#   RUNS=9 bash scripts/bench/bench-oop.sh
#
# The tools are installed pinned (tests/common/tools.rs's version) when
# missing. CORPROF_RUNTIME picks the traced program's runtime (default
# 10.0; scripts/provision/provision-dotnet.sh). Not run in CI.
set -euo pipefail
cd "$(dirname "$0")/../.."

die() { printf 'bench-oop: error: %s\n' "$*" >&2; exit 1; }
log() { printf 'bench-oop: %s\n' "$*" >&2; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

runs="${RUNS:-5}"
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive integer, got '$runs'"
[ -x /usr/bin/time ] || die "/usr/bin/time (GNU time) is needed for the peak RSS"
version=$(sed -n 's/^pub(crate) const VERSION: &str = "\(.*\)";/\1/p' tests/common/tools.rs)
[ -n "$version" ] || die "no tool version in tests/common/tools.rs"

log "provisioning (scripts/provision/provision-dotnet.sh)"
rt_out=$(bash scripts/provision/provision-dotnet.sh) || die "provisioning the runtime failed; see .cache/provision-dotnet.log"
value() { printf '%s\n' "$1" | sed -n "s/^$2=//p" | tail -n 1; }
host=$(value "$rt_out" DOTNET_HOST)
rt_version=$(value "$rt_out" DOTNET_RUNTIME_VERSION)
program_dir="$(value "$rt_out" E2E_PROGRAMS_DIR)/Sampling"
[ -x "$host" ] && [ -f "$program_dir/Sampling.dll" ] || die "no usable host or Sampling"

tools=.cache/tools
mkdir -p "$tools"
for tool in dotnet-trace dotnet-counters; do
    flock .cache/tools.lock sh -c '
        if [ ! -e "$1/.$2-$3" ]; then
            dotnet tool uninstall --tool-path "$1" "$2" >/dev/null 2>&1 || true
            dotnet tool install --tool-path "$1" "$2" --version "$3" >&2
            : > "$1/.$2-$3"
        fi' sh "$tools" "$tool" "$version" || die "dotnet tool install $tool $version failed"
done
log "building the corprof command (release)"
cargo build --quiet --release --bin corprof || die "cargo build --release --bin corprof failed"
corprof=target/release/corprof

scratch=$(mktemp -d)
target_pid=
cleanup() {
    [ -z "$target_pid" ] || kill -KILL "$target_pid" 2>/dev/null || true
    rm -rf "$scratch"
}
trap cleanup EXIT

"$host" exec --runtimeconfig "$program_dir/Sampling.runtimeconfig.json" "$program_dir/Sampling.dll" 3600 500 \
    >/dev/null 2>&1 </dev/null &
target_pid=$!
for _ in $(seq 1 1500); do
    ls "${TMPDIR:-/tmp}"/dotnet-diagnostic-"$target_pid"-*-socket >/dev/null 2>&1 && break
    sleep 0.02
done
ls "${TMPDIR:-/tmp}"/dotnet-diagnostic-"$target_pid"-*-socket >/dev/null 2>&1 || die "Sampling has no diagnostics socket after 30 s"
sleep 1

# One run: COMMAND... with its output in $scratch/out; prints "first wall rss"
# (seconds to the first MARKER in the output, seconds, KiB).
measure() {
    local marker=$1
    shift
    rm -f "$scratch/out"* "$scratch/time"
    python3 - "$scratch" "$marker" "$@" <<'PY'
import os, subprocess, sys, time
scratch, marker, cmd = sys.argv[1], sys.argv[2].encode(), sys.argv[3:]
out = os.path.join(scratch, "out")
start = time.monotonic()
p = subprocess.Popen(["/usr/bin/time", "-v", "-o", os.path.join(scratch, "time")] + cmd,
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     env=dict(os.environ, DOTNET_CLI_TELEMETRY_OPTOUT="1", DOTNET_NOLOGO="1"))
first = None
while p.poll() is None:
    if first is None:
        for name in os.listdir(scratch):
            if name.startswith("out"):
                try:
                    data = open(os.path.join(scratch, name), "rb").read()
                except OSError:
                    continue
                if marker == b"-":
                    continue
                found = data.find(marker) >= 0 if marker != b"\n" else data.count(b"\n") >= 2
                if found:
                    first = time.monotonic() - start
                    break
    time.sleep(0.002)
wall = time.monotonic() - start
if p.returncode != 0:
    sys.exit(f"{cmd[0]} exited {p.returncode}")
rss = next(l.split(":")[1].strip() for l in open(os.path.join(scratch, "time"))
           if "Maximum resident set size" in l)
print(f"{'-' if first is None else f'{first:.3f}'} {wall:.3f} {rss}")
PY
}

declare -A first wall rss
row() {
    local name=$1 marker=$2
    shift 2
    local f=() w=() r=()
    for i in $(seq 1 "$runs"); do
        read -r a b c < <(measure "$marker" "$@") || die "$name: run $i failed"
        log "$name run $i: first ${a}s, wall ${b}s, peak RSS ${c} KiB"
        f+=("$a") w+=("$b") r+=("$c")
    done
    if [ "$marker" = - ]; then first[$name]=-; else first[$name]=$(printf '%s\n' "${f[@]}" | median); fi
    wall[$name]=$(printf '%s\n' "${w[@]}" | median)
    rss[$name]=$(printf '%s\n' "${r[@]}" | median)
}

out="$scratch/out"
row "corprof ps" - "$corprof" ps
row "dotnet-trace ps" - "$tools/dotnet-trace" ps
row "dotnet-counters ps" - "$tools/dotnet-counters" ps
row "corprof trace collect" EventBlock "$corprof" trace collect -p "$target_pid" --duration 3 -o "$out.nettrace"
row "dotnet-trace collect" EventBlock "$tools/dotnet-trace" collect -p "$target_pid" --duration 00:00:00:03 -o "$out.nettrace"
row "corprof counters collect" $'\n' "$corprof" counters collect -p "$target_pid" --duration 3 --counters System.Runtime -o "$out.csv"
row "dotnet-counters collect" $'\n' "$tools/dotnet-counters" collect -p "$target_pid" --duration 00:00:00:03 --counters System.Runtime -o "$out.csv"

kib() { du -sk "$@" | awk '{s += $1} END {print s}'; }
cp "$corprof" "$scratch/corprof-stripped"
strip "$scratch/corprof-stripped"
runtime_dir=$(value "$rt_out" DOTNET_RUNTIME_DIR)

echo "Side by side: corprof $(git rev-parse --short HEAD) against dotnet-trace and dotnet-counters $version,"
echo "tracing Sampling on .NET $rt_version; medians of $runs runs; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)."
echo
echo "| command | start-up to first event / value (s) | wall (s) | peak RSS (MiB) |"
echo "|---|---|---|---|"
for name in "corprof ps" "dotnet-trace ps" "dotnet-counters ps" "corprof trace collect" "dotnet-trace collect" "corprof counters collect" "dotnet-counters collect"; do
    printf '| `%s` | %s | %s | %.1f |\n' "$name" "${first[$name]}" "${wall[$name]}" "$(python3 -c "print(${rss[$name]} / 1024)")"
done
echo
echo "| install | size (MiB) |"
echo "|---|---|"
printf '| `corprof` (release, all commands) | %.1f |\n' "$(python3 -c "print($(kib "$corprof") / 1024)")"
printf '| `corprof`, stripped | %.1f |\n' "$(python3 -c "print($(kib "$scratch/corprof-stripped") / 1024)")"
for tool in dotnet-trace dotnet-counters; do
    printf '| `%s` (.cache/tools: store and launcher) | %.1f |\n' "$tool" \
        "$(python3 -c "print($(kib "$tools/.store/$tool" "$tools/$tool") / 1024)")"
done
printf '| the .NET runtime both need (`Microsoft.NETCore.App` %s) | %.1f |\n' "$rt_version" \
    "$(python3 -c "print($(kib "$runtime_dir") / 1024)")"
