#!/usr/bin/env bash
# The Windows leg: corprof built for x86_64-pc-windows-gnu and run under Wine.
#
#   bash scripts/ci/test-windows.sh
#
# 1. The library's unit tests and every integration test that needs no
#    runtime (COM core, facade against fakes, CIL, the IPC client against
#    fake servers), built for x86_64-pc-windows-gnu and run by wine64.
# 2. The end-to-end suites on Microsoft's Windows x64 CoreCLR (the win-x64
#    runtime packs of .NET 10.0.15 and 11.0.0 from NuGet, pinned in
#    tests/e2e/runtimes.props) under Wine: the same test code and the same
#    C# programs as on Linux, through the harness's Windows runner
#    (tests/common/dotnet.rs: `wine64 dotnet.exe`, profilers built as
#    Windows DLLs, CORPROF_E2E_WINDOWS=1).
#
# Installs what it needs and fails, never skips, without it: apt-get for
# wine64; scripts/provision/rust-target.sh for the Rust for the target and
# its linker (rustup's target, else Debian's rustc-web 1.96 with
# -Zbuild-std; one line says which); NuGet (`dotnet restore
# tests/e2e/WindowsRuntimes.proj`)
# for the runtime packs, laid out as a Windows DOTNET_ROOT per version under
# .cache/dotnet-windows/<version>/. NuGet has no dotnet.exe: the muxer is
# tests/windows/dotnet-muxer.c (test harness only), which hands the command
# line to Microsoft's hostfxr.dll from the pack. Wine 8 has no
# bcryptprimitives.dll, whose ProcessPrng Rust's std imports: the shim
# tests/windows/processprng-shim.c is built here and put next to the test
# executables and profiler DLLs, for these tests only. Wine's mscoree stays
# on (without it every IL-only assembly is "Module not found"). Ends with
# `windows: N passed, M failed` and exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT="$PWD"

readonly TARGET=x86_64-pc-windows-gnu
readonly WINE=/usr/lib/wine/wine64
readonly PINS=tests/e2e/runtimes.props
log=target/windows-tests.log

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
missing=()
[ -x "$WINE" ] || missing+=(wine64)
install_apt_packages target/apt-windows.log "${missing[@]}"
[ -x "$WINE" ] || die "$WINE is still missing after installing wine64"

# The Rust for the target (scripts/provision/rust-target.sh: rustup's
# target, else Debian's rustc-web with -Zbuild-std; it installs the linker,
# gcc-mingw-w64-x86-64). The profilers the harness builds use the same cargo
# command line: a wrapper for CORPROF_E2E_WINDOWS_CARGO.
rust_cargo_for "$TARGET"
say "$RUST_VIA"
mkdir -p target
{
    echo '#!/bin/sh'
    echo '# written by scripts/ci/test-windows.sh: cargo for x86_64-pc-windows-gnu'
    printf 'exec'
    printf ' %q' "${RUST_CARGO[@]}"
    echo ' "$@"'
} >target/windows-cargo.sh
chmod +x target/windows-cargo.sh
export CORPROF_E2E_WINDOWS_CARGO="$ROOT/target/windows-cargo.sh"

# The Windows CoreCLRs: NuGet's win-x64 runtime packs, each laid out as a
# Windows DOTNET_ROOT with the test muxer as dotnet.exe.
mapfile -t WIN_RUNTIMES < <(sed -n 's/.*<CorprofWindowsRuntime Include="\([^"]*\)" NetCore="\([^"]*\)".*/\1 \2/p' "$PINS")
[ "${#WIN_RUNTIMES[@]}" -gt 0 ] || die "$PINS pins no <CorprofWindowsRuntime>"
PACKAGES="$(dotnet nuget locals global-packages --list 2>/dev/null | sed -n 's/^global-packages: //p')"
[ -n "$PACKAGES" ] || die "\`dotnet nuget locals global-packages --list\` names no packages folder"
for rv in "${WIN_RUNTIMES[@]}"; do
    if [ ! -f "$PACKAGES/microsoft.netcore.app.runtime.win-x64/${rv#* }/runtimes/win-x64/native/hostfxr.dll" ]; then
        say "restoring the win-x64 runtime packs of $PINS from NuGet"
        dotnet restore tests/e2e/WindowsRuntimes.proj -nologo >target/windows-restore.log 2>&1 ||
            die "dotnet restore tests/e2e/WindowsRuntimes.proj failed (see target/windows-restore.log)"
        break
    fi
