# Shared by scripts/provision-dotnet.sh and scripts/compile-csharp.sh (sourced,
# not run): how a C# file is compiled against a .NET runtime's own assemblies
# and given its runtimeconfig.json. The caller defines die, say and logged.

# Assemblies of the runtime every program is compiled against. mcs needs the
# assembly that defines System.Object (System.Private.CoreLib) passed
# explicitly; the others are the runtime's facades and implementations of the
# public surface the programs use. Unused ones leave no reference behind.
CSHARP_DEFAULT_REFS=(
    System.Private.CoreLib System.Runtime System.Runtime.Extensions System.Console
    System.IO.FileSystem System.Collections System.Linq System.Threading
    System.Threading.Thread System.Runtime.Loader System.Reflection
)

# Sets CSHARP_COMPILER (a command array) and CSHARP_COMPILER_ID for a host:
# in sdk mode the SDK's own Roslyn (csc.dll), else Mono's mcs (Debian package
# mono-mcs, installed with apt-get when missing and running as root).
#   csharp_pick_compiler MODE DOTNET_HOST
csharp_pick_compiler() {
    local mode="$1" host="$2"
    CSHARP_COMPILER=()
    CSHARP_COMPILER_ID=
    if [ "$mode" = sdk ]; then
        local sdk_line sdk_version sdk_base csc
        sdk_line="$("$host" --list-sdks | sort -V | tail -n 1)"
        sdk_version="${sdk_line%% *}"
        sdk_base="${sdk_line#*[}"
        sdk_base="${sdk_base%]}"
        csc="$sdk_base/$sdk_version/Roslyn/bincore/csc.dll"
        if [ -f "$csc" ]; then
            CSHARP_COMPILER=("$host" exec "$csc" -nologo)
            CSHARP_COMPILER_ID="roslyn $sdk_version"
        fi
    fi
    if [ ${#CSHARP_COMPILER[@]} -eq 0 ]; then
        if ! command -v mcs >/dev/null 2>&1; then
            if [ "$(id -u)" -ne 0 ]; then
                die "the C# compiler mcs is missing and this is not root: run 'sudo apt-get install -y mono-mcs' and retry"
            fi
            command -v apt-get >/dev/null 2>&1 || die "the C# compiler mcs is missing and there is no apt-get to install mono-mcs with"
            say "installing mono-mcs with apt-get"
            logged env DEBIAN_FRONTEND=noninteractive apt-get update -q || die "apt-get update failed"
            logged env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends mono-mcs ||
                die "apt-get install mono-mcs failed"
            command -v mcs >/dev/null 2>&1 || die "mono-mcs was installed but mcs is still not on PATH"
        fi
        # 7.2: `in` parameters and readonly structs (calltarget/ uses them).
        CSHARP_COMPILER=("$(command -v mcs)" -langversion:7.2)
        CSHARP_COMPILER_ID="$(mcs --version 2>&1 | head -n 1)"
    fi
}

# The target framework moniker of a runtime version (netcoreapp3.1, net5.0).
csharp_tfm() {
    case "$1" in
        1.* | 2.* | 3.*) echo "netcoreapp${1%.*}" ;;
        *) echo "net$(echo "$1" | cut -d. -f1-2)" ;;
    esac
}

# The -r: arguments for the runtime in DIR: the default assemblies plus the
# named extra ones (without .dll), one per line; fails on a missing one.
#   csharp_refs RUNTIME_DIR [EXTRA...]
csharp_refs() {
    local dir="$1" r
    shift
    for r in "${CSHARP_DEFAULT_REFS[@]}" "$@"; do
        [ -f "$dir/$r.dll" ] || { echo "the runtime has no $r.dll in $dir" >&2; return 1; }
        echo "-r:$dir/$r.dll"
    done
}

# Compiles SOURCES into OUT (a .dll) with CSHARP_COMPILER, against REFS
# (-r:... arguments), writing the compiler's output to LOG.
#   csharp_compile exe|library OUT LOG REFS... -- SOURCES...
csharp_compile() {
    local target="$1" out="$2" log="$3"
    shift 3
    local refs=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        refs+=("$1")
        shift
    done
    shift
    "${CSHARP_COMPILER[@]}" -nostdlib -noconfig "-target:$target" "-out:$out" "${refs[@]}" "$@" >"$log" 2>&1
}

# Writes the runtimeconfig.json that lets `dotnet NAME.dll` run a program on
# the given runtime.
#   csharp_runtimeconfig FILE RUNTIME_VERSION
csharp_runtimeconfig() {
    cat >"$1" <<JSON
{
  "runtimeOptions": {
    "tfm": "$(csharp_tfm "$2")",
    "framework": {
      "name": "Microsoft.NETCore.App",
      "version": "$2"
    }
  }
}
JSON
}
