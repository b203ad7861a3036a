# Shared by the scripts that measure profilers under callgrind
# (scripts/ci/perf-guard.sh, scripts/bench/bench-runtime.sh): the profilers' CLSIDs,
# which functions each measurement collects in (`--toggle-collect`), and the
# helpers that provision the runtime, locate cargo's artifacts and read a
# callgrind file. Source it from bash after `cd` to the repository root;
# `die` must be defined by the caller (install_apt_packages, from
# scripts/lib/install-lib.sh, installs valgrind where it is missing).
#
# Counting only inside named functions needs those functions to have ELF
# symbol sizes: the crate's x86-64 trampolines and the C floor's assembly
# hooks declare `.type`/`.size` for that reason.

# shellcheck source=scripts/lib/install-lib.sh
. scripts/lib/install-lib.sh

JIT_TRACER_CLSID="{DF63A541-5A33-4611-8829-F4E495985EE3}"
C_TRACER_CLSID="{8C2E3B0A-5D1F-4E7A-9B6C-3F1A2D4E5B60}"
NOTHING_CLSID="{6D2A9E41-0B7C-4F35-8E16-C94A2B7D3F58}"
FLOOR_CLSID="{5A0F3B21-9C4E-4D7A-B12E-6F8D3C5B7A90}"

# The JITCompilationStarted handler of examples/jit_tracer.rs (the exporter's
# thunk, inclusive of everything it calls) and of benches/jit_tracer.c.
CG_RUST_JIT_HANDLER=(--toggle-collect='*VTABLE::JITCompilationStarted')
CG_C_JIT_HANDLER=(--toggle-collect=callback_jit_compilation_started)
# The hook path: the crate's fast-path trampolines (src/profiling/elt/
# x86_64_sysv.rs, inclusive of the Rust targets they call), and the two
# floors of scripts/bench/bench-hooks-floor.c.
CG_RUST_HOOKS=(--toggle-collect=corprof_elt_enter3 --toggle-collect=corprof_elt_leave3
    --toggle-collect=corprof_elt_tailcall3)
# With enter hooks only, the JIT calls the runtime's default stub (one
# `ret`) where no hook is installed: count it too.
CG_RUST_ENTER_ONLY_HOOKS=("${CG_RUST_HOOKS[@]}" --toggle-collect=JIT_ProfilerEnterLeaveTailcallStub)
CG_FLOOR_SAVING_HOOKS=(--toggle-collect=floor_enter_saving --toggle-collect=floor_leave_saving)
CG_FLOOR_BARE_HOOKS=(--toggle-collect=enter3 --toggle-collect=leave3 --toggle-collect=tailcall3)

# Runs scripts/provision/provision-dotnet.sh and sets DOTNET_HOST,
# DOTNET_RUNTIME_VERSION, E2E_PROGRAMS_DIR, CORPROF_DOTNET_MODE and
# DOTNET_RUNTIME_DIR from the KEY=VALUE lines it prints. The guards' figures
# were measured on .NET Core 3.1, so CORPROF_RUNTIME defaults to 3.1 here
# (not to provision-dotnet.sh's 10.0).
cg_provision() {
    local out key value
    out=$(CORPROF_RUNTIME="${CORPROF_RUNTIME:-3.1}" bash scripts/provision/provision-dotnet.sh) ||
        die "provisioning failed; see .cache/provision-dotnet.log"
    DOTNET_HOST="" DOTNET_RUNTIME_VERSION="" E2E_PROGRAMS_DIR="" CORPROF_DOTNET_MODE="" DOTNET_RUNTIME_DIR=""
    while IFS='=' read -r key value; do
        case "$key" in
            DOTNET_HOST | DOTNET_RUNTIME_VERSION | E2E_PROGRAMS_DIR | CORPROF_DOTNET_MODE | DOTNET_RUNTIME_DIR)
                printf -v "$key" '%s' "$value" ;;
        esac
    done <<<"$out"
    [ -x "$DOTNET_HOST" ] || die "provisioning printed no usable DOTNET_HOST"
}

# The shared library cargo reported for target $2 in the JSON messages $1.
cg_cargo_library() {
    python3 -c 'import json, sys
name = sys.argv[1]
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == name:
        for f in m["filenames"]:
            if f.endswith((".so", ".dylib", ".dll")):
                print(f)' "$2" <<<"$1"
}

# The instructions a callgrind file collected (its `summary:` line).
cg_total() {
    awk '/^summary:/ { print $2; found = 1 } END { if (!found) exit 1 }' "$1" \
        || die "$1 is not a callgrind output file"
}

# Instructions per method inside a JIT handler: the callgrind file $1 of a
# run with one of the CG_*_JIT_HANDLER toggles, the profiler's library
# file name $2, the number of methods it named $3, a label $4. Prints the
# figure; the full breakdown (scripts/bench/callgrind-breakdown.py's JSON lines)
# is left in $1.json.
cg_handler_per_method() {
    python3 scripts/bench/callgrind-breakdown.py "$1" "$2" "$3" "$4" >"$1.json" \
        || die "scripts/bench/callgrind-breakdown.py failed on $1"
    python3 -c 'import json, sys
first = json.loads(open(sys.argv[1]).readline())
print("%.2f" % first["ir"])' "$1.json"
}
