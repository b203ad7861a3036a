//! The layering rule of docs/design.md ("The layers", whose table of
//! modules [`the_layering_table_names_every_module_of_src`] holds against
//! `src/`), checked on the
//! sources: each module of `src/` may use only the modules on its own floor
//! or below. A `crate::m` (or `$crate::m`) path in code (comments and doc
//! comments aside) is a use of module `m`; the crate root's items
//! (`crate::GUID`, `crate::export`, `$crate::__private`) are the COM core's
//! public face and allowed everywhere.
//!
//! Floors, bottom to top: `support` (the crate-wide utilities: the one
//! byte reader, the operating system's calls declared once, the lock, the
//! boolean variables), which uses nothing and which every module may use
//! (and `fake_scope`, the unit tests' fake, `#[cfg(test)]` only); `com`
//! (with `ctypes`, `codes`, `error`); `profiling` and
//! `metadata`; `facade`; the capability modules (`instrument`, `hooks`,
//! `sampling`, `coverage`), each on its own. `cil`, `eventpipe`, `profile`,
//! `nettrace` and `diagnostics` stand beside: `cil` uses only the COM core,
//! `eventpipe` (in-process EventPipe events) and `nettrace` (the trace
//! format) only `event_format` (EventPipe's event format, which they share
//! and which uses nothing), `profile` nothing, `diagnostics` the raw
//! layer; the capabilities may use `cil`, `eventpipe` and `profile`.
//! Inside `sampling`, the memory parts (`gc_pauses.rs`, `live_heap.rs`)
//! use none of the sampler's other files.
//!
//! Inside a module split into rooms ([`ROOMS`]), the same rule one level
//! down: each file (a room: `src/coverage/session.rs` is `session`) names
//! only rooms on the floors below its own (`super::room`,
//! `crate::coverage::room`), never a room beside or above it (so no circle),
//! and never an item through the module's root (`super::Coverage`: name
//! the room it lives in); the root (`mod.rs`) only declares and re-exports.
//! No file of `src/` has more than [`MAX_CODE_LINES`] lines of code but
//! those of [`ONE_IDEA`], each one idea named in its first line.
//!
//! Methods too: an `impl` block stands in its type's room or a room above
//! it in the same module, never below and never in a capability (which
//! adds methods to a facade type only through a trait of its own:
//! `hooks::ProfilerInfoHooks`); and a room calls no inherent method defined
//! in a room above or beside it, where the scanner can see it (a `.name(`
//! call of a name defined once in `src/`, and not a standard library
//! method's: [`STD_METHODS`]).

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// The crate's modules (directories or files under `src/`).
const MODULES: &[&str] = &[
    "support",
    "fake_scope",
    "com",
    "ctypes",
    "codes",
    "error",
    "profiling",
    "metadata",
    "facade",
    "cil",
    "diagnostics",
    "instrument",
    "hooks",
    "sampling",
    "coverage",
    "eventpipe",
    "event_format",
    "profile",
    "nettrace",
    "bin",
];

/// What every module may use: the support floor below the COM core
/// (`bytes`, `sys`, `sync`, `env`, `pe`, `flate`), and the unit tests' fake
/// metadata scope, which only `#[cfg(test)]` code can name (lib.rs declares
/// it `#[cfg(all(test, feature = "std"))]`: it is never shipped).
const EVERYWHERE: &[&str] = &["support", "fake_scope"];

/// What each module may use besides itself, the crate root's items and
/// [`EVERYWHERE`].
fn allowed(module: &str) -> &'static [&'static str] {
    const RAW: &[&str] = &["com", "ctypes", "codes", "profiling", "metadata"];
    /// The capabilities' floor: the facade and everything below, `cil`,
    /// and the formats `eventpipe` and `profile` (last two).
    const CAPABILITY: &[&str] = &[
        "com",
        "ctypes",
        "codes",
        "profiling",
        "metadata",
        "facade",
        "cil",
        "eventpipe",
        "profile",
    ];
    /// The facade's: the same but `eventpipe` and `profile`.
    const FACADE: &[&str] = CAPABILITY.split_at(CAPABILITY.len() - 2).0;
    match module {
        "support" | "com" => &[],
        // Test support: it fakes what the facade reads.
        "fake_scope" => FACADE,
        "ctypes" | "codes" => &["com", "profiling", "metadata"],
        "error" => &["com"],
        "profiling" | "metadata" => RAW,
        "facade" => FACADE,
        "cil" => &["com"],
        "diagnostics" => RAW,
        "profile" | "event_format" => &[],
        "eventpipe" | "nettrace" => &["event_format"],
        // The `corprof` command uses the public API (`corprof::`), never
        // `crate::`.
        "bin" => &[],
        "instrument" | "hooks" | "sampling" | "coverage" => CAPABILITY,
        other => panic!("module `{other}` has no floor in tests/layers.rs: add it"),
    }
}

