# Shared by the sample scripts (sourced, not run): provisioning and the
# user's own program.

# Provisions the runtime (scripts/provision-dotnet.sh; CORPROF_RUNTIME picks
# it) and sets `host` (the dotnet host), `programs` (the built sample
# programs' directory) and `runtime_version` (Microsoft.NETCore.App's).
sample_provision() {
    local summary
    summary=$(bash scripts/provision-dotnet.sh) || exit 1
    host=$(printf '%s\n' "$summary" | sed -n 's/^DOTNET_HOST=//p' | tail -n 1)
    programs=$(printf '%s\n' "$summary" | sed -n 's/^E2E_PROGRAMS_DIR=//p' | tail -n 1)
    runtime_version=$(printf '%s\n' "$summary" | sed -n 's/^DOTNET_RUNTIME_VERSION=//p' | tail -n 1)
    [ -n "$host" ] && [ -n "$programs" ] && [ -n "$runtime_version" ] ||
        { echo "error: provisioning printed no DOTNET_HOST/E2E_PROGRAMS_DIR/DOTNET_RUNTIME_VERSION" >&2; exit 1; }
}

# The user's program: `sample_own_program PATH/App.dll` checks that it and
# the App.runtimeconfig.json that scripts/compile-csharp.sh writes beside it
# exist, and sets `dll` (absolute) and `config`.
sample_own_program() {
    [ -f "$1" ] || { echo "error: no such file: $1" >&2; exit 1; }
    dll="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
    config="${dll%.dll}.runtimeconfig.json"
    [ -f "$config" ] ||
        { echo "error: $config is missing: build the program with scripts/compile-csharp.sh, which writes it" >&2; exit 1; }
}
