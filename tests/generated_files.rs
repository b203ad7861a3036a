//! Committed generated files must be exactly what their generators produce,
//! so nobody edits them by hand and a generator change is never forgotten.

use std::process::Command;

fn generate(args: &[&str]) -> String {
    let root = env!("CARGO_MANIFEST_DIR");
    let output = Command::new("python3")
        .args(args)
        .current_dir(root)
        .output()
        .expect("python3 is needed to check generated files");
    assert!(
        output.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// Formats Rust source the way `cargo fmt` formats the committed files.
fn rustfmt(source: &str) -> String {
    use std::io::Write;
    let mut child = Command::new("rustfmt")
        .args(["--edition", "2021", "--emit", "stdout"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("rustfmt is needed to check generated files");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(source.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "rustfmt failed");
    String::from_utf8(output.stdout).unwrap()
}

fn committed(path: &str) -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

#[test]
fn split_macro_is_generated() {
    assert!(
        rustfmt(&generate(&["scripts/gen/gen-split-macro.py"])) == committed("src/com/split.rs"),
        "src/com/split.rs is stale: run `python3 scripts/gen/gen-split-macro.py > src/com/split.rs`"
    );
}

#[test]
fn scale_tests_are_generated() {
    for (args, path) in [
        (
            ["scripts/gen/gen-scale.py", "methods", "200", "--test"],
            "tests/scale_methods_200.rs",
        ),
        (
            ["scripts/gen/gen-scale.py", "chain", "12", "--test"],
            "tests/scale_chain_12.rs",
        ),
    ] {
        assert!(
            rustfmt(&generate(&args)) == committed(path),
            "{path} is stale: run `python3 {}` > {path}",
            args.join(" ")
        );
    }
}
