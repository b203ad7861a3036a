//! The README walk: every sample command of README.md's table, taken from
//! README.md itself (so that the two cannot drift), run in the table's
//! order from the repository's root as a user runs it, on the runtime
//! `CORPROF_RUNTIME` names. Each must exit with the code its script's header
//! documents (the program's own), end with its `NAME: ok: ...` line, and
//! the files it says it wrote must exist, be non-empty and open in their
//! readers (`go tool pprof`, `genhtml`, `lcov --summary`, speedscope's
//! JSON through `node`).

// The real-runtime harness (tests/common/dotnet.rs) is Unix only.
#![cfg(unix)]

mod common;

use common::dotnet;
use common::readers;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The sample commands of README.md's table, in order: `(script, command)`
/// for each `` `bash scripts/samples/NAME.sh [...]` `` whose arguments are
/// all optional (in brackets), the command being the script alone.
fn readme_samples(readme: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for line in readme.lines().filter(|l| l.starts_with('|')) {
        for cell in line.split('`').skip(1).step_by(2) {
            let Some(rest) = cell.strip_prefix("bash scripts/samples/") else {
                continue;
            };
            let (script, args) = rest.split_once(' ').unwrap_or((rest, ""));
            let args = args.trim();
            if !(args.is_empty() || (args.starts_with('[') && args.ends_with(']'))) {
                continue; // arguments a user must give (a PID)
            }
            let command = format!("bash scripts/samples/{script}");
            if !out.iter().any(|(_, c)| *c == command) {
                out.push((script.trim_end_matches(".sh").to_string(), command));
            }
        }
    }
    out
}

/// The exit code the script's header documents: its
/// `` `NAME: ok: ...; the program exited N` `` example.
fn documented_exit(script: &Path) -> i32 {
    let text = fs::read_to_string(script).unwrap();
    let at = text
        .find("; the program exited ")
        .unwrap_or_else(|| panic!("{} documents no exit code", script.display()));
    text[at + "; the program exited ".len()..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap_or_else(|_| panic!("{}: no number after 'the program exited'", script.display()))
}

fn non_empty(path: &Path) {
    let len = fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .len();
    assert!(len > 0, "{} is empty", path.display());
}

fn pprof_opens(path: &Path) {
    non_empty(path);
    let top = readers::go_pprof(&["-top", path.to_str().unwrap()]);
    assert!(top.contains("flat"), "{}: {top}", path.display());
}

fn speedscope_opens(path: &Path) {
    non_empty(path);
    readers::readers();
    let out = Command::new("node")
        .args([
            "-e",
            "const f = JSON.parse(require('fs').readFileSync(process.argv[1], 'utf8')); \
             if (!String(f['$schema']).includes('speedscope') || !(f.profiles.length > 0)) process.exit(3);",
        ])
        .arg(path)
        .output()
        .expect("node is not installed (scripts/provision/install-profile-readers.sh installs it)");
    assert!(
        out.status.success(),
        "{} is no speedscope file: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn lcov_opens(info: &Path, html: &Path) {
    non_empty(info);
    let tools = readers::coverage_readers();
    let out = Command::new(&tools["LCOV"])
        .args(["--rc", "lcov_branch_coverage=1", "--summary"])
        .arg(info)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "lcov --summary: {text}");
    assert!(
        text.contains("lines") && text.contains("branches") && !text.contains("no data found"),
        "lcov --summary: {text}"
    );
    readers::genhtml_clean(info, html);
}

/// The files of this run a script listed in `DIR/.NAME.files`.
fn listed(dir: &Path, name: &str) -> Vec<PathBuf> {
    let list = dir.join(format!(".{name}.files"));
    fs::read_to_string(&list)
        .unwrap_or_else(|e| panic!("{}: {e}", list.display()))
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| dir.join(l))
        .collect()
}

