#!/usr/bin/env bash
# The one test command (README and .ci/run call exactly this). It installs
# what the tests need, then runs every check; any failure fails the run. A
# leg that needs what rustup cannot fetch on this machine (Miri, the MSRV,
# other targets) says so in one line and is listed again after the summary.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step says when it starts, in minutes and seconds since the run began
# (CI's budget is 60 minutes: the figures show which step costs what).
step() { printf '\n==> [%dm%02ds] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }
log=target/test-results.log
mkdir -p target && : > "$log"
# Runs a test command, keeping its "test result:" lines for the summary.
tests() { "$@" 2>&1 | tee -a "$log"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

step "dev-dependencies: crates.io, or the vendor directory CORPROF_VENDOR_DIR names (scripts/provision/vendor-config.sh)"
bash scripts/provision/vendor-config.sh

step "toolchain components (rustfmt, clippy, nightly miri)"
command -v cargo >/dev/null || die "cargo is not installed; install Rust with rustup first"
rustup component add rustfmt clippy >/dev/null 2>&1 || die "could not install rustfmt/clippy with rustup"
# A leg needing what rustup cannot fetch here says so in one line, kept in
# $LEGS_NOT_RUN and repeated after the summary (scripts/lib/install-lib.sh).
# shellcheck source=scripts/lib/install-lib.sh
. scripts/lib/install-lib.sh
: > "$LEGS_NOT_RUN"
# Miri, or where rustup cannot fetch it, AddressSanitizer (the last step).
miri=no
if miri_available "Miri (64-bit; its tests run under AddressSanitizer instead)"; then
    cargo +nightly miri setup >/dev/null 2>&1 || die "cargo +nightly miri setup failed"
    miri=yes
fi

step ".NET: every runtime of tests/e2e/runtimes.props from Microsoft's runtime packs (NuGet), and the test programs built for each by the .NET SDK (scripts/provision/provision-dotnet.sh)"
# Needs the .NET SDK 10 on PATH; never skipped.
runtimes=$(sed -n 's/.*<CorprofRuntime Include="\([^"]*\)".*/\1/p' tests/e2e/runtimes.props)
for r in $runtimes; do
    CORPROF_RUNTIME=$r bash scripts/provision/provision-dotnet.sh >/dev/null || die "provisioning CORPROF_RUNTIME=$r failed"
done

step "the README's main command on a fresh clone, before any test command ran there (scripts/ci/readme-fresh-clone.sh)"
bash scripts/ci/readme-fresh-clone.sh

step "headless Chromium for the flame-graph rendering test (tests/e2e_hooks.rs)"
command -v chromium >/dev/null || install_apt_packages target/apt-chromium.log chromium
chromium --version >/dev/null 2>&1 || die "chromium is installed but does not run"

step "profile readers: Go's pprof, gzip, protoc and speedscope (tests/profile_formats.rs, tests/e2e_sampler.rs, tests/otlp_export.rs)"
bash scripts/provision/install-profile-readers.sh >/dev/null

step "coverage readers: Debian's lcov (lcov --summary, genhtml) and ReportGenerator (dotnet tool; tests/e2e_coverage.rs)"
bash scripts/provision/install-coverage-readers.sh >/dev/null

step "rustfmt"
cargo fmt --all -- --check

step "clippy (all targets, -D warnings; default and no-default features)"
cargo clippy --all-targets -- -D warnings
cargo clippy --lib --no-default-features -- -D warnings

step "Cargo features: each alone and all together, clippy and the MSRV build (scripts/ci/check-features.sh)"
bash scripts/ci/check-features.sh

step "no_std build (a #![no_std] crate using corprof without std)"
cargo build --lib --no-default-features
cargo build --manifest-path tests/no_std_crate/Cargo.toml --target-dir target/no_std_crate

step "macro hygiene (a Rust 2015 crate whose name \`core\` is another crate expands every macro)"
cargo build --manifest-path tests/edition2015_crate/Cargo.toml --target-dir target/edition2015_crate

step "portability: MSRV build, 32-bit Miri, ui tests on the pinned Rust (scripts/ci/check-portability.sh msrv miri32 ui)"
bash scripts/ci/check-portability.sh msrv miri32 ui
# The other targets' `cargo check` (check-portability.sh targets) builds
# seven standard libraries with -Zbuild-std where rustup cannot fetch them:
# over CI's 60 minutes with the Windows and AArch64 legs (docs/e2e.md).
# Where rustup has the targets (no standard library to build), it runs.
if rustup target list --installed 2>/dev/null | grep -q aarch64-apple-darwin; then
    bash scripts/ci/check-portability.sh targets
else
    leg_unavailable "cross-target checks (scripts/ci/check-portability.sh targets)" \
        "seven standard libraries built with -Zbuild-std here, over CI's budget; run it by hand"
fi

step "Windows x64 under Wine: unit and no-runtime tests, and the e2e suites on the Windows CoreCLR 10.0.15 and 11.0.0 (scripts/ci/test-windows.sh)"
bash scripts/ci/test-windows.sh

step "AArch64: unit tests, the integration tests that need no runtime and the trampolines, under qemu-user (scripts/ci/test-aarch64.sh)"
bash scripts/ci/test-aarch64.sh

step "rustdoc (-D warnings), and as docs.rs builds it (nightly, all features, --cfg docsrs: each gated item names its feature)"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps
RUSTDOCFLAGS="--cfg docsrs -D warnings" cargo +nightly doc --no-deps --all-features --target-dir target/docsrs
for feature in $(sed -n '/^\[features\]/,/^\[/{s/^\([a-z_]*\) *=.*/\1/p}' Cargo.toml | grep -v '^default$'); do
    grep -q "Available on crate feature \`$feature\` only" target/docsrs/doc/corprof/index.html \
        || die "docs.rs build: the crate index does not say which items need the feature \`$feature\`"
done

# Every e2e suite runs on 3.1 (the oldest, with everything else), on 10.0
# (the LTS users run) and on 11.0; on 8.0 and 9.0 (out of Microsoft's
# support since November 2026) the suites whose paths differ by runtime
# version: the harness, the sampler (GCAllocationTick before 10), memory
# (the heap walk from 9), CallTarget (ReJIT of ReadyToRun code) and, on 9.0,
# services (attach and heap snapshots) (docs/e2e.md, "Runtimes").
step "tests: unit, integration, compile-fail (ui-tests/), end-to-end on CoreCLR 3.1, doc"
# (e2e_coverlet's test host cannot run on 3.1: with CORPROF_RUNTIME=3.1 it
# runs on 10.0, what the 10.0 step runs again: left out here.)
# The README walk (tests/e2e_readme.rs) runs on 10.0 and 11.0, the steps below.
CORPROF_RUNTIME=3.1 tests cargo test --all-targets -- --skip corprof_and_coverlet_agree_on_an_xunit_run \
    --skip every_sample_command_of_the_readme_does_what_it_says
tests cargo test --doc

for r in 10.0 11.0; do
    step "end-to-end on CoreCLR $r: every e2e suite again (CORPROF_RUNTIME=$r)"
    CORPROF_RUNTIME=$r tests cargo test --test 'e2e_*'
done

E2E_OLDER=(--test e2e_runtime --test e2e_sampler --test e2e_memory --test e2e_calltarget)
step "end-to-end on CoreCLR 8.0: the harness, sampler, memory and CallTarget suites"
CORPROF_RUNTIME=8.0 tests cargo test "${E2E_OLDER[@]}"
step "end-to-end on CoreCLR 9.0: the harness, sampler, memory, CallTarget and services suites"
CORPROF_RUNTIME=9.0 tests cargo test "${E2E_OLDER[@]}" --test e2e_services

step "the sampler's end-to-end tests in the other sampling mode (suspend-runtime; signal is the default here), on 10.0"
CORPROF_SAMPLER_MODE=suspend-runtime CORPROF_RUNTIME=10.0 tests cargo test --test e2e_sampler

step "performance guard: callgrind instruction counts against the C baselines (scripts/ci/perf-guard.sh; installs valgrind)"
# On 3.1, the runtime its figures were written on (docs/performance.md).
CORPROF_RUNTIME=3.1 bash scripts/ci/perf-guard.sh

if [ "$miri" = yes ]; then
    step "Miri: the COM core, the exporter under threads, the facade adapter, the declarations"
    MIRIFLAGS="${MIRIFLAGS:--Zmiri-strict-provenance}" tests cargo +nightly miri test "${MIRI_TESTS[@]}"
else
    step "AddressSanitizer and LeakSanitizer, in place of Miri: its tests, after canaries (scripts/ci/check-sanitizer.sh)"
    tests bash scripts/ci/check-sanitizer.sh
fi

echo
if [ -s "$LEGS_NOT_RUN" ]; then
    echo "legs not run here (rustup cannot fetch what they need): $(wc -l <"$LEGS_NOT_RUN")"
    cat "$LEGS_NOT_RUN"
fi
awk '/^test result:/ { passed += $4; failed += $6 } END { printf "all checks passed\ntests: %d passed, %d failed\n", passed, failed }' "$log"
echo "took $((SECONDS / 60))m$((SECONDS % 60))s"
