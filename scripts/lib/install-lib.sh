# shellcheck shell=bash
# Shared by the test scripts that install what they need (sourced, not run).
# The caller defines die, and say (a progress line) for install_apt_packages
# (where it has no say, install_apt_packages defines one that prints to stderr).

# Installs the Debian packages given (apt-get, as root), logging to LOG;
# dies with a one-line reason when that is not possible.
#   install_apt_packages LOG PACKAGE...
declare -F say >/dev/null || say() { printf '%s\n' "$*" >&2; }
install_apt_packages() {
    local log="$1"
    shift
    [ $# -gt 0 ] || return 0
    [ "$(id -u)" = 0 ] || die "missing $*; install them (apt-get install $*) and retry"
    command -v apt-get >/dev/null 2>&1 || die "missing $* and there is no apt-get to install them with"
    say "installing $* with apt-get"
    mkdir -p "$(dirname "$log")"
    # Another apt-get on the machine (a second checkout's tests, an
    # unattended upgrade) holds the locks for a while: wait for them (up to
    # 5 minutes) instead of failing at once.
    local wait=(-o DPkg::Lock::Timeout=300 -o Acquire::Lock::Timeout=300)
    { apt-get "${wait[@]}" update -q &&
        DEBIAN_FRONTEND=noninteractive apt-get "${wait[@]}" install -y -q --no-install-recommends "$@"; } \
        >"$log" 2>&1 || die "apt-get install $* failed (see $log)"
}

# ------------------------------------------------------------ legs not run
# A leg that needs what rustup cannot fetch on this machine (a toolchain, a
# target, a component) is not run: it says so in one line, which is also
# kept in $LEGS_NOT_RUN for scripts/test.sh's summary (test.sh empties the
# file when it starts). Anything else that fails still fails the script.

LEGS_NOT_RUN="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/target/legs-not-run.txt"

# Reports a leg this machine does not run.
#   leg_unavailable NAME REASON
leg_unavailable() {
    local line="leg not run here: $1: $2"
    echo "$line"
    mkdir -p "$(dirname "$LEGS_NOT_RUN")"
    echo "$line" >>"$LEGS_NOT_RUN"
}

# Runs a rustup command that downloads. On failure, returns 1 with
# rustup_error set to rustup's error in one line: its first `error:` line
# and the last cause it gives (say, a failed DNS look-up).
#   rustup_get COMMAND...
rustup_get() {
    local out
    command -v rustup >/dev/null 2>&1 || die "rustup is not installed; install Rust with rustup (https://rustup.rs)"
    out="$("$@" 2>&1)" && return 0
    rustup_error="$(awk '
        # (a download names its temporary file: left out)
        /^error: / && err == "" { err = substr($0, 8); sub(/ to \047[^\047]*\047$/, "", err); next }
        /^Caused by:/ { causes = 1; next }
        causes && /^ *[0-9]+: / { cause = $0; sub(/^ *[0-9]+: /, "", cause); next }
        causes { causes = 0 }
        NF && first == "" { first = $0 }
        END { r = err != "" ? err : first; if (cause != "") r = r ": " cause; print r }' <<<"$out")"
    return 1
}

# A Rust toolchain, installed (minimal profile) when rustup does not have
# it. Returns 1, after the leg's line, when rustup cannot fetch it.
#   rust_toolchain_available LEG TOOLCHAIN
rust_toolchain_available() {
    rustup run "$2" rustc --version >/dev/null 2>&1 && return 0
    rustup_get rustup toolchain install "$2" --profile minimal && return 0
    leg_unavailable "$1" "rustup cannot fetch the toolchain $2 ($rustup_error)"
    return 1
}

# A Rust target of the default toolchain, added when missing; returns 1 with
# rustup_error set when rustup cannot fetch it (no line printed: see
# rust_target_available).
#   rust_target_fetch TARGET
rust_target_fetch() {
    rustup target list --installed 2>/dev/null | grep -qx "$1" && return 0
    rustup_get rustup target add "$1"
}

# A Rust target, added when missing. Returns 1, after the leg's line, when
# rustup cannot fetch it.
#   rust_target_available LEG TARGET
rust_target_available() {
    rust_target_fetch "$2" && return 0
    leg_unavailable "$1" "rustup cannot fetch the target $2 ($rustup_error)"
    return 1
}

# A cargo command line for a target, or for the MSRV, from
# scripts/provision/rust-target.sh (rustup, else Debian's rustc-web under
# .cache/rust-web): sets RUST_CARGO, an array to run as
# `"${RUST_CARGO[@]}" check --target T ...` (its environment, RUSTC and
# RUSTC_BOOTSTRAP where needed, stays on that command), RUST_WAY (rustup |
# debian-rustc-web), RUST_VIA (the one line saying which way, printed by
# the script), and RUST_CARGO_ENV and RUST_CARGO_ARGS (the environment, as
# space-separated NAME=VALUE, and the arguments of that cargo, for a cargo
# run by a test: CORPROF_E2E_CARGO_ENV, CORPROF_E2E_CARGO_ARGS). Dies when
# there is no way.
#   rust_cargo_for TARGET | rust_cargo_for --msrv VERSION
rust_cargo_for() {
    local out root rt_RUST_WAY rt_RUST_VIA rt_RUSTC rt_CARGO_TOOLCHAIN rt_CARGO_ENV rt_CARGO_ARGS words
    root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
    out="$(bash "$root/scripts/provision/rust-target.sh" "$@")" || die "no Rust for $*"
    eval "$(sed 's/^/rt_/' <<<"$out")"
    RUST_WAY="$rt_RUST_WAY"
    RUST_VIA="$rt_RUST_VIA"
    RUST_CARGO_ENV="${rt_RUSTC:+RUSTC=$rt_RUSTC }$rt_CARGO_ENV"
    RUST_CARGO_ARGS="$rt_CARGO_ARGS"
    RUST_CARGO=(env)
    read -ra words <<<"$RUST_CARGO_ENV"
    RUST_CARGO+=("${words[@]}" cargo)
    [ -z "$rt_CARGO_TOOLCHAIN" ] || RUST_CARGO+=("$rt_CARGO_TOOLCHAIN")
    read -ra words <<<"$rt_CARGO_ARGS"
    RUST_CARGO+=("${words[@]}")
}

# Miri on the nightly, installed as before when missing (the latest nightly,
# then its miri and rust-src components). Returns 1, after the leg's line,
# when rustup cannot fetch them.
#   miri_available LEG
miri_available() {
    cargo +nightly miri --version >/dev/null 2>&1 && return 0
    # An older nightly may lack Miri: the latest one is tried first, and
    # the components are added to whichever nightly is then installed.
    rustup_get rustup toolchain install nightly --profile minimal || true
    rustup_get rustup component add --toolchain nightly miri rust-src && return 0
    leg_unavailable "$1" "rustup cannot fetch the nightly component miri ($rustup_error)"
    return 1
}

# The tests that run under Miri (scripts/test.sh) or, where Miri cannot be
# installed, under AddressSanitizer (scripts/ci/check-sanitizer.sh): the COM
# core, the exporter under threads, the facade adapter, the declarations.
# shellcheck disable=SC2034 # used by the scripts that source this file
MIRI_TESTS=(--test com_core --test guid_hresult --test com_server --test scale_chain_12 --test stress
    --test facade_callback --test decl_callback --test decl_types --test bad_input)

# Builds a helper assembly loaded into the profiled process (the CallTarget
# helper, the span helper) from C# FILEs for TFM into OUT (a path ending in
# .dll), with its intermediate files in one directory per output path under
# .cache/CACHE/obj/ (so that builds of different helpers never share them),
# taken under a lock (fd 9, held until the caller exits); sets `helper_out` to OUT's absolute path. Needs the
# .NET SDK and flock; dies (the caller's `die`) when the build fails.
#   build_helper_dll CACHE TFM OUT FILE.cs...
build_helper_dll() {
    local cache="$1" tfm="$2" out="$3" name key project_dir root
    shift 3
    root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
    case "$out" in *.dll) ;; *) die "the output must end in .dll: $out" ;; esac
    command -v dotnet >/dev/null 2>&1 ||
        die "the .NET SDK is not installed: install the .NET SDK 10 (https://dot.net) and retry"
    command -v flock >/dev/null 2>&1 || die "flock (Debian package util-linux) is missing"
    mkdir -p "$(dirname "$out")"
    out="$(cd "$(dirname "$out")" && pwd)/$(basename "$out")"
    name="$(basename "$out" .dll)"
    key="$(printf '%s' "$out" | sha256sum | cut -c1-16)"
    project_dir="$root/.cache/$cache/obj/$name-$key"
    mkdir -p "$project_dir"
    exec 9>"$project_dir.lock"
    flock 9
    csharp_build "$name" Library "$tfm" "$(dirname "$out")" "$project_dir" "$@" \
        -- -p:GenerateAssemblyInfo=false ||
        die "building the helper failed (the .NET SDK's Roslyn, $tfm; full output in $project_dir/build.log)"
    [ -f "$out" ] || die "the build left no $out (see $project_dir/build.log)"
    helper_out="$out"
}

