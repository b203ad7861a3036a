#!/usr/bin/env bash
# One way to get a Rust for a target (or for the MSRV), used by every leg
# that needs one (scripts/ci/check-portability.sh, scripts/ci/check-features.sh,
# scripts/ci/test-aarch64.sh, scripts/ci/test-windows.sh):
#
# 1. rustup, where rustup has or can fetch the target (the default
#    toolchain) or the toolchain (--msrv);
# 2. else Debian's `rustc-web` (1.96.0 for a target, the version asked for
#    with --msrv), laid out under .cache/rust-web/VERSION/ from
#    `apt-get download` + `dpkg-deb -x` (nothing is installed on the
#    system). For a target other than the host, the standard library is
#    built from `rust-web-src` with `-Zbuild-std=std,panic_abort`: offline,
#    through a cargo source replacement directory that holds both the
#    dev-dependencies (CORPROF_VENDOR_DIR) and the standard library's own
#    dependencies (rust-web-src's library/vendor). `RUSTC_BOOTSTRAP=1` is
#    in CARGO_ENV, for the test legs' cargo only: the crate itself builds on
#    stable.
#
# Also installs the linker a target needs to link test binaries and
# profilers (apt-get): gcc-aarch64-linux-gnu and libc6-dev-arm64-cross for
# aarch64-unknown-linux-gnu, gcc-mingw-w64-x86-64 for x86_64-pc-windows-gnu.
#
#   bash scripts/provision/rust-target.sh TARGET
#   bash scripts/provision/rust-target.sh --msrv VERSION
#
# Prints KEY=VALUE lines (values shell-quoted, for `eval`):
#   RUST_WAY    rustup | debian-rustc-web
#   RUST_VIA    one line saying which way was used (also on stderr)
#   RUSTC       the rustc to give cargo (empty: cargo's own)
#   CARGO_TOOLCHAIN  `+VERSION` for rustup's MSRV toolchain (else empty)
#   CARGO_ENV   extra environment for cargo (space-separated NAME=VALUE)
#   CARGO_ARGS  extra cargo arguments, valid before the subcommand
#               (space-separated; no argument holds a space)
# scripts/lib/install-lib.sh's rust_cargo_for reads them into an array.
# Fails (exit 1, one line on stderr) when neither way works.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT="$PWD"

readonly WEB_VERSION=1.96.0
die() { echo "rust-target: error: $*" >&2; exit 1; }
say() { echo "rust-target: $*" >&2; }
# shellcheck source=scripts/lib/install-lib.sh
. scripts/lib/install-lib.sh

msrv=""
if [ "${1:-}" = --msrv ]; then
    msrv="${2:-}"
    [ -n "$msrv" ] || die "--msrv needs a version (say, 1.85.0)"
    target="$(rustc -vV | sed -n 's/^host: //p')"
else
    target="${1:-}"
    [ -n "$target" ] || die "usage: rust-target.sh TARGET | --msrv VERSION"
fi
[[ "$ROOT" != *[[:space:]]* ]] || die "the checkout's path ($ROOT) holds a space; CARGO_ARGS cannot carry it"

emit() {
    printf 'RUST_WAY=%q\nRUST_VIA=%q\nRUSTC=%q\nCARGO_TOOLCHAIN=%q\nCARGO_ENV=%q\nCARGO_ARGS=%q\n' "$@"
    say "$2"
}

# The linker a target needs (only those the legs link for).
linker_packages() {
    local missing=()
    case "$target" in
        aarch64-unknown-linux-gnu)
            command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || missing+=(gcc-aarch64-linux-gnu)
            [ -f /usr/aarch64-linux-gnu/lib/libc.so.6 ] || missing+=(libc6-dev-arm64-cross)
            ;;
        x86_64-pc-windows-gnu)
            command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || missing+=(gcc-mingw-w64-x86-64)
            ;;
    esac
    install_apt_packages target/apt-rust-target.log "${missing[@]}"
}

# ------------------------------------------------------------ 1. rustup
if [ -n "$msrv" ]; then
    if rustup run "$msrv" rustc --version >/dev/null 2>&1 \
        || rustup_get rustup toolchain install "$msrv" --profile minimal; then
        emit rustup "Rust $msrv: rustup's toolchain $msrv" "" "+$msrv" "" ""
        exit 0
    fi
else
    linker_packages
    if rust_target_fetch "$target"; then
        emit rustup "Rust for $target: rustup's target of the default toolchain ($(rustc --version))" "" "" "" ""
        exit 0
    fi
fi
why="rustup cannot fetch it: ${rustup_error:-unknown error}"

# ------------------------------------------------------------ 2. Debian's rustc-web
version="${msrv:-$WEB_VERSION}"
case "$version" in
    1.96.0) llvm=libllvm22 ;;
    1.85.0) llvm=libllvm19 ;;
    *) die "Rust $version: $why, and no Debian rustc-web $version is known to this script (1.96.0, 1.85.0)" ;;
esac
series="${version%.*}"
dir="$ROOT/.cache/rust-web/$version"

