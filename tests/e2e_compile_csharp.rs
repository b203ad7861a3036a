//! `scripts/samples/compile-csharp.sh`: a user's own C# file, built by the .NET
//! SDK's Roslyn as an SDK project for the runtime `CORPROF_RUNTIME` picks,
//! runs on that runtime (see docs/e2e.md, "Your own C# program").

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
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/samples/compile-csharp.sh"))
        .args(args)
        .output()
        .expect("run bash scripts/samples/compile-csharp.sh")
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
    // The runtimeconfig names the provisioned runtime's exact version and
    // the target framework the program was built for.
    let config = fs::read_to_string(out.join("Greeter.runtimeconfig.json")).unwrap();
    assert!(
        config.contains(&format!("\"version\": \"{}\"", runtime.version)),
        "{config}"
    );
    assert!(
        config.contains(&format!("\"tfm\": \"{}\"", runtime.target_framework)),
        "{config}"
    );
    assert!(
        out.join("Greeter.pdb").is_file(),
        "a portable PDB beside it"
    );
    assert!(
        stderr.contains(&format!("for .NET {}", runtime.version)),
        "{stderr}"
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
    assert!(
        stderr.contains("C# compilation failed (the .NET SDK's Roslyn"),
        "{stderr}"
    );
    assert!(!out.join("Broken.runtimeconfig.json").exists());
}

#[test]
fn current_csharp_compiles_for_every_runtime() {
    // The SDK's Roslyn at LangVersion latest, whatever the target framework
    // (netcoreapp3.1 too): a local function (C# 7), a switch expression (8),
    // a file-scoped namespace (10), a raw string literal (11), a primary
    // constructor and a collection expression (12). None needs a type the
    // 3.1 reference assemblies lack.
    let runtime = dotnet::runtime();
    assert!(
        runtime.compiler.starts_with("roslyn"),
        "{}",
        runtime.compiler
    );
    let dir = scratch("modern");
    let source = dir.join("Modern.cs");
    fs::write(
        &source,
        r#"namespace Modern;

public class Counter(int start)
{
    public int Next() => start + 1;
}

public static class Program
{
    public static int Main()
    {
        int Twice(int x) { return 2 * x; }
        int[] values = [1, 2, 3];
        var size = values.Length switch { 3 => "three", _ => "other" };
        var raw = """raw "quoted" text""";
        System.Console.WriteLine($"{Twice(21)} {size} {raw} {new Counter(6).Next()}");
        return 4;
    }
}
"#,
    )
    .unwrap();
    let out = dir.join("out");
    let built = compile(&[&source, &out]);
    let stderr = String::from_utf8_lossy(&built.stderr);
    assert!(built.status.success(), "{stderr}");
    let run = Command::new(&runtime.host)
        .arg(out.join("Modern.dll"))
        .env("DOTNET_SYSTEM_GLOBALIZATION_INVARIANT", "1")
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(4), "{run:?}");
    assert_eq!(
        String::from_utf8_lossy(&run.stdout),
        "42 three raw \"quoted\" text 7\n"
    );
}

#[test]
fn bad_arguments_are_refused_with_the_usage() {
    let built = compile(&[Path::new("only-one-argument.cs")]);
    assert!(!built.status.success());
    assert!(String::from_utf8_lossy(&built.stderr).contains("usage: compile-csharp.sh"));
}
