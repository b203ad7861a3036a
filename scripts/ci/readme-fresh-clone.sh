#!/usr/bin/env bash
# The README's main command on a fresh clone, before the test command has
# ever run there: the first command of the README's "Try it" section, taken
# from README.md itself, run in a new `git clone` of this checkout beside it
# (so that a machine's offline crate copy, ../shared/vendor, is found as a
# new user's clone finds it; CORPROF_VENDOR_DIR is unset for the run).
#
#   bash scripts/ci/readme-fresh-clone.sh
#
# Passes when the command exits with the sample program's own code, as the
# README says (42 for `Basics`), and the JIT tracer named the program's
# methods on stderr. The clone is removed afterwards; its .NET runtime comes
# from NuGet's global packages folder, so nothing is downloaded twice.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
die() { echo "readme-fresh-clone: error: $*" >&2; exit 1; }

cmd=$(awk '/^## Try it/ { on = 1; next } on && /^```sh$/ { code = 1; next } code { print; exit }' README.md)
[ -n "$cmd" ] || die "README.md has no \`\`\`sh block under \"## Try it\""
expected=$(tr '\n' ' ' <README.md |
    sed -n 's/.*exits with the program.s own exit code (\([0-9]*\) for the `Basics` sample).*/\1/p')
[ -n "$expected" ] || die "README.md no longer says which exit code \`$cmd\` gives"

clone="$(dirname "$root")/.corprof-fresh-clone.$$"
trap 'rm -rf "$clone"' EXIT
git clone -q --no-hardlinks "$root" "$clone"
# The clone holds the last commit: uncommitted changes are not in it.
echo "readme-fresh-clone: \`$cmd\` in a fresh clone ($(git -C "$clone" rev-parse --short HEAD))"
set +e
(cd "$clone" && env -u CORPROF_VENDOR_DIR bash -c "$cmd") >"$root/target/readme-fresh-clone.out" 2>"$root/target/readme-fresh-clone.err"
code=$?
set -e
[ "$code" = "$expected" ] || die "\`$cmd\` exited $code, the README says $expected; its stderr ends: $(tail -n 5 "$root/target/readme-fresh-clone.err")"
grep -q '^jit: E2E\.Basics\.Program' "$root/target/readme-fresh-clone.err" ||
    die "\`$cmd\` named no method of E2E.Basics.Program on stderr (target/readme-fresh-clone.err)"
echo "readme-fresh-clone: exit $code as the README says, $(grep -c '^jit: ' "$root/target/readme-fresh-clone.err") methods named"
