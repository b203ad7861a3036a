//! The coverage reports: lcov tracefiles and Cobertura XML.
//!
//! * lcov: the tracefile format of the `geninfo(1)` manual page (`TN`,
//!   `SF`, `FN`/`FNDA`/`FNF`/`FNH`, `BRDA`/`BRF`/`BRH`, `DA`/`LF`/`LH`,
//!   `end_of_record`).
//! * Cobertura: the `coverage-04.dtd` layout (`coverage` > `packages` >
//!   `package` > `classes` > `class` > `methods`/`lines`), the format
//!   coverlet, ReportGenerator and pycobertura read.
//!
//! A line's hit count is the largest count of the sequence points that
//! cover it (a `for` header's three points: the condition's).

use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet};
use std::fmt::Write as _;
use std::format;
use std::string::String;
use std::vec::Vec;

/// The counts of one sequence point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PointHits {
    /// The document's name.
    pub document: String,
    /// First line.
    pub start_line: u32,
    /// Last line.
    pub end_line: u32,
    /// How often it ran.
    pub hits: u64,
}

/// The counts of one arm of a conditional branch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BranchHits {
    /// The document's name.
    pub document: String,
    /// The line of the sequence point the branch belongs to.
    pub line: u32,
    /// The branch instruction's IL offset.
    pub il_offset: u32,
    /// The arm (0: fall-through; k: the k-th target).
    pub arm: u32,
    /// How often it was taken.
    pub hits: u64,
}

/// The coverage of one instrumented method.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MethodCoverage {
    /// The assembly's simple name.
    pub assembly: String,
    /// The class it is reported under (the outermost type of a lambda's or
    /// state machine's compiler-generated type).
    pub class: String,
    /// Its name (`Type::Method`; the kickoff method's for a state machine).
    pub name: String,
    /// Its metadata token (`0x06xxxxxx`; the `MoveNext`'s for a state
    /// machine): what orders the methods of a report, and names overloads
    /// (`Name`, `Name#2`, ... in token order), whatever order the JIT
    /// compiled them in.
    pub token: u32,
    /// How often it was called (`FNDA`): its entries, or for a state
    /// machine's `MoveNext` (entered again at each resumption) the count
    /// of its first sequence point.
    pub calls: u64,
    /// Its sequence points, by IL offset.
    pub points: Vec<PointHits>,
    /// Its branch arms.
    pub branches: Vec<BranchHits>,
}

impl MethodCoverage {
    /// The document and line it starts at, and how often it was called.
    fn entry(&self) -> Option<(&str, u32, u64)> {
        let first = self.points.first()?;
        Some((&first.document, first.start_line, self.calls))
    }
}

/// Per-document totals.
#[derive(Default)]
struct FileData<'a> {
    lines: BTreeMap<u32, u64>,
    functions: Vec<(String, u32, u64)>,
    /// (line, method's rank in [`stable_order`], IL offset) -> arms' counts.
    branches: BTreeMap<(u32, usize, u32), BTreeMap<u32, u64>>,
    classes: BTreeMap<(&'a str, &'a str), Vec<usize>>,
    /// The function names taken, and per method name the last overload
    /// number tried.
    names: HashSet<String>,
    tried: HashMap<&'a str, u32>,
}

/// The most lines one sequence point spans into the report: lines past
/// its first + this many are not filled (no statement is that long; a
/// malformed PDB's point may claim 2^29 lines).
pub const MAX_SPAN_LINES: u32 = 1 << 16;

/// The lines a report fills from spans (the lines a multi-line point spans
/// and no point starts on), in all: this floor plus
/// [`SPAN_LINES_PER_POINT`] per sequence point. Past it, a point is
/// reported on its first line only: the report's size stays proportional
/// to its input.
pub const SPAN_LINES_FLOOR: u64 = 1 << 16;

/// See [`SPAN_LINES_FLOOR`].
pub const SPAN_LINES_PER_POINT: u64 = 16;

/// The span lines a report of `methods` may fill.
fn span_budget(methods: &[MethodCoverage]) -> u64 {
    let points: u64 = methods.iter().map(|m| m.points.len() as u64).sum();
    SPAN_LINES_FLOOR.saturating_add(points.saturating_mul(SPAN_LINES_PER_POINT))
}

