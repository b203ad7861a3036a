//! `corprof coverage` without a runtime: COMMAND is a shell script that
//! plays the processes of a test run, writing `.counts` files (the
//! format of `corprof::coverage::merge`, written here by hand) into the
//! directory the command gives it; the counts added up, the exit code
//! passed on, a stale report never added in, and the errors.
#![cfg(unix)]

mod common;

use std::path::{Path, PathBuf};

use common::self_exec::target_binary;

const CORPROF: &str = env!("CARGO_BIN_EXE_corprof");

fn dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("coverage_cli-{}", std::process::id()))
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn corprof(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = target_binary(CORPROF);
    cmd.args(args).env_remove("SOURCE_DATE_EPOCH");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A process's counts: `Lib::F` (two lines, a branch) called `calls`
/// times, its branch taken `taken` times of `calls`; and `Lib::G`, never
/// compiled (no branches).
fn counts(calls: u64, taken: u64) -> String {
    format!(
        "corprof-coverage-counts 1\n\
         summary\t3 methods instrumented (0 failed)\n\
         method\tLib\tLib\tLib::F\t100663297\t{calls}\n\
         point\t/src/lib/Lib.cs\t10\t10\t{calls}\n\
         point\t/src/lib/Lib.cs\t11\t11\t{taken}\n\
         branch\t/src/lib/Lib.cs\t10\t5\t0\t{}\n\
         branch\t/src/lib/Lib.cs\t10\t5\t1\t{taken}\n\
         method\tLib\tLib\tLib::G\t100663298\t0\n\
         point\t/src/lib/Lib.cs\t20\t20\t0\n",
        calls - taken
    )
}

/// Two processes' counts added up into one lcov and one Cobertura file;
/// COMMAND's exit code passed on; the variables that load the profiler
/// set; a `.counts` file already in `-o DIR` not added in.
#[test]
fn counts_of_every_process_are_added_up() {
    let work = dir("merge");
    let out = work.join("out");
    std::fs::create_dir_all(&out).unwrap();
    // An earlier run's counts where the report goes: never read.
    std::fs::write(out.join("coverage-1.counts"), counts(1000, 1000)).unwrap();
    std::fs::write(work.join("a.counts"), counts(3, 1)).unwrap();
    std::fs::write(work.join("b.counts"), counts(2, 2)).unwrap();
    let script = format!(
        "test \"$CORECLR_ENABLE_PROFILING\" = 1 || exit 90\n\
         test \"$CORECLR_PROFILER\" = '{{2B8C6E57-9E0D-4F1A-8C3B-5D7A1E9F4C60}}' || exit 91\n\
         test \"$CORECLR_PROFILER_PATH\" = '{profiler}' || exit 92\n\
         test \"$CORPROF_COVERAGE_COUNTS\" = 1 || exit 93\n\
         test \"$CORPROF_COVERAGE_INCLUDE\" = '[Lib]*;[Other]N.*' || exit 94\n\
         test \"$CORPROF_COVERAGE_BRANCHES\" = 1 || exit 95\n\
         test -z \"$(ls \"$CORPROF_COVERAGE_DIR\")\" || exit 96\n\
         cp {work}/a.counts \"$CORPROF_COVERAGE_DIR/coverage-101.counts\"\n\
         cp {work}/b.counts \"$CORPROF_COVERAGE_DIR/coverage-102.counts\"\n\
         exit 3\n",
        profiler = CORPROF,
        work = work.display()
    );
    let args = [
        "coverage",
        "--include",
        "[Lib]*",
        "--include",
        "[Other]N.*",
        "--profiler",
        CORPROF,
        "-o",
        out.to_str().unwrap(),
        "--",
        "sh",
        "-c",
        &script,
    ];
    let (code, stdout, stderr) =
        corprof(&args, &[("CORECLR_PROFILER_PATH_64", "/elsewhere/lib.so")]);
    assert_eq!(code, 3, "{stdout}{stderr}");
    assert!(
        stdout.contains("process 101: 3 methods instrumented (0 failed)")
            && stdout.contains("process 102: 3 methods instrumented (0 failed)"),
        "{stdout}"
    );
    // Lines 10, 11 run, 20 not; 2 of 2 arms; F run, G not.
    assert!(
        stdout.contains(
            "lines 2/3 (66.7%), branches 2/2 (100.0%), functions 1/2 (50.0%) from 2 process(es)"
        ),
        "{stdout}"
    );
    let lcov = std::fs::read_to_string(out.join("coverage.info")).unwrap();
    assert_eq!(
        lcov,
        "TN:\nSF:/src/lib/Lib.cs\nFN:10,Lib::F\nFN:20,Lib::G\nFNDA:5,Lib::F\nFNDA:0,Lib::G\n\
         FNF:2\nFNH:1\nBRDA:10,0,0,2\nBRDA:10,0,1,3\nBRF:2\nBRH:2\n\
         DA:10,5\nDA:11,3\nDA:20,0\nLF:3\nLH:2\nend_of_record\n"
    );
    let xml = std::fs::read_to_string(out.join("coverage.cobertura.xml")).unwrap();
    assert!(xml.contains("<source>/src/lib/</source>"), "{xml}");
    assert!(
        xml.contains(r#"<class name="Lib" filename="Lib.cs""#),
        "{xml}"
    );
    assert!(
        xml.contains(
            r#"<line number="10" hits="5" branch="true" condition-coverage="100% (2/2)"/>"#
        ),
        "{xml}"
    );

    // The same counts again, with a fixed timestamp: the same bytes.
    let again = |epoch: &str| {
        let (code, stdout, _) = corprof(&args, &[("SOURCE_DATE_EPOCH", epoch)]);
        assert_eq!(code, 3, "{stdout}");
        (
            std::fs::read(out.join("coverage.info")).unwrap(),
            std::fs::read(out.join("coverage.cobertura.xml")).unwrap(),
        )
    };
    let first = again("1700000000");
    assert_eq!(again("1700000000"), first);
    assert!(String::from_utf8_lossy(&first.1).contains(r#"timestamp="1700000000""#));
}

/// Ctrl-C while COMMAND runs (`SIGINT` to corprof's process group, as a
/// terminal sends it): corprof waits for COMMAND, which takes a second to
/// end after the signal, then removes its private directory (which held a
/// `.counts` file), writes no report and exits 130.
#[test]
fn ctrl_c_waits_for_command_and_removes_the_private_directory() {
    use std::os::unix::process::CommandExt;
    use std::time::{Duration, Instant};

    let work = dir("interrupt");
    let out = work.join("out");
    std::fs::write(work.join("a.counts"), counts(3, 1)).unwrap();
    // The background `sleep` ignores SIGINT (a non-interactive shell's
    // asynchronous command): the trap ends it.
    let script = "echo \"$CORPROF_COVERAGE_DIR\" > \"$1/private\"\n\
                  cp \"$1/a.counts\" \"$CORPROF_COVERAGE_DIR/coverage-101.counts\" || exit 90\n\
                  trap 'kill $pid; sleep 1; touch \"$1/ended\"; exit 3' INT\n\
                  sleep 120 & pid=$!\n\
                  touch \"$1/ready\"\n\
                  wait $pid\n\
                  exit 91\n";
    let stdout = std::fs::File::create(work.join("stdout")).unwrap();
    let stderr = std::fs::File::create(work.join("stderr")).unwrap();
    let mut cmd = target_binary(CORPROF);
    cmd.args(["coverage", "--profiler", CORPROF, "-o"])
        .arg(&out)
        .args(["--", "sh", "-c", script, "sh"])
        .arg(&work)
        .env_remove("SOURCE_DATE_EPOCH")
        .process_group(0)
        .stdout(stdout)
        .stderr(stderr);
    let mut child = cmd.spawn().unwrap();
    let output = || {
        std::fs::read_to_string(work.join("stdout")).unwrap()
            + &std::fs::read_to_string(work.join("stderr")).unwrap()
    };
    // Generous deadlines: the machine may be loaded (they bound a hang,
    // they do not time anything).
    let wait_for = |what: &dyn Fn() -> bool| {
        let deadline = Instant::now() + Duration::from_secs(120);
        while !what() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        what()
    };
    if !wait_for(&|| work.join("ready").exists()) {
        let _ = child.kill();
        let _ = child.wait();
        panic!("COMMAND never got ready: {}", output());
    }
    // The precondition: a private directory with a process's counts.
    let private = std::fs::read_to_string(work.join("private")).unwrap();
    let private = Path::new(private.trim());
    assert!(
        private.join("coverage-101.counts").is_file(),
        "{}",
        private.display()
    );

    let sent = std::process::Command::new("kill")
        .args(["-s", "INT", "--", &format!("-{}", child.id())])
        .status()
        .unwrap();
    assert!(sent.success());
    let mut status = None;
    let deadline = Instant::now() + Duration::from_secs(120);
    while status.is_none() && Instant::now() < deadline {
        status = child.try_wait().unwrap();
        std::thread::sleep(Duration::from_millis(20));
    }
    let Some(status) = status else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("corprof did not end after SIGINT: {}", output());
    };
    let text = output();
    assert_eq!(status.code(), Some(130), "{status:?}: {text}");
    assert!(text.contains("interrupted, no report written"), "{text}");
    // It waited for COMMAND's end, then removed its directory.
    assert!(work.join("ended").exists(), "{text}");
    assert!(!private.exists(), "{} left behind", private.display());
    assert!(!out.join("coverage.info").exists());
    assert!(!out.join("coverage.cobertura.xml").exists());
}

/// A command whose processes instrumented nothing: no report (an earlier
/// one removed, so it cannot pass for this run's), a message, COMMAND's
/// exit code, or 1 when it succeeded.
#[test]
fn no_counts_no_report() {
    let out = dir("none");
    std::fs::write(out.join("coverage.info"), "stale").unwrap();
    std::fs::write(out.join("coverage.cobertura.xml"), "stale").unwrap();
    for (status, expected) in [("0", 1), ("7", 7)] {
        let (code, stdout, stderr) = corprof(
            &[
                "coverage",
                "--profiler",
                CORPROF,
                "-o",
                out.to_str().unwrap(),
                "--",
                "sh",
                "-c",
                &format!("exit {status}"),
            ],
            &[],
        );
        assert_eq!(code, expected, "{stdout}{stderr}");
        assert!(
            stderr.contains("no process instrumented anything"),
            "{stderr}"
        );
        assert!(!out.join("coverage.info").exists());
        assert!(!out.join("coverage.cobertura.xml").exists());
    }
}

#[test]
fn usage_and_bad_arguments() {
    for help in ["-h", "--help"] {
        let (code, stdout, _) = corprof(&["coverage", help], &[]);
        assert_eq!(code, 0);
        assert!(
            stdout.contains("corprof coverage [--include PATTERN]"),
            "{stdout}"
        );
    }
    // -h after -- is COMMAND's.
    let (code, _, stderr) = corprof(&["coverage", "--", "true", "-h"], &[]);
    assert_eq!(code, 2);
    assert!(stderr.contains("coverage needs -o DIR"), "{stderr}");
    let cases: &[(&[&str], &str)] = &[
        (&["coverage", "-o", "x"], "no -- COMMAND"),
        (&["coverage", "-o", "x", "--"], "no COMMAND after --"),
        (
            &["coverage", "--include", "[Lib", "-o", "x", "--", "true"],
            "--include [Lib",
        ),
        (
            &[
                "coverage",
                "--include",
                "[A]*,[B]*",
                "-o",
                "x",
                "--",
                "true",
            ],
            "takes one pattern",
        ),
        (
            &["coverage", "--frob", "-o", "x", "--", "true"],
            "unknown option --frob",
        ),
        (
            &[
                "coverage",
                "--profiler",
                "/nonexistent/libcoverage.so",
                "-o",
                "x",
                "--",
                "true",
            ],
            "--profiler /nonexistent/libcoverage.so: no such file",
        ),
    ];
    for (args, message) in cases {
        let (code, _, stderr) = corprof(args, &[]);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
    // A command that cannot start.
    let (code, _, stderr) = corprof(
        &[
            "coverage",
            "--profiler",
            CORPROF,
            "-o",
            "x",
            "--",
            "/nonexistent/cmd",
        ],
        &[],
    );
    assert_eq!(code, 2);
    assert!(stderr.contains("cannot run /nonexistent/cmd"), "{stderr}");
}

/// A malformed `.counts` file is a message naming it and its line, and
/// COMMAND's code (or 1).
#[test]
fn a_bad_counts_file_is_an_error() {
    let out = dir("bad");
    let (code, _, stderr) = corprof(
        &[
            "coverage",
            "--profiler",
            CORPROF,
            "-o",
            out.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            "printf 'corprof-coverage-counts 1\\npoint\\ta\\t1\\t1\\t1\\n' > \"$CORPROF_COVERAGE_DIR/coverage-5.counts\"",
        ],
        &[],
    );
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("coverage-5.counts: line 2: a record before the first method"),
        "{stderr}"
    );
}
