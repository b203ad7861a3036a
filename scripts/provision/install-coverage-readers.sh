#!/usr/bin/env bash
# Installs the independent readers the coverage tests check corprof's
# reports with (tests/e2e_coverage.rs): Debian's lcov (`lcov --summary`,
# `genhtml`) and ReportGenerator, the tool .NET users read Cobertura with
# (the NuGet tool dotnet-reportgenerator-globaltool, installed with the .NET
# SDK under .cache/tools). Prints LCOV=, GENHTML= and REPORTGENERATOR=
# lines. Never skipped: what cannot be installed is an error.
set -euo pipefail
cd "$(dirname "$0")/../.."

REPORTGENERATOR_VERSION=5.6.0
die() { echo "install-coverage-readers: error: $*" >&2; exit 1; }
say() { echo "install-coverage-readers: $*" >&2; }
# shellcheck source=scripts/lib/install-lib.sh
. scripts/lib/install-lib.sh

mkdir -p target .cache
missing=()
command -v lcov >/dev/null 2>&1 || missing+=(lcov)
command -v genhtml >/dev/null 2>&1 || missing+=(lcov)
install_apt_packages target/apt-coverage-readers.log "${missing[@]}"
lcov --version >/dev/null 2>&1 || die "lcov is installed but does not run"

command -v dotnet >/dev/null 2>&1 || die "the .NET SDK is not installed (dotnet tool install needs it)"
tools=.cache/tools
bin="$PWD/$tools/reportgenerator"
exec 9>.cache/tools.lock
flock 9
if [ ! -f "$tools/.reportgenerator-$REPORTGENERATOR_VERSION" ] || ! "$bin" -help >/dev/null 2>&1; then
    say "installing ReportGenerator $REPORTGENERATOR_VERSION (dotnet tool install) into $tools"
    rm -f "$tools/.reportgenerator-"*
    if [ -x "$bin" ]; then
        dotnet tool uninstall --tool-path "$tools" dotnet-reportgenerator-globaltool >/dev/null 2>&1 || true
    fi
    DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 dotnet tool install --tool-path "$tools" \
        dotnet-reportgenerator-globaltool --version "$REPORTGENERATOR_VERSION" >target/reportgenerator-install.log 2>&1 ||
        die "dotnet tool install dotnet-reportgenerator-globaltool $REPORTGENERATOR_VERSION failed (see target/reportgenerator-install.log)"
    "$bin" -help >/dev/null 2>&1 || die "ReportGenerator is installed but does not run"
    touch "$tools/.reportgenerator-$REPORTGENERATOR_VERSION"
fi
exec 9>&-
echo "LCOV=$(command -v lcov)"
echo "GENHTML=$(command -v genhtml)"
echo "REPORTGENERATOR=$bin"
