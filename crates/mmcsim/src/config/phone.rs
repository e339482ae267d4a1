//! Phone profiles (`configs/phones/*.toml`): a phone as it was measured —
//! its device profile, host profile, kernel, Android release and the
//! kernel's I/O scheduler, chosen together.
//!
//! A phone file names its device and host profiles by paths relative to
//! itself, its `android_version` and `kernel` (text, with sources in the
//! file's comments), optionally the file system its benchmarks ran on
//! (`benchmark_fs`: `"ext4"`, `"vfat"`, ...), a `[scheduler]` table (`name`, optional `hz`) and an
//! optional `[host]` table of host settings its kernel changes over the
//! host profile (governor, frequency table, tunables). Applying a phone to
//! a scenario ([`Phone::sets`]) is a list of overrides that *replace* the
//! scenario's choices — `device.profile`, `host.profile`, the `[host]`
//! keys, `android_version` (which decides the framework's SQLite
//! defaults), `scheduler.name` and (if given) `scheduler.hz` — while the
//! scenario's other `[device]`, `[host]` and `[scheduler]` keys still
//! apply over the phone's profiles. Overrides given after them
//! (`--device`, `--scheduler`, `--set`) win.

use crate::error::{Error, Result, SettingError};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// Folder, relative to a project root, where phones are found by name.
pub const PHONES_DIR: &str = "configs/phones";

/// A phone: device profile, host profile and default scheduler.
#[derive(Clone, Debug, PartialEq)]
pub struct Phone {
    /// Short name, e.g. `motog-2013`.
    pub name: String,
    /// What the phone is (SoC, eMMC, kernel).
    pub description: String,
    /// The targets the phone's values were fitted to (`[fit] targets`:
    /// `TABLE:METRIC` of a published measurement table, or `finding-N`),
    /// in file order; empty when nothing was fitted. Checked here for
    /// form only; `simctl` checks that each names a known table, metric or
    /// finding.
    pub fit_targets: Vec<String>,
    /// The phone file.
    pub source: PathBuf,
    /// Device profile (absolute path).
    pub device: PathBuf,
    /// Host profile (absolute path).
    pub host: PathBuf,
    /// Stock kernel's default scheduler, by kernel name.
    pub scheduler: String,
    /// Stock kernel's tick rate, Hz, when the file names it.
    pub hz: Option<u32>,
    /// Android release the phone ran when measured (decides SQLite's
    /// defaults), e.g. `4.4`.
    pub android_version: String,
    /// Kernel the phone ran when measured, e.g. `Linux 3.4 (RenderKernel r17)`.
    pub kernel: String,
    /// File system the phone's published benchmarks ran on (`benchmark_fs`
    /// in the file), when its sources say; not applied to a scenario by
    /// [`Phone::sets`] (a scenario's `[fs]` decides what `run` mounts).
    pub benchmark_fs: Option<crate::host::fs::FsType>,
    /// Host settings the kernel changes, as `host.KEY` overrides (TOML
    /// literals), in key order.
    pub host_sets: Vec<(String, String)>,
    /// The unsourced values that can decide a finding, as ranges or
    /// alternatives with their reasons (`[uncertain]`, see
    /// [`super::uncertain`]); the profiles' own values are the nominal
    /// point.
    pub uncertain: Vec<super::uncertain::Uncertain>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PhoneFile {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    fit: Option<Fit>,
    device: PathBuf,
    host: PathBuf,
    android_version: String,
    kernel: String,
    #[serde(default)]
    benchmark_fs: Option<crate::host::fs::FsType>,
    scheduler: PhoneScheduler,
    #[serde(default)]
    host_settings: toml::Table,
    #[serde(default)]
    uncertain: toml::Table,
}

/// `[fit]`: what a profile's values were fitted to.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Fit {
    /// `TABLE:METRIC` or `finding-N`, one per target fitted.
    targets: Vec<String>,
}

