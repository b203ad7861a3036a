//! `SamplerOptions::from_env`, `CallTargetOptions::from_env` and
//! `CoverageOptions::from_env` (its boolean), each case
//! in a child process of its own (this test binary run again with the
//! variables set), so that no test changes the environment another reads.
#![cfg(all(feature = "sampling", feature = "instrument", feature = "coverage"))]
#![allow(missing_docs)]

mod common;

use corprof::coverage::CoverageOptions;
use corprof::instrument::{CallTargetOptions, MethodTarget};
use corprof::sampling::{AllocationSource, SamplerOptions};
use std::path::PathBuf;

/// Run by the parent only, in a child with the case's variables: prints
/// what both readers answer, one line each.
#[test]
fn child_prints_what_the_environment_gives() {
    if std::env::var_os("CORPROF_OPTIONS_ENV_CHILD").is_none() {
        return;
    }
    let show = |r: Result<String, corprof::Error>| match r {
        Ok(text) => text,
        Err(e) => format!("err {:?} {}", e.code(), e.message()),
    };
    // After a newline: libtest prints the test's name on the same line.
    println!(
        "\nsampler: {}",
        show(SamplerOptions::from_env().map(|o| format!(
            "hz={} alloc={:?} source={} gc_pauses={} heap={:?} waits={:?} spans={}",
            o.hz,
            o.allocation_mean_bytes,
            o.allocation_source.name(),
            o.gc_pauses,
            o.heap_objects,
            o.waits_per_second,
            o.spans
        )))
    );
    println!(
        "coverage: {}",
        show(CoverageOptions::from_env().map(|o| format!("branches={}", o.branches)))
    );
    println!(
        "calltarget: {}",
        show(CallTargetOptions::from_env().map(|o| format!(
            "targets={} helper={} integration={} rejit={} sync={:?} verbose={} disable_inlining={}",
            o.targets.iter().map(MethodTarget::to_string).collect::<Vec<_>>().join(";"),
            o.helper.display(),
            o.integration,
            o.rejit,
            o.sync_dir,
            o.verbose,
            o.disable_inlining
        )))
    );
}

/// The two lines the child prints with exactly `vars` set (every
/// variable of both tables cleared first).
fn answers(vars: &[(&str, &str)]) -> (String, String) {
    let lines = child_lines(vars);
    (lines.0, lines.2)
}

/// The sampler's, coverage's and calltarget's lines of the child with
/// exactly `vars` set.
fn child_lines(vars: &[(&str, &str)]) -> (String, String, String) {
    let mut cmd = common::self_exec::this_test_binary();
    cmd.args([
        "--exact",
        "child_prints_what_the_environment_gives",
        "--nocapture",
        "--test-threads=1",
    ]);
    for name in [
        "CORPROF_SAMPLER_HZ",
        "CORPROF_SAMPLER_ALLOC_BYTES",
        "CORPROF_SAMPLER_ALLOC_SOURCE",
        "CORPROF_SAMPLER_GC_PAUSES",
        "CORPROF_SAMPLER_HEAP_OBJECTS",
        "CORPROF_SAMPLER_WAITS",
        "CORPROF_SAMPLER_SPANS",
        "CORPROF_COVERAGE_DIR",
        "CORPROF_COVERAGE_INCLUDE",
        "CORPROF_COVERAGE_EXCLUDE",
        "CORPROF_COVERAGE_BRANCHES",
        "CORPROF_CALLTARGET",
        "CORPROF_CALLTARGET_HELPER",
        "CORPROF_CALLTARGET_INTEGRATION",
        "CORPROF_CALLTARGET_REJIT",
        "CORPROF_CALLTARGET_SYNC_DIR",
        "CORPROF_CALLTARGET_VERBOSE",
        "CORPROF_CALLTARGET_DISABLE_INLINING",
        "DOTNET_STARTUP_HOOKS",
    ] {
        cmd.env_remove(name);
    }
    cmd.env("CORPROF_OPTIONS_ENV_CHILD", "1");
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("the test binary runs again");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let line = |prefix: &str| {
        stdout
            .lines()
            .find_map(|l| l.strip_prefix(prefix))
            .unwrap_or_else(|| panic!("no {prefix:?} line in {stdout}"))
            .to_string()
    };
    (line("sampler: "), line("coverage: "), line("calltarget: "))
}

