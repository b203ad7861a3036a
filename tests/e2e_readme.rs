//! The README walk: every sample command of README.md's table, taken from
//! README.md itself (so that the two cannot drift), run in the table's
//! order from the repository's root as a user runs it, on the runtime
//! `CORPROF_RUNTIME` names. Each must exit with the code its script's header
//! documents (the program's own), end with its `NAME: ok: ...` line, and
//! the files it says it wrote must exist, be non-empty and open in their
//! readers (`go tool pprof`, `genhtml`, `lcov --summary`, speedscope's
//! JSON through `node`). The sampler sample runs twice (the second time
//! with the README's heap-snapshot setting): the README's `go tool pprof`
//! lines read the last run only. `profile-running.sh PID SECONDS [DIR]`
//! runs on a program the walk starts. What the walk does not run is
//! marked in the README (`<!-- readme-walk: not run: REASON -->`).

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

/// The exit code a text documents for the sample NAME: the number of its
/// first `` `NAME: ok: ...; the program exited N` `` example.
fn exit_in(text: &str, name: &str) -> Option<i32> {
    let marker = format!("{name}: ok: ");
    let at = text.find(&marker)?;
    let rest = &text[at..];
    let end = rest.find('`').unwrap_or(rest.len());
    let example = &rest[..end];
    let code = example.split("; the program exited ").nth(1)?;
    code.chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .ok()
}

/// The exit code the script's header documents, which the README's own
/// example (when it gives one) must agree with.
fn documented_exit(script: &Path, name: &str, readme: &str) -> i32 {
    let text = fs::read_to_string(script).unwrap();
    let header = exit_in(&text, name)
        .unwrap_or_else(|| panic!("{} documents no exit code", script.display()));
    if let Some(said) = exit_in(readme, name) {
        assert_eq!(
            said, header,
            "README.md says `{name}` exits {said}, its header {header}"
        );
    }
    header
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
            // Every sample type the README names has samples.
            let readme = fs::read_to_string(root.join("README.md")).unwrap();
            let major = dotnet::runtime().major();
            for (phrase, types, since) in NAMED_SAMPLE_TYPES {
                assert!(
                    readme.contains(phrase),
                    "README.md no longer says {phrase:?}"
                );
                for index in types.iter().filter(|_| major >= since) {
                    let total = pprof_total(&dir.join("profile.pb.gz"), index);
                    assert!(total > 0.0, "{phrase}: no {index} samples in profile.pb.gz");
                }
            }
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

/// The README's `<!-- readme-walk: not run: REASON -->` marks: what the
/// walk does not run, each with its reason, the line after it being the
/// start of the block or table it marks.
fn not_run_marks(readme: &str) -> Vec<(String, String)> {
    let lines: Vec<&str> = readme.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(rest) = line.trim().strip_prefix("<!-- readme-walk: not run: ") else {
            continue;
        };
        let reason = rest.trim_end_matches("-->").trim().to_string();
        let next = lines.get(i + 1).map_or("", |l| l.trim()).to_string();
        out.push((next, reason));
    }
    out
}

/// Each `sh` block of the README: its first line, and whether a
/// `readme-walk: not run` mark stands right before it.
fn sh_blocks(readme: &str) -> Vec<(String, bool)> {
    let lines: Vec<&str> = readme.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if line.trim() != "```sh" {
            continue;
        }
        let first = lines.get(i + 1).map_or("", |l| l.trim()).to_string();
        let marked = i > 0 && lines[i - 1].contains("<!-- readme-walk: not run: ");
        out.push((first, marked));
    }
    out
}

/// The table's commands whose arguments a user must give (a PID): each
/// must be in a `readme-walk: not run` mark, which names it.
fn commands_with_required_args(readme: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in readme.lines().filter(|l| l.starts_with('|')) {
        for cell in line.split('`').skip(1).step_by(2) {
            let Some(rest) = cell.strip_prefix("bash scripts/samples/") else {
                continue;
            };
            let (script, args) = rest.split_once(' ').unwrap_or((rest, ""));
            let args = args.trim();
            if !(args.is_empty() || (args.starts_with('[') && args.ends_with(']'))) {
                out.push(format!("scripts/samples/{script}"));
            }
        }
    }
    out
}

/// The total of sample type `index` in a pprof file: the number of
/// `go tool pprof -top`'s "of TOTAL total".
fn pprof_total(path: &Path, index: &str) -> f64 {
    let top = readers::go_pprof(&[
        "-top",
        &format!("-sample_index={index}"),
        path.to_str().unwrap(),
    ]);
    let line = top
        .lines()
        .find(|l| l.contains(" total"))
        .unwrap_or_else(|| panic!("{index}: no total:\n{top}"));
    let total = line
        .rsplit(" of ")
        .next()
        .unwrap()
        .trim_end_matches(" total");
    let number: String = total
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    number.parse().unwrap_or_else(|_| panic!("{index}: {line}"))
}

