//! The profile writers read back by independent readers: `gzip -d` for the
//! gzip writer, Go's own `go tool pprof` (Debian's `golang-go`, which
//! scripts/test.sh installs) for pprof, Python's `json` for speedscope.
//! A missing reader fails the test; nothing is skipped. (Host tools: the
//! Windows leg leaves this file out, and it is Unix only.)
#![cfg(unix)]

mod common;

use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use common::readers::go_pprof;
use corprof::profile::{gzip, write_speedscope, Frames, Pprof, SpeedscopeProfile, StackTree};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("corprof-profile-formats-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// `gzip -dc` of `data`.
fn gunzip(data: &[u8]) -> Vec<u8> {
    let mut child = Command::new("gzip")
        .arg("-dc")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("gzip is not installed (Debian's gzip package)");
    let mut stdin = child.stdin.take().unwrap();
    let input = data.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(
        out.status.success(),
        "gzip -d refused it: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn gzip_output_is_read_back_by_gzip() {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut random = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let text: Vec<u8> = (0..40_000)
        .flat_map(|i| {
            format!(
                "System.Threading.Tasks.Task.Run;App.Handler{} {}\n",
                i % 97,
                i
            )
            .into_bytes()
        })
        .collect();
    let inputs: Vec<Vec<u8>> = vec![
        Vec::new(),
        b"a".to_vec(),
        b"abcabcabcabcabcabcabc".to_vec(),
        (0..=255u8).collect(),
        vec![0u8; 1 << 20],
        (0..200_000).map(|_| random() as u8).collect(),
        // Short runs with long distances, and matches of every length.
        (0..300_000)
            .map(|i: u32| ((i % 251) ^ (i / 4099)) as u8)
            .collect(),
        text.clone(),
    ];
    for input in &inputs {
        let packed = gzip(input);
        assert_eq!(gunzip(&packed), *input, "input of {} bytes", input.len());
    }
    // Fixed Huffman codes and greedy matching: within twice the size of
    // `gzip -6` (dynamic codes, lazy matching) on stack-like text.
    let packed = gzip(&text);
    let reference = gzip_6(&text);
    assert!(
        packed.len() < 2 * reference,
        "{} bytes of text became {}; gzip -6 makes {reference}",
        text.len(),
        packed.len()
    );
}

/// The size `gzip -6` compresses `data` to.
fn gzip_6(data: &[u8]) -> usize {
    let path = scratch("gzip-6.txt");
    std::fs::write(&path, data).unwrap();
    let out = Command::new("gzip")
        .arg("-6c")
        .arg(&path)
        .output()
        .expect("gzip");
    assert!(out.status.success());
    out.stdout.len()
}

/// The `flat` column of `go tool pprof -top -unit=ns` for `function`, in
/// nanoseconds (or the raw number for counts).
fn flat(top: &str, function: &str) -> Option<f64> {
    top.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        (fields.len() >= 6 && fields[5..].join(" ") == function).then(|| {
            let number = fields[0].trim_end_matches(|c: char| c.is_ascii_alphabetic());
            number.parse::<f64>().unwrap()
        })
    })
}

#[test]
fn pprof_is_read_by_go_tool_pprof() {
    let mut frames = Frames::new();
    let (main, hot, warm) = (
        frames.intern("Main"),
        frames.intern("App.Hot<System.Int32>"),
        frames.intern("App.Warm"),
    );
    let mut a = StackTree::new(2);
    a.add([main, hot], &[300, 1000]);
    a.add([main, warm], &[100, 1000]);
    let mut b = StackTree::new(2);
    b.add([main, hot], &[30, 5]);
    let mut pprof = Pprof::new(&[("cpu", "nanoseconds"), ("wall", "nanoseconds")]);
    pprof.set_period("cpu", "nanoseconds", 10_000_000);
    pprof.set_time(1_700_000_000_000_000_000, 2_000_000_000);
    pprof.set_default_sample_type("cpu");
    pprof.add_tree(&a, &frames, &[("thread", "A")]);
    pprof.add_tree(&b, &frames, &[("thread", "B")]);
    let path = scratch("profile.pb.gz");
    std::fs::write(&path, pprof.encode_gzip()).unwrap();
    let path = path.to_str().unwrap();
    let top = go_pprof(&["-top", "-unit=ns", "-sample_index=cpu", path]);
    // pprof's reports shorten names, dropping `<...>` as for C++
    // templates; -raw shows the names as written, as system names.
    assert_eq!(flat(&top, "App.Hot"), Some(330.0), "{top}");
    let raw = go_pprof(&["-raw", path]);
    assert!(raw.contains("(App.Hot<System.Int32>)"), "{raw}");
    assert_eq!(flat(&top, "App.Warm"), Some(100.0), "{top}");
    let wall = go_pprof(&["-top", "-unit=ns", "-sample_index=wall", path]);
    assert_eq!(flat(&wall, "App.Warm"), Some(1000.0), "{wall}");
    // The thread label selects A's samples only.
    let only_b = go_pprof(&[
        "-top",
        "-unit=ns",
        "-sample_index=cpu",
        "-tagfocus=thread=B",
        path,
    ]);
    assert_eq!(flat(&only_b, "App.Hot"), Some(30.0), "{only_b}");
    assert_eq!(flat(&only_b, "App.Warm"), None, "{only_b}");
    // Stacks: -traces prints each sample's frames, leaf first.
    let traces = go_pprof(&["-traces", "-sample_index=cpu", path]);
    let hot_trace = traces
        .split("-----------+")
        .find(|t| t.contains("App.Hot") && t.contains("thread:  A"))
        .unwrap_or_else(|| panic!("{traces}"));
    let hot_at = hot_trace.find("App.Hot").unwrap();
    let main_at = hot_trace.find("Main").unwrap();
    assert!(hot_at < main_at, "leaf first:\n{hot_trace}");
}