/// The modules split into rooms, and their rooms' floors, bottom first.
const ROOMS: &[(&str, &[&[&str]])] = &[
    (
        "facade",
        &[
            // The facade's basics: the `Result` type, UTF-16, the
            // callbacks' arguments, the shutdown flag, `SIGTERM`.
            &["args", "result", "shutdown", "strings", "termination"],
            // The metadata side: the enumerators, metadata import.
            &["enumerators", "metadata"],
            // Metadata emit; the ledger of rewritten methods.
            &["emit", "rewritten"],
            // The per-module cache's data.
            &["module_cache"],
            // `ProfilerInfo` and its lifecycle (child: `info/functions.rs`,
            // IL bodies, ReJIT, `FunctionControl`).
            &["info"],
            // Jobs on `ProfilerInfo`: the event mask, EventPipe, stack
            // walks, suspension.
            &["event_mask", "eventpipe", "stack", "suspend"],
            // Attach; the heap; statics; all naming (and the module
            // cache's lookups).
            &["attach", "heap", "naming", "statics"],
            // The profiler side: the `Profiler` trait, composition, the
            // adapter, the export.
            &["profiler"],
            &["compose"],
            &["adapter"],
            &["export"],
        ],
    ),
    (
        "coverage",
        &[
            // Formats and the IL rewriting: nothing of coverage's own.
            &["claims", "filter", "inflate", "pdb", "probes", "report"],
            // The assembly's debug directory (its embedded PDB, inflated);
            // several processes' counts added up.
            &["pe", "merge"],
            // The settings; a module's PDB found and parsed.
            &["options", "symbols"],
            // What a method is reported under, whether it is covered.
            &["naming"],
            // The runtime part: claims, rewriting, counters, the reports.
            &["session"],
            // The `Profiler` part.
            &["component"],
        ],
    ),
    (
        "sampling",
        &[
            // Nothing of the sampler's own: the estimators and decoders,
            // the memory parts, the modes' enum and statistics, the OS
            // calls, the handler's readers of unwind data and frameless
            // code; the heap snapshots (on nothing of the sampler's).
            &[
                "alloc",
                "clock",
                "contention",
                "dwarf",
                "exceptions",
                "frameless",
                "gc_heap",
                "gc_pauses",
                "heap_snapshot",
                "live_heap",
                "mode",
                "triggers",
                "unix",
                "waits",
                "win32",
            ],
            // The sample types and options; CFA programs; signal mode's
            // resolver; the rules' evaluation; the GC threads' CPU.
            &["armed", "cfi", "gc_threads", "options", "resolver"],
            // The flight recorder's ring (of the sample types' trees).
            &["recorder"],
            // The sampler's state and statistics; the environment's
            // settings; the module table and its CFI step.
            &["env", "state", "unwind"],
            // The one record path; the memory parts in a profile; the
            // handler's walk.
            &["memory", "record", "walk"],
            // A profile as pprof; the ticker; signal mode's buffer and
            // registry.
            &["pprof", "slots", "ticker"],
            // The exporters (a directory: one room); the output files; the
            // `SIGPROF` handler.
            &["export", "handler", "output"],
            // The attach request; signal mode's registrations, timers,
            // start and stop.
            &["attach", "incident", "signal"],
            // The modes, on the ticker and the record path.
            &["signal_loop", "suspend_runtime", "thread_suspend"],
            // The public `Sampler`.
            &["sampler"],
            // Its starts and builder; the runtime's events; the summary
            // file.
            &["builder", "events", "summary"],
            // The `Profiler` part.
            &["component"],
        ],
    ),
];

/// The most lines of code (not blank, not a comment) a file of `src/` may
/// have, but the files of [`ONE_IDEA`].
const MAX_CODE_LINES: usize = 600;

/// The files of `src/` allowed past [`MAX_CODE_LINES`]: each holds one
/// idea, named in its first line (the file, the name its first line
/// holds). An entry for a file within the limit is refused too, so the
/// list stays what it says.
const ONE_IDEA: &[(&str, &str)] = &[
    // The signature codec.
    ("cil/sig.rs", "Signature blobs"),
    // The nettrace format's streaming parser.
    ("nettrace/parser.rs", "The streaming parser"),
    // The unit tests' fake metadata scope (never shipped).
    ("fake_scope.rs", "The one fake metadata scope"),
    // The adapter of the IDL's callback traits to `Profiler`.
    ("facade/adapter.rs", "[`ProfilerCallback`]"),
    // The safe `IMetaDataImport`.
    ("facade/metadata.rs", "[`MetadataImport`]"),
    // The safe `IMetaDataEmit`.
    ("facade/emit.rs", "[`MetadataEmit`]"),
    // A method target: its grammar, matching and resolution.
    ("instrument/calltarget/targets.rs", "[`MethodTarget`]"),
    // CallTarget as a `Profiler` part.
    ("instrument/component.rs", "[`CallTargetProfiler`]"),
];

