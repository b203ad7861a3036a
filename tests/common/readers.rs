//! The independent readers of profiles (Go's pprof, speedscope), installed
//! once per test binary by scripts/provision/install-profile-readers.sh (never
//! skipped: what cannot be installed fails the test).

// Every test crate includes `common`; only some read profiles.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// A `summary.txt` of the examples (`key=value` lines) as a map.
pub(crate) fn summary(path: &Path) -> std::io::Result<BTreeMap<String, String>> {
    Ok(std::fs::read_to_string(path)?
        .lines()
        .filter_map(|line| line.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect())
}

/// The sampler's period files in `dir` (`profile-*.pb.gz`), in name order
/// (their names start with the period's start time).
pub(crate) fn period_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_str().unwrap();
            name.starts_with("profile-") && name.ends_with(".pb.gz")
        })
        .collect();
    files.sort();
    files
}

/// `go tool pprof ARGS`'s standard output (the readers installed first).
pub(crate) fn go_pprof(args: &[&str]) -> String {
    readers();
    let out = Command::new("go")
        .args(["tool", "pprof"])
        .args(args)
        .env("HOME", env!("CARGO_TARGET_TMPDIR"))
        .output()
        .expect(
            "go is not installed: install Debian's golang-go (scripts/provision/install-profile-readers.sh)",
        );
    assert!(
        out.status.success(),
        "go tool pprof {args:?}:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Installs the readers once (Go, speedscope); returns speedscope's
/// index.html.
pub(crate) fn readers() -> &'static Path {
    static INDEX: OnceLock<PathBuf> = OnceLock::new();
    INDEX.get_or_init(|| {
        let out = Command::new("bash")
            .arg("scripts/provision/install-profile-readers.sh")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("bash");
        assert!(
            out.status.success(),
            "scripts/provision/install-profile-readers.sh failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        PathBuf::from(
            text.lines()
                .find_map(|l| l.strip_prefix("SPEEDSCOPE_INDEX="))
                .expect("SPEEDSCOPE_INDEX"),
        )
    })
}