#[test]
fn speedscope_json_parses_with_the_stacks_given() {
    let mut frames = Frames::new();
    let (main, hot) = (frames.intern("Main"), frames.intern("Hot \"quoted\""));
    let mut tree = StackTree::new(1);
    tree.add([main, hot], &[3]);
    tree.add([main], &[1]);
    let path = scratch("speedscope.json");
    let file = std::fs::File::create(&path).unwrap();
    write_speedscope(
        "test",
        &frames,
        &[SpeedscopeProfile {
            name: "cpu",
            tree: &tree,
            value: 0,
            unit: "nanoseconds",
        }],
        std::io::BufWriter::new(file),
    )
    .unwrap();
    let script = r#"
import json, sys
d = json.load(open(sys.argv[1]))
names = [f["name"] for f in d["shared"]["frames"]]
p = d["profiles"][0]
stacks = sorted((";".join(names[i] for i in s), w) for s, w in zip(p["samples"], p["weights"]))
print(p["type"], p["unit"], p["endValue"], stacks)
"#;
    assert_python_prints(
        script,
        &path,
        "sampled nanoseconds 4 [('Main', 1), ('Main;Hot \"quoted\"', 3)]",
    );
}

#[test]
fn flame_svg_is_xml_with_a_rectangle_per_frame_drawn() {
    use corprof::profile::{self_widths, write_flame, FlameOptions};
    let mut frames = Frames::new();
    let (main, hot, warm, tiny) = (
        frames.intern("Main"),
        frames.intern("Hot<&\"quoted\">"),
        frames.intern("Warm"),
        frames.intern("Tiny"),
    );
    let mut tree = StackTree::new(1);
    tree.add([main, hot], &[7_000]);
    tree.add([main, warm], &[2_999]);
    tree.add([main, warm, tiny], &[1]);
    let path = scratch("flame.svg");
    let mut options = FlameOptions::default();
    options.min_width_px = 1.0;
    let stats = write_flame(
        &tree,
        &frames,
        &self_widths(&tree, 0),
        &options,
        std::io::BufWriter::new(std::fs::File::create(&path).unwrap()),
    )
    .unwrap();
    // Tiny is 1 of 10,000: 0.12 px of 1,200, under the 1 px minimum.
    assert_eq!((stats.drawn, stats.omitted), (4, 1));
    let script = r#"
import sys, xml.etree.ElementTree as ET
ns = {"s": "http://www.w3.org/2000/svg"}
root = ET.parse(sys.argv[1]).getroot()
frames = root.findall("s:g", ns)
titles = sorted(g.find("s:title", ns).text.split(" (")[0] for g in frames)
widths = {g.find("s:title", ns).text.split(" (")[0]: float(g.find("s:rect", ns).get("width")) for g in frames}
print(len(frames), titles, widths["all"], round(widths["Hot<&\"quoted\">"], 2))
"#;
    assert_python_prints(
        script,
        &path,
        "4 ['Hot<&\"quoted\">', 'Main', 'Warm', 'all'] 1200.0 840.0",
    );
}

/// Runs a Python `script` on the file at `path` (its `sys.argv[1]`) and
/// checks what it prints.
fn assert_python_prints(script: &str, path: &std::path::Path, expected: &str) {
    let out = Command::new("python3")
        .args(["-c", script])
        .arg(path)
        .output()
        .expect("python3");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        expected,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