/// What each sample's outputs must be, checked by their readers.
fn check_outputs(name: &str, root: &Path, stderr: &str, scratch: &Path) {
    match name {
        "trace-sample" => assert!(
            stderr
                .lines()
                .any(|l| l.starts_with("jit: E2E.Basics.Program")),
            "{stderr}"
        ),
        "calltree-sample" => {
            let dir = root.join("target/calltree");
            for f in ["calls.folded", "time.folded", "flame.svg"] {
                non_empty(&dir.join(f));
            }
            pprof_opens(&dir.join("profile.pb.gz"));
        }
        "sampler-sample" => {
            let dir = root.join("target/sampler");
            for f in ["cpu.folded", "wall.folded", "flame.svg", "summary.txt"] {
                non_empty(&dir.join(f));
            }
            pprof_opens(&dir.join("profile.pb.gz"));
            speedscope_opens(&dir.join("speedscope.json"));
        }
        "coverage-sample" => {
            let dir = root.join("target/coverage");
            let infos: Vec<PathBuf> = listed(&dir, name)
                .into_iter()
                .filter(|p| p.extension().is_some_and(|e| e == "info"))
                .collect();
            assert_eq!(infos.len(), 1, "{infos:?}");
            lcov_opens(&infos[0], &scratch.join("coverage-html"));
            non_empty(&infos[0].with_extension("xml"));
        }
        // The attach and CallTarget samples write no file: their verdict
        // line is what they say.
        _ => {}
    }
}

#[test]
fn every_sample_command_of_the_readme_does_what_it_says() {
    let root = dotnet::repo_root();
    let runtime = dotnet::runtime();
    let readme = fs::read_to_string(root.join("README.md")).unwrap();
    let samples = readme_samples(&readme);
    let names: Vec<&str> = samples.iter().map(|(n, _)| n.as_str()).collect();
    // The table's six samples (profile-running.sh needs a PID: left out).
    assert_eq!(
        names,
        [
            "trace-sample",
            "attach-sample",
            "calltarget-sample",
            "calltree-sample",
            "sampler-sample",
            "coverage-sample"
        ],
        "README.md's table"
    );
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("e2e_readme")
        .join(format!("{}-{}", runtime.major(), std::process::id()));
    let _ = fs::remove_dir_all(&scratch);
    fs::create_dir_all(&scratch).unwrap();
    for (name, command) in &samples {
        let expected = documented_exit(&root.join(format!("scripts/samples/{name}.sh")));
        let mut cmd = Command::new("bash");
        cmd.args(["-c", command]).current_dir(&root);
        let run = dotnet::run_with_timeout(cmd, Duration::from_secs(600))
            .unwrap_or_else(|e| panic!("`{command}`: {e}"));
        let last = run.stderr.lines().last().unwrap_or("");
        assert!(
            last.starts_with(&format!("{name}: ok: ")),
            "`{command}`: last line {last:?}\n{}",
            run.describe()
        );
        assert_eq!(
            run.status.code(),
            Some(expected),
            "`{command}` (its header says {expected})\n{}",
            run.describe()
        );
        check_outputs(name, &root, &run.stderr, &scratch);
        eprintln!("e2e_readme: `{command}`: exit {expected}, {last}");
    }
}

#[test]
fn the_table_s_commands_are_read_as_a_user_reads_them() {
    let table = "| a | `bash scripts/samples/one.sh [App.dll]` | x |\n\
                 | b | `bash scripts/samples/two.sh PID SECONDS [DIR]` | y |\n\
                 | c | `bash scripts/samples/three.sh` and `corprof ps` | z |\n\
                 not a row `bash scripts/samples/four.sh`\n\
                 | d | `bash scripts/samples/one.sh [App.dll 'X']` | w |";
    assert_eq!(
        readme_samples(table),
        [
            ("one".to_string(), "bash scripts/samples/one.sh".to_string()),
            (
                "three".to_string(),
                "bash scripts/samples/three.sh".to_string()
            ),
        ]
    );
}
