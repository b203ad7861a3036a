#!/usr/bin/env bash
# Installs the independent readers the profile tests check the sampler's
# output with (tests/profile_formats.rs, tests/e2e_sampler.rs): Go's own
# pprof (Debian's golang-go: `go tool pprof`), gzip, and speedscope from npm
# (unpacked under .cache/speedscope; npm from Debian when missing). Prints
# SPEEDSCOPE_INDEX=<path of speedscope's index.html>. Never skipped: what
# cannot be installed is an error.
set -euo pipefail
cd "$(dirname "$0")/../.."

SPEEDSCOPE_VERSION=1.25.0
die() { echo "install-profile-readers: error: $*" >&2; exit 1; }
say() { echo "install-profile-readers: $*" >&2; }
# shellcheck source=scripts/lib/install-lib.sh
. scripts/lib/install-lib.sh

missing=()
command -v go >/dev/null 2>&1 || missing+=(golang-go)
command -v gzip >/dev/null 2>&1 || missing+=(gzip)
command -v npm >/dev/null 2>&1 || missing+=(npm)
install_apt_packages target/apt-profile-readers.log "${missing[@]}"
go version >/dev/null 2>&1 || die "go is installed but does not run"

dir=.cache/speedscope
index="$PWD/$dir/package/dist/release/index.html"
if [ ! -f "$index" ]; then
    say "fetching speedscope $SPEEDSCOPE_VERSION with npm pack"
    mkdir -p "$dir"
    (cd "$dir" && npm pack --silent "speedscope@$SPEEDSCOPE_VERSION" >/dev/null 2>npm.log &&
        tar xzf "speedscope-$SPEEDSCOPE_VERSION.tgz") ||
        die "npm pack speedscope@$SPEEDSCOPE_VERSION failed (see $dir/npm.log)"
    [ -f "$index" ] || die "the speedscope package has no dist/release/index.html"
fi
echo "SPEEDSCOPE_INDEX=$index"