/// The files of `src/` past [`MAX_CODE_LINES`] not in [`ONE_IDEA`], the
/// entries of [`ONE_IDEA`] whose first line does not name their idea, and
/// those within the limit.
fn size_violations() -> Vec<String> {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut found = Vec::new();
    for file in &files {
        // `/`-separated on every host (Windows gives `cil\sig.rs`).
        let rel = file
            .strip_prefix(&src)
            .unwrap()
            .to_str()
            .unwrap()
            .replace('\\', "/");
        let rel = rel.as_str();
        let text = fs::read_to_string(file).unwrap();
        let lines = code_lines(&text);
        let idea = ONE_IDEA.iter().find(|(path, _)| *path == rel);
        match idea {
            None if lines > MAX_CODE_LINES => found.push(format!(
                "src/{rel}: {lines} lines of code, more than {MAX_CODE_LINES}: split it, or name its one idea in its first line and list it in ONE_IDEA"
            )),
            None => {}
            Some(_) if lines <= MAX_CODE_LINES => found.push(format!(
                "src/{rel} is within {MAX_CODE_LINES} lines of code: take it off ONE_IDEA"
            )),
            Some((_, name)) if !text.lines().next().unwrap_or("").contains(name) => found.push(
                format!("src/{rel}: its first line does not name its one idea, {name}"),
            ),
            Some(_) => {}
        }
    }
    for (path, _) in ONE_IDEA {
        if !src.join(path).exists() {
            found.push(format!("ONE_IDEA lists src/{path}, which does not exist"));
        }
    }
    found
}

#[test]
fn no_file_is_over_the_limit_but_one_idea() {
    let found = size_violations();
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The floor of `room` in `floors`.
fn floor_of(floors: &[&[&str]], room: &str) -> Option<usize> {
    floors.iter().position(|f| f.contains(&room))
}

/// The names a line of code reaches through `prefix` (`super::` or
/// `crate::coverage::`): one name, or each name of a `{...}` group on the
/// line; `*` (a test module's `use super::*`) is none, and so is a prefix
/// that continues a path (`super::super::x` reaches nothing through
/// `super::`: [`room_problems`] refuses it on its own).
fn names_after(code: &str, prefix: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut names = Vec::new();
    let mut from = 0;
    while let Some(found) = code[from..].find(prefix) {
        let at = from + found;
        let before = code[..at].chars().next_back();
        let after = &code[at + prefix.len()..];
        from = at + prefix.len();
        // `$crate::` is a macro expansion's path in the user's crate: a
        // public path, not a room's use.
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':' || c == '$') {
            continue;
        }
        if let Some(group) = after.strip_prefix('{') {
            let group = group.split('}').next().unwrap_or("");
            names.extend(
                group
                    .split(',')
                    .map(|n| ident(n.trim()))
                    .filter(|n| !n.is_empty()),
            );
        } else {
            let name = ident(after);
            if !name.is_empty() && name != "super" {
                names.push(name);
            }
        }
    }
    names
}

/// Where a file of a module with rooms stands: its room and floor, and
/// whether its `super::` is its own room (a file of a subdirectory room,
/// but the subdirectory's `mod.rs`) rather than the module's root.
struct RoomFile<'a> {
    module: &'a str,
    floors: &'a [&'a [&'a str]],
    room: &'a str,
    own: usize,
    super_is_room: bool,
}

/// The problems of one line of code (comments stripped) of a room's file:
/// a room beside or above it, an item reached through the module's root,
/// or `super::super` (which leaves the room: name the room by its crate
/// path).
fn room_problems(file: &RoomFile<'_>, code: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if code.contains("super::super") {
        problems.push(format!(
            "room `{}` names `super::super`: name the room by `crate::{}::room`",
            file.room, file.module
        ));
    }
    let mut names = names_after(code, &format!("crate::{}::", file.module));
    if !file.super_is_room {
        names.extend(names_after(code, "super::"));
    }
    for name in names {
        let problem = match floor_of(file.floors, &name) {
            Some(_) if name == file.room => None,
            Some(floor) if floor < file.own => None,
            Some(_) => Some(format!(
                "room `{}` uses room `{name}`, beside or above it",
                file.room
            )),
            None => Some(format!(
                "room `{}` reaches `{name}` through the root of `{}`: name its room",
                file.room, file.module
            )),
        };
        problems.extend(problem);
    }
    problems
}

/// Lines of code: not blank, not only a comment.
fn code_lines(text: &str) -> usize {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("//"))
        .count()
}

