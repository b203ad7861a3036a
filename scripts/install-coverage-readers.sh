#!/usr/bin/env bash
# Installs the independent readers the coverage tests check corprof's
# reports with (tests/e2e_coverage.rs): Debian's lcov (`lcov --summary`,
# `genhtml`) and PyPI's pycobertura (in a virtual environment under
# .cache/pycobertura). Prints LCOV=, GENHTML= and PYCOBERTURA= lines. Never
# skipped: what cannot be installed is an error.
set -euo pipefail
cd "$(dirname "$0")/.."

PYCOBERTURA_VERSION=3.3.2
die() { echo "install-coverage-readers: error: $*" >&2; exit 1; }
say() { echo "install-coverage-readers: $*" >&2; }
# shellcheck source=scripts/install-lib.sh
. scripts/install-lib.sh

mkdir -p target
missing=()
command -v lcov >/dev/null 2>&1 || missing+=(lcov)
command -v genhtml >/dev/null 2>&1 || missing+=(lcov)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || missing+=(python3-venv)
install_apt_packages target/apt-coverage-readers.log "${missing[@]}"
lcov --version >/dev/null 2>&1 || die "lcov is installed but does not run"

venv=.cache/pycobertura
bin="$PWD/$venv/bin/pycobertura"
mkdir -p .cache
exec 9>.cache/pycobertura.lock
flock 9
if [ ! -f "$venv/.installed-$PYCOBERTURA_VERSION" ] || ! "$bin" --help >/dev/null 2>&1; then
    say "installing pycobertura $PYCOBERTURA_VERSION from PyPI into $venv"
    rm -rf "$venv"
    python3 -m venv "$venv" >target/pip-pycobertura.log 2>&1 ||
        die "python3 -m venv failed (see target/pip-pycobertura.log)"
    "$venv/bin/pip" install --quiet "pycobertura==$PYCOBERTURA_VERSION" >>target/pip-pycobertura.log 2>&1 ||
        die "pip install pycobertura==$PYCOBERTURA_VERSION failed (see target/pip-pycobertura.log)"
    "$bin" --help >/dev/null 2>&1 || die "pycobertura is installed but does not run"
    touch "$venv/.installed-$PYCOBERTURA_VERSION"
fi
exec 9>&-
echo "LCOV=$(command -v lcov)"
echo "GENHTML=$(command -v genhtml)"
echo "PYCOBERTURA=$bin"
