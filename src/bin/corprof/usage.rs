//! `corprof`'s conventions: `-h`/`--help` of every subcommand, `--version`,
//! and what an error prints and exits with.
//!
//! A subcommand's usage is cut from the tool's one `USAGE` text, so a new
//! subcommand needs no more than its lines there: the lines that begin
//! with `corprof` and the subcommand's words (with their continuation
//! lines), then the notes of the options they name (a note begins with
//! `NAME:` where `--NAME` is an option of the synopsis).
//!
//! A usage error is a message that ends with `\n` and `USAGE`
//! ([`usage_error`]; [`super::options`]' errors): `corprof: ` and its line
//! are printed, then the usage of the subcommand that was run, exit 2. A
//! subcommand that does not exist is the same, with the usage of the
//! longest command its words begin. Any other error is a failure (the
//! process, a file, a stream): its message alone, exit 1.

use std::fmt::Display;
use std::process::ExitCode;

use super::USAGE;

/// The exit code of a usage error.
const USAGE_EXIT: u8 = 2;

/// The error of an argument that is wrong: `line`, then the usage.
pub(crate) fn usage_error(line: impl Display) -> String {
    format!("{line}\n{USAGE}")
}

/// The synopsis lines of `USAGE` (after `usage:`) and its notes.
fn parts() -> (&'static str, &'static str) {
    let text = USAGE.strip_prefix("usage:\n").unwrap_or(USAGE);
    text.split_once("\n\n").unwrap_or((text, ""))
}

/// The usage of the subcommand `words` (`["trace", "collect"]`; `["trace"]`
/// for both of `trace`'s), or `None` when no synopsis line begins with them.
fn usage_of(words: &[&str]) -> Option<String> {
    let (synopsis, notes) = parts();
    let mut shown = Vec::new();
    let mut keep = false;
    for line in synopsis.lines() {
        if let Some(rest) = line.trim_start().strip_prefix("corprof ") {
            let given: Vec<&str> = rest.split_whitespace().collect();
            keep = given.len() >= words.len() && given[..words.len()] == *words;
        }
        if keep {
            shown.push(line);
        }
    }
    if shown.is_empty() {
        return None;
    }
    let shown = shown.join("\n");
    let mut text = format!("usage:\n{shown}");
    let mut first_note = true;
    let mut keep = false;
    for line in notes.lines() {
        if let Some((name, _)) = line.split_once(": ") {
            if !name.contains(' ') && synopsis.contains(&format!("--{name} ")) {
                keep = shown.contains(&format!("--{name} "));
            }
        }
        if keep {
            text.push_str(if first_note { "\n\n" } else { "\n" });
            text.push_str(line);
            first_note = false;
        }
    }
    Some(text)
}

/// The subcommand `args` begin with: the longest run of leading words some
/// synopsis line begins with.
fn command<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let mut words = Vec::new();
    for &arg in args {
        words.push(arg);
        if arg.starts_with('-') || usage_of(&words).is_none() {
            words.pop();
            break;
        }
    }
    words
}

/// `corprof --version`, `corprof help COMMAND` and a `-h` or `--help`
/// after a command: what they print, exit 0 (a `help` of a command that
/// does not exist: a usage error). `None`: run `args` (the tool's own
/// help among them).
pub(crate) fn help_or_version(args: &[&str]) -> Option<ExitCode> {
    let words = match args {
        ["--version" | "-V"] => {
            println!("corprof {}", env!("CARGO_PKG_VERSION"));
            return Some(ExitCode::SUCCESS);
        }
        ["help", rest @ ..] => {
            let words = command(rest);
            if words.len() < rest.len() {
                return Some(finish(rest, Err(USAGE.to_string())));
            }
            words
        }
        _ if args.iter().any(|a| matches!(*a, "-h" | "--help")) => command(args),
        _ => return None,
    };
    if words.is_empty() {
        // `corprof -h`: `main`'s; `corprof frob -h`: an unknown command.
        return None;
    }
    println!("{}", usage_of(&words).unwrap_or_else(|| USAGE.to_string()));
    Some(ExitCode::SUCCESS)
}

/// What a command's `result` prints and exits with. `USAGE` alone: `args`
/// name no command.
pub(crate) fn finish(args: &[&str], result: Result<(), String>) -> ExitCode {
    let Err(message) = result else {
        return ExitCode::SUCCESS;
    };
    let words = command(args);
    let line = if message == USAGE {
        match args.get(words.len()) {
            None => "a command is needed".to_string(),
            Some(_) => format!("no command `corprof {}`", args.join(" ")),
        }
    } else if let Some(line) = message
        .strip_suffix(USAGE)
        .and_then(|m| m.strip_suffix('\n'))
    {
        line.to_string()
    } else {
        eprintln!("corprof: {message}");
        return ExitCode::FAILURE;
    };
    let usage = usage_of(&words).unwrap_or_else(|| USAGE.to_string());
    eprintln!("corprof: {line}\n{usage}");
    ExitCode::from(USAGE_EXIT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subcommand_has_its_lines_and_notes() {
        let collect = usage_of(&["trace", "collect"]).unwrap();
        assert!(collect.starts_with("usage:\n  corprof trace collect -p PID"));
        assert!(!collect.contains("convert") && !collect.contains("counters"));
        assert!(collect.contains("\n\nproviders: "), "{collect}");
        assert!(
            collect.contains("\ndefault: Microsoft-DotNETCore"),
            "{collect}"
        );
        let trace = usage_of(&["trace"]).unwrap();
        assert!(trace.contains("trace collect") && trace.contains("trace convert"));
        // `counters collect`'s continuation line comes with it.
        let counters = usage_of(&["counters", "collect"]).unwrap();
        assert!(
            counters.contains("[--format csv|json] [-o FILE]"),
            "{counters}"
        );
        assert!(
            counters.contains("\n\ncounters: comma-separated"),
            "{counters}"
        );
        assert!(!counters.contains("providers:"), "{counters}");
        let ps = usage_of(&["ps"]).unwrap();
        assert_eq!(ps, "usage:\n  corprof ps");
        assert_eq!(usage_of(&["frob"]), None);
        assert_eq!(usage_of(&["trace", "frob"]), None);
    }

    #[test]
    fn the_command_is_the_longest_known_prefix() {
        assert_eq!(
            command(&["trace", "convert", "t.nettrace", "-o", "x"]),
            ["trace", "convert"]
        );
        assert_eq!(command(&["trace", "frob"]), ["trace"]);
        assert_eq!(command(&["stack", "-p", "1"]), ["stack"]);
        assert!(command(&["frob", "trace"]).is_empty());
        assert!(command(&["--help"]).is_empty());
    }
}
