//! `corprof heap diff A B`: the leak suspects between two type histograms,
//! each a heap snapshot's `heap-<time>.txt` (the sampler's,
//! docs/sampling.md "Memory: heap snapshots") or `corprof gcdump`'s
//! printed table saved to a file. A suspect is a type whose objects and
//! bytes both grew from A to B; suspects are ranked by the bytes grown,
//! each with B's retention path when B is a snapshot that has one.

use std::collections::BTreeMap;

use super::options;
use super::usage::usage_error;

/// A type's row: objects, bytes.
type Row = (u64, u64);

/// A histogram, and the retention paths a snapshot gives (type -> path).
#[derive(Debug, Default)]
struct Table {
    rows: BTreeMap<String, Row>,
    retention: BTreeMap<String, String>,
}

/// The rows of a histogram's text: every line `<objects> <bytes>  <type>`
/// (the snapshot's and gcdump's tables), and the snapshot's retention
/// lines `<type>: <n> objects, <b> bytes through <path>`.
fn parse(text: &str) -> Table {
    let mut table = Table::default();
    for line in text.lines() {
        if let Some((left, path)) = line.split_once(" bytes through ") {
            if let Some((name, _)) = left.rsplit_once(": ") {
                table.retention.insert(name.to_string(), path.to_string());
            }
            continue;
        }
        let Some((objects, rest)) = line.trim_start().split_once(char::is_whitespace) else {
            continue;
        };
        let Some((bytes, name)) = rest.trim_start().split_once(char::is_whitespace) else {
            continue;
        };
        let (Ok(objects), Ok(bytes), name) =
            (objects.parse::<u64>(), bytes.parse::<u64>(), name.trim())
        else {
            continue;
        };
        if !name.is_empty() {
            let row = table.rows.entry(name.to_string()).or_default();
            row.0 += objects;
            row.1 = row.1.saturating_add(bytes);
        }
    }
    table
}

/// A suspect: the type, its growth in objects and bytes, B's row.
#[derive(Debug, PartialEq, Eq)]
struct Suspect {
    name: String,
    objects: u64,
    bytes: u64,
    after: Row,
}

/// The types whose objects and bytes both grew from `a` to `b` (a type
/// new in `b` included), the most bytes grown first (then by name).
fn suspects(a: &Table, b: &Table) -> Vec<Suspect> {
    let mut out: Vec<Suspect> = b
        .rows
        .iter()
        .filter_map(|(name, &after)| {
            let before = a.rows.get(name).copied().unwrap_or((0, 0));
            (after.0 > before.0 && after.1 > before.1).then(|| Suspect {
                name: name.clone(),
                objects: after.0 - before.0,
                bytes: after.1 - before.1,
                after,
            })
        })
        .collect();
    out.sort_by(|x, y| y.bytes.cmp(&x.bytes).then(x.name.cmp(&y.name)));
    out
}

/// `corprof heap diff A B [--top N]`.
pub(crate) fn heap(args: &[&str]) -> Result<(), String> {
    let o = options(args, &["--top"], &[])?;
    let [verb, a, b] = o.positional.as_slice() else {
        return Err(usage_error(
            "heap diff needs two files: corprof heap diff A B",
        ));
    };
    if *verb != "diff" {
        return Err(usage_error(format!("unknown heap command `{verb}`")));
    }
    let top = match o.named.get("--top") {
        None => 20,
        Some(n) => n
            .parse::<usize>()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| usage_error(format!("--top {n}: a count of at least 1")))?,
    };
    let read = |path: &str| -> Result<Table, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
        let table = parse(&text);
        if table.rows.is_empty() {
            return Err(format!(
                "{path}: no type histogram (a heap-<time>.txt snapshot, or corprof gcdump's printed table)"
            ));
        }
        Ok(table)
    };
    let (before, after) = (read(a)?, read(b)?);
    print!("{}", report(a, b, &before, &after, top));
    Ok(())
}

