#!/usr/bin/env bash
# The linux-arm64 CoreCLRs of the AArch64 leg (scripts/ci/test-aarch64.sh),
# run under qemu-user: every runtime of tests/e2e/runtimes.props marked
# LinuxArm64="yes", from Microsoft's runtime packs on NuGet
# (`dotnet restore tests/e2e/RuntimesArm64.proj`), laid out as shared
# frameworks under one DOTNET_ROOT, .cache/dotnet-arm64/
# (shared/Microsoft.NETCore.App/<version>/: the pack's lib/<tfm>/ and
# native/; host/fxr/<newest>/libhostfxr.so from the newest pack), with the
# `dotnet` muxer NuGet does not serve for arm64 built from
# tests/arm64/dotnet-muxer.c by aarch64-linux-gnu-gcc. The test programs
# are the x64 provisioning's (IL: the same files run on both).
#
#   bash scripts/provision/dotnet-arm64.sh
#
# Needs the .NET SDK on PATH, NuGet and aarch64-linux-gnu-gcc (installed by
# scripts/provision/rust-target.sh for the target). Prints KEY=VALUE lines
# (values shell-quoted, for `eval`):
# DOTNET_ARM64_ROOT, DOTNET_ARM64_DOTNET (the muxer), DOTNET_ARM64_VERSIONS.
# Idempotent; fails with a one-line message, never skips.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT="$PWD"
readonly PINS="$ROOT/tests/e2e/runtimes.props"
readonly DIR="$ROOT/.cache/dotnet-arm64"
readonly LOG="$ROOT/.cache/provision-dotnet-arm64.log"

die() { echo "dotnet-arm64: error: $*" >&2; exit 1; }
say() { echo "dotnet-arm64: $*" >&2; }

command -v dotnet >/dev/null 2>&1 || die "the .NET SDK is not installed (dotnet is not on PATH)"
command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || die "aarch64-linux-gnu-gcc is missing (apt-get install gcc-aarch64-linux-gnu)"
versions="$(sed -n 's/.*<CorprofRuntime .*NetCore="\([^"]*\)".*LinuxArm64="yes".*/\1/p' "$PINS" | sort -V)"
[ -n "$versions" ] || die "no runtime in $PINS is marked LinuxArm64=\"yes\""
newest="$(tail -n 1 <<<"$versions")"
mkdir -p "$ROOT/.cache"
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1

packages="$(dotnet nuget locals global-packages --list 2>/dev/null | sed -n 's/^global-packages: //p')"
[ -n "$packages" ] || die "\`dotnet nuget locals global-packages --list\` names no packages folder"
pack() { echo "$packages/microsoft.netcore.app.runtime.linux-arm64/$1/runtimes/linux-arm64"; }
need_restore=0
for v in $versions; do [ -d "$(pack "$v")/native" ] || need_restore=1; done
if [ $need_restore = 1 ]; then
    say "restoring Microsoft.NETCore.App.Runtime.linux-arm64 $(echo $versions) from NuGet"
    dotnet restore "$ROOT/tests/e2e/RuntimesArm64.proj" -nologo >"$LOG" 2>&1 \
        || die "dotnet restore tests/e2e/RuntimesArm64.proj failed (see $LOG)"
fi

mkdir -p "$DIR/shared/Microsoft.NETCore.App"
for v in $versions; do
    final="$DIR/shared/Microsoft.NETCore.App/$v"
    [ -f "$final/.corprof-complete" ] && continue
    p="$(pack "$v")"
    lib="$(find "$p/lib" -mindepth 1 -maxdepth 1 -type d | head -n 1)"
    [ -n "$lib" ] && [ -f "$p/native/libcoreclr.so" ] || die "the linux-arm64 pack $v has no lib/<tfm>/ or native/libcoreclr.so in $packages"
    say "laying out Microsoft.NETCore.App $v (linux-arm64) under $DIR"
    tmp="$final.tmp.$$"
    rm -rf "$tmp" && mkdir -p "$tmp"
    cp -r "$lib/." "$p/native/." "$tmp/"
    rm -f "$tmp"/*.a
    touch "$tmp/.corprof-complete"
    rm -rf "$final" && mv "$tmp" "$final"
done
fxr="$DIR/host/fxr/$newest/libhostfxr.so"
if [ ! -f "$fxr" ]; then
    rm -rf "$DIR/host"
    mkdir -p "$(dirname "$fxr")"
    cp "$(pack "$newest")/native/libhostfxr.so" "$fxr"
fi
src="$ROOT/tests/arm64/dotnet-muxer.c"
if [ ! -x "$DIR/dotnet" ] || [ "$src" -nt "$DIR/dotnet" ]; then
    aarch64-linux-gnu-gcc -O2 -Wall -Werror -o "$DIR/dotnet.tmp.$$" "$src" -ldl || die "building $src failed"
    mv "$DIR/dotnet.tmp.$$" "$DIR/dotnet"
fi
printf 'DOTNET_ARM64_ROOT=%q\nDOTNET_ARM64_DOTNET=%q\nDOTNET_ARM64_VERSIONS=%q\n' "$DIR" "$DIR/dotnet" "$(echo $versions)"
