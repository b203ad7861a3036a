#!/usr/bin/env bash
# Memory over a long run of continuous profiling: the ASP.NET Core app of
# tests/e2e/roslyn/WebApp under `wrk -t2 -c16` on ENDPOINT for MINUTES
# minutes, in each mode of MODES, one after the other: `none` (no profiler:
# the app's own growth), `whole-run` (the sampler, release build, its
# defaults), `periods` (the same with 1-s periods written to a directory,
# CORPROF_SAMPLER_KEEP=60, and pushed to an in-script receiver on 127.0.0.1
# that answers 200). The server's RSS is read from /proc/PID/status every
# 10 s. Prints the series and, per mode, the ratio of the last minute's mean
# to the second minute's; fails when a profiled mode's ratio exceeds the
# app's own by more than 0.05 (without `none`: when a ratio exceeds 1.05),
# when a response is not 200, when the directory holds more than 60 period
# files, or when the server does not exit 0 on SIGTERM. Not run in CI.
#
#   bash scripts/bench/bench.sh soak
#   MINUTES=3 ENDPOINT=/throw bash scripts/bench/bench-soak.sh
#   MODES=periods bash scripts/bench/bench-soak.sh  # one mode only (default: none whole-run periods)
# Each RSS sample is also logged to stderr as it is read.
#
# CORPROF_RUNTIME picks the runtime and its ASP.NET Core (10.0 when unset;
# 3.1, 8.0, 9.0, 11.0; scripts/provision/provision-dotnet.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."

die() { printf 'bench-soak: error: %s\n' "$*" >&2; exit 1; }
log() { printf 'bench-soak: %s\n' "$*" >&2; }
# shellcheck source=scripts/lib/sample-lib.sh
. scripts/lib/sample-lib.sh

minutes="${MINUTES:-10}"
modes="${MODES:-none whole-run periods}"
for m in $modes; do
    case "$m" in none | whole-run | periods) ;; *) die "MODES are none, whole-run and periods, got '$m'" ;; esac
done
endpoint="${ENDPOINT:-/cpu}"
[[ "$minutes" =~ ^[1-9][0-9]*$ ]] && [ "$minutes" -ge 3 ] || die "MINUTES must be an integer of at least 3, got '$minutes'"

log "provisioning (scripts/provision/provision-dotnet.sh)"
rt_out=$(bash scripts/provision/provision-dotnet.sh) || die "provisioning the runtime failed; see .cache/provision-dotnet.log"
value() { printf '%s\n' "$1" | sed -n "s/^$2=//p" | tail -n 1; }
host=$(value "$rt_out" DOTNET_HOST)
version=$(value "$rt_out" DOTNET_RUNTIME_VERSION)
aspnetcore_version=$(value "$rt_out" ASPNETCORE_VERSION)
app_dir="$(value "$rt_out" E2E_PROGRAMS_DIR)/WebApp"
[ -x "$host" ] && [ -f "$app_dir/WebApp.dll" ] || die "no usable host or WebApp"
log "building examples/sampler.rs (release)"
cargo build --quiet --release --example sampler || die "cargo build --example sampler failed"

scratch=$(mktemp -d)
server_pid=
receiver_pid=
cleanup() {
    [ -z "$server_pid" ] || kill -KILL "$server_pid" 2>/dev/null || true
    [ -z "$receiver_pid" ] || kill -KILL "$receiver_pid" 2>/dev/null || true
    rm -rf "$scratch"
}
trap cleanup EXIT

# A receiver that reads each request whole and answers 200.
python3 - "$scratch/receiver.port" <<'EOF' &
import http.server, sys
class Ingest(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Ingest)
open(sys.argv[1], "w").write(str(server.server_address[1]))
server.serve_forever()
EOF
receiver_pid=$!
disown "$receiver_pid"
for _ in $(seq 100); do [ -s "$scratch/receiver.port" ] && break; sleep 0.1; done
[ -s "$scratch/receiver.port" ] || die "the receiver did not start"
receiver_port=$(cat "$scratch/receiver.port")