/// `CORPROF_COVERAGE_BRANCHES` is the shared boolean: every spelling in
/// any case, unset or empty the default (on), anything else an error
/// naming the variable (`false` once turned branches on).
#[test]
fn coverage_branches_is_a_boolean() {
    let branches = |value: Option<&str>| {
        let vars: Vec<(&str, &str)> = value
            .map(|v| ("CORPROF_COVERAGE_BRANCHES", v))
            .into_iter()
            .collect();
        child_lines(&vars).1
    };
    assert_eq!(branches(None), "branches=true");
    assert_eq!(branches(Some("")), "branches=true");
    for off in ["0", "false", "FALSE", "no", "Off"] {
        assert_eq!(branches(Some(off)), "branches=false", "{off}");
    }
    for on in ["1", "true", "Yes", "ON"] {
        assert_eq!(branches(Some(on)), "branches=true", "{on}");
    }
    for bad in ["2", "disabled"] {
        assert_eq!(
            branches(Some(bad)),
            format!(
                "err E_INVALIDARG CORPROF_COVERAGE_BRANCHES={bad:?} is not one of 0, 1, true, false, yes, no, on, off"
            )
        );
    }
}

#[test]
fn unset_variables_give_the_defaults_and_calltarget_asks_for_targets() {
    let defaults = SamplerOptions::default();
    assert_eq!(
        (
            defaults.hz,
            defaults.allocation_mean_bytes,
            defaults.allocation_source
        ),
        (99, Some(524_288), AllocationSource::Auto)
    );
    let (sampler, calltarget) = answers(&[]);
    assert_eq!(
        sampler,
        "hz=99 alloc=Some(524288) source=auto gc_pauses=true heap=Some(4096) waits=Some(500) spans=false"
    );
    assert_eq!(
        calltarget,
        "err E_INVALIDARG CORPROF_CALLTARGET: no targets"
    );
}

#[test]
fn every_sampler_variable_is_read() {
    let (sampler, _) = answers(&[
        ("CORPROF_SAMPLER_HZ", " 250 "),
        ("CORPROF_SAMPLER_ALLOC_BYTES", "0"),
        ("CORPROF_SAMPLER_ALLOC_SOURCE", "object-allocated"),
        ("CORPROF_SAMPLER_GC_PAUSES", "off"),
        ("CORPROF_SAMPLER_HEAP_OBJECTS", "0"),
        ("CORPROF_SAMPLER_WAITS", "0"),
        ("CORPROF_SAMPLER_SPANS", "on"),
    ]);
    assert_eq!(
        sampler,
        "hz=250 alloc=None source=object-allocated gc_pauses=false heap=None waits=None spans=true"
    );
    let (sampler, _) = answers(&[
        ("CORPROF_SAMPLER_ALLOC_BYTES", "4096"),
        ("CORPROF_SAMPLER_ALLOC_SOURCE", "allocation-tick"),
        ("CORPROF_SAMPLER_HEAP_OBJECTS", " 100 "),
        ("CORPROF_SAMPLER_WAITS", "20"),
    ]);
    assert_eq!(
        sampler,
        "hz=99 alloc=Some(4096) source=allocation-tick gc_pauses=true heap=Some(100) waits=Some(20) spans=false"
    );
}