/// Hits per line of `points` (of one document): a line's count is the
/// largest of the sequence points that start on it; a line that a
/// multi-line point spans and on which none starts (the `{` and `};` of a
/// `switch` expression) takes the largest of the points spanning it. So a
/// `switch` expression's arm that never ran reads 0, though the whole
/// expression's point, which spans it, ran (coverlet reads it the same).
///
/// Spanned lines are found by a sweep (the spans sorted by first line, the
/// open ones in a heap by hits): the work is the points' sort plus one
/// step per line filled, each of which takes one from `budget` (see
/// [`SPAN_LINES_FLOOR`]); a span is cut at [`MAX_SPAN_LINES`].
fn line_hits<'p>(
    points: impl Iterator<Item = &'p PointHits>,
    budget: &mut u64,
) -> BTreeMap<u32, u64> {
    let mut lines: BTreeMap<u32, u64> = BTreeMap::new();
    // (first spanned line, last spanned line, hits)
    let mut spans: Vec<(u32, u32, u64)> = Vec::new();
    for point in points {
        let hits = lines.entry(point.start_line).or_insert(0);
        *hits = (*hits).max(point.hits);
        let last = point
            .end_line
            .min(point.start_line.saturating_add(MAX_SPAN_LINES));
        if last > point.start_line {
            spans.push((point.start_line + 1, last, point.hits));
        }
    }
    let own: Vec<u32> = lines.keys().copied().collect();
    spans.sort_unstable_by_key(|s| s.0);
    // The open spans: (hits, last line); the top is checked for its end
    // before it is used.
    let mut open: BinaryHeap<(u64, u32)> = BinaryHeap::new();
    let mut next = 0;
    let Some(&(mut line, _, _)) = spans.first() else {
        return lines;
    };
    loop {
        while let Some(&(_, last, hits)) = spans.get(next).filter(|s| s.0 <= line) {
            open.push((hits, last));
            next += 1;
        }
        while open.peek().is_some_and(|&(_, last)| last < line) {
            open.pop();
        }
        let Some(&(hits, _)) = open.peek() else {
            match spans.get(next) {
                Some(&(first, _, _)) => {
                    line = first;
                    continue;
                }
                None => break,
            }
        };
        if own.binary_search(&line).is_err() {
            if *budget == 0 {
                break;
            }
            *budget -= 1;
            let entry = lines.entry(line).or_insert(0);
            *entry = (*entry).max(hits);
        }
        match line.checked_add(1) {
            Some(l) => line = l,
            None => break,
        }
    }
    lines
}

/// The indices of `methods` in the reports' order: by assembly, then
/// token (then class and name, for methods built by hand with one
/// token), whatever order they were compiled in.
fn stable_order(methods: &[MethodCoverage]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..methods.len()).collect();
    order.sort_by(|&a, &b| {
        let (a, b) = (&methods[a], &methods[b]);
        (&a.assembly, a.token, &a.class, &a.name).cmp(&(&b.assembly, b.token, &b.class, &b.name))
    });
    order
}

fn by_file<'m>(methods: &'m [MethodCoverage], budget: &mut u64) -> BTreeMap<&'m str, FileData<'m>> {
    let mut files: BTreeMap<&str, FileData<'_>> = BTreeMap::new();
    let mut points: BTreeMap<&str, Vec<&PointHits>> = BTreeMap::new();
    for (rank, index) in stable_order(methods).into_iter().enumerate() {
        let method = &methods[index];
        for point in &method.points {
            points.entry(&point.document).or_default().push(point);
            let file = files.entry(&point.document).or_default();
            file.classes
                .entry((&method.assembly, &method.class))
                .or_default()
                .push(index);
        }
        if let Some((document, line, hits)) = method.entry() {
            let file = files.entry(document).or_default();
            // Overloads: `Name`, `Name#2`, ... in token order (the last
            // number tried for each name kept, so n overloads take n
            // steps).
            let n = file.tried.entry(&method.name).or_insert(0);
            let mut name = method.name.clone();
            while !file.names.insert(name.clone()) {
                *n = (*n).max(1) + 1;
                name = format!("{}#{n}", method.name);
            }
            file.functions.push((name, line, hits));
        }
        for arm in &method.branches {
            let file = files.entry(&arm.document).or_default();
            file.branches
                .entry((arm.line, rank, arm.il_offset))
                .or_default()
                .insert(arm.arm, arm.hits);
        }
    }
    for (document, points) in points {
        if let Some(file) = files.get_mut(document) {
            file.lines = line_hits(points.into_iter(), budget);
        }
    }
    for file in files.values_mut() {
        for list in file.classes.values_mut() {
            list.dedup();
        }
    }
    files
}