done
# Lays out runtime version V under .cache/dotnet-windows/V/ (once).
#   win_dotnet_root V
win_dotnet_root() {
    local v="$1" dir="$ROOT/.cache/dotnet-windows/$1" stamp lib
    local pack="$PACKAGES/microsoft.netcore.app.runtime.win-x64/$v/runtimes/win-x64"
    stamp="$v $(sha256sum <tests/windows/dotnet-muxer.c | cut -d' ' -f1)"
    [ "$(cat "$dir/.corprof-complete" 2>/dev/null || true)" = "$stamp" ] && return 0
    lib="$(find "$pack/lib" -mindepth 1 -maxdepth 1 -type d 2>/dev/null | head -n 1)"
    [ -n "$lib" ] && [ -f "$pack/native/hostfxr.dll" ] ||
        die "the win-x64 runtime pack $v has no lib/<tfm>/ or native/hostfxr.dll in $pack"
    say "laying out the Windows x64 runtime $v under $dir"
    local tmp="$dir.tmp.$$"
    rm -rf "$tmp" && mkdir -p "$tmp/host/fxr/$v" "$tmp/shared/Microsoft.NETCore.App/$v"
    cp "$pack/native/hostfxr.dll" "$tmp/host/fxr/$v/"
    cp -r "$lib/." "$pack/native/." "$tmp/shared/Microsoft.NETCore.App/$v/"
    x86_64-w64-mingw32-gcc -municode -O2 -Wall -DFXR_VERSION="L\"$v\"" -o "$tmp/dotnet.exe" \
        tests/windows/dotnet-muxer.c || die "cannot build the test muxer tests/windows/dotnet-muxer.c"
    echo "$stamp" >"$tmp/.corprof-complete"
    rm -rf "$dir" && mv "$tmp" "$dir"
}
for rv in "${WIN_RUNTIMES[@]}"; do win_dotnet_root "${rv#* }"; done

# Wine: its own prefix under target/, no debug chatter, one server for the run.
export WINEPREFIX="$ROOT/target/wineprefix"
export WINEDEBUG=-all
# mscoree stays on: with it off, every IL-only assembly is "Module not found".
export WINEDLLOVERRIDES="mshtml="
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

# Each laid-out runtime must start under Wine and list itself.
for rv in "${WIN_RUNTIMES[@]}"; do
    v="${rv#* }"
    out="$ROOT/target/windows-runtimes-$v.txt"
    timeout 120 "$WINE" "$ROOT/.cache/dotnet-windows/$v/dotnet.exe" --list-runtimes >"$out" 2>&1 </dev/null ||
        die "wine64 dotnet.exe --list-runtimes failed for $v: $(cat "$out")"
    grep -q "^Microsoft.NETCore.App $v " <<<"$(tr -d '\r' <"$out")" ||
        die "the Windows dotnet.exe of $v does not list Microsoft.NETCore.App $v: $(cat "$out")"
done

# The ProcessPrng shim (tests only; see tests/windows/processprng-shim.c).
shim_dir="$ROOT/target/windows-shim"
mkdir -p "$shim_dir"
x86_64-w64-mingw32-gcc -O2 -shared -o "$shim_dir/bcryptprimitives.dll" \
    tests/windows/processprng-shim.c -ladvapi32 || die "cannot build the ProcessPrng shim"
# What this Wine answers to GetThreadContext, in one line: the runtime
# walks a running thread only when CONTEXT_EXCEPTION_REPORTING comes back
# (docs/sampling.md, thread-suspend mode under Wine).
x86_64-w64-mingw32-gcc -O1 -o "$shim_dir/context-flags-probe.exe" tests/windows/context-flags-probe.c ||
    die "cannot build tests/windows/context-flags-probe.c"
probe="$(timeout 120 "$WINE" "$shim_dir/context-flags-probe.exe" </dev/null 2>&1 | tr -d '\r' | paste -sd ';')" ||
    die "tests/windows/context-flags-probe.c failed under Wine: $probe"
say "Wine's GetThreadContext: $probe"

mkdir -p target
: >"$log"
start=$(date +%s)

