//! `scripts/compile-csharp.sh`: a user's own C# file, compiled with the
//! provisioned compiler against the provisioned runtime, runs on it (see
//! docs/e2e.md, "Your own C# program").

// The real-runtime harness (tests/common/dotnet.rs) is Unix only.
#![cfg(unix)]

mod common;

use common::dotnet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// An empty directory of this test's own.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("e2e_compile_csharp")
        .join(format!("{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("create the scratch dir");
    dir
}

fn compile(args: &[&Path]) -> Output {
    Command::new("bash")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/compile-csharp.sh"))
        .args(args)
        .output()
        .expect("run bash scripts/compile-csharp.sh")
}

#[test]
fn a_users_program_compiles_and_runs_on_the_provisioned_runtime() {
    let runtime = dotnet::runtime();
    let dir = scratch("program");
    let source = dir.join("Greeter.cs");
    fs::write(
        &source,
        "using System;\n\
         public static class Greeter {\n\
             public static int Main(string[] args) {\n\
                 Console.WriteLine(\"hello from C#, \" + args.Length + \" args, \" + Environment.Version);\n\
                 return 5;\n\
             }\n\
         }\n",
    )
    .unwrap();
    let out = dir.join("out");
    let built = compile(&[&source, &out]);
    let stderr = String::from_utf8_lossy(&built.stderr);
    assert!(built.status.success(), "{stderr}");
    let config = fs::read_to_string(out.join("Greeter.runtimeconfig.json")).unwrap();
    assert!(
        config.contains(&format!("\"version\": \"{}\"", runtime.version)),
        "{config}"
    );
    let run = Command::new(&runtime.host)
        .arg(out.join("Greeter.dll"))
        .args(["a", "b"])
        .env("DOTNET_SYSTEM_GLOBALIZATION_INVARIANT", "1")
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(5), "{run:?}");
    assert_eq!(
        String::from_utf8_lossy(&run.stdout),
        format!("hello from C#, 2 args, {}\n", runtime.version)
    );
}

#[test]
fn a_library_gets_no_runtimeconfig() {
    let dir = scratch("library");
    let source = dir.join("Lib.cs");
    fs::write(
        &source,
        "public static class Lib { public static int Two() { return 2; } }\n",
    )
    .unwrap();
    let out = dir.join("out");
    let built = compile(&[Path::new("--library"), &source, &out]);
    assert!(built.status.success(), "{built:?}");
    assert!(out.join("Lib.dll").is_file());
    assert!(!out.join("Lib.runtimeconfig.json").exists());
}

#[test]
fn a_compile_error_fails_with_the_compilers_message() {
    let dir = scratch("broken");
    let source = dir.join("Broken.cs");
    fs::write(
        &source,
        "public static class Broken { public static int Main() { return } }\n",
    )
    .unwrap();
    let out = dir.join("out");
    let built = compile(&[&source, &out]);
    let stderr = String::from_utf8_lossy(&built.stderr);
    assert!(!built.status.success(), "{stderr}");
    assert!(stderr.contains("Broken.cs"), "names the file: {stderr}");
    assert!(
        stderr.contains("error CS"),
        "the compiler's error: {stderr}"
    );
    assert!(stderr.contains("C# compilation failed"), "{stderr}");
    assert!(!out.join("Broken.runtimeconfig.json").exists());
}

#[test]
fn csharp_newer_than_mcs_knows_fails_with_a_note_on_the_language_level() {
    let dir = scratch("local-function");
    let source = dir.join("Local.cs");
    // A local function: C# 7.0, which Roslyn compiles and mcs does not.
    fs::write(
        &source,
        "public static class Local { public static int Main() {\n\
             int Twice(int x) { return 2 * x; }\n\
             return Twice(21);\n\
         } }\n",
    )
    .unwrap();
    let out = dir.join("out");
    let built = compile(&[&source, &out]);
    let stderr = String::from_utf8_lossy(&built.stderr);
    // The compiler in use: the success line does not name it, the failure
    // line does; provisioning picks Roslyn only with an SDK.
    if built.status.success() {
        assert!(!stderr.contains("note: mcs"), "{stderr}");
    } else {
        assert!(
            stderr.contains("C# compilation failed (Mono C# compiler"),
            "only mcs may refuse a local function: {stderr}"
        );
        assert!(stderr.contains("error CS"), "{stderr}");
        assert!(
            stderr.contains("note: mcs knows C# 6 and part of C# 7")
                && stderr.contains("local functions"),
            "{stderr}"
        );
    }
}

#[test]
fn bad_arguments_are_refused_with_the_usage() {
    let built = compile(&[Path::new("only-one-argument.cs")]);
    assert!(!built.status.success());
    assert!(String::from_utf8_lossy(&built.stderr).contains("usage: compile-csharp.sh"));
}
