#!/usr/bin/env bash
# Every Cargo feature alone, and all together, run by scripts/test.sh (one
# step there): clippy with warnings denied on the current toolchain, and the
# MSRV (`rust-version` in Cargo.toml): `cargo check` of each feature alone,
# a build of all together, so that a profiler
# that turns the defaults off and picks one capability compiles, and
# nothing of a capability leaks into the layers below it.
#
#   bash scripts/ci/check-features.sh
#
# The features are read from Cargo.toml's [features] table, so a new
# capability is checked as soon as it is declared. The MSRV comes from
# scripts/provision/rust-target.sh --msrv (rustup's toolchain, else Debian's
# rustc-web of that version), which says in one line which way; without
# either the script fails. Any other failure fails the script.
set -euo pipefail
cd "$(dirname "$0")/../.."

die() { printf 'error: %s\n' "$*" >&2; exit 1; }
# shellcheck source=scripts/lib/install-lib.sh
. scripts/lib/install-lib.sh

msrv="$(sed -n 's/^rust-version = "\(.*\)"$/\1/p' Cargo.toml)"
[ -n "$msrv" ] || die "Cargo.toml declares no rust-version"
# The MSRV's cargo (scripts/provision/rust-target.sh: rustup's toolchain,
# else Debian's rustc-web of that version under .cache/rust-web).
with_msrv=", and Rust $msrv (a check alone, a build all together)"
[[ "$msrv" == *.*.* ]] || msrv_version="$msrv.0"
rust_cargo_for --msrv "${msrv_version:-$msrv}"
echo "--> $RUST_VIA"
msrv_build() {
    "${RUST_CARGO[@]}" build --quiet --locked --lib --target-dir target/msrv "$@"
}
# Each feature alone is type-checked with the MSRV (what an MSRV can reject:
# a newer API, syntax or lint); all features together, and the default set
# with the examples (scripts/ci/check-portability.sh msrv), are built.
msrv_check() {
    "${RUST_CARGO[@]}" check --quiet --locked --lib --target-dir target/msrv "$@"
}

# The names declared in [features], `default` aside.
features=$(awk '/^\[features\]/ { on = 1; next } /^\[/ { on = 0 } on && /^[a-z_]+ *=/ { sub(/ *=.*/, ""); print }' Cargo.toml | grep -vx default)
[ -n "$features" ] || die "no features found in Cargo.toml"

start=$SECONDS
for f in "" $features; do
    label=${f:-"(none)"}
    printf -- '--> feature %s alone: clippy%s\n' "$label" "$with_msrv"
    cargo clippy --quiet --lib --no-default-features --features "$f" -- -D warnings \
        || die "clippy failed with only the feature $label"
    msrv_check --no-default-features --features "$f" \
        || die "Rust $msrv cannot check the library with only the feature $label"
done
printf -- '--> all features together: clippy%s\n' "$with_msrv"
cargo clippy --quiet --lib --all-features -- -D warnings || die "clippy failed with all features"
msrv_build --all-features || die "Rust $msrv cannot build the library with all features"
printf -- '--> features checked (%s): %ds\n' "$(echo $features | tr ' ' ,)" $((SECONDS - start))