/// The `Duration:` go tool pprof gives, in seconds.
fn pprof_duration(top: &str) -> f64 {
    let line = top
        .lines()
        .find(|l| l.starts_with("Duration: "))
        .unwrap_or_else(|| panic!("no Duration:\n{top}"));
    let value = line["Duration: ".len()..].split(',').next().unwrap().trim();
    let (number, unit) = value.split_at(value.find(|c: char| c.is_ascii_alphabetic()).unwrap());
    let number: f64 = number.parse().unwrap_or_else(|_| panic!("{line}"));
    match unit {
        "s" => number,
        "ms" => number / 1e3,
        "mins" => number * 60.0,
        _ => panic!("{line}: unit {unit}"),
    }
}

/// The sample types the README's sampling rows name, each by its phrase
/// there: the `Sampling` sample has samples of each (the ones of a later
/// runtime only from it).
const NAMED_SAMPLE_TYPES: [(&str, &[&str], u32); 9] = [
    ("sample CPU", &["cpu"], 3),
    ("wall time", &["wall"], 3),
    ("allocations", &["alloc_objects", "alloc_space"], 5),
    ("exceptions", &["exception"], 3),
    ("lock contention", &["lock-count", "lock-time"], 5),
    ("blocking waits", &["wait"], 9),
    ("`inuse_objects`", &["inuse_objects"], 7),
    ("`inuse_space`", &["inuse_space"], 7),
    ("`gc-pause`", &["gc-pause"], 5),
];

/// The second run of the sampler sample, with the README's heap-snapshot
/// setting: the README's `go tool pprof` lines (run in the output
/// directory, `-top` added where they open pprof's shell) read this run
/// only: the period profiles' `Duration` that of `profile.pb.gz`, one
/// `heap-*.txt` and `heap-*.pb.gz` (the snapshot at the stop).
fn sampler_again_with_the_heap_line(root: &Path, readme: &str, expected: i32) {
    let row = readme
        .lines()
        .find(|l| l.starts_with('|') && l.contains("CORPROF_SAMPLER_HEAP_SNAPSHOT_EVERY="))
        .expect("README.md's heap-snapshot row");
    let setting = row
        .split('`')
        .find(|c| c.starts_with("CORPROF_SAMPLER_HEAP_SNAPSHOT_EVERY="))
        .unwrap();
    let command = format!("{setting} bash scripts/samples/sampler-sample.sh");
    let mut cmd = Command::new("bash");
    cmd.args(["-c", &command]).current_dir(root);
    let run = dotnet::run_with_timeout(cmd, Duration::from_secs(600)).unwrap();
    assert_eq!(
        run.status.code(),
        Some(expected),
        "`{command}`\n{}",
        run.describe()
    );
    let dir = root.join("target/sampler");
    let one_run = pprof_duration(&readers::go_pprof(&[
        "-top",
        dir.join("profile.pb.gz").to_str().unwrap(),
    ]));
    let pprof_lines: Vec<&str> = readme
        .lines()
        .filter(|l| l.starts_with('|'))
        .flat_map(|l| l.split('`').skip(1).step_by(2))
        .filter(|c| c.starts_with("go tool pprof "))
        .collect();
    assert_eq!(
        pprof_lines.len(),
        2,
        "README.md's go tool pprof lines: {pprof_lines:?}"
    );
    for line in pprof_lines {
        let args = line.trim_start_matches("go tool pprof ");
        let top = if args.contains("-top") {
            String::new()
        } else {
            "-top ".to_string()
        };
        let out = Command::new("bash")
            .args(["-c", &format!("go tool pprof {top}{args}")])
            .current_dir(&dir)
            .env("HOME", env!("CARGO_TARGET_TMPDIR"))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains(" total"),
            "`{line}` in {}: {text}{}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        if line.contains("profile-*") {
            // Two runs read as one sum their durations.
            let duration = pprof_duration(&text);
            assert!(
                duration <= one_run * 1.2 + 0.5,
                "`{line}`: Duration {duration} s, the last run's {one_run} s: it reads more than one run\n{text}"
            );
        }
        eprintln!(
            "e2e_readme: `{line}`: {}",
            text.lines().find(|l| l.contains(" total")).unwrap()
        );
    }
    for glob in ["heap-", "profile-"] {
        let found: Vec<String> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(glob) && n.ends_with(".pb.gz"))
            .collect();
        assert!(!found.is_empty(), "no {glob}*.pb.gz in {}", dir.display());
        if glob == "heap-" {
            // `less heap-*.txt`: one snapshot, at the stop, of this run.
            assert_eq!(found.len(), 1, "{found:?}");
            non_empty(&dir.join(found[0].replace(".pb.gz", ".txt")));
        }
    }
    let summary = fs::read_to_string(dir.join("summary.txt")).unwrap();
    assert!(summary.contains("heap_snapshots_taken=1\n"), "{summary}");
}

