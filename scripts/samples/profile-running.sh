#!/usr/bin/env bash
# Profiles a running .NET process for a while, then leaves it as it was:
# attaches examples/sampler_attach.rs through the diagnostics IPC channel
# (examples/attach.rs), which samples for SECONDS, writes
# DIR/profile-<start>-<seq>.pb.gz and detaches. The way
# `dotnet-trace collect -p PID --duration` is used, without the .NET SDK.
#
#   bash scripts/samples/profile-running.sh PID SECONDS [DIR]
#       DIR defaults to ./profiles. Prints the profile's path and its top
#       functions when `go` is installed (go tool pprof -top).
#
# The process must be .NET Core 3.0 or later, run by the same user, and have
# no profiler loaded (one per process at a time; a later run works again
# once this one has detached). What cannot be had after attach: allocations
# on .NET Core 3.1 (ObjectAllocated is a startup-only setting).
set -euo pipefail
cd "$(dirname "$0")/../.."

die() { printf 'profile-running: error: %s\n' "$*" >&2; exit 2; }
[ $# -ge 2 ] && [ $# -le 3 ] || die "usage: scripts/samples/profile-running.sh PID SECONDS [DIR]"
pid="$1" seconds="$2" dir="${3:-profiles}"
[[ "$pid" =~ ^[1-9][0-9]*$ ]] || die "not a process id: '$pid'"
[[ "$seconds" =~ ^[1-9][0-9]*$ ]] && [ "$seconds" -le 3600 ] || die "SECONDS must be 1 to 3600, got '$seconds'"
kill -0 "$pid" 2>/dev/null || die "no process $pid"
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

bash scripts/provision/vendor-config.sh 2>/dev/null || die "scripts/provision/vendor-config.sh failed"
cargo build --quiet --release --example attach --example sampler_attach || die "cargo build failed"
before=$(find "$dir" -maxdepth 1 -name 'profile-*.pb.gz' | sort)
target/release/examples/attach "$pid" target/release/examples/libsampler_attach.so \
    3C9E5A17-6B2D-4E81-9F40-A7D2C8B5E163 "seconds=$seconds;dir=$dir" >&2 \
    || die "the attach failed (see above, and the process's stderr)"
printf 'profile-running: sampling process %s for %s s\n' "$pid" "$seconds" >&2
profile=
for _ in $(seq $(((seconds + 30) * 10))); do
    profile=$(comm -13 <(printf '%s\n' "$before") <(find "$dir" -maxdepth 1 -name 'profile-*.pb.gz' | sort) | tail -n 1)
    [ -z "$profile" ] || break
    kill -0 "$pid" 2>/dev/null || die "process $pid exited before the profile was written"
    sleep 0.1
done
[ -n "$profile" ] || die "no profile in $dir after $((seconds + 30)) s"
echo "$profile"
if command -v go >/dev/null; then
    go tool pprof -top -nodecount=15 "$profile" 2>/dev/null || true
fi