# Builds C# files with the .NET SDK through scripts/lib/csharp/Sources.csproj
# (Release, the SDK's Roslyn), its output NAME.dll in OUTDIR, its
# intermediate files in OBJDIR, the build's output in OBJDIR/build.log;
# extra MSBuild -p: arguments after the sources' `--`. On failure prints the
# compiler's errors on stderr and returns 1.
#   csharp_build NAME Exe|Library TFM OUTDIR OBJDIR FILE.cs... [-- -p:X=Y...]
csharp_build() {
    local name="$1" type="$2" tfm="$3" out="$4" obj="$5" files="" extra=() root
    shift 5
    root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        files="${files:+$files%3B}$1"
        shift
    done
    [ $# -gt 0 ] && shift
    extra=("$@")
    mkdir -p "$obj"
    if ! DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 dotnet build "$root/scripts/lib/csharp/Sources.csproj" \
        -c Release -nologo -v:q "-p:AssemblyName=$name" "-p:OutputType=$type" "-p:SourcesTargetFramework=$tfm" \
        "-p:OutDir=$out/" "-p:BaseIntermediateOutputPath=$obj/" "-p:SourceFiles=$files" "${extra[@]}" \
        >"$obj/build.log" 2>&1; then
        grep -E ': error ' "$obj/build.log" | sort -u >&2 || cat "$obj/build.log" >&2
        return 1
    fi
}
