#!/usr/bin/env bash
# The AArch64 leg, under qemu-user:
# 1. the library's unit tests and the integration tests that need no CoreCLR
#    and can depend on the target (AARCH64_TESTS below: the COM core, the
#    facade against fakes, the CIL codec, the IPC client against fake
#    servers, and the AArch64 enter/leave trampolines called as the JIT
#    calls them), built for aarch64-unknown-linux-gnu;
# 2. e2e suites on Microsoft's linux-arm64 CoreCLR 10.0.15 and 11.0.0
#    (NuGet's runtime packs, scripts/provision/dotnet-arm64.sh), the
#    profilers built for the target and loaded into the real runtime
#    (E2E_ARM64 below lists them).
#
#   bash scripts/ci/test-aarch64.sh
#
# Installs what it needs (apt-get: qemu-user, gcc-aarch64-linux-gnu,
# libc6-dev-arm64-cross, libstdc++6-arm64-cross; NuGet: the runtime packs;
# the Rust for the target from scripts/provision/rust-target.sh, which says
# in one line which way) and fails, never skips, without it. Checks that
# the trampolines are ELF functions with a size. Ends with the line
# `aarch64: N passed, M failed` and exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/../.."

readonly TARGET=aarch64-unknown-linux-gnu
readonly SYSROOT=/usr/aarch64-linux-gnu
readonly TARGET_DIR=target/aarch64
log=target/aarch64-tests.log

die() {
    echo "test-aarch64: error: $*" >&2
    exit 1
}
say() {
    echo "test-aarch64: $*" >&2
}

# ------------------------------------------------------------ what it needs

# shellcheck source=scripts/lib/install-lib.sh
. scripts/lib/install-lib.sh
# The Rust for the target (scripts/provision/rust-target.sh: rustup's target,
# else Debian's rustc-web with -Zbuild-std), and its linker
# (gcc-aarch64-linux-gnu, libc6-dev-arm64-cross).
rust_cargo_for "$TARGET"
echo "test-aarch64: $RUST_VIA"
missing=()
command -v qemu-aarch64 >/dev/null 2>&1 || missing+=(qemu-user)
install_apt_packages target/apt-aarch64.log "${missing[@]}"
command -v qemu-aarch64 >/dev/null 2>&1 || die "qemu-aarch64 is still missing after installing qemu-user"

# ------------------------------------------------------------ the tests

# The integration tests that need no runtime and whose outcome can depend on
# the target (CI's budget: each suite is one more test binary to build for
# it): the COM core and server, vtables and callbacks through the facade,
# the declaration macros, the AArch64 trampolines, pointer-sized and
# byte-order-sensitive decoding (the CIL bodies, EventPipe, the IPC wire),
# the scale and stress suites. Not run here, as they
# hold nothing the target changes and run on Linux x86-64: the source scans
# (layers, docs_doctested, generated_files), the host CLIs (corprof_cli,
# coverage_cli), the fuzzers, the text and file formats, the options, the
# x86-64 and Windows trampolines, the sanitizer canary, scale_methods_200,
# nettrace_memory (its 24 MB trace ran over 4 min under qemu at load 2-8).
AARCH64_TESTS=(
    bad_input cil_body com_core com_server decl_callback decl_info decl_metadata
    decl_types diagnostics_ipc elt_trampolines_aarch64 eventpipe_decode
    facade_callback facade_compose facade_heap_walk facade_hooks guid_hresult
    macro_syntax scale_chain_12 stress
)
tests=()
for name in "${AARCH64_TESTS[@]}"; do
    [ -f "tests/$name.rs" ] || die "tests/$name.rs, listed in AARCH64_TESTS, is missing"
    tests+=(--test "$name")
done

# The e2e tests of the real runtime under qemu (each runs the programs on
# 10.0.15 and 11.0.0; docs/e2e.md, "AArch64", says what each proves and
# what qemu-user cannot do).
# One line per suite: the suite, then the tests (libtest name filters).
E2E_ARM64=(
    "e2e_profilers jit_tracer_names_the_programs_own_methods_and_leaves_it_unchanged"
    "e2e_hooks fast_path_hooks_count_every_call_exactly with_info_hooks_count_the_same_calls"
    "e2e_sampler a_fixed_amount_of_work_splits_three_to_one_in_managed_walks"
)

export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L $SYSROOT"
# Tests that run their own binary again as a child go through the emulator too.
export CORPROF_TEST_RUNNER="qemu-aarch64 -L $SYSROOT"