/// The violations of [`ROOMS`].
fn room_violations() -> Vec<String> {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    for &(module, floors) in ROOMS {
        let mut files = Vec::new();
        rust_files(&src.join(module), &mut files);
        files.sort();
        for file in &files {
            let text = fs::read_to_string(file).unwrap();
            let rel = file.strip_prefix(src.join(module)).unwrap();
            let room = rel
                .components()
                .next()
                .and_then(|c| c.as_os_str().to_str())
                .map(|c| c.strip_suffix(".rs").unwrap_or(c).to_owned())
                .unwrap();
            if room == "mod" {
                continue;
            }
            let Some(own) = floor_of(floors, &room) else {
                found.push(format!(
                    "{} is room `{room}` of `{module}`, which has no floor in ROOMS (tests/layers.rs): add it",
                    file.display()
                ));
                continue;
            };
            // A subdirectory is one room: its files name each other through
            // `super::` (but its `mod.rs`, whose `super::` is the root).
            let file_in_room = RoomFile {
                module,
                floors,
                room: &room,
                own,
                super_is_room: rel.components().count() > 1
                    && rel.file_name().is_some_and(|f| f != "mod.rs"),
            };
            for (n, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap();
                for problem in room_problems(&file_in_room, code) {
                    found.push(format!(
                        "{}:{}: {problem}: {}",
                        file.display(),
                        n + 1,
                        line.trim()
                    ));
                }
            }
        }
    }
    found
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module a file of `src/` belongs to (`None` for `lib.rs` and the
/// docs-only `example_generated.rs`).
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel.components().next()?.as_os_str().to_str()?.to_owned();
    let name = first.strip_suffix(".rs").unwrap_or(&first).to_owned();
    match name.as_str() {
        "lib" | "example_generated" => None,
        _ => Some(name),
    }
}

/// The modules a line of code names as `crate::m` or `$crate::m`.
fn modules_used(code: &str) -> BTreeSet<String> {
    let mut used = BTreeSet::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().next_back();
        let after = &rest[at + "crate::".len()..];
        // `$crate::` and `crate::`, not `mycrate::`.
        if !before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
                .collect();
            if MODULES.contains(&name.as_str()) {
                used.insert(name);
            }
        }
        rest = after;
    }
    used
}

fn violations() -> Vec<String> {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut found = Vec::new();
    for file in &files {
        let Some(module) = module_of(&src, file) else {
            continue;
        };
        assert!(
            MODULES.contains(&module.as_str()),
            "{} is in module `{module}`, which has no floor in tests/layers.rs",
            file.display()
        );
        let text = fs::read_to_string(file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap();
            if code.contains("super::super") {
                found.push(format!(
                    "{}:{}: `super::super` leaves the module: name it by its crate path",
                    file.display(),
                    n + 1
                ));
            }
            for used in modules_used(code) {
                if used != module
                    && !allowed(&module).contains(&used.as_str())
                    && (module == "support" || !EVERYWHERE.contains(&used.as_str()))
                {
                    found.push(format!(
                        "{}:{}: `{module}` uses `{used}`, a module above it or beside it: {}",
                        file.display(),
                        n + 1,
                        line.trim()
                    ));
                }
            }
        }
    }
    found
}

#[test]
fn no_module_uses_a_module_above_or_beside_it() {
    let found = violations();
    assert!(
        found.is_empty(),
        "layering violations:\n{}",
        found.join("\n")
    );
}

/// The sampler's memory parts, files of their own inside `sampling`
/// (docs/sampling.md, "Memory"): each stands on the floors below (the
/// facade, `profiling`, `eventpipe`, `profile`) and names no other file of
/// the sampler (`super::` in code); the sampler uses them, never the
/// reverse, and `sampling/memory.rs` alone puts them into a profile.
const SAMPLING_PARTS: &[&str] = &[
    "sampling/gc_pauses.rs",
    "sampling/heap_snapshot.rs",
    "sampling/live_heap.rs",
];

/// A part's lines of code that name another file of its module
/// (`super::`), comments and doc comments aside.
fn part_violations(text: &str) -> Vec<String> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| line.split("//").next().unwrap().contains("super::"))
        .map(|(n, line)| format!("{}: {}", n + 1, line.trim()))
        .collect()
}

#[test]
fn the_samplers_memory_parts_use_no_other_file_of_the_sampler() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    for part in SAMPLING_PARTS {
        let text = fs::read_to_string(src.join(part)).unwrap();
        // The test module's `use super::*` is the part itself.
        let code = text.split("#[cfg(test)]").next().unwrap();
        let found = part_violations(code);
        assert!(
            found.is_empty(),
            "{part} uses the sampler:\n{}",
            found.join("\n")
        );
    }
    // The scanner sees a use, not a comment.
    assert_eq!(
        part_violations("use super::sampler::Inner;\n// super::x").len(),
        1
    );
}

#[test]
fn rooms_use_only_the_floors_below_them() {
    let found = room_violations();
    assert!(found.is_empty(), "room violations:\n{}", found.join("\n"));
}

#[test]
fn the_room_check_sees_a_violation() {
    let floors = ROOMS.iter().find(|r| r.0 == "coverage").unwrap().1;
    // Every file of src/coverage but the root has a floor.
    let mut files = Vec::new();
    rust_files(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/coverage"),
        &mut files,
    );
    assert!(files.len() > 5);
    for file in &files {
        let stem = file.file_stem().unwrap().to_str().unwrap();
        assert!(stem == "mod" || floor_of(floors, stem).is_some(), "{stem}");
    }
    assert!(floor_of(floors, "pdb") < floor_of(floors, "session"));
    assert_eq!(
        names_after("use super::report::{self, BranchHits};", "super::"),
        ["report"]
    );
    assert_eq!(
        names_after("use super::{options::X, session::Coverage};", "super::"),
        ["options", "session"]
    );
    assert_eq!(
        names_after("x(crate::coverage::pdb::PdbError)", "crate::coverage::"),
        ["pdb"]
    );
    assert!(names_after("use super::*;", "super::").is_empty());
    assert_eq!(names_after("use super::Coverage;", "super::"), ["Coverage"]);
    assert_eq!(code_lines("// a\n\n  fn f() {}\n  /// b\n}\n"), 2);
}

