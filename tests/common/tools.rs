//! Microsoft's diagnostics tools (`dotnet-trace`, `dotnet-counters`),
//! installed pinned into `.cache/tools` with `dotnet tool install` when
//! missing (never skipped: a tool that cannot be installed fails the test).

// Every test crate includes `common`; only some run Microsoft's tools.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;

use super::dotnet;

/// The version of `dotnet-trace` and `dotnet-counters` the tests use.
pub(crate) const VERSION: &str = "10.0.750501";

/// `.cache/tools/<name>`, installed at [`VERSION`] unless its stamp says it
/// is. Test binaries running at once take `.cache/tools.lock` (as
/// `scripts/provision/install-coverage-readers.sh` does) around the check and the
/// install.
pub(crate) fn dotnet_tool(name: &str) -> PathBuf {
    let tools = dotnet::repo_root().join(".cache/tools");
    std::fs::create_dir_all(&tools).unwrap();
    let script = r#"
        set -e
        if [ ! -e "$1/.$2-$3" ]; then
            dotnet tool uninstall --tool-path "$1" "$2" >/dev/null 2>&1 || true
            dotnet tool install --tool-path "$1" "$2" --version "$3"
            : > "$1/.$2-$3"
        fi
    "#;
    let out = Command::new("flock")
        .arg(tools.parent().unwrap().join("tools.lock"))
        .args(["sh", "-c", script, "sh"])
        .arg(&tools)
        .args([name, VERSION])
        .env("DOTNET_CLI_TELEMETRY_OPTOUT", "1")
        .env("DOTNET_NOLOGO", "1")
        .output()
        .unwrap_or_else(|e| panic!("flock (util-linux) for dotnet tool install {name}: {e}"));
    assert!(
        out.status.success(),
        "dotnet tool install {name} {VERSION}: {}\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    tools.join(name)
}