# soak MODE: one run; its RSS series in $scratch/rss-MODE, its notes in
# $scratch/notes-MODE.
soak() {
    local mode="$1"
    local -a profiler_env=()
    if [ "$mode" != none ]; then
        profiler_env=(CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER="{7A3E9C51-2B8D-4F06-9E1A-C4D5B6A70819}"
            CORECLR_PROFILER_PATH="$PWD/target/release/examples/libsampler.so")
    fi
    if [ "$mode" = periods ]; then
        profiler_env+=(CORPROF_SAMPLER_DIR="$scratch/profile" CORPROF_SAMPLER_PERIOD=1
            CORPROF_SAMPLER_PUSH_URL="http://127.0.0.1:$receiver_port")
    fi
    rm -rf "$scratch/profile" && mkdir -p "$scratch/profile"
    : >"$scratch/server.out"
    webapp_start "$mode" "$scratch/server.out" "$scratch/server.err" "${profiler_env[@]}"
    local seconds=$((minutes * 60))
    log "$mode: wrk -t2 -c16 -d${seconds}s on $endpoint, RSS every 10 s"
    # wrk's timeout is 10 s, not its default 2 s: on a shared machine a /cpu
    # request can wait longer than 2 s for a core; one that times out
    # still fails the run.
    timeout $((seconds + 60)) wrk -t2 -c16 -d"${seconds}s" --timeout 10s "http://127.0.0.1:$port$endpoint" >"$scratch/wrk.out" &
    local wrk_pid=$!
    : >"$scratch/rss-$mode"
    for i in $(seq $((seconds / 10))); do
        sleep 10
        echo "$((i * 10)) $(awk '/^VmRSS:/ {print $2}' "/proc/$server_pid/status")" >>"$scratch/rss-$mode"
        log "$mode: $(tail -n 1 "$scratch/rss-$mode") kB"
    done
    wait "$wrk_pid" || die "$mode: wrk failed"
    if grep -q -e 'Non-2xx' -e 'Socket errors' "$scratch/wrk.out"; then
        die "$mode: not every response was a 200: $(grep -e 'Non-2xx' -e 'Socket errors' "$scratch/wrk.out")"
    fi
    local files
    files=$(find "$scratch/profile" -name 'profile-*.pb.gz' | wc -l)
    kill -TERM "$server_pid"
    local status=0
    wait "$server_pid" || status=$?
    server_pid=
    [ "$status" = 0 ] || die "$mode: the server exited $status on SIGTERM: $(tail -n 5 "$scratch/server.err")"
    [ "$files" -le 60 ] || die "$mode: $files period files kept, not at most 60"
    {
        printf -- '- %s: %s; %s period files kept; ' "$mode" "$(grep -o '[0-9.]* requests in [^,]*' "$scratch/wrk.out")" "$files"
        grep -sE '^export_(exported|dropped|push_exported|push_dropped)=' "$scratch/profile/summary.txt" | tr '\n' ' ' || true
        echo
    } >"$scratch/notes-$mode"
}

for m in $modes; do soak "$m"; done

echo "## Memory over a soak run (scripts/bench/bench-soak.sh)"
echo
echo "ASP.NET Core $aspnetcore_version WebApp on Microsoft.NETCore.App $version, \`wrk -t2 -c16\` on $endpoint for $minutes min"
echo "per run, one run per mode, one after the other: none (no profiler), whole-run (the sampler, release, at"
echo "its defaults, no periods), periods (the same with 1-s periods to a directory and pushed); $(nproc) cores."
echo
for m in $modes; do cat "$scratch/notes-$m"; done
echo
python3 - "$scratch" $modes <<'PYEOF'
import sys
scratch, modes = sys.argv[1], sys.argv[2:]
series = {m: [tuple(map(int, l.split())) for l in open(f"{scratch}/rss-{m}")] for m in modes}
print("| s | " + " | ".join(f"RSS {m} (MiB)" for m in modes) + " |")
print("|---:|" + "---:|" * len(modes))
for i, (t, _) in enumerate(series[modes[0]]):
    print(f"| {t} | " + " | ".join(f"{series[m][i][1] / 1024:.1f}" for m in modes) + " |")
print()
ratios = {}
for m in modes:
    rows = series[m]
    second = [k for t, k in rows if 60 < t <= 120]
    last = [k for t, k in rows if t > rows[-1][0] - 60]
    a, b = sum(second) / len(second), sum(last) / len(last)
    ratios[m] = b / a
    print(f"- {m}: second minute's mean {a / 1024:.1f} MiB, last minute's {b / 1024:.1f} MiB: ratio {b / a:.3f}")
if "none" in ratios:
    for m in modes:
        if m != "none" and ratios[m] > ratios["none"] + 0.05:
            sys.exit(f"bench-soak: error: {m}'s RSS grew by {ratios[m]:.3f}, the app's alone by {ratios['none']:.3f}")
elif max(ratios.values()) > 1.05:
    sys.exit("bench-soak: error: RSS grew by more than 5%")
PYEOF
