//! Headless Chromium screenshots and their pixels, for the tests that check
//! that a picture renders (flame graphs, speedscope). CI installs Debian's
//! `chromium` (scripts/test.sh); a missing browser fails the test.

// Every test crate includes `common`; only some take pictures.
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

/// The browser's name on this machine.
fn browser() -> &'static str {
    ["chromium", "chromium-browser"]
        .into_iter()
        .find(|b| {
            Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .expect("chromium is not installed: scripts/test.sh installs Debian's `chromium` package")
}

const FLAGS: [&str; 10] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--window-size=1200,700",
];

/// The DOM of `url` once loaded (`--dump-dom`), with extra flags.
pub(crate) fn dump_dom(url: &str, profile_dir: &Path, flags: &[&str]) -> String {
    let out = Command::new(browser())
        .args(FLAGS)
        .args(flags)
        .arg(format!("--user-data-dir={}", profile_dir.display()))
        .arg("--dump-dom")
        .arg(url)
        .output()
        .expect("run chromium");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Screenshots `url` at 1200x700 into `png` (a fresh browser profile in
/// `profile_dir`); extra Chromium flags in `flags`. Panics with what the
/// browser said when no screenshot appears.
pub(crate) fn screenshot(url: &str, png: &Path, profile_dir: &Path, flags: &[&str]) {
    let _ = std::fs::remove_file(png);
    let out = Command::new(browser())
        .args(FLAGS)
        .args(flags)
        .arg(format!("--user-data-dir={}", profile_dir.display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg(url)
        .output()
        .expect("run chromium");
    assert!(
        png.is_file(),
        "no screenshot; chromium said:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A PNG's size and RGB pixels, row by row, decoded with Python's zlib
/// (the picture is decoded, not trusted by its file size).
pub(crate) fn pixels(png: &Path) -> (u32, u32, Vec<[u8; 3]>) {
    let script = r#"
import sys, zlib, struct
data = open(sys.argv[1], 'rb').read()
assert data[:8] == b'\x89PNG\r\n\x1a\n'
pos, idat, width, height, ctype = 8, b'', 0, 0, 0
while pos < len(data):
    n, kind = struct.unpack('>I4s', data[pos:pos+8]); body = data[pos+8:pos+8+n]; pos += 12 + n
    if kind == b'IHDR': width, height, depth, ctype = struct.unpack('>IIBB', body[:10])
    if kind == b'IDAT': idat += body
bpp = {2: 3, 6: 4}[ctype]
raw = zlib.decompress(idat); stride = width * bpp; prev = bytearray(stride); i = 0
out = bytearray()
for y in range(height):
    f = raw[i]; line = bytearray(raw[i+1:i+1+stride]); i += 1 + stride
    for x in range(stride):
        a = line[x-bpp] if x >= bpp else 0; b = prev[x]; c = prev[x-bpp] if x >= bpp else 0
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + b) & 255
        elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p-a), abs(p-b), abs(p-c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    for x in range(0, stride, bpp):
        out += line[x:x+3]
    prev = line
sys.stdout.buffer.write(struct.pack('>II', width, height) + bytes(out))
"#;
    let decoded = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(png)
        .output()
        .expect("python3");
    let bytes = decoded.stdout;
    assert!(
        bytes.len() >= 8,
        "python could not decode {}: {}",
        png.display(),
        String::from_utf8_lossy(&decoded.stderr)
    );
    let width = u32::from_be_bytes(bytes[0..4].try_into().unwrap());
    let height = u32::from_be_bytes(bytes[4..8].try_into().unwrap());
    let rgb: Vec<[u8; 3]> = bytes[8..]
        .chunks_exact(3)
        .map(|p| [p[0], p[1], p[2]])
        .collect();
    assert_eq!(rgb.len(), (width * height) as usize, "truncated decode");
    (width, height, rgb)
}