# ------------------------------------------------------------ 1: no runtime

# The integration tests whose outcome can depend on the target (as the
# AArch64 leg's list): the COM core and server, the declarations and the
# facade against fakes, the Windows x64 trampolines, the CIL bodies,
# EventPipe, the IPC wire over the named pipe, the CLI, scale and stress,
# and the layer check (it found Windows' `\` paths). The others (source
# scans, fuzzers, formats read back by host tools, options parsing) hold
# nothing Windows changes and run on Linux; building all 37 for the target
# took 341 s of the leg (cold, measured), and options_api's executable
# exited 1 with no output in 1 run of 6 under Wine (not investigated).
WINDOWS_TESTS=(
    bad_input cil_body com_core com_server corprof_cli decl_callback decl_info decl_metadata
    decl_types diagnostics_ipc elt_trampolines_windows eventpipe_decode facade_callback
    facade_compose facade_heap_walk facade_hooks guid_hresult layers macro_syntax
    scale_chain_12 stress
)
tests=()
for name in "${WINDOWS_TESTS[@]}"; do
    [ -f "tests/$name.rs" ] || die "tests/$name.rs, listed in WINDOWS_TESTS, is missing"
    tests+=(--test "$name")
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
# Next to the test executables and the corprof.exe the CLI's tests run.
cp "$shim_dir/bcryptprimitives.dll" "target/$TARGET/debug/deps/"
cp "$shim_dir/bcryptprimitives.dll" "target/$TARGET/debug/"
say "running them under wine64"
set +e
# Not the push exporter's test of a peer that drains a byte a second: Wine 8
# does not honour SO_SNDTIMEO on a blocking send (a send of 32 MiB with a
# 100 ms SO_SNDTIMEO to a peer that never reads had not returned after
# 15 s, measured here; Windows documents the timeout for blocking sends),
# so the push thread stays in its write past the finish deadline.
"${RUST_CARGO[@]}" test --target "$TARGET" --no-fail-fast --lib "${tests[@]}" -- \
    --skip a_push_to_a_peer_draining_a_byte_a_second_ends_at_the_finish_deadline 2>&1 | tr -d '\r' | tee -a "$log"
status1=${PIPESTATUS[0]}
set -e
unset CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER
say "no-runtime tests took $(($(date +%s) - start)) s"

# ------------------------------------------------------------ 2: end to end

export CORPROF_E2E_WINDOWS=1
export CORPROF_E2E_WINE="$WINE"
export CORPROF_E2E_WINDOWS_SHIM="$shim_dir/bcryptprimitives.dll"
status2=0
# Runs `cargo test ARGS...` (host-built tests, Windows programs) and notes
# its status.
e2e_test() {
    set +e
    cargo test --no-fail-fast "$@" 2>&1 | tee -a "$log"
    status2=$((status2 | PIPESTATUS[0]))
    set -e
}
# Points the harness at runtime CHOICE: its C# programs (built by
# scripts/provision/provision-dotnet.sh for the Linux runtime of that name: IL, the
# same files) and the Windows dotnet.exe of its version.
#   use_runtime CHOICE
use_runtime() {
    local rv v=""
    for rv in "${WIN_RUNTIMES[@]}"; do [ "${rv% *}" = "$1" ] && v="${rv#* }"; done
    [ -n "$v" ] || die "$PINS pins no <CorprofWindowsRuntime Include=\"$1\">"
    export CORPROF_RUNTIME="$1"
    export CORPROF_E2E_WINDOWS_DOTNET="$ROOT/.cache/dotnet-windows/$v/dotnet.exe"
    bash scripts/provision/provision-dotnet.sh >/dev/null || die "scripts/provision/provision-dotnet.sh failed for $1"
    say "end-to-end suites on the Windows x64 CoreCLR $v under Wine"
}

