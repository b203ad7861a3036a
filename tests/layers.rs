//! The layering rule of docs/design.md ("The layers"), checked on the
//! sources: each module of `src/` may use only the modules on its own floor
//! or below. A `crate::m` (or `$crate::m`) path in code (comments and doc
//! comments aside) is a use of module `m`; the crate root's items
//! (`crate::GUID`, `crate::export`, `$crate::__private`) are the COM core's
//! public face and allowed everywhere.
//!
//! Floors, bottom to top: `bytes` (the one byte reader) and `sys` (the
//! operating system's calls declared once), which use nothing and which
//! every module may use; `com` (with `ctypes`, `codes`); `profiling` and
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
//! No file of such a module has more than [`MAX_CODE_LINES`] lines of code.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// The crate's modules (directories or files under `src/`).
const MODULES: &[&str] = &[
    "bytes",
    "sys",
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

/// What every module may use: the floor below the COM core.
const EVERYWHERE: &[&str] = &["bytes", "sys"];

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
        "bytes" | "sys" | "com" => &[],
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
                "gc_pauses",
                "heap_snapshot",
                "live_heap",
                "mode",
                "unix",
                "win32",
            ],
            // The sample types and options; CFA programs; signal mode's
            // resolver.
            &["cfi", "options", "resolver"],
            // The sampler's state and statistics; the environment's
            // settings; the module table and its CFI step.
            &["env", "state", "unwind"],
            // The one record path; the memory parts in a profile; the
            // exporters (a directory: one room); the handler's walk.
            &["export", "memory", "record", "walk"],
            // The ticker; the output files; the attach request; signal
            // mode's buffer and registry.
            &["attach", "output", "slots", "ticker"],
            // The `SIGPROF` handler.
            &["handler"],
            // Signal mode's registrations, timers, start and stop.
            &["signal"],
            // The modes, on the ticker and the record path.
            &["signal_loop", "suspend_runtime", "thread_suspend"],
            // The public `Sampler`.
            &["sampler"],
            // Its starts and builder; the runtime's events.
            &["builder", "events"],
            // The `Profiler` part.
            &["component"],
        ],
    ),
];

/// The most lines of code (not blank, not a comment) a file of a module
/// with rooms may have.
const MAX_CODE_LINES: usize = 600;

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
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
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

/// The violations of [`ROOMS`] and [`MAX_CODE_LINES`].
fn room_violations() -> Vec<String> {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    for &(module, floors) in ROOMS {
        let mut files = Vec::new();
        rust_files(&src.join(module), &mut files);
        files.sort();
        for file in &files {
            let text = fs::read_to_string(file).unwrap();
            let lines = code_lines(&text);
            if lines > MAX_CODE_LINES {
                found.push(format!(
                    "{}: {lines} lines of code, more than {MAX_CODE_LINES}",
                    file.display()
                ));
            }
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
                    && (module == "bytes"
                        || module == "sys"
                        || !EVERYWHERE.contains(&used.as_str()))
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
    assert!(allowed("bytes").is_empty());
    assert!(allowed("sys").is_empty());
}