/// Checks the form of `[fit] targets` in `src` (a phone, device or host
/// profile): a non-empty list of distinct, non-empty names.
pub fn check_fit_targets(src: &str, targets: &[String]) -> Result<()> {
    if targets.is_empty() {
        return Err(Error::setting(
            src,
            SettingError::Empty {
                key: "[fit] targets".into(),
                expected:
                    "name what was fitted (\"TABLE:METRIC\" or \"finding-N\"), or leave [fit] out",
            },
        ));
    }
    for (i, t) in targets.iter().enumerate() {
        if t.trim().is_empty() {
            return Err(Error::setting(
                src,
                SettingError::Empty {
                    key: format!("[fit] targets[{i}]"),
                    expected: "expected \"TABLE:METRIC\" or \"finding-N\"",
                },
            ));
        }
        if targets[..i].contains(t) {
            return Err(Error::setting(
                src,
                SettingError::Duplicate {
                    key: format!("[fit] targets[{i}]"),
                    value: t.clone(),
                },
            ));
        }
    }
    Ok(())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PhoneScheduler {
    name: String,
    #[serde(default)]
    hz: Option<u32>,
}

impl Phone {
    /// Loads a phone file; its device and host profiles must exist.
    pub fn load(path: &Path) -> Result<Phone> {
        let src = path.display().to_string();
        let text = crate::textfile::read_config(path)?;
        let f: PhoneFile = toml::from_str(&text).map_err(|e| Error::toml(&src, e))?;
        // Profiles are resolved to absolute paths: the overrides land in a
        // scenario that resolves relative paths against its own folder.
        let abs = std::path::absolute(path).map_err(|e| Error::Io {
            path: path.to_path_buf(),
            source: e,
        })?;
        let dir = abs.parent().unwrap_or(Path::new(""));
        let resolve = |key: &str, p: &Path| -> Result<PathBuf> {
            let full = if p.is_absolute() {
                p.to_path_buf()
            } else {
                dir.join(p)
            };
            if !full.is_file() {
                return Err(Error::setting(
                    &src,
                    SettingError::NoSuchFile {
                        key: key.to_string(),
                        given: p.to_path_buf(),
                        resolved: full,
                    },
                ));
            }
            Ok(full)
        };
        let device = resolve("device", &f.device)?;
        let host = resolve("host", &f.host)?;
        if f.scheduler.name.trim().is_empty() {
            return Err(Error::setting(
                src,
                SettingError::Empty {
                    key: "scheduler.name".into(),
                    expected: "name the stock kernel's default scheduler, e.g. \"cfq\"",
                },
            ));
        }
        if let Some(hz) = f.scheduler.hz {
            if hz == 0 || hz > 10_000 {
                return Err(Error::setting(
                    src,
                    SettingError::Invalid {
                        key: "scheduler.hz".into(),
                        value: hz.to_string(),
                        expected: "1..=10000 ticks per second".into(),
                    },
                ));
            }
        }
        crate::workload::sqlite::platform::defaults_for(&f.android_version)
            .map_err(|e| Error::setting(&src, e))?;
        if f.kernel.trim().is_empty() {
            return Err(Error::setting(
                src,
                SettingError::Empty {
                    key: "kernel".into(),
                    expected:
                        "name the kernel the phone ran when measured, e.g. \"Linux 3.4 (stock)\"",
                },
            ));
        }
        let fit_targets = match f.fit {
            Some(fit) => {
                check_fit_targets(&src, &fit.targets)?;
                fit.targets
            }
            None => Vec::new(),
        };
        let mut host_sets = Vec::new();
        flatten("host", &f.host_settings, &mut host_sets);
        let uncertain = super::uncertain::parse(&src, &f.uncertain)?;
        let phone = Phone {
            name: f.name,
            description: f.description,
            fit_targets,
            source: path.to_path_buf(),
            device,
            host,
            scheduler: f.scheduler.name,
            hz: f.scheduler.hz,
            android_version: f.android_version,
            kernel: f.kernel,
            benchmark_fs: f.benchmark_fs,
            host_sets,
            uncertain,
        };
        phone.check_uncertain(&f.host_settings)?;
        Ok(phone)
    }

    /// Checks each `[uncertain]` entry against the profiles: the nominal
    /// value (the device or host profile's, or `[host_settings]`) lies in
    /// it, and every end and alternative is accepted.
    fn check_uncertain(&self, host_settings: &toml::Table) -> Result<()> {
        if self.uncertain.is_empty() {
            return Ok(());
        }
        let src = self.source.display().to_string();
        let table = |p: &Path| -> Result<toml::Table> {
            let text = crate::textfile::read_config(p)?;
            toml::from_str(&text).map_err(|e| Error::toml(p.display().to_string(), e))
        };
        let device = table(&self.device)?;
        let host = table(&self.host)?;
        for u in &self.uncertain {
            let nominal = match u.key.split_once('.') {
                Some(("device", rest)) => lookup(&device, rest),
                Some(("host", rest)) => lookup(host_settings, rest).or_else(|| lookup(&host, rest)),
                _ => None,
            };
            super::uncertain::check_nominal(&src, u, nominal)?;
        }
        super::uncertain::check_accepted(&src, &self.uncertain, &self.sets())
    }

    /// Finds a phone by `NAME` (`configs/phones/NAME.toml` in `from` or the
    /// nearest of its parents that has one) or loads `FILE` (anything with
    /// a path separator or a `.toml` suffix).
    pub fn find(name_or_file: &str, from: &Path) -> Result<Phone> {
        let looks_like_file = name_or_file.contains(std::path::MAIN_SEPARATOR)
            || name_or_file.contains('/')
            || name_or_file.ends_with(".toml");
        if looks_like_file {
            return Phone::load(Path::new(name_or_file));
        }
        for dir in from.ancestors() {
            let p = dir.join(PHONES_DIR).join(format!("{name_or_file}.toml"));
            if p.is_file() {
                return Phone::load(&p);
            }
        }
        let known = from
            .ancestors()
            .map(|d| d.join(PHONES_DIR))
            .find(|d| d.is_dir())
            .map(|d| known_phones(&d))
            .unwrap_or_default();
        Err(Error::NoSuchPhone {
            name: name_or_file.to_string(),
            dir: PHONES_DIR,
            from: from.to_path_buf(),
            known,
        })
    }

    /// The overrides that select this phone's device profile, host profile
    /// and scheduler (`device.profile`, `host.profile`, `scheduler.name`,
    /// `scheduler.hz`), to apply before any other override.
    pub fn sets(&self) -> Vec<(String, String)> {
        let mut s = vec![
            (
                "device.profile".to_string(),
                self.device.display().to_string(),
            ),
            ("host.profile".to_string(), self.host.display().to_string()),
        ];
        s.extend(self.host_sets.iter().cloned());
        s.push(("android_version".to_string(), self.android_version.clone()));
        s.push(("scheduler.name".to_string(), self.scheduler.clone()));
        if let Some(hz) = self.hz {
            s.push(("scheduler.hz".to_string(), hz.to_string()));
        }
        s
    }
}

/// `prefix.KEY` overrides for every value of `t` (nested tables become
/// dotted keys), each value written as a TOML literal.
fn flatten(prefix: &str, t: &toml::Table, out: &mut Vec<(String, String)>) {
    for (k, v) in t {
        let key = format!("{prefix}.{k}");
        match v {
            toml::Value::Table(inner) => flatten(&key, inner, out),
            toml::Value::String(s) => out.push((key, s.clone())),
            other => out.push((key, other.to_string())),
        }
    }
}

/// The value at dotted `path` in `t`.
fn lookup<'a>(t: &'a toml::Table, path: &str) -> Option<&'a toml::Value> {
    let mut parts = path.split('.');
    let mut v = t.get(parts.next()?)?;
    for p in parts {
        v = v.as_table()?.get(p)?;
    }
    Some(v)
}