#[test]
fn a_bad_sampler_value_names_its_variable_and_says_why() {
    for (var, value, why) in [
        (
            "CORPROF_SAMPLER_HZ",
            "fast",
            "is not a number from 1 to 10000",
        ),
        ("CORPROF_SAMPLER_HZ", "0", "is not a number from 1 to 10000"),
        (
            "CORPROF_SAMPLER_HZ",
            "10001",
            "is not a number from 1 to 10000",
        ),
        (
            "CORPROF_SAMPLER_ALLOC_BYTES",
            "-1",
            "is not a number from 0 to 1099511627776",
        ),
        (
            "CORPROF_SAMPLER_ALLOC_SOURCE",
            "sometimes",
            "is not one of auto, allocation-sampled, allocation-tick, object-allocated",
        ),
        (
            "CORPROF_SAMPLER_HEAP_OBJECTS",
            "1000001",
            "is not a number from 0 to 1000000",
        ),
        (
            "CORPROF_SAMPLER_WAITS",
            "1000001",
            "is not a number from 0 to 1000000",
        ),
        (
            "CORPROF_SAMPLER_GC_PAUSES",
            "2",
            "is not one of 0, 1, true, false, yes, no, on, off",
        ),
        (
            "CORPROF_SAMPLER_SPANS",
            "sometimes",
            "is not one of 0, 1, true, false, yes, no, on, off",
        ),
    ] {
        let (sampler, _) = answers(&[(var, value)]);
        assert_eq!(sampler, format!("err E_INVALIDARG {var}={value:?} {why}"));
    }
}

#[test]
fn calltarget_reads_every_variable_and_checks_the_helper() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("options_env");
    std::fs::create_dir_all(&dir).unwrap();
    let helper = dir.join("Probe.dll");
    std::fs::write(&helper, b"not read").unwrap();
    let helper = helper.to_str().unwrap();
    let target = ("CORPROF_CALLTARGET", "A!N.T::M;B!N.U::V=N.Integration");

    let (_, answer) = answers(&[target]);
    assert_eq!(
        answer,
        "err E_INVALIDARG CORPROF_CALLTARGET_HELPER is not set"
    );
    let (_, answer) = answers(&[target, ("CORPROF_CALLTARGET_HELPER", "/nowhere/P.dll")]);
    assert_eq!(answer, "err E_INVALIDARG helper /nowhere/P.dll not found");
    let (_, answer) = answers(&[target, ("CORPROF_CALLTARGET_HELPER", helper)]);
    assert_eq!(
        answer,
        format!(
            "err E_INVALIDARG helper {helper} is not in DOTNET_STARTUP_HOOKS, so the runtime would not find it"
        )
    );
    let (_, answer) = answers(&[("CORPROF_CALLTARGET", "A:N.T::M")]);
    assert!(
        answer.starts_with("err E_INVALIDARG CORPROF_CALLTARGET: bad target \"A:N.T::M\": no `!`"),
        "{answer}"
    );

    let base = [
        target,
        ("CORPROF_CALLTARGET_HELPER", helper),
        ("DOTNET_STARTUP_HOOKS", helper),
    ];
    let (_, answer) = answers(&base);
    assert_eq!(
        answer,
        format!(
            "targets=A!N.T::M;B!N.U::V=N.Integration helper={helper} \
             integration=CorProf.CallTarget.LogIntegration rejit=false sync=None \
             verbose=false disable_inlining=false"
        )
    );
    let mut all = base.to_vec();
    all.extend([
        ("CORPROF_CALLTARGET_INTEGRATION", "N.Other"),
        ("CORPROF_CALLTARGET_REJIT", "1"),
        ("CORPROF_CALLTARGET_SYNC_DIR", "/tmp/sync"),
        ("CORPROF_CALLTARGET_VERBOSE", "1"),
        ("CORPROF_CALLTARGET_DISABLE_INLINING", "1"),
    ]);
    let (_, answer) = answers(&all);
    assert_eq!(
        answer,
        format!(
            "targets=A!N.T::M;B!N.U::V=N.Integration helper={helper} integration=N.Other \
             rejit=true sync=Some(\"/tmp/sync\") verbose=true disable_inlining=true"
        )
    );
}
