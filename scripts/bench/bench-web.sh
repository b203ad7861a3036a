#!/usr/bin/env bash
# A profiler's cost to a real web server: the ASP.NET Core app of
# tests/e2e/roslyn/WebApp (scripts/provision/provision-dotnet.sh) under `wrk -t2 -c16
# -dSECONDSs` on 127.0.0.1, without a profiler and under each configuration
# named in CONFIGS, in PAIRS pairs per configuration in ABBA order (odd
# pairs run the server without a profiler first, even pairs second: of two
# identical runs back to back the second shows a lower p99). Each run starts
# a fresh server, warms it up with 2 s of the same load (not counted), then
# measures. Prints, per configuration, the medians of requests/s, p99
# latency and the server's CPU time per request (utime + stime of
# /proc/PID/stat over the measured run, divided by the requests wrk counted)
# with and without the profiler, their ratios, and every pair's ratios;
# fails when a response is not 200 or a server does not exit 0 on
# SIGTERM.
#
#   bash scripts/bench/bench.sh web
#   PAIRS=6 SECONDS_PER_RUN=10 CONFIGS="sampler" ENDPOINT=/json bash scripts/bench/bench-web.sh
#   BASELINE=sampler-periods CONFIGS=sampler-push-hostile bash scripts/bench/bench-web.sh
#
# BASELINE (default `none`, no profiler) is what each configuration is
# compared with: any configuration name.
#
# INTERLEAVE=1 runs PAIRS rounds instead, each round the baseline and every
# configuration once, in an order rotated each round and reversed every
# other round; each configuration's ratios are against its round's baseline
# (for configurations whose differences are smaller than the drift between
# two runs of the script):
#   INTERLEAVE=1 PAIRS=12 CONFIGS="sampler sampler-no-gc-pauses sampler-no-live-heap" bash scripts/bench/bench-web.sh
#
# Configurations (the runtime's and the example's defaults unless named):
#   sampler      examples/sampler.rs (release) at its defaults
#   sampler-suspend-runtime
#                the same with CORPROF_SAMPLER_MODE=suspend-runtime
#   sampler-object-allocated
#                the same with allocations from the ObjectAllocated callback
#                (CORPROF_SAMPLER_ALLOC_SOURCE=object-allocated: what .NET Core
#                3.1 needs for allocation samples)
#   sampler-no-gc-pauses
#                the sampler without GC pauses (CORPROF_SAMPLER_GC_PAUSES=0): as a
#                BASELINE, what the GC pauses (the GC keyword's events) cost
#   sampler-no-live-heap
#                the sampler without its live heap (CORPROF_SAMPLER_HEAP_OBJECTS=0;
#                the live heap is on by default from .NET 7): the baseline that
#                prices the live heap,
#                BASELINE=sampler-no-live-heap CONFIGS=sampler
#   sampler-no-waits
#                the sampler without its wait profile (CORPROF_SAMPLER_WAITS=0;
#                the waits are on by default from .NET 9): the baseline that
#                prices the waits, BASELINE=sampler-no-waits CONFIGS=sampler;
#                every sampler run logs the waits it saw (summary.txt)
#   sampler-no-alloc
#                the sampler without allocation sampling
#                (CORPROF_SAMPLER_ALLOC_BYTES=0): prices the allocation events
#   sampler-stacks-only
#                the sampler with allocations, GC pauses, the live heap and
#                waits off (exceptions and contention stay): what the stack
#                sampling alone and the session's remaining events cost
#   sampler-hz1  the sampler at 1 sample per second (CORPROF_SAMPLER_HZ=1):
#                with the defaults, prices the timer, the signal handler and
#                the walk at 99 Hz
#   sampler-wall1
#                the sampler signalling 1 thread per tick for wall time
#                (CORPROF_SAMPLER_WALL_THREADS=1; 5 by default)
#   sampler-spans
#                the sampler with samples tied to spans (CORPROF_SAMPLER_SPANS=1
#                and the span helper, scripts/gen/build-span-helper.sh, in
#                DOTNET_STARTUP_HOOKS; .NET 8 and later): each request is an
#                Activity of ASP.NET Core's (its listener makes one, with or
#                without a traceparent); the price of span tracking,
#                BASELINE=sampler CONFIGS=sampler-spans
#   sampler-heap-snapshots
#                the sampler with a heap snapshot every 5 s
#                (CORPROF_SAMPLER_HEAP_SNAPSHOT_EVERY=5; .NET 9 and later): logs
#                the snapshots taken and their pauses (summary.txt)
#   sampler-before
#                the sampler of an earlier build, at its defaults:
#                SAMPLER_BEFORE=PATH/libsampler.so (e.g. built in a worktree of
#                an earlier commit): before and after a change, in the same run,
#                INTERLEAVE=1 CONFIGS="sampler sampler-before" SAMPLER_BEFORE=...
#   sampler-periods
#                the sampler with 1-s periods (CORPROF_SAMPLER_PERIOD=1) to a directory
#   sampler-push-hostile
#                the same, also pushed (CORPROF_SAMPLER_PUSH_URL) to a receiver on
#                127.0.0.1 that is absent for the first quarter of the measured
#                load, then answers 500 for a quarter, then accepts and never
#                answers (SECONDS_PER_RUN of 14 at least: the push's read
#                timeout, 5 s, must expire in the last half)
#   calltarget   examples/call_target.rs (release), NoopIntegration, wrapping a
#                framework method (EndpointMiddleware.Invoke, ReadyToRun) and
#                one of the app's own (WebApp.Handlers.Json)
#   coverage     examples/coverage.rs (release): line and branch coverage of the
#                app's own assembly (CORPROF_COVERAGE_INCLUDE='[WebApp]*'), the
#                report written at shutdown
# CORPROF_RUNTIME picks the runtime and its ASP.NET Core (10.0 when unset;
# 3.1, 8.0, 9.0, 11.0).
set -euo pipefail
cd "$(dirname "$0")/../.."