mkdir -p target
start=$(date +%s)
say "building and running the library's unit tests and $((${#tests[@]} / 2)) integration tests under qemu-aarch64"
set +e
"${RUST_CARGO[@]}" test --target "$TARGET" --target-dir "$TARGET_DIR" --no-fail-fast --lib "${tests[@]}" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e

# The trampolines are ELF functions with a size (.type/.size), so that
# debuggers and profilers can tell where they end.
bin="$(ls -t "$TARGET_DIR/$TARGET/debug/deps/elt_trampolines_aarch64-"* 2>/dev/null | grep -v '\.d$' | sed -n 1p || true)"
[ -n "$bin" ] && [ -f "$bin" ] || die "no elt_trampolines_aarch64 test binary in $TARGET_DIR"
symbols_failed=0
for sym in corprof_elt_enter3 corprof_elt_leave3 corprof_elt_tailcall3; do
    # readelf -s columns: Num Value Size Type Bind Vis Ndx Name
    line="$(aarch64-linux-gnu-readelf -sW "$bin" | awk -v s="$sym" '$8 == s && !found { print $3, $4; found = 1 }')"
    read -r size type <<<"${line:-0 NONE}"
    if [ "$type" = FUNC ] && [ "$size" -gt 0 ] 2>/dev/null; then
        echo "test-aarch64: $sym: FUNC, $size bytes"
    else
        echo "test-aarch64: $sym: expected an ELF FUNC with a size, found '${line:-nothing}'" >&2
        symbols_failed=1
    fi
done

# ------------------------------------------------------------ the real runtime

# The e2e suites on Microsoft's linux-arm64 CoreCLRs (runtimes.props'
# LinuxArm64="yes": 10.0.15 and 11.0.0) under qemu-user: the same test code
# and C# programs (IL, built once by scripts/provision/provision-dotnet.sh) as on
# Linux x64, through the harness's AArch64 runner (tests/common/dotnet.rs:
# `qemu-aarch64 -L SYSROOT dotnet exec ...`, profilers built for the target
# by the leg's cargo, CORPROF_E2E_ARM64=1). The test binaries run on the host.
[ -f "$SYSROOT/lib/libstdc++.so.6" ] || install_apt_packages target/apt-aarch64.log libstdc++6-arm64-cross
[ -f "$SYSROOT/lib/libstdc++.so.6" ] || die "$SYSROOT/lib/libstdc++.so.6 is missing after installing libstdc++6-arm64-cross"
arm64="$(bash scripts/provision/dotnet-arm64.sh)" || die "laying out the linux-arm64 runtimes failed"
eval "$arm64"
export CORPROF_E2E_ARM64=1 CORPROF_E2E_QEMU="$(command -v qemu-aarch64)" CORPROF_E2E_ARM64_SYSROOT="$SYSROOT"
export CORPROF_E2E_ARM64_DOTNET="$DOTNET_ARM64_DOTNET"
export CORPROF_E2E_CARGO_ENV="$RUST_CARGO_ENV" CORPROF_E2E_CARGO_ARGS="$RUST_CARGO_ARGS"
# A program starts in about 3 s under qemu on an idle machine (ten times
# the native start): the harness's 60 s per run is kept for an idle CI, and
# raised where the caller asks.
export CORPROF_E2E_TIMEOUT_SECS="${CORPROF_E2E_TIMEOUT_SECS:-180}"
unset CORPROF_TEST_RUNNER
# The profilers are built (by the tests' cargo) into the target directory of
# the tests above, whose standard library for the target is built already.
export CARGO_TARGET_DIR="$TARGET_DIR"
for runtime in 10.0 11.0; do
    CORPROF_RUNTIME=$runtime bash scripts/provision/provision-dotnet.sh >/dev/null \
        || die "provisioning CORPROF_RUNTIME=$runtime (the test programs) failed"
    say "the e2e suites on the linux-arm64 CoreCLR of $runtime under qemu-aarch64"
    for line in "${E2E_ARM64[@]}"; do
        read -ra words <<<"$line"
        set +e
        # --exact: each filter names one test.
        CORPROF_RUNTIME=$runtime cargo test --test "${words[0]}" \
            -- --exact "${words[@]:1}" 2>&1 | tee -a "$log"
        [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
        set -e
    done
done

passed=$(awk '/^test result:/ { p += $4 } END { print p + 0 }' "$log")
failed=$(awk '/^test result:/ { f += $6 } END { print f + 0 }' "$log")
if [ "$symbols_failed" -ne 0 ]; then
    failed=$((failed + 1))
fi
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
    # A build failure or a crashed test binary prints no "test result".
    failed=1
fi
say "took $(($(date +%s) - start)) s"
echo "aarch64: $passed passed, $failed failed"
[ "$failed" -eq 0 ] || exit 1