/// The lcov tracefile of `methods`.
pub fn lcov(methods: &[MethodCoverage]) -> String {
    let mut out = String::new();
    let mut budget = span_budget(methods);
    for (path, file) in by_file(methods, &mut budget) {
        let _ = writeln!(out, "TN:\nSF:{path}");
        let mut functions = file.functions.clone();
        functions.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
        for (name, line, _) in &functions {
            let _ = writeln!(out, "FN:{line},{name}");
        }
        for (name, _, hits) in &functions {
            let _ = writeln!(out, "FNDA:{hits},{name}");
        }
        let hit = functions.iter().filter(|f| f.2 > 0).count();
        let _ = writeln!(out, "FNF:{}\nFNH:{hit}", functions.len());
        let (mut found, mut taken) = (0, 0);
        for (block, ((line, _, _), arms)) in file.branches.iter().enumerate() {
            let evaluated = arms.values().any(|&h| h > 0);
            for (arm, hits) in arms {
                found += 1;
                if *hits > 0 {
                    taken += 1;
                }
                if evaluated {
                    let _ = writeln!(out, "BRDA:{line},{block},{arm},{hits}");
                } else {
                    let _ = writeln!(out, "BRDA:{line},{block},{arm},-");
                }
            }
        }
        let _ = writeln!(out, "BRF:{found}\nBRH:{taken}");
        for (line, hits) in &file.lines {
            let _ = writeln!(out, "DA:{line},{hits}");
        }
        let lh = file.lines.values().filter(|&&h| h > 0).count();
        let _ = writeln!(out, "LF:{}\nLH:{lh}\nend_of_record", file.lines.len());
    }
    out
}

/// Escapes text for an XML attribute.
fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if (c as u32) < 0x20 && c != '\t' => {
                let _ = write!(out, "&#{};", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

fn rate(covered: usize, valid: usize) -> String {
    if valid == 0 {
        "1".into()
    } else {
        format!("{:.4}", covered as f64 / valid as f64)
    }
}

/// Lines and branch arms of a set of methods in one file: line -> (hits,
/// arms covered, arms).
fn line_table(
    methods: &[MethodCoverage],
    indices: &[usize],
    path: &str,
    budget: &mut u64,
) -> BTreeMap<u32, (u64, usize, usize)> {
    let points = indices
        .iter()
        .flat_map(|&i| methods[i].points.iter().filter(|p| p.document == path));
    let mut lines: BTreeMap<u32, (u64, usize, usize)> = line_hits(points, budget)
        .into_iter()
        .map(|(line, hits)| (line, (hits, 0, 0)))
        .collect();
    for &i in indices {
        for arm in methods[i].branches.iter().filter(|b| b.document == path) {
            let entry = lines.entry(arm.line).or_default();
            entry.2 += 1;
            if arm.hits > 0 {
                entry.1 += 1;
            }
        }
    }
    lines
}

fn write_lines(out: &mut String, indent: &str, lines: &BTreeMap<u32, (u64, usize, usize)>) {
    let _ = writeln!(out, "{indent}<lines>");
    for (line, (hits, covered, arms)) in lines {
        if *arms > 0 {
            let _ = writeln!(
                out,
                "{indent}  <line number=\"{line}\" hits=\"{hits}\" branch=\"true\" condition-coverage=\"{}% ({covered}/{arms})\"/>",
                covered * 100 / arms
            );
        } else {
            let _ = writeln!(
                out,
                "{indent}  <line number=\"{line}\" hits=\"{hits}\" branch=\"false\"/>"
            );
        }
    }
    let _ = writeln!(out, "{indent}</lines>");
}

/// Totals of a line table: (lines covered, lines, arms covered, arms).
/// Cobertura's `line-rate` and `branch-rate` attributes of `t`.
fn rates(t: Totals) -> String {
    format!(
        "line-rate=\"{}\" branch-rate=\"{}\"",
        rate(t.0, t.1),
        rate(t.2, t.3)
    )
}

/// Lines covered, lines, branches covered, branches.
type Totals = (usize, usize, usize, usize);

fn add(a: Totals, b: Totals) -> Totals {
    (a.0 + b.0, a.1 + b.1, a.2 + b.2, a.3 + b.3)
}

fn totals(lines: &BTreeMap<u32, (u64, usize, usize)>) -> Totals {
    lines.values().fold((0, 0, 0, 0), |t, &(hits, c, a)| {
        (t.0 + usize::from(hits > 0), t.1 + 1, t.2 + c, t.3 + a)
    })
}

/// The directory every document of `files` is in (the longest common
/// prefix that ends at a `/` or `\\`, the separator kept), Cobertura's
/// `<source>`: its `filename`s are relative to it, as coverlet writes
/// them and ReportGenerator reads them. Empty when the documents share no
/// directory (then the names stay whole).
fn source_root<'a>(mut files: impl Iterator<Item = &'a str>) -> &'a str {
    let Some(first) = files.next() else {
        return "";
    };
    let mut common = first.len();
    for file in files {
        common = first
            .bytes()
            .zip(file.bytes())
            .take(common)
            .take_while(|(a, b)| a == b)
            .count();
    }
    // Back to the last separator within the common part (a separator is
    // ASCII, so the cut is on a character boundary).
    let end = first.as_bytes()[..common]
        .iter()
        .rposition(|&b| b == b'/' || b == b'\\')
        .map_or(0, |i| i + 1);
    &first[..end]
}

