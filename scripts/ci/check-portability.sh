#!/usr/bin/env bash
# Portability checks, run by scripts/test.sh (one step there). The MSRV and
# the other targets come from scripts/provision/rust-target.sh (rustup, else
# Debian's rustc-web under .cache/rust-web, building the standard library
# with -Zbuild-std for a target), which says in one line which way; Miri and
# the pinned ui toolchain come from rustup, and where rustup cannot fetch
# them the part says so in one line and is not run (scripts/lib/install-lib.sh).
# Any other failure fails the script.
#
#   bash scripts/ci/check-portability.sh          # every part
#   bash scripts/ci/check-portability.sh msrv     # only the named parts
#
# Parts:
#   msrv  the library, the examples and the no_std crate built with exactly
#         the `rust-version` declared in Cargo.toml, with the committed
#         Cargo.lock (--locked).
#   targets  `cargo check` of the library and the examples for every platform
#         the README names: Windows x64 and x86 (MSVC; `extern "system"` is
#         stdcall on x86), Linux aarch64 and x86_64-musl (as a dynamic
#         library, `-crt-static`, which a cdylib profiler needs), macOS
#         aarch64; and of every test for Windows x64 and x86 (the
#         real-runtime harness is `cfg(unix)`, everything else portable).
#         Type-checked only, warnings denied: nothing is linked or run on
#         these targets.
#   miri32  the COM core's Miri tests on a 32-bit target (i686 Linux).
#   ui    the compile-fail tests (tests/ui.rs) with the Rust version pinned in
#         ui-tests/TOOLCHAIN, whose messages ui-tests/*.stderr record.
set -euo pipefail
cd "$(dirname "$0")/../.."

die() { printf 'error: %s\n' "$*" >&2; exit 1; }
part() { printf '\n--> %s\n' "$*"; }
start=$SECONDS
took() { printf -- '--> %s: %ds\n' "$1" $((SECONDS - start)); start=$SECONDS; }

msrv="$(sed -n 's/^rust-version = "\(.*\)"$/\1/p' Cargo.toml)"
[ -n "$msrv" ] || die "Cargo.toml declares no rust-version"

# shellcheck source=scripts/lib/install-lib.sh
. scripts/lib/install-lib.sh

# The MSRV as a toolchain version (rust-version "1.85" is Rust 1.85.0).
msrv_toolchain() { if [[ "$msrv" == *.*.* ]]; then echo "$msrv"; else echo "$msrv.0"; fi; }

check_msrv() {
    part "MSRV: Rust $msrv builds the library, the examples and the no_std crate"
    rust_cargo_for --msrv "$(msrv_toolchain)"
    echo "--> $RUST_VIA"
    local dir=target/msrv
    "${RUST_CARGO[@]}" build --locked --lib --examples --target-dir "$dir"
    # The no_std crate builds corprof without default features.
    "${RUST_CARGO[@]}" build --manifest-path tests/no_std_crate/Cargo.toml --target-dir "$dir/no_std_crate"
    took "msrv"
}