/// The subdirectory rule: a file of `export/` (one room) names its room's
/// files and items through `super::`, other rooms only below it through
/// `crate::sampling::room`; `export/mod.rs`'s `super::` is the root's;
/// `super::super` is refused anywhere.
#[test]
fn the_room_check_sees_a_subdirectory_as_one_room() {
    let floors = ROOMS.iter().find(|r| r.0 == "sampling").unwrap().1;
    let own = floor_of(floors, "export").unwrap();
    // The preconditions: `state` is below `export`, `sampler` above.
    assert!(floor_of(floors, "state").unwrap() < own);
    assert!(floor_of(floors, "sampler").unwrap() > own);
    let file = |super_is_room| RoomFile {
        module: "sampling",
        floors,
        room: "export",
        own,
        super_is_room,
    };
    let (inner, root) = (file(true), file(false));
    assert!(room_problems(&inner, "use super::{lock, Exporter};").is_empty());
    assert!(room_problems(&inner, "use super::http::Timeouts;").is_empty());
    assert!(room_problems(&inner, "use crate::sampling::state::Profile;").is_empty());
    assert_eq!(
        room_problems(&inner, "use crate::sampling::sampler::Inner;").len(),
        1
    );
    assert_eq!(
        room_problems(&inner, "use crate::sampling::Profile;").len(),
        1
    );
    let up = room_problems(&inner, "use super::super::sampler::Inner;");
    assert_eq!(up.len(), 1, "{up:?}");
    assert!(up[0].contains("super::super"), "{up:?}");
    // `export/mod.rs`: `super::` is the module's root.
    assert_eq!(
        room_problems(&root, "use super::sampler::Profile;").len(),
        1
    );
    assert_eq!(room_problems(&root, "use super::Profile;").len(), 1);
    assert!(room_problems(&root, "use super::env::var;").is_empty());
    // A path continued by a prefix is not a second name.
    assert!(names_after("use super::super::sampler::Inner;", "super::").is_empty());
    assert!(names_after("x::super::y", "super::").is_empty());
}

#[test]
fn the_check_sees_a_violation() {
    // The scanner itself: a facade line naming a capability is seen, a
    // comment or a longer identifier ending in `crate` is not.
    assert_eq!(
        modules_used("use crate::hooks::FunctionHooks; $crate::instrument::X"),
        BTreeSet::from(["hooks".to_owned(), "instrument".to_owned()])
    );
    assert!(modules_used("mycrate::hooks::X").is_empty());
    assert!(!allowed("facade").contains(&"hooks"));
    assert!(!allowed("facade").contains(&"profile"));
    assert!(!allowed("facade").contains(&"eventpipe"));
    assert!(allowed("sampling").contains(&"profile"));
    assert!(allowed("sampling").contains(&"eventpipe"));
    assert!(!allowed("sampling").contains(&"hooks"));
    assert!(!allowed("com").contains(&"profiling"));
    assert!(allowed("support").is_empty());
}

/// Where an item of `src/` stands: its module and, in a module with
/// [`ROOMS`], its room (`None` for a module's `mod.rs` or a module without
/// rooms).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Place {
    module: String,
    room: Option<String>,
    file: PathBuf,
}

impl Place {
    fn of(src: &Path, file: &Path) -> Option<Place> {
        let module = module_of(src, file)?;
        let room = ROOMS.iter().find(|r| r.0 == module).and_then(|_| {
            let rel = file.strip_prefix(src.join(&module)).ok()?;
            let first = rel.components().next()?.as_os_str().to_str()?;
            let room = first.strip_suffix(".rs").unwrap_or(first);
            (room != "mod").then(|| room.to_owned())
        });
        Some(Place {
            module,
            room,
            file: file.to_owned(),
        })
    }

    /// The floor of this place's room in its module's [`ROOMS`].
    fn floor(&self) -> Option<usize> {
        let floors = ROOMS.iter().find(|r| r.0 == self.module)?.1;
        floor_of(floors, self.room.as_deref()?)
    }

    /// Whether code at `self` may reach what stands at `other`: the same
    /// file or room, a module it may use, or a room on a floor below.
    fn may_reach(&self, other: &Place) -> bool {
        if self.file == other.file {
            return true;
        }
        if self.module != other.module {
            return allowed_or_everywhere(&self.module, &other.module);
        }
        if self.room.is_none() || self.room == other.room {
            return true;
        }
        match (self.floor(), other.floor()) {
            (Some(mine), Some(theirs)) => theirs < mine,
            // The module's root declares and re-exports: reachable.
            _ => other.room.is_none(),
        }
    }
}

/// Whether module `module` may use module `used`.
fn allowed_or_everywhere(module: &str, used: &str) -> bool {
    allowed(module).contains(&used) || (module != "support" && EVERYWHERE.contains(&used))
}

