//! Whether the runtime can load the CallTarget helper: the helper's
//! references to the runtime's own assemblies compared with those
//! assemblies' versions, read from the files (`assembly_file.rs`).
//!
//! The runtime's binder resolves a reference to a framework assembly only
//! when the framework's copy has at least the version referenced (major,
//! minor, build, revision in turn). A helper compiled against a newer
//! reference pack than the runtime's (`net10.0` on .NET 8) references
//! `System.Runtime, Version=10.0.0.0`; on .NET 8, whose `System.Runtime`
//! is 8.0.0.0, loading any of its types fails (`FileNotFoundException`,
//! from the host's startup hook first). The versions are the files' own:
//! `System.Runtime` is 4.2.2.0 on .NET Core 3.1 (and `System.Console`
//! 4.1.2.0 there), N.0.0.0 on .NET N from 5 on; and `GetRuntimeInformation`
//! answers 4.0.30319 on CoreCLR 3.1, so neither a table nor the runtime's
//! version stands in for them.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use std::path::{Path, PathBuf};

use super::assembly_file::{AssemblyFile, AssemblyName, Version};

/// The assemblies whose version says which runtime an assembly was built
/// for, and which only the runtime provides: a reference to a newer one
/// cannot bind, whatever the application carries.
pub(crate) const CORE: &[&str] = &[
    "System.Runtime",
    "System.Private.CoreLib",
    "netstandard",
    "mscorlib",
];

/// A reference of the helper newer than the runtime's own copy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Newer {
    /// The helper's reference.
    pub(crate) reference: AssemblyName,
    /// The version of the runtime's copy.
    pub(crate) provided: Version,
    /// The runtime's copy.
    pub(crate) path: PathBuf,
}

/// What the comparison found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Verdict {
    /// References to [`CORE`] assemblies newer than the runtime's: the
    /// helper cannot load.
    pub(crate) blocking: Vec<Newer>,
    /// References to other assemblies of the runtime newer than its copy:
    /// they fail unless the application carries that version (an
    /// out-of-band package such as System.Text.Json).
    pub(crate) other: Vec<Newer>,
    /// Runtime assemblies whose version could not be read, and why.
    pub(crate) unreadable: Vec<(PathBuf, String)>,
}

/// Compares `helper`'s references with the runtime's assemblies:
/// `runtime(name)` is the path and version of the runtime's copy of
/// assembly `name` (`None` when the runtime has none: a reference the
/// check says nothing about).
pub(crate) fn compare(
    helper: &AssemblyFile,
    mut runtime: impl FnMut(&str) -> Option<(PathBuf, Result<Version, String>)>,
) -> Verdict {
    let mut verdict = Verdict::default();
    for reference in &helper.references {
        let Some((path, version)) = runtime(&reference.name) else {
            continue;
        };
        let provided = match version {
            Ok(v) => v,
            Err(why) => {
                verdict.unreadable.push((path, why));
                continue;
            }
        };
        if reference.version <= provided {
            continue;
        }
        let newer = Newer {
            reference: reference.clone(),
            provided,
            path,
        };
        if CORE.iter().any(|c| c.eq_ignore_ascii_case(&reference.name)) {
            verdict.blocking.push(newer);
        } else {
            verdict.other.push(newer);
        }
    }
    verdict
}

