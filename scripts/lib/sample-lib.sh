# Shared by the sample scripts (sourced, not run): provisioning and the
# user's own program.

# Points cargo at the offline dev-dependencies where there are some
# (scripts/provision/vendor-config.sh), provisions the runtime (scripts/provision/provision-dotnet.sh; CORPROF_RUNTIME picks
# it) and sets `host` (the dotnet host), `programs` (the built sample
# programs' directory) and `runtime_version` (Microsoft.NETCore.App's).
sample_provision() {
    local summary
    # The dev-dependencies offline where crates.io is out of reach (cargo
    # resolves them for any build of the examples).
    bash scripts/provision/vendor-config.sh 2>/dev/null || exit 1
    summary=$(bash scripts/provision/provision-dotnet.sh) || exit 1
    host=$(printf '%s\n' "$summary" | sed -n 's/^DOTNET_HOST=//p' | tail -n 1)
    programs=$(printf '%s\n' "$summary" | sed -n 's/^E2E_PROGRAMS_DIR=//p' | tail -n 1)
    runtime_version=$(printf '%s\n' "$summary" | sed -n 's/^DOTNET_RUNTIME_VERSION=//p' | tail -n 1)
    [ -n "$host" ] && [ -n "$programs" ] && [ -n "$runtime_version" ] ||
        { echo "error: provisioning printed no DOTNET_HOST/E2E_PROGRAMS_DIR/DOTNET_RUNTIME_VERSION" >&2; exit 1; }
}

# The user's program: `sample_own_program PATH/App.dll` checks that it and
# the App.runtimeconfig.json that scripts/samples/compile-csharp.sh writes beside it
# exist, and sets `dll` (absolute) and `config`.
sample_own_program() {
    [ -f "$1" ] || { echo "error: no such file: $1" >&2; exit 1; }
    dll="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
    config="${dll%.dll}.runtimeconfig.json"
    [ -f "$config" ] ||
        { echo "error: $config is missing: build the program with scripts/samples/compile-csharp.sh, which writes it" >&2; exit 1; }
}

# The web app of tests/e2e/roslyn/WebApp started on a free port of
# 127.0.0.1: `webapp_start LABEL OUT ERR [VAR=VALUE...]` runs
# "$app_dir/WebApp.dll" with the host "$host" and the given environment,
# its output in OUT and errors in ERR, and waits (at most 60 s) for its
# `ready http://127.0.0.1:PORT` line; sets `server_pid` and `port`. Needs a
# `die` function; LABEL names the run in its messages.
webapp_start() {
    local label=$1 out=$2 err=$3 i
    shift 3
    env DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 "$@" \
        "$host" exec --runtimeconfig "$app_dir/WebApp.runtimeconfig.json" "$app_dir/WebApp.dll" 0 \
        >"$out" 2>"$err" &
    server_pid=$!
    port=
    for i in $(seq 600); do
        port=$(sed -n 's/^ready http:\/\/127\.0\.0\.1:\([0-9]*\)$/\1/p' "$out")
        [ -z "$port" ] || break
        kill -0 "$server_pid" 2>/dev/null || die "$label: the server exited before it was ready: $(tail -n 5 "$err")"
        sleep 0.1
    done
    [ -n "$port" ] || die "$label: no ready line in 60 s"
}
