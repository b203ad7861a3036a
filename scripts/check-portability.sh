#!/usr/bin/env bash
# Portability checks, run by scripts/test.sh (one step there). Each part
# installs the toolchain or target it needs with rustup and fails when it
# cannot; nothing is skipped.
#
#   bash scripts/check-portability.sh          # every part
#   bash scripts/check-portability.sh msrv     # only the named parts
#
# Parts:
#   msrv  the library, the examples and the no_std crate built with exactly
#         the `rust-version` declared in Cargo.toml, with the committed
#         Cargo.lock (--locked).
set -euo pipefail
cd "$(dirname "$0")/.."

die() { printf 'error: %s\n' "$*" >&2; exit 1; }
part() { printf '\n--> %s\n' "$*"; }

msrv="$(sed -n 's/^rust-version = "\(.*\)"$/\1/p' Cargo.toml)"
[ -n "$msrv" ] || die "Cargo.toml declares no rust-version"

# Installs a toolchain (minimal profile) unless rustup already has it.
need_toolchain() {
    rustup run "$1" rustc --version >/dev/null 2>&1 \
        || rustup toolchain install "$1" --profile minimal >/dev/null \
        || die "could not install Rust $1 (rustup toolchain install $1 --profile minimal)"
}

check_msrv() {
    part "MSRV: Rust $msrv builds the library, the examples and the no_std crate"
    need_toolchain "$msrv"
    local dir=target/msrv
    cargo "+$msrv" build --locked --lib --target-dir "$dir"
    cargo "+$msrv" build --locked --lib --no-default-features --target-dir "$dir"
    cargo "+$msrv" build --locked --examples --target-dir "$dir"
    cargo "+$msrv" build --manifest-path tests/no_std_crate/Cargo.toml --target-dir "$dir/no_std_crate"
}

parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(msrv)
for p in "${parts[@]}"; do
    case "$p" in
        msrv) check_msrv ;;
        *) die "unknown part $p" ;;
    esac
done
