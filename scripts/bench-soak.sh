#!/usr/bin/env bash
# Memory over a long run of continuous profiling: the ASP.NET Core 3.1 app of
# tests/e2e/roslyn/WebApp under the sampler (release build, its defaults) with
# 1-s periods written to a directory (CORPROF_SAMPLER_KEEP=60) and pushed to
# an in-script receiver on 127.0.0.1 that answers 200, under `wrk -t2 -c16`
# on ENDPOINT for MINUTES minutes; the server's RSS is read from
# /proc/PID/status every 10 s. Prints the RSS series and the ratio of the
# last minute's mean to the second minute's; fails when it is above 1.05,
# when a response is not 200, when the directory holds more than 60 period
# files, or when the server does not exit 0 on SIGTERM. Not run in CI.
#
#   bash scripts/bench.sh soak
#   MINUTES=3 ENDPOINT=/throw bash scripts/bench-soak.sh
#   MODE=none bash scripts/bench-soak.sh      # the baseline: no profiler
#   MODE=whole-run bash scripts/bench-soak.sh # the sampler without periods
#
# CORPROF_RUNTIME=8.0 runs the server on CoreCLR 8.0.4 (DOTNET_ROLL_FORWARD=Major).
set -euo pipefail
cd "$(dirname "$0")/.."

die() { printf 'bench-soak: error: %s\n' "$*" >&2; exit 1; }
log() { printf 'bench-soak: %s\n' "$*" >&2; }

minutes="${MINUTES:-10}"
mode="${MODE:-periods}"
case "$mode" in none | whole-run | periods) ;; *) die "MODE must be none, whole-run or periods, got '$mode'" ;; esac
endpoint="${ENDPOINT:-/cpu}"
[[ "$minutes" =~ ^[1-9][0-9]*$ ]] && [ "$minutes" -ge 3 ] || die "MINUTES must be an integer of at least 3, got '$minutes'"

log "provisioning (scripts/provision-sdk.sh)"
sdk_out=$(bash scripts/provision-sdk.sh) || die "provisioning the SDK failed; see .cache/provision-sdk.log"
rt_out=$(bash scripts/provision-dotnet.sh) || die "provisioning the runtime failed"
value() { printf '%s\n' "$1" | sed -n "s/^$2=//p" | tail -n 1; }
host=$(value "$rt_out" DOTNET_HOST)
version=$(value "$rt_out" DOTNET_RUNTIME_VERSION)
app_dir="$(value "$sdk_out" ROSLYN_PROGRAMS_DIR)/WebApp"
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
for _ in $(seq 100); do [ -s "$scratch/receiver.port" ] && break; sleep 0.1; done
[ -s "$scratch/receiver.port" ] || die "the receiver did not start"
receiver_port=$(cat "$scratch/receiver.port")

profiler_env=()
if [ "$mode" != none ]; then
    profiler_env=(CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER="{7A3E9C51-2B8D-4F06-9E1A-C4D5B6A70819}"
        CORECLR_PROFILER_PATH="$PWD/target/release/examples/libsampler.so")
fi
if [ "$mode" = periods ]; then
    profiler_env+=(CORPROF_SAMPLER_DIR="$scratch/profile" CORPROF_SAMPLER_PERIOD=1
        CORPROF_SAMPLER_PUSH_URL="http://127.0.0.1:$receiver_port")
fi
mkdir -p "$scratch/profile"
: >"$scratch/server.out"
env DOTNET_ROLL_FORWARD=Major DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 "${profiler_env[@]}" \
    "$host" exec --runtimeconfig "$app_dir/WebApp.runtimeconfig.json" "$app_dir/WebApp.dll" 0 \
    >"$scratch/server.out" 2>"$scratch/server.err" &
server_pid=$!
port=
for _ in $(seq 600); do
    port=$(sed -n 's/^ready http:\/\/127\.0\.0\.1:\([0-9]*\)$/\1/p' "$scratch/server.out")
    [ -z "$port" ] || break
    kill -0 "$server_pid" 2>/dev/null || die "the server exited before it was ready: $(tail -n 5 "$scratch/server.err")"
    sleep 0.1
done
[ -n "$port" ] || die "no ready line in 60 s"

seconds=$((minutes * 60))
log "wrk -t2 -c16 -d${seconds}s on $endpoint, RSS every 10 s"
timeout $((seconds + 60)) wrk -t2 -c16 -d"${seconds}s" "http://127.0.0.1:$port$endpoint" >"$scratch/wrk.out" &
wrk_pid=$!
: >"$scratch/rss"
for i in $(seq $((seconds / 10))); do
    sleep 10
    rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$server_pid/status")
    echo "$((i * 10)) $rss" >>"$scratch/rss"
done
wait "$wrk_pid" || die "wrk failed"
if grep -q -e 'Non-2xx' -e 'Socket errors' "$scratch/wrk.out"; then
    die "not every response was a 200: $(grep -e 'Non-2xx' -e 'Socket errors' "$scratch/wrk.out")"
fi
files=$(find "$scratch/profile" -name 'profile-*.pb.gz' | wc -l)
kill -TERM "$server_pid"
status=0
wait "$server_pid" || status=$?
server_pid=
[ "$status" = 0 ] || die "the server exited $status on SIGTERM: $(tail -n 5 "$scratch/server.err")"
[ "$files" -le 60 ] || die "$files period files kept, not at most 60"

echo "## Memory over a soak run (scripts/bench-soak.sh)"
echo
echo "ASP.NET Core 3.1.2 WebApp on Microsoft.NETCore.App $version, mode $mode (periods: the sampler, release,"
echo "defaults, 1-s periods to a directory and pushed), \`wrk -t2 -c16\` on $endpoint for $minutes min; $(nproc) cores."
echo "$(grep -o '[0-9.]* requests in [^,]*' "$scratch/wrk.out"); $files period files kept;"
echo "mode $mode; $(grep -sE '^(threads|export_(exported|dropped|push_exported|push_dropped))=' "$scratch/profile/summary.txt" | tr '\n' ' ')"
echo
python3 - "$scratch/rss" <<'EOF'
import sys
rows = [tuple(map(int, l.split())) for l in open(sys.argv[1])]
print("| s | RSS (MiB) |")
print("|---:|---:|")
for t, kib in rows:
    print(f"| {t} | {kib / 1024:.1f} |")
second = [k for t, k in rows if 60 < t <= 120]
last_start = rows[-1][0] - 60
last = [k for t, k in rows if t > last_start]
a, b = sum(second) / len(second), sum(last) / len(last)
print()
print(f"Second minute's mean {a / 1024:.1f} MiB, last minute's {b / 1024:.1f} MiB: ratio {b / a:.3f}.")
if b / a > 1.05:
    sys.exit(f"bench-soak: error: RSS grew by more than 5% ({b / a:.3f})")
EOF
