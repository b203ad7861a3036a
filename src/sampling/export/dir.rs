//! The directory exporter: a pprof file per period.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use super::{Exporter, ExporterStats, FailureCause, PeriodProfile};

/// Writes each period to `profile-<start>-<seq>.pb.gz` in a directory
/// (`<start>` the period's start in UTC, `20261126T083000Z`; `<seq>` its
/// number, six digits or more): first to a hidden temporary name
/// (`.profile-....tmp`), then renamed, so a reader, or a `kill -9` at any
/// moment, never leaves a partial file under a profile's name. Beyond
/// `keep` files, the oldest (by name, so by start) are removed, whichever
/// run wrote them.
#[derive(Debug)]
pub struct DirectoryExporter {
    dir: PathBuf,
    keep: usize,
    stats: ExporterStats,
}

/// The name of the file of a period starting at `unix_seconds`.
pub fn period_file_name(unix_seconds: u64, seq: u64) -> String {
    format!("profile-{}-{seq:06}.pb.gz", utc_stamp(unix_seconds))
}

/// A time in UTC as the files' names have it: `20261126T083000Z`.
pub fn utc_stamp(unix_seconds: u64) -> String {
    let (days, secs) = (unix_seconds / 86_400, unix_seconds % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// Year, month, day of a day count since 1970-01-01 (the proleptic
/// Gregorian calendar; Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Whether `name` is a period file's.
pub fn is_period_file(name: &str) -> bool {
    name.starts_with("profile-") && name.ends_with(".pb.gz")
}

impl DirectoryExporter {
    /// An exporter into `dir` (created if missing), keeping at most `keep`
    /// period files (at least 1). Temporary files a killed process left
    /// there are removed.
    pub fn new(dir: &Path, keep: usize) -> io::Result<DirectoryExporter> {
        std::fs::create_dir_all(dir)?;
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with(".profile-") && name.ends_with(".tmp") {
                let _ = std::fs::remove_file(entry.path());
            }
        }
        Ok(DirectoryExporter {
            dir: dir.to_path_buf(),
            keep: keep.max(1),
            stats: ExporterStats::new("dir", &[FailureCause::Io]),
        })
    }

    fn write(&self, period: &PeriodProfile) -> io::Result<()> {
        let start = period
            .start
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let name = period_file_name(start, period.seq);
        let temporary = self.dir.join(format!(".{name}.tmp"));
        let mut file = std::fs::File::create(&temporary)?;
        let written = file
            .write_all(&period.pprof_gz)
            .and_then(|()| file.sync_data());
        drop(file);
        if let Err(error) = written.and_then(|()| std::fs::rename(&temporary, self.dir.join(&name)))
        {
            let _ = std::fs::remove_file(&temporary);
            return Err(error);
        }
        self.prune()
    }

    /// Removes the oldest period files beyond `keep`.
    fn prune(&self) -> io::Result<()> {
        let mut names: Vec<String> = std::fs::read_dir(&self.dir)?
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| is_period_file(n))
            .collect();
        if names.len() <= self.keep {
            return Ok(());
        }
        names.sort_unstable();
        let excess = names.len() - self.keep;
        for name in &names[..excess] {
            std::fs::remove_file(self.dir.join(name))?;
        }
        Ok(())
    }
}

impl Exporter for DirectoryExporter {
    fn export(&mut self, period: &PeriodProfile) {
        match self.write(period) {
            Ok(()) => self.stats.exported += 1,
            Err(error) => {
                self.stats.dropped += 1;
                self.stats
                    .fail(FailureCause::Io, format!("{}: {error}", self.dir.display()));
            }
        }
    }

    fn stats(&self) -> ExporterStats {
        self.stats.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::time::Duration;
    use std::time::SystemTime;

    #[test]
    fn names_sort_by_start_in_utc() {
        // 2026-11-26 08:30:00 UTC = 1795681800 (date -u -d @1795681800).
        assert_eq!(
            period_file_name(1_795_681_800, 7),
            "profile-20261126T083000Z-000007.pb.gz"
        );
        assert_eq!(
            period_file_name(0, 0),
            "profile-19700101T000000Z-000000.pb.gz"
        );
        // 2000-02-29 23:59:59 (a leap day of a century year divisible by 400).
        assert_eq!(
            period_file_name(951_868_799, 1_234_567),
            "profile-20000229T235959Z-1234567.pb.gz"
        );
        assert!(period_file_name(1_795_681_799, 9) < period_file_name(1_795_681_800, 0));
    }

    fn period(seq: u64, start: u64) -> PeriodProfile {
        PeriodProfile {
            seq,
            start: UNIX_EPOCH + Duration::from_secs(start),
            duration: Duration::from_secs(1),
            pprof_gz: alloc::vec![seq as u8; 10],
            samples: 1,
            pprof: alloc::sync::Arc::new(crate::profile::Pprof::new(&[])),
        }
    }

    #[test]
    fn keeps_the_newest_files_and_clears_temporaries() {
        let dir = std::env::temp_dir().join(format!(
            "corprof-dir-exporter-{}-{:?}",
            std::process::id(),
            SystemTime::now()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(".profile-x.pb.gz.tmp"), b"partial").unwrap();
        std::fs::write(dir.join("profile.pb.gz"), b"whole run").unwrap();
        let mut exporter = DirectoryExporter::new(&dir, 3).unwrap();
        assert!(!dir.join(".profile-x.pb.gz.tmp").exists());
        for seq in 0..5 {
            exporter.export(&period(seq, 1_000_000 + seq));
        }
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(
            names,
            [
                period_file_name(1_000_002, 2),
                period_file_name(1_000_003, 3),
                period_file_name(1_000_004, 4),
                String::from("profile.pb.gz"),
            ]
        );
        assert_eq!(
            std::fs::read(dir.join(period_file_name(1_000_004, 4))).unwrap(),
            [4; 10]
        );
        assert_eq!((exporter.stats.exported, exporter.stats.dropped), (5, 0));
        // A directory that went away: counted, never a panic.
        std::fs::remove_dir_all(&dir).unwrap();
        exporter.export(&period(5, 1_000_005));
        assert_eq!(exporter.stats.failures_of(FailureCause::Io), 1);
        assert_eq!(exporter.stats.dropped, 1);
    }
}