check_targets() {
    local t dir=target/cross
    # Each target's cargo (scripts/provision/rust-target.sh: rustup's target,
    # else Debian's rustc-web building the standard library with
    # -Zbuild-std); the script says in one line which way.
    for_target() {
        rust_cargo_for "$1"
        echo "--> $RUST_VIA"
    }

    for t in x86_64-pc-windows-msvc i686-pc-windows-msvc; do
        for_target "$t"
        part "cargo check --lib --examples --tests --target $t"
        RUSTFLAGS="-D warnings" "${RUST_CARGO[@]}" check --locked --lib --examples --tests --target "$t" --target-dir "$dir"
    done
    for t in aarch64-unknown-linux-gnu aarch64-apple-darwin; do
        for_target "$t"
        part "cargo check --lib --examples --target $t"
        RUSTFLAGS="-D warnings" "${RUST_CARGO[@]}" check --locked --lib --examples --target "$t" --target-dir "$dir"
    done
    # `cargo check` stops before code generation, so the ELT trampolines
    # (`global_asm!`) are assembled here: building the library (an rlib)
    # needs LLVM's assembler, not a linker.
    for t in x86_64-pc-windows-msvc aarch64-unknown-linux-gnu aarch64-apple-darwin x86_64-apple-darwin; do
        for_target "$t"
        part "cargo build --lib --target $t (assembles the ELT trampolines)"
        RUSTFLAGS="-D warnings" "${RUST_CARGO[@]}" build --locked --lib --target "$t" --target-dir "$dir"
    done
    # On 32-bit Windows `extern "system"` is stdcall, which COM's STDAPI
    # exports need: check the exporter's assembly (the linker is `true`: no
    # MSVC here, so nothing is linked, and the DLL's export table is not
    # checked).
    t=i686-pc-windows-msvc
    for_target "$t"
    part "$t: DllGetClassObject and DllCanUnloadNow are stdcall (assembly of examples/jit_tracer)"
    RUSTFLAGS="-D warnings" "${RUST_CARGO[@]}" rustc --locked --example jit_tracer --target "$t" --target-dir "$dir/asm" \
        -- --emit=asm -C linker=true
    local asm
    asm="$(ls -t "$dir/asm/$t/debug/examples/"jit_tracer-*.s | head -n 1)"
    grep -q '^_DllCanUnloadNow@0:' "$asm" || die "$asm: no stdcall _DllCanUnloadNow@0"
    awk '/^_DllGetClassObject@12:/ { f = 1 } f && /retl/ { print; exit }' "$asm" | grep -q 'retl[[:space:]]*\$12' \
        || die "$asm: _DllGetClassObject@12 does not pop its 12 bytes of arguments (stdcall)"

    t=x86_64-unknown-linux-musl
    for_target "$t"
    part "cargo check --lib --examples --target $t (-crt-static: cdylibs)"
    RUSTFLAGS="-C target-feature=-crt-static -D warnings" \
        "${RUST_CARGO[@]}" check --locked --lib --examples --target "$t" --target-dir "$dir/musl-dynamic"
    took "targets"
}

check_miri32() {
    local t=i686-unknown-linux-gnu
    part "Miri on $t: the COM core (com_core, guid_hresult, com_server, stress)"
    miri_available "Miri (32-bit, $t; scripts/ci/check-portability.sh miri32)" || { took "miri32"; return 0; }
    cargo +nightly miri setup --target "$t" >/dev/null 2>&1 \
        || die "cargo +nightly miri setup --target $t failed"
    MIRIFLAGS="${MIRIFLAGS:--Zmiri-strict-provenance}" \
        cargo +nightly miri test --locked --target "$t" --test com_core --test guid_hresult --test com_server --test stress
    took "miri32"
}

check_ui() {
    local pinned
    pinned="$(tr -d '[:space:]' < ui-tests/TOOLCHAIN)"
    part "ui tests (compile-fail messages) with the pinned Rust $pinned"
    # The default toolchain and target dir when the default toolchain is the
    # pinned one (nothing to install or rebuild), rustup's $pinned and a
    # separate target dir otherwise.
    local cargo=(cargo) dir=target
    if [ "$(rustc --version | cut -d' ' -f2)" != "$pinned" ]; then
        rust_toolchain_available "ui tests on the pinned Rust $pinned (scripts/ci/check-portability.sh ui)" "$pinned" \
            || { took "ui"; return 0; }
        cargo=(cargo "+$pinned")
        dir=target/ui-pinned
    fi
    CORPROF_UI_PINNED=1 "${cargo[@]}" test --locked --test ui --target-dir "$dir"
    took "ui"
}

parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(msrv targets miri32 ui)
for p in "${parts[@]}"; do
    case "$p" in
        msrv) check_msrv ;;
        targets) check_targets ;;
        miri32) check_miri32 ;;
        ui) check_ui ;;
        *) die "unknown part $p" ;;
    esac
done