/// Reads an assembly file.
pub(crate) fn read_file(path: &Path) -> Result<AssemblyFile, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    AssemblyFile::read(&bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// Compares the helper at `helper` with the runtime whose assemblies are
/// in `runtime_dir` (the directory of its `System.Private.CoreLib.dll`).
/// An `Err` when the helper cannot be read.
pub(crate) fn check(helper: &Path, runtime_dir: &Path) -> Result<Verdict, String> {
    let file = read_file(helper)?;
    Ok(compare(&file, |name| {
        // A simple name; anything else is no file of the runtime's.
        if name.is_empty() || name.contains(['/', '\\', ':']) || name.starts_with('.') {
            return None;
        }
        let path = runtime_dir.join(format!("{name}.dll"));
        if !path.is_file() {
            return None;
        }
        let version = read_file(&path).and_then(|f| {
            f.identity
                .map(|i| i.version)
                .ok_or_else(|| format!("{}: no Assembly row", path.display()))
        });
        Some((path, version))
    }))
}

/// The message refusing a helper that references `newer`.
pub(crate) fn refusal(helper: &Path, newer: &Newer) -> String {
    format!(
        "helper {} references {} {}, newer than this runtime's {} ({}): the runtime cannot \
         load the helper (its startup hook fails too), so no call could be wrapped; build \
         it for the oldest runtime it must run on (netcoreapp3.1 loads on every runtime \
         from 3.1 on)",
        helper.display(),
        newer.reference.name,
        newer.reference.version,
        newer.provided,
        newer.path.display(),
    )
}

/// The warning about a helper whose references `newer` (none of them a
/// [`CORE`] assembly) are newer than the runtime's copies.
pub(crate) fn warning(helper: &Path, newer: &[Newer]) -> String {
    let list: Vec<String> = newer
        .iter()
        .map(|n| {
            format!(
                "{} {} (this runtime's: {}, {})",
                n.reference.name,
                n.reference.version,
                n.provided,
                n.path.display()
            )
        })
        .collect();
    format!(
        "helper {} references assemblies newer than this runtime's: {}; unless the \
         application carries those versions, every call of the helper into them fails, \
         and the wrapped methods swallow what their probes throw",
        helper.display(),
        list.join(", "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec;

    use crate::instrument::assembly_file::test_support::{name, TINY};

    fn helper(references: &[AssemblyName]) -> AssemblyFile {
        AssemblyFile {
            identity: Some(name("Helper", [0; 4])),
            references: references.to_vec(),
        }
    }

    /// A runtime with these assemblies (in /rt/).
    fn runtime<'a>(
        assemblies: &'a [(&str, [u16; 4])],
    ) -> impl FnMut(&str) -> Option<(PathBuf, Result<Version, String>)> + 'a {
        move |n| {
            assemblies.iter().find(|(a, _)| *a == n).map(|(a, v)| {
                let path = PathBuf::from(format!("/rt/{a}.dll"));
                if *v == [0xFFFF; 4] {
                    (path, Err("unreadable".to_string()))
                } else {
                    (path, Ok(Version(*v)))
                }
            })
        }
    }

    #[test]
    fn a_newer_system_runtime_blocks_and_other_newer_references_warn() {
        let built_for_10 = helper(&[
            name("System.Runtime", [10, 0, 0, 0]),
            name("System.Console", [10, 0, 0, 0]),
            name("System.Text.Json", [10, 0, 0, 0]),
        ]);
        let net31 = [
            ("System.Runtime", [4, 2, 2, 0]),
            ("System.Console", [4, 1, 2, 0]),
        ];
        let verdict = compare(&built_for_10, runtime(&net31));
        let newer = |n: &str, provided: [u16; 4]| Newer {
            reference: name(n, [10, 0, 0, 0]),
            provided: Version(provided),
            path: PathBuf::from(format!("/rt/{n}.dll")),
        };
        assert_eq!(
            verdict,
            Verdict {
                // System.Text.Json is no file of this runtime: not judged.
                blocking: vec![newer("System.Runtime", [4, 2, 2, 0])],
                other: vec![newer("System.Console", [4, 1, 2, 0])],
                unreadable: vec![],
            }
        );
    }

    #[test]
    fn references_as_old_as_the_runtime_or_older_pass() {
        let built_for_31 = helper(&[
            name("System.Runtime", [4, 2, 2, 0]),
            name("netstandard", [2, 0, 0, 0]),
            name("System.Console", [4, 1, 2, 0]),
            name("Newtonsoft.Json", [13, 0, 0, 0]),
        ]);
        for rt in [
            [
                ("System.Runtime", [4, 2, 2, 0]),
                ("netstandard", [2, 1, 0, 0]),
                ("System.Console", [4, 1, 2, 0]),
            ],
            [
                ("System.Runtime", [11, 0, 0, 0]),
                ("netstandard", [2, 1, 0, 0]),
                ("System.Console", [11, 0, 0, 0]),
            ],
        ] {
            assert_eq!(compare(&built_for_31, runtime(&rt)), Verdict::default());
        }
    }

    #[test]
    fn every_core_assembly_blocks_by_any_newer_part_of_its_version() {
        for core in CORE {
            for newer in [[4, 0, 0, 1], [4, 0, 1, 0], [4, 1, 0, 0], [5, 0, 0, 0]] {
                let verdict = compare(
                    &helper(&[name(core, newer)]),
                    runtime(&[(core, [4, 0, 0, 0])]),
                );
                assert_eq!(verdict.blocking.len(), 1, "{core} {newer:?}");
                assert!(verdict.other.is_empty());
            }
        }
        // The binder matches names without regard to case.
        let verdict = compare(
            &helper(&[name("system.runtime", [10, 0, 0, 0])]),
            |_: &str| {
                Some((
                    PathBuf::from("/rt/System.Runtime.dll"),
                    Ok(Version([8, 0, 0, 0])),
                ))
            },
        );
        assert_eq!(verdict.blocking.len(), 1);
    }

    #[test]
    fn an_unreadable_runtime_assembly_is_said_and_not_judged() {
        let verdict = compare(
            &helper(&[name("System.Runtime", [10, 0, 0, 0])]),
            runtime(&[("System.Runtime", [0xFFFF; 4])]),
        );
        assert_eq!(
            verdict.unreadable,
            vec![(
                PathBuf::from("/rt/System.Runtime.dll"),
                "unreadable".to_string()
            )]
        );
        assert!(verdict.blocking.is_empty() && verdict.other.is_empty());
    }

    #[test]
    fn check_reads_the_helper_and_the_runtimes_files() {
        let dir = std::env::temp_dir().join(format!(
            "corprof-helper-check-{}-{:?}",
            std::process::id(),
            std::time::SystemTime::now()
        ));
        let rt = dir.join("rt");
        std::fs::create_dir_all(&rt).unwrap();
        let helper = dir.join("Tiny.dll");
        std::fs::write(&helper, TINY).unwrap();
        // No runtime assemblies: nothing to compare with.
        assert_eq!(check(&helper, &rt).unwrap(), Verdict::default());
        // Tiny.dll itself (version 0.0.0.0) as the runtime's System.Runtime
        // and System.Console: older than Tiny's references to them.
        std::fs::write(rt.join("System.Runtime.dll"), TINY).unwrap();
        std::fs::write(rt.join("System.Console.dll"), TINY).unwrap();
        std::fs::write(rt.join("System.Threading.Tasks.dll"), b"MZ, and no more").unwrap();
        let verdict = check(&helper, &rt).unwrap();
        assert_eq!(
            verdict.blocking,
            vec![Newer {
                reference: name("System.Runtime", [4, 2, 2, 0]),
                provided: Version([0; 4]),
                path: rt.join("System.Runtime.dll"),
            }]
        );
        assert_eq!(
            verdict.other,
            vec![Newer {
                reference: name("System.Console", [4, 1, 2, 0]),
                provided: Version([0; 4]),
                path: rt.join("System.Console.dll"),
            }]
        );
        assert_eq!(verdict.unreadable.len(), 1);
        assert_eq!(
            verdict.unreadable[0].0,
            rt.join("System.Threading.Tasks.dll")
        );
        // A helper that is no assembly is an error.
        std::fs::write(&helper, b"text").unwrap();
        let why = check(&helper, &rt).unwrap_err();
        assert!(why.ends_with("Tiny.dll: not a PE file (no MZ)"), "{why}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_messages_name_the_reference_the_runtimes_copy_and_the_remedy() {
        let newer = |n: &str, v, p| Newer {
            reference: name(n, v),
            provided: Version(p),
            path: PathBuf::from(format!(
                "/dotnet/shared/Microsoft.NETCore.App/3.1.3/{n}.dll"
            )),
        };
        let helper = Path::new("/opt/Helper.dll");
        assert_eq!(
            refusal(
                helper,
                &newer("System.Runtime", [10, 0, 0, 0], [4, 2, 2, 0])
            ),
            "helper /opt/Helper.dll references System.Runtime 10.0.0.0, newer than this \
             runtime's 4.2.2.0 (/dotnet/shared/Microsoft.NETCore.App/3.1.3/System.Runtime.dll): \
             the runtime cannot load the helper (its startup hook fails too), so no call could \
             be wrapped; build it for the oldest runtime it must run on (netcoreapp3.1 loads on \
             every runtime from 3.1 on)"
        );
        assert_eq!(
            warning(
                helper,
                &[
                    newer("System.Console", [99, 0, 0, 0], [4, 1, 2, 0]),
                    newer("System.Collections", [10, 0, 0, 0], [4, 1, 2, 0]),
                ]
            ),
            "helper /opt/Helper.dll references assemblies newer than this runtime's: \
             System.Console 99.0.0.0 (this runtime's: 4.1.2.0, \
             /dotnet/shared/Microsoft.NETCore.App/3.1.3/System.Console.dll), System.Collections \
             10.0.0.0 (this runtime's: 4.1.2.0, \
             /dotnet/shared/Microsoft.NETCore.App/3.1.3/System.Collections.dll); unless the \
             application carries those versions, every call of the helper into them fails, and \
             the wrapped methods swallow what their probes throw"
        );
    }
}