die() { printf 'bench-web: error: %s\n' "$*" >&2; exit 1; }
log() { printf 'bench-web: %s\n' "$*" >&2; }
# shellcheck source=scripts/lib/sample-lib.sh
. scripts/lib/sample-lib.sh
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

pairs="${PAIRS:-6}"
seconds="${SECONDS_PER_RUN:-10}"
configs="${CONFIGS:-sampler}"
baseline="${BASELINE:-none}"
interleave="${INTERLEAVE:-0}"
endpoint="${ENDPOINT:-/json}"
[[ "$pairs" =~ ^[1-9][0-9]*$ ]] || die "PAIRS must be a positive integer, got '$pairs'"
[[ "$seconds" =~ ^[1-9][0-9]*$ ]] || die "SECONDS_PER_RUN must be a positive integer, got '$seconds'"
[[ "$interleave" =~ ^[01]$ ]] || die "INTERLEAVE must be 0 or 1, got '$interleave'"

log "provisioning (scripts/provision/provision-dotnet.sh)"
rt_out=$(bash scripts/provision/provision-dotnet.sh) || die "provisioning the runtime failed; see .cache/provision-dotnet.log"
value() { printf '%s\n' "$1" | sed -n "s/^$2=//p" | tail -n 1; }
host=$(value "$rt_out" DOTNET_HOST)
version=$(value "$rt_out" DOTNET_RUNTIME_VERSION)
aspnetcore_version=$(value "$rt_out" ASPNETCORE_VERSION)
app_dir="$(value "$rt_out" E2E_PROGRAMS_DIR)/WebApp"
[ -x "$host" ] && [ -f "$app_dir/WebApp.dll" ] || die "no usable host or WebApp"

scratch=$(mktemp -d)
server_pid=
cleanup() {
    [ -z "$server_pid" ] || kill -KILL "$server_pid" 2>/dev/null || true
    [ -z "$receiver_pid" ] || kill -KILL "$receiver_pid" 2>/dev/null || true
    rm -rf "$scratch"
}
trap cleanup EXIT

