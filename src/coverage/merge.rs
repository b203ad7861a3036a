//! Several processes' coverage as one report: each process writes its
//! counts as a `.counts` file ([`write_counts`]), and the `corprof
//! coverage` command reads them back ([`read_counts`]) and adds them up
//! ([`Merge`]) before it writes one lcov and one Cobertura file with
//! [`report`](super::report).
//!
//! The `.counts` format is corprof's own, line by line, fields separated
//! by a tab (`\`, tab, CR and LF in a field written `\\`, `\t`, `\r`,
//! `\n`):
//!
//! ```text
//! corprof-coverage-counts 1
//! summary <the profiler's summary line>
//! method <assembly> <class> <name> <token> <calls>
//! point <document> <start line> <end line> <hits>
//! branch <document> <line> <IL offset> <arm> <hits>
//! ```
//!
//! `point` and `branch` records belong to the `method` before them. Any
//! other shape is an error naming the line.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::format;
use std::string::{String, ToString};
use std::vec::Vec;

use super::report::{BranchHits, MethodCoverage, PointHits};

/// The first line of a `.counts` file.
pub const COUNTS_HEADER: &str = "corprof-coverage-counts 1";

fn escape(field: &str) -> String {
    let mut out = String::with_capacity(field.len());
    for c in field.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

fn unescape(field: &str) -> Result<String, String> {
    let mut out = String::with_capacity(field.len());
    let mut chars = field.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        out.push(match chars.next() {
            Some('\\') => '\\',
            Some('t') => '\t',
            Some('r') => '\r',
            Some('n') => '\n',
            other => return Err(format!("bad escape \\{}", other.unwrap_or(' '))),
        });
    }
    Ok(out)
}

/// The `.counts` text of `methods`, with the profiler's `summary` line.
pub fn write_counts(methods: &[MethodCoverage], summary: &str) -> String {
    let mut out = format!("{COUNTS_HEADER}\nsummary\t{}\n", escape(summary));
    for m in methods {
        let _ = writeln!(
            out,
            "method\t{}\t{}\t{}\t{}\t{}",
            escape(&m.assembly),
            escape(&m.class),
            escape(&m.name),
            m.token,
            m.calls
        );
        for p in &m.points {
            let _ = writeln!(
                out,
                "point\t{}\t{}\t{}\t{}",
                escape(&p.document),
                p.start_line,
                p.end_line,
                p.hits
            );
        }
        for b in &m.branches {
            let _ = writeln!(
                out,
                "branch\t{}\t{}\t{}\t{}\t{}",
                escape(&b.document),
                b.line,
                b.il_offset,
                b.arm,
                b.hits
            );
        }
    }
    out
}

/// One process's counts, read back.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// The profiler's summary line (methods instrumented, failures, ...).
    pub summary: String,
    /// Its methods.
    pub methods: Vec<MethodCoverage>,
}

fn number<T: core::str::FromStr>(field: &str, what: &str) -> Result<T, String> {
    field
        .parse()
        .map_err(|_| format!("{what} {field:?} is not a number"))
}

/// Reads a `.counts` file's text; an error names the line that is wrong.
pub fn read_counts(text: &str) -> Result<Counts, String> {
    let mut lines = text.lines().enumerate();
    match lines.next() {
        Some((_, COUNTS_HEADER)) => {}
        _ => {
            return Err(format!(
                "line 1: not a corprof counts file ({COUNTS_HEADER:?} expected)"
            ))
        }
    }
    let mut counts = Counts::default();
    for (n, line) in lines {
        read_record(&mut counts, line).map_err(|e| format!("line {}: {e}", n + 1))?;
    }
    Ok(counts)
}

/// The method the `point` and `branch` records belong to.
fn method(counts: &mut Counts) -> Result<&mut MethodCoverage, String> {
    let m = counts.methods.last_mut();
    m.ok_or_else(|| "a record before the first method".to_string())
}

fn read_record(counts: &mut Counts, line: &str) -> Result<(), String> {
    let fields: Vec<&str> = line.split('\t').collect();
    match fields.as_slice() {
        ["summary", text] => counts.summary = unescape(text)?,
        ["method", assembly, class, name, token, calls] => counts.methods.push(MethodCoverage {
            assembly: unescape(assembly)?,
            class: unescape(class)?,
            name: unescape(name)?,
            token: number(token, "token")?,
            calls: number(calls, "calls")?,
            points: Vec::new(),
            branches: Vec::new(),
        }),
        ["point", document, start, end, hits] => {
            let point = PointHits {
                document: unescape(document)?,
                start_line: number(start, "start line")?,
                end_line: number(end, "end line")?,
                hits: number(hits, "hits")?,
            };
            method(counts)?.points.push(point);
        }
        ["branch", document, line, offset, arm, hits] => {
            let branch = BranchHits {
                document: unescape(document)?,
                line: number(line, "line")?,
                il_offset: number(offset, "IL offset")?,
                arm: number(arm, "arm")?,
                hits: number(hits, "hits")?,
            };
            method(counts)?.branches.push(branch);
        }
        _ => {
            let kind = fields.first().copied().unwrap_or("");
            return Err(format!(
                "unexpected record {kind:?} with {} fields",
                fields.len()
            ));
        }
    }
    Ok(())
}

/// What identifies a method across processes: its assembly, token and
/// name, and its sequence points' places (another build of an assembly
/// of the same name is another method).
type MethodKey = (String, u32, String, Vec<(String, u32, u32)>);

fn key(m: &MethodCoverage) -> MethodKey {
    let places = m
        .points
        .iter()
        .map(|p| (p.document.clone(), p.start_line, p.end_line))
        .collect();
    (m.assembly.clone(), m.token, m.name.clone(), places)
}

/// Several processes' methods added up: per method (the same assembly,
/// token, name and sequence points) the calls, each point's hits and
/// each branch arm's hits (an arm one process never compiled counts what
/// the others saw). Counts saturate at `u64::MAX`.
#[derive(Default)]
pub struct Merge {
    methods: Vec<MethodCoverage>,
    index: HashMap<MethodKey, usize>,
}

impl Merge {
    /// Nothing yet.
    pub fn new() -> Merge {
        Merge::default()
    }

    /// Adds one process's methods.
    pub fn add(&mut self, methods: Vec<MethodCoverage>) {
        for m in methods {
            let k = key(&m);
            let Some(&at) = self.index.get(&k) else {
                self.index.insert(k, self.methods.len());
                self.methods.push(m);
                continue;
            };
            let into = &mut self.methods[at];
            into.calls = into.calls.saturating_add(m.calls);
            // The same places (the key), so the same number of points.
            for (a, b) in into.points.iter_mut().zip(&m.points) {
                a.hits = a.hits.saturating_add(b.hits);
            }
            let mut arms: HashMap<(u32, u32, u32, String), usize> = into
                .branches
                .iter()
                .enumerate()
                .map(|(i, a)| ((a.il_offset, a.arm, a.line, a.document.clone()), i))
                .collect();
            for b in m.branches {
                let k = (b.il_offset, b.arm, b.line, b.document.clone());
                match arms.get(&k) {
                    Some(&i) => {
                        into.branches[i].hits = into.branches[i].hits.saturating_add(b.hits)
                    }
                    None => {
                        arms.insert(k, into.branches.len());
                        into.branches.push(b);
                    }
                }
            }
        }
    }

    /// The methods added up, in the order first seen (the reports sort
    /// them).
    pub fn into_methods(self) -> Vec<MethodCoverage> {
        self.methods
    }
}
