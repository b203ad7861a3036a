//! Every Rust block of `docs/*.md` is compiled: each page is a doctest
//! (`#[doc = include_str!(..)]` under `#[cfg(doctest)]` in `src/lib.rs`),
//! every code block names its language (a bare fence is compiled as Rust,
//! and a reader cannot tell), and `ignore` is used only where the page says
//! why.

use std::fs;
use std::path::Path;

/// Rust blocks that may be `ignore`d, by page, with the reason the page gives.
const IGNORED: &[(&str, usize, &str)] = &[(
    "e2e.md",
    1,
    "the test harness lives in tests/common, which doctests cannot reach",
)];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The info strings of the code blocks that open in `text` (indented ones
/// too), in order.
fn fences(text: &str) -> Vec<String> {
    let mut open = false;
    let mut infos = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Some(info) = trimmed.strip_prefix("```") {
            if !open {
                infos.push(info.trim().to_string());
            }
            open = !open;
        }
    }
    assert!(!open, "a code block is never closed");
    infos
}

fn pages() -> Vec<String> {
    let mut pages: Vec<String> = fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.ends_with(".md"))
        .collect();
    pages.sort();
    assert!(pages.len() >= 10, "docs/ has its pages: {pages:?}");
    pages
}

#[test]
fn every_docs_page_is_a_doctest() {
    let lib = fs::read_to_string(root().join("src/lib.rs")).unwrap();
    let doctests = &lib[lib
        .find("mod docs_doctests")
        .expect("src/lib.rs has docs_doctests")..];
    for page in pages() {
        let include = format!("#[doc = include_str!(\"../docs/{page}\")]");
        assert!(
            doctests.contains(&include),
            "src/lib.rs's docs_doctests lacks {include}"
        );
    }
}

#[test]
fn every_code_block_names_its_language_and_rust_is_ignored_only_where_explained() {
    for page in pages() {
        let text = fs::read_to_string(root().join("docs").join(&page)).unwrap();
        let infos = fences(&text);
        for info in &infos {
            assert!(!info.is_empty(), "docs/{page}: a code block without a language is compiled as Rust; name it (`text`, `sh`, `rust`, ...)");
        }
        let ignored = infos
            .iter()
            .filter(|info| info.split(',').any(|word| word == "ignore"))
            .count();
        let allowed = IGNORED
            .iter()
            .find(|(name, _, _)| *name == page)
            .map_or(0, |(_, count, _)| *count);
        assert_eq!(
            ignored, allowed,
            "docs/{page}: `ignore`d Rust blocks (only blocks that cannot be compiled, with the reason on the page)"
        );
    }
}

#[test]
fn the_fence_reader_sees_what_rustdoc_sees() {
    let page = "text\n```rust\nfn a() {}\n```\n\n  ```\n  plain\n  ```\n```sh,ignore\nls\n```\n";
    assert_eq!(fences(page), ["rust", "", "sh,ignore"]);
}
