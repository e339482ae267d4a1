//! How Android's framework opens an application's SQLite databases, per
//! Android release: the `[sqlite]` keys a scenario leaves out take the
//! values of its `android_version` (a phone sets it; see
//! `configs/phones/`).
//!
//! Sources (a `PRAGMA journal_mode` survey per API level and the framework
//! code of each release; reference android-workloads.md §3):
//! * Android 2.3 (SQLite 3.6.22): the framework sets no journal mode, so
//!   SQLite's own default applies: DELETE, `synchronous` FULL, no
//!   journal size limit, WAL auto-checkpoint 1000 pages.
//! * Android 3.0-4.0.x (SQLite 3.7.4): ICS's `SQLiteDatabase.openDatabase()`
//!   sets journal mode TRUNCATE (Honeycomb is assumed to do the same: not
//!   re-read); other keys at SQLite's defaults.
//! * Android 4.1-5.1 (SQLite 3.7.11-3.8.6): `SQLiteGlobal` reads
//!   `frameworks/base/core/res/res/values/config.xml`:
//!   `db_default_journal_mode` PERSIST, `db_default_sync_mode` FULL,
//!   `db_journal_size_limit` 524288, `db_wal_autocheckpoint` 100.
//!
//! Later releases are not in the sources at hand: a scenario naming one
//! must set its `[sqlite]` keys itself.

use super::{JournalMode, Synchronous};
use crate::error::SettingError;

/// The framework's SQLite settings of one Android release.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlatformSqlite {
    /// `PRAGMA journal_mode` the framework sets (or SQLite's default).
    pub journal_mode: JournalMode,
    /// `PRAGMA synchronous`.
    pub synchronous: Synchronous,
    /// `PRAGMA journal_size_limit`, bytes (−1 = none).
    pub journal_size_limit: i64,
    /// `PRAGMA wal_autocheckpoint`, pages.
    pub wal_autocheckpoint: u32,
}

/// The releases with recorded defaults, for error messages.
pub const KNOWN_RELEASES: &str = "2.3, 3.0-3.2, 4.0-4.4, 5.0-5.1";

/// Parses `MAJOR.MINOR[.PATCH]` into `(major, minor)`.
fn parse_version(v: &str) -> Option<(u32, u32)> {
    let mut it = v.trim().split('.');
    let major = it.next()?.parse().ok()?;
    let minor = it.next().map_or(Some(0), |m| m.parse().ok())?;
    if let Some(patch) = it.next() {
        patch.parse::<u32>().ok()?;
    }
    if it.next().is_some() {
        return None;
    }
    Some((major, minor))
}

/// The framework's SQLite settings of Android `version` (`"4.4"`,
/// `"4.1.2"`); the error says what is known.
pub fn defaults_for(version: &str) -> Result<PlatformSqlite, SettingError> {
    let Some(v) = parse_version(version) else {
        return Err(SettingError::Invalid {
            key: "android_version".into(),
            value: format!("\"{version}\""),
            expected: "a release such as \"4.4\" or \"4.1.2\"".into(),
        });
    };
    let sqlite_own = |journal_mode| PlatformSqlite {
        journal_mode,
        synchronous: Synchronous::Full,
        journal_size_limit: -1,
        wal_autocheckpoint: 1000,
    };
    match v {
        (2, 3) => Ok(sqlite_own(JournalMode::Delete)),
        (3, 0..=2) | (4, 0) => Ok(sqlite_own(JournalMode::Truncate)),
        (4, 1..=4) | (5, 0..=1) => Ok(PlatformSqlite {
            journal_mode: JournalMode::Persist,
            synchronous: Synchronous::Full,
            journal_size_limit: 524_288,
            wal_autocheckpoint: 100,
        }),
        _ => Err(SettingError::Conflict {
            key: "android_version".into(),
            value: format!("\"{version}\""),
            why: format!("no SQLite defaults are recorded for this release (known: {KNOWN_RELEASES}); set the [sqlite] keys journal_mode, synchronous, journal_size_limit and wal_autocheckpoint yourself"),
        }),
    }
}

/// Fills the `[sqlite]` keys the scenario tree `root` leaves out with the
/// defaults of its top-level `android_version`, if it names one.
pub fn apply_android_defaults(root: &mut toml::Value) -> Result<(), SettingError> {
    let Some(t) = root.as_table_mut() else {
        return Ok(());
    };
    let version = match t.get("android_version") {
        None => return Ok(()),
        Some(toml::Value::String(s)) => s.clone(),
        Some(other) => {
            return Err(SettingError::Invalid {
                key: "android_version".into(),
                value: other.to_string(),
                expected: "a release as text, e.g. \"4.4\"".into(),
            })
        }
    };
    let d = defaults_for(&version)?;
    let sqlite = t
        .entry("sqlite")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    let Some(s) = sqlite.as_table_mut() else {
        return Err(SettingError::Field {
            key: "sqlite".into(),
            problem: "expected a table".into(),
        });
    };
    let keys = [
        ("journal_mode", enum_text(d.journal_mode)),
        ("synchronous", enum_text(d.synchronous)),
        (
            "journal_size_limit",
            toml::Value::Integer(d.journal_size_limit),
        ),
        (
            "wal_autocheckpoint",
            toml::Value::Integer(i64::from(d.wal_autocheckpoint)),
        ),
    ];
    for (k, v) in keys {
        s.entry(k).or_insert(v);
    }
    Ok(())
}

/// A unit enum as the TOML string its serde name is.
fn enum_text(v: impl serde::Serialize) -> toml::Value {
    toml::Value::try_from(v).expect("a unit enum serialises to a TOML string")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_release_gets_its_frameworks_journal_mode() {
        assert_eq!(
            defaults_for("2.3.7").unwrap().journal_mode,
            JournalMode::Delete
        );
        assert_eq!(
            defaults_for("4.0.4").unwrap().journal_mode,
            JournalMode::Truncate
        );
        let kk = defaults_for("4.4").unwrap();
        assert_eq!(kk.journal_mode, JournalMode::Persist);
        assert_eq!(kk.journal_size_limit, 524_288);
        assert_eq!(kk.wal_autocheckpoint, 100);
        assert_eq!(
            defaults_for("5.1.1").unwrap().journal_mode,
            JournalMode::Persist
        );
        assert!(defaults_for("9")
            .unwrap_err()
            .to_string()
            .contains("no SQLite defaults"));
        assert!(defaults_for("four")
            .unwrap_err()
            .to_string()
            .contains("expected a release"));
        assert!(defaults_for("4.4.2.1").is_err());
    }

    #[test]
    fn explicit_keys_win_over_the_release_defaults() {
        let mut v: toml::Value =
            toml::from_str("android_version = \"4.4\"\n[sqlite]\njournal_mode = \"wal\"\n")
                .unwrap();
        apply_android_defaults(&mut v).unwrap();
        let s = v["sqlite"].as_table().unwrap();
        assert_eq!(s["journal_mode"].as_str(), Some("wal"));
        assert_eq!(s["synchronous"].as_str(), Some("full"));
        assert_eq!(s["wal_autocheckpoint"].as_integer(), Some(100));
        let mut none: toml::Value = toml::from_str("name = \"x\"\n").unwrap();
        apply_android_defaults(&mut none).unwrap();
        assert!(none.get("sqlite").is_none(), "no version, nothing filled");
    }
}