# The Debian version of rustc-web whose upstream version is $version.
debian_version() {
    apt-cache madison rustc-web 2>/dev/null | awk -F'|' -v v="$version" '
        { gsub(/ /, "", $2) } index($2, v "+") == 1 { print $2; exit }'
}
with_src=""
[ -n "$msrv" ] || with_src=rust-web-src
want="rustc-web $version $with_src"
if [ "$(cat "$dir/.corprof-complete" 2>/dev/null || true)" != "$want" ]; then
    command -v apt-get >/dev/null 2>&1 || die "Rust $version for $target: $why, and there is no apt-get for Debian's rustc-web"
    deb="$(debian_version)"
    if [ -z "$deb" ]; then
        [ "$(id -u)" = 0 ] || die "Rust $version for $target: $why, and apt knows no rustc-web $version (run apt-get update)"
        apt-get update -q >target/apt-rust-target.log 2>&1 || die "apt-get update failed (see target/apt-rust-target.log)"
        deb="$(debian_version)"
        [ -n "$deb" ] || die "Rust $version for $target: $why, and Debian offers no rustc-web $version (apt-cache madison rustc-web)"
    fi
    say "laying out Debian's rustc-web $deb under $dir (apt-get download, dpkg-deb -x)"
    tmp="$dir.tmp.$$"
    rm -rf "$tmp"
    mkdir -p "$tmp/debs" "$tmp/root"
    pkgs=("rustc-web=$deb" "libstd-rust-web-dev=$deb" "libstd-rust-web-$series=$deb" "$llvm")
    [ -z "$with_src" ] || pkgs+=("rust-web-src=$deb")
    (cd "$tmp/debs" && apt-get download "${pkgs[@]}") >"$tmp/download.log" 2>&1 \
        || { cat "$tmp/download.log" >&2; die "apt-get download ${pkgs[*]} failed"; }
    for f in "$tmp"/debs/*.deb; do
        dpkg-deb -x "$f" "$tmp/root" || die "dpkg-deb -x $f failed"
    done
    rm -rf "$tmp/debs"
    # rustc finds librustc_driver and libLLVM through LD_LIBRARY_PATH (no
    # RUNPATH), and its sysroot from its own path (root/usr).
    mkdir -p "$tmp/bin"
    cat >"$tmp/bin/rustc" <<'SH'
#!/bin/sh
# Debian's rustc-web, laid out by scripts/provision/rust-target.sh.
here="$(cd "$(dirname "$0")/.." && pwd)"
LD_LIBRARY_PATH="$here/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$here/root/usr/bin/rustc" "$@"
SH
    chmod +x "$tmp/bin/rustc"
    got="$("$tmp/bin/rustc" --version 2>&1)" || die "Debian's rustc-web does not run: $got"
    [[ "$got" == "rustc $version "* ]] || die "Debian's rustc-web says '$got', not $version"
    echo "$want" >"$tmp/.corprof-complete"
    rm -rf "$dir"
    mv "$tmp" "$dir"
fi
rustc_bin="$dir/bin/rustc"
host="$("$rustc_bin" -vV | sed -n 's/^host: //p')"

if [ -n "$msrv" ] || [ "$target" = "$host" ]; then
    # The host's standard library is in libstd-rust-web-dev: no build-std.
    emit debian-rustc-web "Rust $version for $target: Debian's rustc-web $version under .cache/rust-web ($why)" \
        "$rustc_bin" "" "" ""
    exit 0
fi

# The standard library built for the target, offline: one source
# replacement directory holding library/vendor's crates and, when
# CORPROF_VENDOR_DIR names one, the dev-dependencies' (a crate in both,
# same name and version, is taken once).
library="$dir/root/usr/lib/rustlib/src/rust/library"
[ -d "$library/vendor" ] || die "$library/vendor is missing: rust-web-src is not laid out"
args="-Zbuild-std=std,panic_abort"
if [ -n "${CORPROF_VENDOR_DIR:-}" ]; then
    vendor="$(cd "$CORPROF_VENDOR_DIR" 2>/dev/null && pwd)" || die "CORPROF_VENDOR_DIR=$CORPROF_VENDOR_DIR is not a directory"
    merged="$dir/vendor"
    tmp="$merged.tmp.$$"
    rm -rf "$tmp"
    mkdir -p "$tmp"
    for c in "$library"/vendor/*/; do
        ln -s "${c%/}" "$tmp/$(basename "$c")"
    done
    for c in "$vendor"/*/; do
        [ -f "$c/Cargo.toml" ] || continue
        key="$(awk -F'"' '/^\[package\]/ { p = 1; next } /^\[/ { p = 0 }
            p && /^name *=/ { n = $2 } p && /^version *=/ { v = $2 } END { print n "-" v }' "$c/Cargo.toml")"
        [ -e "$tmp/$key" ] || ln -s "${c%/}" "$tmp/$key"
    done
    rm -rf "$merged"
    mv "$tmp" "$merged"
    args="$args --config source.crates-io.replace-with=\"vendored-sources\" --config source.vendored-sources.directory=\"$merged\" --config net.offline=true"
fi
emit debian-rustc-web \
    "Rust for $target: Debian's rustc-web $version under .cache/rust-web, std built with -Zbuild-std ($why)" \
    "$rustc_bin" "" "RUSTC_BOOTSTRAP=1" "$args"