/// The report: a line of totals, then the suspects.
fn report(a: &str, b: &str, before: &Table, after: &Table, top: usize) -> String {
    let total = |t: &Table| {
        t.rows
            .values()
            .fold((0u64, 0u64), |s, r| (s.0 + r.0, s.1.saturating_add(r.1)))
    };
    let (ta, tb) = (total(before), total(after));
    let found = suspects(before, after);
    let mut text = format!(
        "heap diff {a} -> {b}: {} -> {} objects, {} -> {} bytes; {} suspects (objects and bytes grew), by bytes grown\n",
        ta.0,
        tb.0,
        ta.1,
        tb.1,
        found.len()
    );
    if found.is_empty() {
        return text;
    }
    text.push_str(&format!(
        "{:>14} {:>12} {:>16} {:>12}  type\n",
        "+bytes", "+objects", "bytes after", "objects"
    ));
    for s in found.iter().take(top) {
        text.push_str(&format!(
            "{:>14} {:>12} {:>16} {:>12}  {}\n",
            s.bytes, s.objects, s.after.1, s.after.0, s.name
        ));
        if let Some(path) = after.retention.get(&s.name) {
            text.push_str(&format!("{:>58}held through {path}\n", ""));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A snapshot's text as `heap_snapshot.rs` writes it.
    const SNAPSHOT_A: &str = "heap snapshot 20261207T170000Z: 30 objects, 5000 bytes, 3 types; runtime paused 1.000 ms
graph: 10 references, 0 to objects outside the heap walked, 1 statics as roots; left out: 0 objects, 0 references

     objects            bytes  type
          10             3000  System.Byte[]
          15             1500  Leak.Item
           5              500  System.String

retention (the shortest path from a root, for the most bytes of each type):
Leak.Item: 15 objects, 1500 bytes through [static Leak.Program.kept] -> System.Collections.Generic.List<Leak.Item> -> Leak.Item[]
";

    const SNAPSHOT_B: &str = "heap snapshot 20261207T170100Z: 30 objects, 5000 bytes, 4 types; runtime paused 1.000 ms

     objects            bytes  type
          10             2000  System.Byte[]
         150            15000  Leak.Item
           5              700  System.String
           2               64  Leak.New

retention (the shortest path from a root, for the most bytes of each type):
Leak.Item: 150 objects, 15000 bytes through [static Leak.Program.kept] -> System.Collections.Generic.List<Leak.Item> -> Leak.Item[]
";

    /// gcdump's printed table.
    const GCDUMP: &str = "       Count          Bytes  Type
          12           3400  System.Byte[]
           1             24  System.Collections.Generic.Dictionary<System.String, System.Int32>
";

    #[test]
    fn both_tables_parse() {
        let a = parse(SNAPSHOT_A);
        assert_eq!(a.rows["System.Byte[]"], (10, 3000));
        assert_eq!(a.rows["Leak.Item"], (15, 1500));
        assert_eq!(a.rows.len(), 3, "{:?}", a.rows);
        assert!(a.retention["Leak.Item"].starts_with("[static Leak.Program.kept]"));
        let g = parse(GCDUMP);
        assert_eq!(g.rows.len(), 2);
        assert_eq!(
            g.rows["System.Collections.Generic.Dictionary<System.String, System.Int32>"],
            (1, 24)
        );
    }

    /// Objects and bytes both grown: a suspect, the most bytes first; a
    /// type whose bytes grew with the same objects (String) or shrank
    /// (Byte[]) is not.
    #[test]
    fn suspects_grew_in_objects_and_bytes() {
        let (a, b) = (parse(SNAPSHOT_A), parse(SNAPSHOT_B));
        let found = suspects(&a, &b);
        let names: Vec<&str> = found.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["Leak.Item", "Leak.New"]);
        assert_eq!((found[0].objects, found[0].bytes), (135, 13500));
        let text = report("a", "b", &a, &b, 20);
        assert!(text.contains("2 suspects"), "{text}");
        assert!(
            text.contains("held through [static Leak.Program.kept]"),
            "{text}"
        );
        // Nothing grew: no suspect.
        assert!(suspects(&b, &b).is_empty());
        assert!(report("b", "b", &b, &b, 20).contains("0 suspects"));
        // --top cuts the list.
        assert!(!report("a", "b", &a, &b, 1).contains("Leak.New"));
    }
}