/// The identifier at the start of `s`.
fn ident(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The code of a file, line by line, comments cut (a `//` inside a string
/// cuts too: the scanner stays on the safe side of what it sees).
fn code_of(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| l.split("//").next().unwrap().to_owned())
        .collect()
}

/// The types, traits and aliases a line of code defines at any depth
/// (`struct X`, `enum X`, `trait X`, `type X`, `union X`, and the
/// `interface X` of a `com_interface!`).
fn defined_types(code: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for keyword in [
        "struct ",
        "enum ",
        "trait ",
        "type ",
        "union ",
        "interface ",
    ] {
        let mut from = 0;
        while let Some(at) = code[from..].find(keyword) {
            let at = from + at;
            from = at + keyword.len();
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
                continue;
            }
            let name = ident(&code[at + keyword.len()..]);
            if name.chars().next().is_some_and(|c| c.is_ascii_uppercase()) {
                out.push(name);
            }
        }
    }
    out
}

/// An `impl` line's trait (if any) and self type: `impl<T> Tr<A> for X<T>
/// where` gives `(Some("Tr<A>"), "X")`; `impl X {` gives `(None, "X")`.
/// `None` for a line that is not an `impl` header.
fn impl_header(code: &str) -> Option<(Option<String>, String)> {
    let t = code.trim_start();
    let t = t.strip_prefix("unsafe ").unwrap_or(t);
    let rest = t.strip_prefix("impl")?;
    // `impl<...>`: skip the generics, balanced.
    let rest = if let Some(g) = rest.strip_prefix('<') {
        let mut depth = 1;
        let mut end = None;
        for (i, c) in g.char_indices() {
            match c {
                '<' => depth += 1,
                '>' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(i + 1);
                        break;
                    }
                }
                _ => {}
            }
        }
        &g[end?..]
    } else if rest.starts_with(' ') {
        rest
    } else {
        return None;
    };
    let rest = rest.split(" where").next()?.split('{').next()?.trim();
    let (tr, ty) = match rest.split_once(" for ") {
        Some((tr, ty)) => (Some(tr.trim().to_owned()), ty.trim()),
        None => (None, rest),
    };
    // The self type's last path segment, without generics or references.
    let ty = ty.trim_start_matches('&').trim_start_matches("mut ").trim();
    let ty = ty.split('<').next()?.rsplit("::").next()?.trim();
    let ty = ident(ty);
    (!ty.is_empty()).then(|| (tr, ty.to_owned()))
}

/// The uppercase identifiers in `s` (a trait's name and arguments).
fn type_names(s: &str) -> Vec<&str> {
    s.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.chars().next().is_some_and(|c| c.is_ascii_uppercase()))
        .collect()
}

/// Every `.rs` file of `src/` with its place (lib.rs and the docs-only
/// example aside) and its code.
fn sources() -> Vec<(Place, Vec<String>)> {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    files
        .iter()
        .filter_map(|f| Some((Place::of(&src, f)?, code_of(&fs::read_to_string(f).ok()?))))
        .collect()
}

/// Where each type name is defined: names defined in more than one place
/// are ambiguous to a text scanner and left out.
fn type_places(sources: &[(Place, Vec<String>)]) -> std::collections::BTreeMap<String, Place> {
    let mut all: std::collections::BTreeMap<String, Vec<Place>> = Default::default();
    for (place, code) in sources {
        for line in code {
            for name in defined_types(line) {
                let places = all.entry(name.to_owned()).or_default();
                if !places.contains(place) {
                    places.push(place.clone());
                }
            }
        }
    }
    all.into_iter()
        .filter(|(_, p)| p.len() == 1)
        .map(|(n, mut p)| (n, p.remove(0)))
        .collect()
}

/// The COM core's modules: one floor (`codes` and `error` add `HRESULT`'s
/// names and conversions).
const CORE: &[&str] = &["com", "codes", "ctypes", "error"];

/// The capabilities, each a module of its own on the top floor.
const CAPABILITIES: &[&str] = &["instrument", "hooks", "sampling", "coverage"];

/// The `impl` blocks placed where their type's room cannot have them: an
/// inherent `impl` for a type of another module (but within the COM core),
/// an `impl` in a capability of a trait that is not the capability's own
/// and names nothing of it (`From<Mine>` is its own) for a type of another
/// module, and, inside a module with rooms, any `impl` for a type of a room
/// on a floor above or beside the impl's. A room may add methods to a type of a room
/// below it (the tokio shape: `info.rs` + the rooms above); a capability
/// adds methods to a facade type only through a trait of its own.
fn impl_violations(sources: &[(Place, Vec<String>)]) -> Vec<String> {
    let types = type_places(sources);
    let mut found = Vec::new();
    for (place, code) in sources {
        for (n, line) in code.iter().enumerate() {
            let Some((tr, ty)) = impl_header(line) else {
                continue;
            };
            let Some(home) = types.get(&ty) else {
                continue;
            };
            if home.file == place.file {
                continue;
            }
            let own = |name: &str| {
                types
                    .get(name)
                    .is_some_and(|p| p.module == place.module && p.room == place.room)
            };
            let problem = if home.module != place.module {
                let core = |m: &str| CORE.contains(&m);
                match &tr {
                    // The COM core is one floor in several modules.
                    None if core(&home.module) && core(&place.module) => None,
                    None => Some(format!(
                        "inherent impl for `{ty}` of module `{}` placed in module `{}`: put it beside the type, or make it a trait of `{}`'s own",
                        home.module, place.module, place.module
                    )),
                    // My trait, or a trait about my type (`From<Mine>`).
                    Some(tr) if type_names(tr).into_iter().any(own) => None,
                    Some(_) if CAPABILITIES.contains(&place.module.as_str()) => Some(format!(
                        "impl for `{ty}` of module `{}` placed in capability `{}`: implement a trait of `{}`'s own",
                        home.module, place.module, place.module
                    )),
                    Some(_) => None,
                }
            } else if place.room.is_some() && home.room.is_some() && home.room != place.room {
                match (place.floor(), home.floor()) {
                    (Some(mine), Some(theirs)) if theirs < mine => None,
                    _ => Some(format!(
                        "impl for `{ty}` of room `{}` placed in room `{}`, beside or below it",
                        home.room.as_deref().unwrap_or(""),
                        place.room.as_deref().unwrap_or("")
                    )),
                }
            } else {
                None
            };
            if let Some(problem) = problem {
                found.push(format!(
                    "{}:{}: {problem}: {}",
                    place.file.display(),
                    n + 1,
                    line.trim()
                ));
            }
        }
    }
    found
}

