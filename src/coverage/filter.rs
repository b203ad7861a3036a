//! Include/exclude filters: `[assembly-glob]type-glob` patterns, as
//! coverlet writes them (`[*]MyApp.*`, `[MyApp.Tests]*`), separated by
//! commas or semicolons. `*` matches any run of characters, `?` one.

use std::format;
use std::string::{String, ToString};
use std::vec::Vec;

/// One `[assembly]type` pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Filter {
    assembly: String,
    type_name: String,
}

/// `*` and `?` glob match, iterative (no backtracking blow-up: the
/// classic single-star restart).
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            pi += 1;
            mark = ti;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

impl Filter {
    /// Parses one pattern.
    pub fn parse(pattern: &str) -> Result<Filter, String> {
        let pattern = pattern.trim();
        let rest = pattern
            .strip_prefix('[')
            .ok_or_else(|| format!("filter `{pattern}` does not start with `[assembly]`"))?;
        let (assembly, type_name) = rest
            .split_once(']')
            .ok_or_else(|| format!("filter `{pattern}` has no `]` after the assembly"))?;
        if assembly.is_empty() || type_name.is_empty() {
            return Err(format!(
                "filter `{pattern}` needs an assembly and a type pattern (`*` for any)"
            ));
        }
        if assembly.contains(['[', ']']) || type_name.contains(['[', ']']) {
            return Err(format!("filter `{pattern}` has a stray bracket"));
        }
        Ok(Filter {
            assembly: assembly.to_string(),
            type_name: type_name.to_string(),
        })
    }

    /// Parses a list separated by `,` or `;` (empty entries ignored).
    pub fn parse_list(list: &str) -> Result<Vec<Filter>, String> {
        list.split([',', ';'])
            .filter(|p| !p.trim().is_empty())
            .map(Filter::parse)
            .collect()
    }

    /// Whether the type `type_name` (`Namespace.Type`, nested `Outer+Inner`)
    /// of `assembly` matches.
    pub fn matches(&self, assembly: &str, type_name: &str) -> bool {
        glob_match(&self.assembly, assembly) && glob_match(&self.type_name, type_name)
    }
}
