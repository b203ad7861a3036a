#!/usr/bin/env bash
# The Miri tests under AddressSanitizer, with LeakSanitizer on: run by
# scripts/test.sh in place of Miri where rustup cannot fetch Miri.
#
#   bash scripts/ci/check-sanitizer.sh
#
# Builds the tests of MIRI_TESTS (scripts/lib/install-lib.sh) and the canaries of
# tests/sanitizer_canary.rs with the nightly, `-Zsanitizer=address`, for the
# host target named explicitly (so that build scripts are built without the
# sanitizer), in target/asan. Then, before the tests, each canary runs alone
# and must be reported: a heap use after free (AddressSanitizer) and a
# leaked buffer (LeakSanitizer); the script fails if either exits 0 or its
# report is missing, since a clean run proves nothing without a live
# sanitizer. Only the crate and the tests are instrumented (the standard
# library is not rebuilt); every heap allocation is tracked.
#
# Needs the nightly toolchain (installed with rustup when missing; where
# rustup cannot fetch it, says so in one line and is not run). Any other
# failure fails the script. ASAN_OPTIONS may be set to override the
# defaults below.
#
# tests/com_c_caller.rs (a C program calling an exported object through its
# vtables) runs here too, its C file compiled with -fsanitize=address
# (CORPROF_C_CALLER_CFLAGS) and checked against the executable's runtime,
# which -rdynamic exports; its canary is a use after free in the C code.
set -euo pipefail
cd "$(dirname "$0")/../.."

die() { printf 'check-sanitizer: error: %s\n' "$*" >&2; exit 1; }
say() { printf 'check-sanitizer: %s\n' "$*" >&2; }
# shellcheck source=scripts/lib/install-lib.sh
. scripts/lib/install-lib.sh

rust_toolchain_available "AddressSanitizer in place of Miri (scripts/ci/check-sanitizer.sh)" nightly || exit 0
target="$(rustc +nightly -vV | sed -n 's/^host: //p')"
[ -n "$target" ] || die "rustc +nightly -vV names no host target"
dir=target/asan
export RUSTFLAGS="-Zsanitizer=address -Cforce-frame-pointers=yes -Clink-arg=-rdynamic"
export CORPROF_C_CALLER_CFLAGS="-fsanitize=address -fno-omit-frame-pointer"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:detect_stack_use_after_return=1}"
leak_bytes="$(sed -n 's/^const LEAKED_BYTES: usize = \([0-9]*\);$/\1/p' tests/sanitizer_canary.rs)"
[ -n "$leak_bytes" ] || die "tests/sanitizer_canary.rs declares no LEAKED_BYTES"

asan_test() { cargo +nightly test --target "$target" --target-dir "$dir" "$@"; }

start=$SECONDS
say "building the canaries and the tests ($target, RUSTFLAGS=$RUSTFLAGS)"
asan_test --no-run --test sanitizer_canary --test com_c_caller "${MIRI_TESTS[@]}"

# Runs the ignored test NAME of tests/TEST.rs (default sanitizer_canary)
# alone; fails unless it exits non-zero with every EXPECTED line in its output.
#   [TEST=com_c_caller] canary NAME EXPECTED...
canary() {
    local name="$1" log="$dir/canary-$1.log" status=0 expected
    shift
    CORPROF_SANITIZER_CANARY=1 asan_test --test "${TEST:-sanitizer_canary}" -- --ignored --exact "$name" >"$log" 2>&1 || status=$?
    # The end of its output, indented (its `test result:` line is not one
    # of the tests' for scripts/test.sh's count).
    [ "$status" -ne 0 ] || { tail -n 4 "$log" | sed 's/^/    /' >&2; die "canary $name exited 0: the sanitizer did not report it ($log)"; }
    for expected in "$@"; do
        grep -qF -- "$expected" "$log" || { tail -n 4 "$log" | sed 's/^/    /' >&2; die "canary $name (exit $status): no \"$expected\" in its output ($log)"; }
    done
    expected="$(printf '"%s", ' "$@")"
    say "canary $name reported: ${expected%, }"
}
canary heap_use_after_free "ERROR: AddressSanitizer: heap-use-after-free"
canary leak "ERROR: LeakSanitizer: detected memory leaks" "Direct leak of $leak_bytes byte(s) in 1 object(s)"
TEST=com_c_caller canary c_reads_a_released_object "ERROR: AddressSanitizer: heap-use-after-free" "in corprof_c_read_after_release"

say "the Miri tests under AddressSanitizer and LeakSanitizer (ASAN_OPTIONS=$ASAN_OPTIONS)"
asan_test --test com_c_caller "${MIRI_TESTS[@]}"
say "took $((SECONDS - start)) s"