# The environment of a configuration, one VAR=VALUE per line.
config_env() {
    case "$1" in
        none) ;;
        sampler | sampler-*)
            echo "CORECLR_ENABLE_PROFILING=1"
            echo "CORECLR_PROFILER={7A3E9C51-2B8D-4F06-9E1A-C4D5B6A70819}"
            echo "CORECLR_PROFILER_PATH=$PWD/target/release/examples/libsampler.so"
            echo "CORPROF_SAMPLER_DIR=$scratch/profile"
            case "$1" in
                sampler-suspend-runtime) echo "CORPROF_SAMPLER_MODE=suspend-runtime" ;;
                sampler-signal) echo "CORPROF_SAMPLER_MODE=signal" ;;
                sampler-object-allocated) echo "CORPROF_SAMPLER_ALLOC_SOURCE=object-allocated" ;;
                sampler-periods) echo "CORPROF_SAMPLER_PERIOD=1" ;;
                sampler-no-live-heap) echo "CORPROF_SAMPLER_HEAP_OBJECTS=0" ;;
                sampler-heap-snapshots) echo "CORPROF_SAMPLER_HEAP_SNAPSHOT_EVERY=5" ;;
                sampler-before)
                    [ -f "${SAMPLER_BEFORE:-}" ] || die "sampler-before needs SAMPLER_BEFORE=PATH/libsampler.so (an earlier build)"
                    echo "CORECLR_PROFILER_PATH=$SAMPLER_BEFORE"
                    ;;
                sampler-no-gc-pauses) echo "CORPROF_SAMPLER_GC_PAUSES=0" ;;
                sampler-no-waits) echo "CORPROF_SAMPLER_WAITS=0" ;;
                sampler-no-alloc) echo "CORPROF_SAMPLER_ALLOC_BYTES=0" ;;
                sampler-stacks-only)
                    echo "CORPROF_SAMPLER_ALLOC_BYTES=0"
                    echo "CORPROF_SAMPLER_GC_PAUSES=0"
                    echo "CORPROF_SAMPLER_HEAP_OBJECTS=0"
                    echo "CORPROF_SAMPLER_WAITS=0"
                    ;;
                sampler-hz1) echo "CORPROF_SAMPLER_HZ=1" ;;
                sampler-wall1) echo "CORPROF_SAMPLER_WALL_THREADS=1" ;;
                sampler-spans)
                    echo "CORPROF_SAMPLER_SPANS=1"
                    echo "DOTNET_STARTUP_HOOKS=$span_helper"
                    ;;
                sampler-push-hostile)
                    echo "CORPROF_SAMPLER_PERIOD=1"
                    echo "CORPROF_SAMPLER_PUSH_URL=http://127.0.0.1:$hostile_port"
                    ;;
            esac
            ;;
        calltarget)
            echo "CORECLR_ENABLE_PROFILING=1"
            echo "CORECLR_PROFILER={8D2E4A61-3B7C-4F59-A0E8-C51F9B27D364}"
            echo "CORECLR_PROFILER_PATH=$PWD/target/release/examples/libcall_target.so"
            echo "CORPROF_CALLTARGET=Microsoft.AspNetCore.Routing!Microsoft.AspNetCore.Routing.EndpointMiddleware::Invoke;WebApp!WebApp.Handlers::Json"
            echo "CORPROF_CALLTARGET_HELPER=$calltarget_helper"
            echo "DOTNET_STARTUP_HOOKS=$calltarget_helper"
            echo "CORPROF_CALLTARGET_INTEGRATION=CorProf.CallTarget.NoopIntegration"
            ;;
        coverage)
            echo "CORECLR_ENABLE_PROFILING=1"
            echo "CORECLR_PROFILER={2B8C6E57-9E0D-4F1A-8C3B-5D7A1E9F4C60}"
            echo "CORECLR_PROFILER_PATH=$PWD/target/release/examples/libcoverage.so"
            echo "CORPROF_COVERAGE_DIR=$scratch/profile"
            echo "CORPROF_COVERAGE_INCLUDE=[WebApp]*"
            ;;
        *) die "unknown configuration '$1' (see the top of scripts/bench/bench-web.sh)" ;;
    esac
}

example_of() {
    case "$1" in
        sampler*) echo sampler ;;
        calltarget) echo call_target ;;
        coverage) echo coverage ;;
    esac
}

