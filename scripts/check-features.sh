#!/usr/bin/env bash
# Every Cargo feature alone, and all together, run by scripts/test.sh (one
# step there): clippy with warnings denied on the current toolchain, and a
# build with the MSRV (`rust-version` in Cargo.toml), so that a profiler
# that turns the defaults off and picks one capability compiles, and
# nothing of a capability leaks into the layers below it.
#
#   bash scripts/check-features.sh
#
# The features are read from Cargo.toml's [features] table, so a new
# capability is checked as soon as it is declared. Installs the MSRV
# toolchain with rustup when missing; fails, never skips.
set -euo pipefail
cd "$(dirname "$0")/.."

die() { printf 'error: %s\n' "$*" >&2; exit 1; }

msrv="$(sed -n 's/^rust-version = "\(.*\)"$/\1/p' Cargo.toml)"
[ -n "$msrv" ] || die "Cargo.toml declares no rust-version"
rustup run "$msrv" rustc --version >/dev/null 2>&1 \
    || rustup toolchain install "$msrv" --profile minimal >/dev/null \
    || die "could not install Rust $msrv"

# The names declared in [features], `default` aside.
features=$(awk '/^\[features\]/ { on = 1; next } /^\[/ { on = 0 } on && /^[a-z_]+ *=/ { sub(/ *=.*/, ""); print }' Cargo.toml | grep -vx default)
[ -n "$features" ] || die "no features found in Cargo.toml"

start=$SECONDS
for f in "" $features; do
    label=${f:-"(none)"}
    printf -- '--> feature %s alone: clippy, and a build with Rust %s\n' "$label" "$msrv"
    cargo clippy --quiet --lib --no-default-features --features "$f" -- -D warnings \
        || die "clippy failed with only the feature $label"
    cargo "+$msrv" build --quiet --locked --lib --no-default-features --features "$f" --target-dir target/msrv \
        || die "Rust $msrv cannot build the library with only the feature $label"
done
printf -- '--> all features together\n'
cargo clippy --quiet --lib --all-features -- -D warnings || die "clippy failed with all features"
cargo "+$msrv" build --quiet --locked --lib --all-features --target-dir target/msrv \
    || die "Rust $msrv cannot build the library with all features"
printf -- '--> features checked (%s): %ds\n' "$(echo $features | tr ' ' ,)" $((SECONDS - start))