/// The table's `profile-running.sh PID SECONDS [DIR]`, as written with a
/// running program's PID (the `Attach` sample, no profiler loaded), 2
/// seconds and a directory of the walk's: exit 0, the profile it names
/// opens in `go tool pprof -top`, and the program runs on to its own end
/// (exit 45 once told to stop).
fn profile_running(readme: &str, scratch: &Path) {
    let line = readme
        .lines()
        .filter(|l| l.starts_with('|'))
        .flat_map(|l| l.split('`').skip(1).step_by(2))
        .find(|c| c.starts_with("bash scripts/samples/profile-running.sh "))
        .expect("README.md's profile-running.sh command");
    assert_eq!(
        line, "bash scripts/samples/profile-running.sh PID SECONDS [DIR]",
        "the walk gives PID, SECONDS and DIR"
    );
    let rt = dotnet::runtime();
    let sync = scratch.join("attach-sync");
    let dir = scratch.join("profiles");
    fs::create_dir_all(&sync).unwrap();
    let mut program = rt
        .command(
            "Attach",
            &["--sync-dir", sync.to_str().unwrap(), "--seconds", "120"],
            None,
        )
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = program.id();
    let start = std::time::Instant::now();
    while corprof::diagnostics::discovery::endpoint(pid).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no diagnostics endpoint of {pid}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let command = line
        .replace("PID", &pid.to_string())
        .replace("SECONDS", "2")
        .replace("[DIR]", dir.to_str().unwrap());
    let mut cmd = Command::new("bash");
    cmd.args(["-c", &command]).current_dir(dotnet::repo_root());
    let run = dotnet::run_with_timeout(cmd, Duration::from_secs(300));
    fs::write(sync.join("stop"), "").unwrap();
    let status = program.wait().unwrap();
    let run = run.unwrap_or_else(|e| panic!("`{command}`: {e}"));
    assert_eq!(
        run.status.code(),
        Some(0),
        "`{command}`\n{}",
        run.describe()
    );
    let profile = run
        .stdout
        .lines()
        .find(|l| l.ends_with(".pb.gz"))
        .unwrap_or_else(|| panic!("`{command}` named no profile\n{}", run.describe()));
    pprof_opens(Path::new(profile));
    assert_eq!(status.code(), Some(45), "the program after the profile");
    eprintln!("e2e_readme: `{command}`: exit 0, {profile}");
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
    // What the walk does not run is marked so in the README, with why:
    // each `sh` block is a table command the walk runs, or marked; each
    // table command that needs a user's argument is named by a mark.
    let marks = not_run_marks(&readme);
    for (first, marked) in sh_blocks(&readme) {
        assert!(
            marked || samples.iter().any(|(_, c)| *c == first),
            "README.md's sh block `{first}` is neither run by the walk nor marked `<!-- readme-walk: not run: REASON -->`"
        );
    }
    for script in commands_with_required_args(&readme) {
        if script == "scripts/samples/profile-running.sh" {
            continue; // run below, with a PID of the walk's
        }
        assert!(
            marks.iter().any(|(_, reason)| reason.contains(&script)),
            "README.md's `{script}` needs arguments the walk cannot give: name it in a `<!-- readme-walk: not run: ... -->` mark, {marks:?}"
        );
    }
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("e2e_readme")
        .join(format!("{}-{}", runtime.major(), std::process::id()));
    let _ = fs::remove_dir_all(&scratch);
    fs::create_dir_all(&scratch).unwrap();
    for (name, command) in &samples {
        let expected = documented_exit(
            &root.join(format!("scripts/samples/{name}.sh")),
            name,
            &readme,
        );
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
        if name == "sampler-sample" {
            // Two runs in a row: the README's lines read the last one.
            sampler_again_with_the_heap_line(&root, &readme, expected);
        }
    }
    profile_running(&readme, &scratch);
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

#[test]
fn exit_codes_marks_and_durations_are_read_as_written() {
    let text = "exits 70 (`x-sample: ok: 3 files; the program exited 37`), \
                `y-sample: failed: ...; the program exited 5`";
    assert_eq!(exit_in(text, "x-sample"), Some(37));
    assert_eq!(exit_in(text, "y-sample"), None);
    let readme = "<!-- readme-walk: not run: scripts/samples/p.sh needs a PID -->\n\
                  | a | `bash scripts/samples/p.sh PID` |\n\
                  ```sh\nbash scripts/samples/one.sh\n```\n\
                  <!-- readme-walk: not run: CI's own -->\n```sh\nbash scripts/test.sh\n```\n";
    assert_eq!(
        sh_blocks(readme),
        [
            ("bash scripts/samples/one.sh".to_string(), false),
            ("bash scripts/test.sh".to_string(), true)
        ]
    );
    assert_eq!(
        commands_with_required_args(readme),
        ["scripts/samples/p.sh"]
    );
    assert_eq!(
        not_run_marks(readme)[0].1,
        "scripts/samples/p.sh needs a PID"
    );
    assert_eq!(
        pprof_duration("File: x\nDuration: 6.91s, Total samples = 4s\n"),
        6.91
    );
    assert_eq!(pprof_duration("Duration: 1.50mins, Total\n"), 90.0);
}