# A port for the hostile receiver: free now, bound by the receiver 4 s into
# each measured run (until then connections are refused).
hostile_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
receiver_pid=
start_hostile_receiver() {
    python3 - "$hostile_port" "$1" "$seconds" <<'EOF' &
import socket, sys, threading, time
port, start, seconds = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
time.sleep(max(0.0, start + seconds / 4 - time.time()))  # absent: connections refused
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", port))
srv.listen(64)
held = []
def serve(conn, hang):
    if hang:
        held.append(conn)  # accepted, never answered
        return
    conn.settimeout(5)
    try:
        conn.recv(1 << 20)
        conn.sendall(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    except OSError:
        pass
    conn.close()
while True:
    conn, _ = srv.accept()
    threading.Thread(target=serve, args=(conn, time.time() > start + seconds / 2), daemon=True).start()
EOF
    receiver_pid=$!
}

if [[ " $baseline $configs " == *" sampler-push-hostile "* ]] && [ "$seconds" -lt 14 ]; then
    die "sampler-push-hostile needs SECONDS_PER_RUN of 14 at least (the push's 5-s read timeout must expire in the hanging half)"
fi

calltarget_helper=
span_helper=
for c in $baseline $configs; do
    config_env "$c" >/dev/null
    ex=$(example_of "$c")
    if [ -n "$ex" ]; then
        log "building examples/$ex.rs (release)"
        cargo build --quiet --release --example "$ex" || die "cargo build --example $ex failed"
    fi
    if [ "$c" = sampler-spans ] && [ -z "$span_helper" ]; then
        span_helper="$scratch/CorprofSpans.dll"
        bash scripts/gen/build-span-helper.sh "$span_helper" >/dev/null || die "building the span helper failed"
    fi
    if [ "$c" = calltarget ] && [ -z "$calltarget_helper" ]; then
        calltarget_helper="$scratch/CorProf.CallTarget.dll"
        bash scripts/gen/build-calltarget-helper.sh "$calltarget_helper" >/dev/null || die "building the CallTarget helper failed"
    fi
done

# The server's CPU time so far, in clock ticks (utime + stime of
# /proc/PID/stat: fields 14 and 15, counted after the command's closing
# parenthesis, which a command name may itself contain).
server_cpu_ticks() {
    local stat
    stat=$(cat "/proc/$1/stat") || die "no /proc/$1/stat"
    stat=${stat##*) }
    awk '{print $12 + $13}' <<<"$stat"
}

# run CONFIG -> "requests_per_sec p99_us cpu_us_per_request"
run() {
    local config="$1" out="$scratch/server.out" env_lines
    env_lines=$(config_env "$config")
    rm -rf "$scratch/profile" && : >"$out"
    local -a envs=()
    if [ -n "$env_lines" ]; then mapfile -t envs <<<"$env_lines"; fi
    webapp_start "$config" "$out" "$scratch/server.err" "${envs[@]}"
    local url="http://127.0.0.1:$port$endpoint"
    timeout 60 wrk -t2 -c16 -d2s "$url" >/dev/null || die "$config: wrk (warm-up) failed"
    [ "$config" != sampler-push-hostile ] || start_hostile_receiver "$(date +%s.%N)"
    local report cpu_before cpu_after
    cpu_before=$(server_cpu_ticks "$server_pid")
    report=$(timeout $((seconds * 2 + 30)) wrk -t2 -c16 -d"${seconds}s" --latency "$url") || die "$config: wrk failed"
    if grep -q -e 'Non-2xx' -e 'Socket errors' <<<"$report"; then
        die "$config: not every response was a 200: $(grep -e 'Non-2xx' -e 'Socket errors' <<<"$report")"
    fi
    cpu_after=$(server_cpu_ticks "$server_pid")
    if [ -n "$receiver_pid" ]; then
        kill -KILL "$receiver_pid" 2>/dev/null || true
        wait "$receiver_pid" 2>/dev/null || true
        receiver_pid=
    fi
    kill -TERM "$server_pid"
    local status=0
    wait "$server_pid" || status=$?
    server_pid=
    [ "$status" = 0 ] || die "$config: the server exited $status on SIGTERM: $(tail -n 5 "$scratch/server.err")"
    if [ "$config" = sampler-push-hostile ]; then
        # The receiver's three phases reached the exporter.
        for key in export_push_failed_connect export_push_failed_http_5xx export_push_failed_timeout; do
            n=$(sed -n "s/^$key=//p" "$scratch/profile/summary.txt" 2>/dev/null)
            [ "${n:-0}" -ge 1 ] || die "$config: summary.txt has no $key >= 1: $(grep '^export_' "$scratch/profile/summary.txt" 2>/dev/null | tr '\n' ' ')"
        done
    fi
    if [[ "$config" == sampler* ]] && grep -q '^waits=on$' "$scratch/profile/summary.txt" 2>/dev/null; then
        log "$config: $(grep -e '^waits_ended=' -e '^waits_recorded=' "$scratch/profile/summary.txt" | tr '\n' ' ')"
    fi
    if [ "$config" = sampler-heap-snapshots ]; then
        log "$config: $(grep -e '^heap_snapshots' -e '^heap_snapshot_pause' -e '^heap_snapshot_work' -e '^heap_snapshot_objects' "$scratch/profile/summary.txt" 2>/dev/null | tr '\n' ' ')"
    fi
    if [ "$config" = calltarget ]; then
        # Both targets wrapped (at first JIT, or by ReJIT), nothing left alone.
        grep -q -e '^calltarget: wrapped Microsoft.AspNetCore.Routing.EndpointMiddleware::Invoke$' \
            -e '^calltarget: ReJIT wrapped Microsoft.AspNetCore.Routing.EndpointMiddleware::Invoke$' "$scratch/server.err" &&
            grep -q '^calltarget: wrapped WebApp.Handlers::Json$' "$scratch/server.err" &&
            ! grep -q -e 'left unchanged' -e 'not instrumenting' "$scratch/server.err" ||
            die "$config: the targets were not both wrapped: $(grep '^calltarget: ' "$scratch/server.err" | head -n 5)"
    fi
    if [ "$config" = coverage ]; then
        # The report of the app's own code, written at shutdown.
        grep -q '^SF:.*Program\.cs$' "$scratch"/profile/coverage-*.info 2>/dev/null ||
            die "$config: no coverage report of WebApp's Program.cs: $(grep '^coverage: ' "$scratch/server.err" | tail -n 3)"
        log "$config: $(sed -n 's/^coverage: \([0-9]* methods instrumented\).*rewriting per method; \(.*refused\)).*/\1, \2/p' "$scratch/server.err" | tail -n 1)"
    fi
    python3 - "$report" "$((cpu_after - cpu_before))" "$(getconf CLK_TCK)" <<'EOF'
import re, sys
text, ticks, hz = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rps = float(re.search(r"Requests/sec:\s*([\d.]+)", text).group(1))
m = re.search(r"^\s*99%\s+([\d.]+)(us|ms|s)\s*$", text, re.M)
scale = {"us": 1, "ms": 1e3, "s": 1e6}[m.group(2)]
requests = int(re.search(r"^\s*(\d+) requests in", text, re.M).group(1))
print(f"{rps:.1f} {float(m.group(1)) * scale:.1f} {ticks * 1e6 / hz / requests:.2f}")
EOF
}

echo "## A web server under load (scripts/bench/bench-web.sh)"
echo
echo "ASP.NET Core $aspnetcore_version WebApp on Microsoft.NETCore.App $version, \`wrk -t2 -c16 -d${seconds}s\` on $endpoint,"
if [ "$interleave" = 1 ]; then
    echo "$pairs interleaved rounds (baseline and each configuration once per round, order rotated), medians; $(nproc) cores; baseline: $baseline."
else
    echo "$pairs pairs per configuration in ABBA order, medians; $(nproc) cores; baseline: $baseline."
fi
echo
echo "| configuration | requests/s $baseline | requests/s profiled | ratio | p99 $baseline (ms) | p99 profiled (ms) | ratio | server CPU per request $baseline (µs) | profiled (µs) | ratio | per-pair (or per-round) requests/s ratios | per-pair (or per-round) p99 ratios | per-pair (or per-round) CPU-per-request ratios |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
if [ "$interleave" = 1 ]; then
    # Rounds: the baseline and every configuration once per round, in an
    # order rotated by one each round and reversed every other round, so
    # each runs as often early as late; each ratio is against the same
    # round's baseline.
    all=(base $configs)
    n=${#all[@]}
    for c in "${all[@]}"; do : >"$scratch/r-$c"; done
    for i in $(seq "$pairs"); do
        order=()
        for k in $(seq 0 $((n - 1))); do order+=("${all[$(((k + i) % n))]}"); done
        if [ $((i % 2)) = 0 ]; then
            rev=() && for ((k = n - 1; k >= 0; k--)); do rev+=("${order[$k]}"); done && order=("${rev[@]}")
        fi
        for which in "${order[@]}"; do
            if [ "$which" = base ]; then r=$(run "$baseline"); else r=$(run "$which"); fi
            log "round $i: $which $r"
            echo "$r" >>"$scratch/r-$which"
        done
    done
    for c in $configs; do
        paste -d' ' "$scratch/r-base" "$scratch/r-$c" >"$scratch/both"
        awk '{printf "%.3f\n", $4 / $1}' "$scratch/both" >"$scratch/rr"
        awk '{printf "%.3f\n", $5 / $2}' "$scratch/both" >"$scratch/pr"
        awk '{printf "%.3f\n", $6 / $3}' "$scratch/both" >"$scratch/cr"
        rn=$(cut -d' ' -f1 "$scratch/r-base" | median); rp=$(cut -d' ' -f1 "$scratch/r-$c" | median)
        pn=$(cut -d' ' -f2 "$scratch/r-base" | median); pp=$(cut -d' ' -f2 "$scratch/r-$c" | median)
        cn=$(cut -d' ' -f3 "$scratch/r-base" | median); cp=$(cut -d' ' -f3 "$scratch/r-$c" | median)
        python3 -c "print(f'| $c | {$rn:.0f} | {$rp:.0f} | {$rp/$rn:.3f} | {$pn/1000:.2f} | {$pp/1000:.2f} | {$pp/$pn:.3f} | {$cn:.1f} | {$cp:.1f} | {$cp/$cn:.3f} | $(paste -sd' ' "$scratch/rr") | $(paste -sd' ' "$scratch/pr") | $(paste -sd' ' "$scratch/cr") |')"
        rm=$(median <"$scratch/rr"); pm=$(median <"$scratch/pr"); cm=$(median <"$scratch/cr")
        echo "$c: median of the per-round ratios: requests/s ${rm}x, p99 ${pm}x, CPU per request ${cm}x" >&2
    done
    exit 0
fi
for c in $configs; do
    : >"$scratch/none" && : >"$scratch/prof" && : >"$scratch/rr" && : >"$scratch/pr" && : >"$scratch/cr"
    for i in $(seq "$pairs"); do
        if [ $((i % 2)) = 1 ]; then order="base $c"; else order="$c base"; fi
        for which in $order; do
            if [ "$which" = base ]; then r=$(run "$baseline"); else r=$(run "$which"); fi
            log "$c pair $i: $which $r"
            if [ "$which" = base ]; then echo "$r" >>"$scratch/none"; a="$r"; else echo "$r" >>"$scratch/prof"; b="$r"; fi
        done
        python3 -c "a='$a'.split(); b='$b'.split(); print(f'{float(b[0])/float(a[0]):.3f}')" >>"$scratch/rr"
        python3 -c "a='$a'.split(); b='$b'.split(); print(f'{float(b[1])/float(a[1]):.3f}')" >>"$scratch/pr"
        python3 -c "a='$a'.split(); b='$b'.split(); print(f'{float(b[2])/float(a[2]):.3f}')" >>"$scratch/cr"
    done
    rn=$(cut -d' ' -f1 "$scratch/none" | median); rp=$(cut -d' ' -f1 "$scratch/prof" | median)
    pn=$(cut -d' ' -f2 "$scratch/none" | median); pp=$(cut -d' ' -f2 "$scratch/prof" | median)
    cn=$(cut -d' ' -f3 "$scratch/none" | median); cp=$(cut -d' ' -f3 "$scratch/prof" | median)
    python3 -c "print(f'| $c | {$rn:.0f} | {$rp:.0f} | {$rp/$rn:.3f} | {$pn/1000:.2f} | {$pp/1000:.2f} | {$pp/$pn:.3f} | {$cn:.1f} | {$cp:.1f} | {$cp/$cn:.3f} | $(paste -sd' ' "$scratch/rr") | $(paste -sd' ' "$scratch/pr") | $(paste -sd' ' "$scratch/cr") |')"
done
