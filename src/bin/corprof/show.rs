//! What `corprof counters` shows: `collect`'s rows (CSV or JSON) and
//! `monitor`'s table, the newest value of each counter drawn at most once
//! per refresh interval, as `dotnet-counters monitor` shows it.
//!
//! The readings come from the session (counters.rs) as they arrive; the
//! table keeps the newest of each counter and is drawn when an interval has
//! passed since the last frame and something changed, and once more at the
//! end. On a terminal each frame is drawn in place (cursor home, erase
//! below: the ANSI/ECMA-48 `CUP` and `ED` sequences); on a pipe or a file
//! the frames follow each other, a blank line before each. `Sum` and
//! `Rate` counters are the increase over one interval: their unit says
//! `/ N s`.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::time::{Duration, Instant};

use super::counters::Reading;

/// Cursor to the top left (`CSI H`), erase from there to the end of the
/// screen (`CSI J`).
const HOME_AND_ERASE: &str = "\x1b[H\x1b[J";

/// The newest reading of each counter, and when to draw them.
pub(crate) struct Monitor {
    latest: BTreeMap<(String, String), Reading>,
    /// Readings since the last frame.
    changed: bool,
    /// Draw in place (a terminal) rather than one frame after another.
    in_place: bool,
    interval: Duration,
    last_frame: Option<Instant>,
    /// The first line of a frame drawn in place.
    title: String,
    frames: u64,
}

impl Monitor {
    pub(crate) fn new(interval: Duration, in_place: bool, title: String) -> Monitor {
        Monitor {
            latest: BTreeMap::new(),
            changed: false,
            in_place,
            interval,
            last_frame: None,
            title,
            frames: 0,
        }
    }

    /// Keeps `r` as its counter's newest value.
    pub(crate) fn add(&mut self, r: Reading) {
        self.latest.insert((r.provider.clone(), r.name.clone()), r);
        self.changed = true;
    }

    /// When the next frame is due: `None` while nothing has changed (wait
    /// for a reading), a time already past to draw now.
    pub(crate) fn due(&self) -> Option<Instant> {
        if !self.changed {
            return None;
        }
        Some(match self.last_frame {
            // The first frame once the first interval's values are in: a
            // tenth of an interval after the first of them.
            None => Instant::now() + self.interval / 10,
            Some(at) => at + self.interval,
        })
    }

    /// Draws a frame if anything changed since the last one.
    pub(crate) fn draw(&mut self, out: &mut dyn Write) -> io::Result<()> {
        if !self.changed {
            return Ok(());
        }
        let mut frame = String::new();
        if self.in_place {
            frame.push_str(HOME_AND_ERASE);
            frame.push_str(&self.title);
            frame.push('\n');
        }
        frame.push('\n');
        frame.push_str(&table(&self.latest, self.interval));
        out.write_all(frame.as_bytes())?;
        out.flush()?;
        self.changed = false;
        self.last_frame = Some(Instant::now());
        self.frames += 1;
        Ok(())
    }

    pub(crate) fn frames(&self) -> u64 {
        self.frames
    }
}

fn json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// `collect`'s line of `r` in `format` (`csv`: a row; `json`: an object of
/// the `Events` array, after a comma unless it is the `first`).
pub(crate) fn row(format: &str, r: &Reading, first: bool) -> String {
    if format == "csv" {
        return format!(
            "{:.3},{},{},{},{},{}\n",
            r.time,
            csv_field(&r.provider),
            csv_field(&r.name),
            r.kind,
            csv_field(&r.unit),
            r.value
        );
    }
    format!(
        "{}{{\"timestamp\":{:.3},\"provider\":{},\"name\":{},\"counterType\":\"{}\",\"unit\":{},\"value\":{}}}",
        if first { "" } else { "," },
        r.time,
        json_string(&r.provider),
        json_string(&r.name),
        r.kind,
        json_string(&r.unit),
        if r.value.is_finite() {
            r.value.to_string()
        } else {
            "null".into()
        }
    )
}

/// A value as `dotnet-counters` shows it: at most three decimals, no
/// trailing zeros.
fn value(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    let text = format!("{v:.3}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" {
        "0".to_string()
    } else {
        text.to_string()
    }
}

/// The table of the newest readings: each provider's counters under
/// `[Provider]`, each with its unit, the increase per interval for `Sum`
/// and `Rate` (`count` when they have no unit).
fn table(latest: &BTreeMap<(String, String), Reading>, interval: Duration) -> String {
    let mut table = String::new();
    let mut provider = "";
    for ((p, _), r) in latest {
        if p != provider {
            table.push_str(&format!("[{p}]\n"));
            provider = p;
        }
        let per = interval.as_secs_f64();
        let label = match (r.unit.as_str(), matches!(r.kind, "Sum" | "Rate")) {
            ("", false) => r.name.clone(),
            ("", true) => format!("{} (count / {per} s)", r.name),
            (unit, false) => format!("{} ({unit})", r.name),
            (unit, true) => format!("{} ({unit} / {per} s)", r.name),
        };
        table.push_str(&format!("    {label:<60} {:>16}\n", value(r.value)));
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(provider: &str, name: &str, unit: &str, kind: &'static str, value: f64) -> Reading {
        Reading {
            time: 0.0,
            provider: provider.to_string(),
            name: name.to_string(),
            unit: unit.to_string(),
            kind,
            value,
        }
    }

    #[test]
    fn the_table_keeps_the_newest_value_per_counter() {
        let mut m = Monitor::new(Duration::from_secs(2), false, String::new());
        assert_eq!(m.due(), None);
        m.add(reading("S", "cpu", "%", "Mean", 1.0));
        m.add(reading("S", "cpu", "%", "Mean", 2.123_456));
        m.add(reading("M", "requests", "{request}", "Rate", 70.0));
        m.add(reading("S", "alloc", "", "Sum", 0.5));
        assert!(m.due().is_some());
        let mut out = Vec::new();
        m.draw(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<_> = text
            .lines()
            .map(str::split_whitespace)
            .map(Iterator::collect::<Vec<_>>)
            .collect();
        assert_eq!(
            lines,
            [
                vec![],
                vec!["[M]"],
                vec!["requests", "({request}", "/", "2", "s)", "70"],
                vec!["[S]"],
                vec!["alloc", "(count", "/", "2", "s)", "0.5"],
                vec!["cpu", "(%)", "2.123"],
            ]
        );
        // Nothing new: no frame, nothing due.
        assert_eq!(m.due(), None);
        let mut out = Vec::new();
        m.draw(&mut out).unwrap();
        assert!(out.is_empty());
        assert_eq!(m.frames(), 1);
    }

    #[test]
    fn in_place_frames_go_home_and_erase() {
        let mut m = Monitor::new(Duration::from_secs(1), true, "title".to_string());
        m.add(reading("S", "x", "", "Mean", 42.0));
        let mut out = Vec::new();
        m.draw(&mut out).unwrap();
        let first = m.last_frame.unwrap();
        m.add(reading("S", "x", "", "Mean", -0.0001));
        // The next frame an interval after the last.
        assert_eq!(m.due(), Some(first + Duration::from_secs(1)));
        m.draw(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let frames: Vec<_> = text.split(HOME_AND_ERASE).collect();
        assert_eq!(frames.len(), 3, "{text:?}");
        assert!(frames[1].starts_with("title\n\n[S]\n    x "), "{text:?}");
        assert!(frames[1].trim_end().ends_with(" 42"), "{text:?}");
        assert!(frames[2].trim_end().ends_with(" 0"), "{text:?}");
    }
}
