//! The shell scripts parse, and no file carries a merge's conflict
//! markers: a script that CI does not run (a benchmark, a sample) is
//! otherwise first found broken by its user. `bash -n` reads a script
//! without running it.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository's root.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every file under `dir`, but in the directories of builds, caches and
/// vendored crates.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if path.is_dir() {
            // (`bin` and `obj` of the C# projects are build outputs;
            // `src/bin` is the CLI's source.)
            let built = matches!(name.as_ref(), "bin" | "obj") && !dir.ends_with("src");
            let skipped = matches!(
                name.as_ref(),
                "target" | ".cache" | ".git" | "vendor" | "node_modules" | "logs"
            );
            if !built && !skipped {
                files(&path, out);
            }
        } else {
            out.push(path);
        }
    }
}

#[test]
fn every_shell_script_parses() {
    let mut all = Vec::new();
    files(&root().join("scripts"), &mut all);
    let mut scripts: Vec<PathBuf> = all
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "sh"))
        .collect();
    scripts.push(root().join(".ci").join("run"));
    scripts.sort();
    // The precondition: the scripts are there (the test bench's among them).
    assert!(
        scripts.len() >= 20,
        "only {} scripts found under scripts/",
        scripts.len()
    );
    assert!(scripts.iter().any(|p| p.ends_with("bench/bench-web.sh")));
    let broken: Vec<String> = scripts
        .iter()
        .filter_map(|script| {
            let out = Command::new("bash")
                .arg("-n")
                .arg(script)
                .output()
                .unwrap_or_else(|e| panic!("running bash -n: {e}"));
            (!out.status.success()).then(|| {
                format!(
                    "{}: {}",
                    script.display(),
                    String::from_utf8_lossy(&out.stderr).trim()
                )
            })
        })
        .collect();
    assert!(
        broken.is_empty(),
        "scripts that do not parse:\n{}",
        broken.join("\n")
    );
}

#[test]
fn no_file_carries_conflict_markers() {
    let mut all = Vec::new();
    files(&root(), &mut all);
    let mut marked = Vec::new();
    let mut read = 0;
    for path in &all {
        let Ok(text) = fs::read_to_string(path) else {
            continue; // not UTF-8 text
        };
        read += 1;
        for (n, line) in text.lines().enumerate() {
            if line.starts_with("<<<<<<< ") || line.starts_with(">>>>>>> ") {
                marked.push(format!("{}:{}: {line}", path.display(), n + 1));
            }
        }
    }
    assert!(read >= 100, "only {read} text files read");
    assert!(
        marked.is_empty(),
        "conflict markers:\n{}",
        marked.join("\n")
    );
}