/// The inherent methods of `src/`, by name, where each is defined: names
/// defined in more than one place are ambiguous and left out.
fn method_places(sources: &[(Place, Vec<String>)]) -> std::collections::BTreeMap<String, Place> {
    let mut all: std::collections::BTreeMap<String, Vec<Place>> = Default::default();
    for (place, code) in sources {
        // Inside an inherent impl (`Some(true)`), a trait impl or a trait
        // (`Some(false)`), or neither.
        let mut inside: Option<bool> = None;
        for line in code {
            if !line.starts_with(' ') {
                if let Some((tr, _)) = impl_header(line) {
                    inside = Some(tr.is_none());
                    continue;
                }
                if line.contains("trait ") && line.trim_end().ends_with('{') {
                    inside = Some(false);
                    continue;
                }
                if line.starts_with('}') {
                    inside = None;
                }
            }
            let Some(inherent) = inside else { continue };
            let t = line.trim_start();
            let Some(at) = t.find("fn ") else { continue };
            let head = &t[..at];
            if !head
                .split_whitespace()
                .all(|w| w == "pub" || w.starts_with("pub(") || w == "unsafe" || w == "const")
            {
                continue;
            }
            let name = ident(&t[at + 3..]);
            // A trait's method makes the name ambiguous.
            let here = if inherent {
                place.clone()
            } else {
                Place {
                    module: String::new(),
                    room: None,
                    file: PathBuf::new(),
                }
            };
            all.entry(name.to_owned()).or_default().push(here);
        }
    }
    all.into_iter()
        .filter(|(_, p)| p.len() == 1 && !p[0].module.is_empty())
        .map(|(n, mut p)| (n, p.remove(0)))
        .collect()
}

/// Names that are also methods of the standard library's types: a call
/// of one may be the standard library's, so the scanner cannot tell.
const STD_METHODS: &[&str] = &[
    "clear",
    "contains",
    "count",
    "find",
    "flush",
    "get",
    "insert",
    "is_empty",
    "iter",
    "len",
    "lock",
    "new",
    "next",
    "pop",
    "push",
    "read",
    "remove",
    "take",
    "to_string_lossy",
    "write",
];

/// The calls of an inherent method defined in a room above or beside the
/// caller's, in a module with rooms (`.name(` of a method
/// whose name is defined in exactly one place of `src/` and is not a
/// standard library method's): "no room names one above it", for methods.
fn call_violations(sources: &[(Place, Vec<String>)]) -> Vec<String> {
    let methods = method_places(sources);
    let mut found = Vec::new();
    for (place, code) in sources {
        for (n, line) in code.iter().enumerate() {
            for sep in ["."] {
                let mut from = 0;
                while let Some(at) = line[from..].find(sep) {
                    let at = from + at + sep.len();
                    from = at;
                    let name = ident(&line[at..]);
                    if name.is_empty() || !line[at + name.len()..].starts_with('(') {
                        continue;
                    }
                    if STD_METHODS.contains(&name) {
                        continue;
                    }
                    let Some(home) = methods.get(name) else {
                        continue;
                    };
                    // Across modules the paths tell: a module reaches a
                    // method of a module above only through an impl placed
                    // there (refused by `impl_violations`) or a trait it
                    // names (refused by `violations`).
                    if home.module == place.module && !place.may_reach(home) {
                        found.push(format!(
                            "{}:{}: calls `{name}`, a method of {}{}, above or beside it: {}",
                            place.file.display(),
                            n + 1,
                            home.module,
                            home.room
                                .as_deref()
                                .map(|r| format!("/{r}"))
                                .unwrap_or_default(),
                            line.trim()
                        ));
                    }
                }
            }
        }
    }
    found
}

#[test]
fn no_impl_is_placed_below_its_type_or_in_a_higher_capability() {
    let found = impl_violations(&sources());
    assert!(found.is_empty(), "impl violations:\n{}", found.join("\n"));
}

