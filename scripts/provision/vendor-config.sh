#!/usr/bin/env bash
# Points cargo at a vendor directory of the dev-dependencies when
# CORPROF_VENDOR_DIR names one, or when it is unset and `../shared/vendor`
# beside the checkout exists (a machine that cannot reach crates.io keeps its
# copy there; see docs/e2e.md, "Offline"), by writing the source replacement into
# .cargo/config.toml, the file that the project's cargo, the test fixtures'
# cargo and trybuild's own cargo (run inside target/) all read; `--config`
# flags would not reach trybuild. Without CORPROF_VENDOR_DIR it removes a
# file it wrote before, so that with crates.io reachable nothing changes.
# The file is not committed (.gitignore). Run by scripts/test.sh and by
# every sample script (scripts/lib/sample-lib.sh), so that the README's
# commands work on a fresh clone of such a machine.
#
#   CORPROF_VENDOR_DIR=/path/to/vendor bash scripts/provision/vendor-config.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

marker="# written by scripts/provision/vendor-config.sh from CORPROF_VENDOR_DIR"
config=.cargo/config.toml
# A file this script wrote starts with $marker (or, before scripts/ had
# folders, with the same line naming scripts/vendor-config.sh).
ours() { head -n 1 "$config" | grep -qE '^# written by scripts/(provision/)?vendor-config\.sh from CORPROF_VENDOR_DIR$'; }
die() { echo "vendor-config: error: $*" >&2; exit 1; }

if [ -z "${CORPROF_VENDOR_DIR:-}" ] && [ -d ../shared/vendor/trybuild ]; then
    CORPROF_VENDOR_DIR="$(cd ../shared/vendor && pwd)"
fi
if [ -z "${CORPROF_VENDOR_DIR:-}" ]; then
    if [ -f "$config" ] && ours; then
        rm -f "$config"
        rmdir .cargo 2>/dev/null || true
        echo "vendor-config: CORPROF_VENDOR_DIR is unset: removed $config (crates.io is used)" >&2
    fi
    exit 0
fi
vendor="$(cd "$CORPROF_VENDOR_DIR" 2>/dev/null && pwd)" || die "CORPROF_VENDOR_DIR=$CORPROF_VENDOR_DIR is not a directory"
[ -d "$vendor/trybuild" ] || die "$vendor holds no trybuild: it is not a \`cargo vendor\` of this crate's dev-dependencies"
if [ -f "$config" ] && ! ours; then
    die "$config exists and was not written by this script: add the source replacement for $vendor to it by hand (docs/e2e.md)"
fi
mkdir -p .cargo
tmp="$config.tmp.$$"
cat >"$tmp" <<TOML
$marker
[source.crates-io]
replace-with = "vendored-sources"

[source.vendored-sources]
directory = "$vendor"

[net]
offline = true
TOML
mv "$tmp" "$config"
echo "vendor-config: dev-dependencies from $vendor ($config)" >&2