/// A class of a package: its name, its file and its methods' indices.
type ClassEntry<'a> = (&'a str, &'a str, Vec<usize>);

/// The Cobertura XML of `methods`; `timestamp` in seconds since the epoch.
pub fn cobertura(methods: &[MethodCoverage], timestamp: u64) -> String {
    // The class tables and the method tables each fill the span lines of
    // the lcov report at most (by_file's own lines are not used here).
    let files = by_file(methods, &mut span_budget(methods));
    let (mut class_budget, mut method_budget) = (span_budget(methods), span_budget(methods));
    // package (assembly) -> (class, file) -> methods.
    let mut packages: BTreeMap<&str, Vec<ClassEntry<'_>>> = BTreeMap::new();
    for (path, file) in &files {
        for ((assembly, class), indices) in &file.classes {
            packages
                .entry(assembly)
                .or_default()
                .push((class, path, indices.clone()));
        }
    }
    let root = source_root(files.keys().copied());
    let mut body = String::new();
    let mut all = (0, 0, 0, 0);
    for (package, classes) in &packages {
        let mut package_totals = (0, 0, 0, 0);
        let mut classes_xml = String::new();
        for (class, path, indices) in classes {
            let lines = line_table(methods, indices, path, &mut class_budget);
            let t = totals(&lines);
            package_totals = add(package_totals, t);
            let _ = writeln!(
                classes_xml,
                "        <class name=\"{}\" filename=\"{}\" {} complexity=\"0\">\n          <methods>",
                xml(class),
                xml(&path[root.len()..]),
                rates(t)
            );
            for &i in indices {
                let method = &methods[i];
                if method.points.first().map(|p| p.document.as_str()) != Some(path) {
                    continue;
                }
                let lines = line_table(methods, &[i], path, &mut method_budget);
                let m = totals(&lines);
                let short = method.name.rsplit("::").next().unwrap_or(&method.name);
                let _ = writeln!(
                    classes_xml,
                    "            <method name=\"{}\" signature=\"\" {} complexity=\"0\">",
                    xml(short),
                    rates(m)
                );
                write_lines(&mut classes_xml, "              ", &lines);
                let _ = writeln!(classes_xml, "            </method>");
            }
            let _ = writeln!(classes_xml, "          </methods>");
            write_lines(&mut classes_xml, "          ", &lines);
            let _ = writeln!(classes_xml, "        </class>");
        }
        all = add(all, package_totals);
        let _ = writeln!(
            body,
            "    <package name=\"{}\" {} complexity=\"0\">\n      <classes>\n{classes_xml}      </classes>\n    </package>",
            xml(package),
            rates(package_totals)
        );
    }
    let sources = if root.is_empty() {
        String::new()
    } else {
        format!("    <source>{}</source>\n", xml(root))
    };
    format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<!DOCTYPE coverage SYSTEM \"http://cobertura.sourceforge.net/xml/coverage-04.dtd\">\n<coverage {} lines-covered=\"{}\" lines-valid=\"{}\" branches-covered=\"{}\" branches-valid=\"{}\" complexity=\"0\" version=\"corprof {}\" timestamp=\"{timestamp}\">\n  <sources>\n{sources}  </sources>\n  <packages>\n{body}  </packages>\n</coverage>\n",
        rates(all),
        all.0,
        all.1,
        all.2,
        all.3,
        env!("CARGO_PKG_VERSION")
    )
}