#[test]
fn no_method_of_a_room_above_is_called() {
    let found = call_violations(&sources());
    assert!(found.is_empty(), "upward calls:\n{}", found.join("\n"));
}

/// A synthetic source file at `path` (relative to `src/`).
fn fake(path: &str, code: &str) -> (Place, Vec<String>) {
    let src = PathBuf::from("/src");
    let place = Place::of(&src, &src.join(path)).unwrap();
    (place, code_of(code))
}

#[test]
fn the_impl_check_sees_a_method_added_from_above() {
    assert_eq!(
        impl_header("impl<'a, T: X<U>> fmt::Debug for Foo<'a, T> where T: Y {"),
        Some((Some("fmt::Debug".to_owned()), "Foo".to_owned()))
    );
    assert_eq!(
        impl_header("unsafe impl Send for Bar {}"),
        Some((Some("Send".to_owned()), "Bar".to_owned()))
    );
    assert_eq!(
        impl_header("impl ProfilerInfo {"),
        Some((None, "ProfilerInfo".to_owned()))
    );
    assert_eq!(impl_header("fn implement() {"), None);
    let info = fake("facade/info.rs", "pub struct ProfilerInfo {\n}\n");
    let sources = [
        info.clone(),
        fake("facade/suspend.rs", "pub struct SuspendedRuntime;\n"),
        // A room above `info` may add methods; a capability may not.
        fake("facade/naming/mod.rs", "impl ProfilerInfo {\n}\n"),
        fake(
            "hooks/function_hooks.rs",
            "pub trait Mine {}\nimpl ProfilerInfo {\n}\n",
        ),
        // A trait of the capability's own is its own.
        fake(
            "hooks/call_tree.rs",
            "impl crate::hooks::Mine for ProfilerInfo {}\n",
        ),
        // A room below the type's may not.
        fake("facade/metadata.rs", "impl SuspendedRuntime {\n}\n"),
    ];
    let found = impl_violations(&sources);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(found[0].contains("hooks/function_hooks.rs:2"), "{found:#?}");
    assert!(found[1].contains("facade/metadata.rs:1"), "{found:#?}");
}

#[test]
fn the_call_check_sees_a_method_of_a_room_above() {
    let sources = [
        fake(
            "sampling/state.rs",
            "pub struct Profile;\nfn f(p: &Profile) { p.to_pprof(); }\n",
        ),
        fake(
            "sampling/pprof.rs",
            "impl Profile {\n    pub fn to_pprof(&self) {}\n}\n",
        ),
        fake(
            "sampling/sampler.rs",
            "fn g(p: &Profile) { p.to_pprof(); }\n",
        ),
        // A name a trait also defines is ambiguous: not resolved.
        fake(
            "sampling/output.rs",
            "impl Profile {\n    pub fn write_all(&self) {}\n}\n",
        ),
        fake(
            "sampling/export/mod.rs",
            "trait W {\n    fn write_all(&self);\n}\n",
        ),
        fake(
            "sampling/record.rs",
            "fn h(p: &Profile) { p.write_all(); }\n",
        ),
    ];
    let found = call_violations(&sources);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].contains("sampling/state.rs:2"), "{found:#?}");
    assert!(found[0].contains("to_pprof"), "{found:#?}");
}

/// The modules docs/design.md's table ("The layers") names: the backticked
/// names of its second column, before any `:` or `(`.
fn design_modules(design: &str) -> BTreeSet<String> {
    let table = design
        .split("## The layers")
        .nth(1)
        .expect("docs/design.md has \"## The layers\"")
        .split("\n## ")
        .next()
        .unwrap();
    let mut modules = BTreeSet::new();
    for row in table.lines().filter(|l| l.starts_with('|')) {
        let Some(cell) = row.split('|').nth(2) else {
            continue;
        };
        let head = cell.split([':', '(']).next().unwrap();
        for (i, part) in head.split('`').enumerate() {
            if i % 2 == 1 {
                modules.insert(part.to_owned());
            }
        }
    }
    modules
}

#[test]
fn the_layering_table_names_every_module_of_src() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let design = fs::read_to_string(root.join("docs/design.md")).unwrap();
    let listed = design_modules(&design);
    let mut in_src = BTreeSet::new();
    for entry in fs::read_dir(root.join("src")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let name = name.strip_suffix(".rs").unwrap_or(&name).to_owned();
        if name != "lib" {
            in_src.insert(name);
        }
    }
    assert!(in_src.contains("facade") && in_src.len() > 15, "{in_src:?}");
    assert_eq!(
        listed, in_src,
        "docs/design.md's table of the layers and the modules of src/ differ"
    );
    // And tests/layers.rs gives each a floor.
    for module in in_src.iter().filter(|m| *m != "example_generated") {
        assert!(
            MODULES.contains(&module.as_str()),
            "{module} has no floor here"
        );
    }
    // The reader: a row's modules, not the words after its colon.
    assert_eq!(
        design_modules(
            "## The layers\n| x | `bin`: the `corprof` command | f |\n| y | `a`, `b` (`f`) | g |\n"
        ),
        BTreeSet::from(["a".to_owned(), "b".to_owned(), "bin".to_owned()])
    );
}