e2e_start=$(date +%s)
use_runtime 10.0
# What Wine 8 cannot do, measured on 10.0.15 (docs/e2e.md, "What Wine
# cannot do"), is left out of every run below:
# - the web servers: ASP.NET Core is not in the win-x64 runtime pack ("You
#   must install or update .NET to run this application");
# - any EventPipe session: CoreCLR under Wine 8 dies in the finalizer with
#   "Internal CLR error. (0x80131506)" at DynamicResolver+DestroyScout.
#   Finalize() whenever one is on, with no profiler at all (Basics with
#   DOTNET_EnableEventPipe=1 and keyword 0x1, 0x8 or 0x8000: 15 of 15 runs;
#   without it 3 of 3 clean; the same on Linux 10.0.15: 3 of 3 clean), so
#   the runtime-events and EventPipe profilers and the sampler's EventPipe
#   allocation source;
# - tests that expect an unhandled exception: under Wine it starts winedbg,
#   which prints to the program's stdout, and the process exits 0 (or hangs
#   past 60 s) instead of SIGABRT (the runtime-async refusal on 10.0, the
#   CallTarget helpers built for a newer runtime).
WINE_CANNOT=(
    --skip a_web_server --skip a_web_servers
    --skip runtime_events_reports --skip a_notification_only_profiler --skip eventpipe_events_counts
    --skip the_other_allocation_source
    --skip runtime_async --skip a_helper_built_for_a_newer_runtime --skip a_helper_reference_newer
)
e2e_test --test e2e_profilers --test e2e_rewrite --test e2e_calltarget --test e2e_hooks \
    --test e2e_call_sequence -- "${WINE_CANNOT[@]}"
# Attach and live patching over the named pipe, with attach.exe under Wine.
# (The other tests of e2e_attach drive the IPC library from the Linux test
# process itself, which cannot reach a pipe inside Wine.) Then the bad-input
# cases: bad client data and targets, a profiler that cannot load, bad
# program arguments.
e2e_test --test e2e_attach -- list_shows_the_target live_patch_changes_a_running_loop \
    attached_profiler_sees_what_happens live_patch_refuses_bad_client_data bad_targets_and_profilers
e2e_test --test e2e_runtime -- a_profiler_that_cannot_load rewrite_rejects_bad_arguments \
    basics_prints rewrite_prints jitheavy_prints a_hung_program_is_killed
# Coverage (the coverage example's line and branch counts, filters, PDBs
# beside and embedded, hot code on 1 and 8 threads, OSR and optimized
# callers, handlers), but: the web app (ASP.NET Core) and the sample script
# (a Linux script); runtime-async (above); the precompiled-methods test,
# whose ReadyToRun framework image is built for linux-x64 and refused by the
# Windows runtime ("BadImageFormatException: ... Microsoft.Extensions.
# Primitives.dll. Format of the executable (.exe) or library (.dll) is
# invalid", measured).
e2e_test --test e2e_coverage -- "${WINE_CANNOT[@]}" --skip the_web_app --skip the_sample_script \
    --skip precompiled_methods_are_compiled_again
# Not the sampler: on .NET 5 and later it always starts an EventPipe
# session (contention is on, with no setting to turn it off; GC pauses and
# the live heap by default), and EventPipe crashes CoreCLR under Wine 8
# (above). Its default run passed 2 times in the leg's first whole run
# (thread-suspend and suspend-runtime mode) and crashed 9 times of 9 after
# it, the same "Internal CLR error. (0x80131506)": a test that can flake.

# .NET 11.0.0: the tracer and the runtime's own programs (the cost of the
# whole set twice would not fit the leg's budget).
use_runtime 11.0
# Open (issue 47): on 11.0.0 under Wine the tracer saw the hot method
# compiled twice, not three times (tier 0, instrumented tier 0, tier 1), in
# 2 runs of 2, where 10.0.15 under Wine and 11.0.0 on Linux see 3: not
# explained yet, so not asserted here (docs/e2e.md).
e2e_test --test e2e_profilers -- "${WINE_CANNOT[@]}" --skip jit_tracer_counts_a_hot_method_per_tier
e2e_test --test e2e_runtime -- basics_prints rewrite_prints
say "end-to-end suites took $(($(date +%s) - e2e_start)) s"

passed=$(awk '/^test result:/ { p += $4 } END { print p + 0 }' "$log")
failed=$(awk '/^test result:/ { f += $6 } END { print f + 0 }' "$log")
if { [ "$status1" -ne 0 ] || [ "$status2" -ne 0 ]; } && [ "$failed" -eq 0 ]; then
    # A crashed test binary prints no "test result".
    failed=1
fi
say "took $(($(date +%s) - start)) s"
echo "windows: $passed passed, $failed failed"
[ "$failed" -eq 0 ] || exit 1