/// Names of the phone files in `dir`, sorted.
fn known_phones(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| {
                    let p = e.path();
                    (p.extension().is_some_and(|x| x == "toml"))
                        .then(|| p.file_stem()?.to_str().map(str::to_string))
                        .flatten()
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `[fit] targets` is read as written; an empty or repeated list is a
    /// located error; a phone without `[fit]` was fitted to nothing.
    #[test]
    fn fit_targets_are_read_and_checked_for_form() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let moto = Phone::find("motog-2013", &root).unwrap();
        assert!(
            moto.fit_targets.is_empty(),
            "the bundled Moto G is not fitted"
        );
        let dir = std::env::temp_dir().join(format!("mmcsim-phone-fit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let text = std::fs::read_to_string(&moto.source)
            .unwrap()
            .replace(
                "../devices/",
                &format!("{}/configs/devices/", root.display()),
            )
            .replace("../hosts/", &format!("{}/configs/hosts/", root.display()));
        let with = |fit: &str| {
            let f = dir.join("fit.toml");
            std::fs::write(&f, format!("{text}\n[fit]\n{fit}\n")).unwrap();
            Phone::load(&f)
        };
        let p = with("targets = [\"t:a\", \"finding-3\"]").unwrap();
        assert_eq!(p.fit_targets, ["t:a", "finding-3"]);
        let e = with("targets = []").unwrap_err().to_string();
        assert!(e.contains("fit.toml: [fit] targets is empty"), "{e}");
        let e = with("targets = [\"x\", \"x\"]").unwrap_err().to_string();
        assert!(e.contains("[fit] targets[1] = \"x\" is given twice"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn the_nexus_s_benchmarked_on_vfat_and_a_bad_benchmark_fs_is_located() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let p = Phone::find("nexus-s", &root).unwrap();
        assert_eq!(p.benchmark_fs, Some(crate::host::fs::FsType::Vfat));
        assert!(!p.sets().iter().any(|(k, _)| k.contains("benchmark_fs")));
        let dir = std::env::temp_dir().join(format!("mmcsim-phone-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let text = std::fs::read_to_string(&p.source).unwrap();
        let bad = dir.join("bad-fs.toml");
        let text = text
            .replace("benchmark_fs = \"vfat\"", "benchmark_fs = \"fat16\"")
            .replace(
                "../devices/",
                &format!("{}/configs/devices/", root.display()),
            )
            .replace("../hosts/", &format!("{}/configs/hosts/", root.display()));
        std::fs::write(&bad, text).unwrap();
        let e = Phone::load(&bad).unwrap_err().to_string();
        assert!(e.contains("bad-fs.toml") && e.contains("fat16"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn the_nexus7_says_its_benchmark_ran_on_fuse() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/phones");
        let n7 = Phone::load(&dir.join("nexus7-2012.toml")).unwrap();
        assert_eq!(n7.benchmark_fs, Some(crate::host::fs::FsType::Fuse));
        let moto = Phone::load(&dir.join("motog-2013.toml")).unwrap();
        assert_eq!(moto.benchmark_fs, None);
    }
}
