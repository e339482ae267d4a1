//! The profiles a finding runs on: the scenarios as written (their own
//! device and host profiles: the generic eMMC, except the Galaxy S II
//! study's app of finding 6, written for the 2011 eMMC 4.41 that study
//! measured), or a phone from `configs/phones/`
//! ([`mmcsim::config::Phone`]). A phone replaces each scenario's device
//! profile, host profile and scheduler exactly as `--phone` does on `run`
//! (its overrides come first; the finding's and the user's `--set` follow).

use mmcsim::config::uncertain::Uncertain;
use mmcsim::config::Phone;
use mmcsim::host::fs::FsType;
use std::path::{Path, PathBuf};

/// The name of the profile that runs the scenarios as written.
pub const GENERIC: &str = "generic";

/// One profile.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    /// Its name (`generic`, or the phone's).
    pub name: String,
    /// The phone file, if any.
    pub source: Option<PathBuf>,
    /// The overrides that select the phone's profiles, applied first.
    sets: Vec<(String, String)>,
    /// The file system the phone's published benchmarks ran on (its
    /// `benchmark_fs`); the seed micro-benchmarks mount it. `None`: the
    /// scenarios' raw contiguous files.
    pub benchmark_fs: Option<FsType>,
    /// What the phone was fitted to: its `[fit] targets` and those of its
    /// device and host profiles (`TABLE:METRIC` or `finding-N`, checked);
    /// empty for a phone nothing was fitted to and for `generic`.
    pub fit_targets: Vec<String>,
    /// The phone's unsourced internals (`[uncertain]`) that can move a
    /// finding (not its power-loss keys), empty for the generic profile.
    pub uncertain: Vec<Uncertain>,
}

/// True when the `[uncertain]` key `key` can move a finding: the
/// `[power_loss]` keys act only when the power is cut (`simctl crash`,
/// `--power-cut`), which no finding does, so the ensemble does not sample
/// them: they would move no finding, only the draw of the other keys.
fn acts_in_findings(key: &str) -> bool {
    !key.starts_with("device.power_loss.")
}

impl Profile {
    /// The scenarios as written, with their own device and host profiles
    /// (the generic eMMC for all but finding 6's 2011-era app).
    pub fn generic() -> Profile {
        Profile {
            name: GENERIC.into(),
            source: None,
            sets: Vec::new(),
            benchmark_fs: None,
            fit_targets: Vec::new(),
            uncertain: Vec::new(),
        }
    }

    /// Loads a phone file and what it was fitted to.
    pub fn load(path: &Path) -> Result<Profile, String> {
        let phone = Phone::load(path).map_err(|e| format!("--phone {}: {e}", path.display()))?;
        let fit_targets =
            fit_targets(&phone).map_err(|e| format!("--phone {}: {e:#}", path.display()))?;
        Ok(Profile {
            name: phone.name.clone(),
            source: Some(path.to_path_buf()),
            sets: phone.sets(),
            benchmark_fs: phone.benchmark_fs,
            fit_targets,
            uncertain: phone
                .uncertain
                .into_iter()
                .filter(|u| acts_in_findings(&u.key))
                .collect(),
        })
    }

    /// The same profile with one ensemble configuration's settings applied
    /// after its own (and before the finding's and the user's).
    pub fn with_sets(&self, extra: &[(String, String)]) -> Profile {
        let mut p = self.clone();
        p.sets.extend_from_slice(extra);
        p
    }

    /// The overrides that select this profile, to apply before any other.
    pub fn sets(&self) -> &[(String, String)] {
        &self.sets
    }

    /// The overrides that mount the phone's benchmark file system under a
    /// seed micro-benchmark (`fs.type`; FUSE's daemon threads follow the
    /// phone's Android release), or none for the raw file.
    pub fn benchmark_fs_sets(&self) -> Vec<(String, String)> {
        self.benchmark_fs
            .map(|fs| vec![("fs.type".to_string(), fs.name().to_string())])
            .unwrap_or_default()
    }

    /// The file system a seed micro-benchmark runs on, as the page names it.
    pub fn benchmark_fs_name(&self) -> &'static str {
        self.benchmark_fs.map_or("raw file", |fs| fs.name())
    }
}

/// The `[fit] targets` of a phone file, its device profile and its host
/// profile, in that order without repeats, each checked against the
/// measurement tables and findings.
fn fit_targets(phone: &Phone) -> anyhow::Result<Vec<String>> {
    let numbers: Vec<u32> = super::findings::all()
        .iter()
        .map(|f| f.about().number)
        .collect();
    let mut all: Vec<String> = Vec::new();
    let files = [
        (phone.source.clone(), phone.fit_targets.clone()),
        (
            phone.device.clone(),
            crate::fit::targets_of_file(&phone.device)?,
        ),
        (
            phone.host.clone(),
            crate::fit::targets_of_file(&phone.host)?,
        ),
    ];
    for (file, targets) in files {
        crate::fit::check(&file.display().to_string(), &targets, &numbers)?;
        for t in targets {
            if !all.contains(&t) {
                all.push(t);
            }
        }
    }
    Ok(all)
}

/// The profiles named by `--phone` (a file, a name in `phones_dir`, or
/// `generic`); with none, every phone in `phones_dir` (by file name) and
/// then the generic profile.
pub fn resolve(phones: &[String], phones_dir: &Path) -> Result<Vec<Profile>, String> {
    let bundled = || -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(phones_dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .collect();
        v.sort();
        v
    };
    if phones.is_empty() {
        let mut all = bundled()
            .iter()
            .map(|p| Profile::load(p))
            .collect::<Result<Vec<_>, _>>()?;
        all.push(Profile::generic());
        return Ok(all);
    }
    let mut out: Vec<Profile> = Vec::new();
    for p in phones {
        let profile = if p == GENERIC {
            Profile::generic()
        } else if p.ends_with(".toml") || p.contains('/') {
            Profile::load(Path::new(p))?
        } else {
            let file = phones_dir.join(format!("{p}.toml"));
            if !file.is_file() {
                let names: Vec<String> = bundled()
                    .iter()
                    .filter_map(|b| b.file_stem().map(|s| s.to_string_lossy().into_owned()))
                    .chain([GENERIC.to_string()])
                    .collect();
                return Err(format!(
                    "--phone {p}: unknown phone (no {}); known: {}",
                    file.display(),
                    names.join(", ")
                ));
            }
            Profile::load(&file)?
        };
        if out.iter().any(|o| o.name == profile.name) {
            return Err(format!(
                "--phone {p}: profile `{}` is given twice",
                profile.name
            ));
        }
        out.push(profile);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_phone_selects_its_profiles_and_unknown_phones_are_named() {
        let dir = std::env::temp_dir().join(format!("mmcsim-phone-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("devices")).unwrap();
        std::fs::create_dir_all(dir.join("hosts")).unwrap();
        std::fs::create_dir_all(dir.join("phones")).unwrap();
        std::fs::write(dir.join("devices/x.toml"), "").unwrap();
        std::fs::write(dir.join("hosts/h.toml"), "").unwrap();
        let f = dir.join("phones/pocket.toml");
        std::fs::write(
            &f,
            "name = \"pocket\"\ndevice = \"../devices/x.toml\"\nhost = \"../hosts/h.toml\"\nandroid_version = \"4.4\"\nkernel = \"Linux 3.4\"\n[scheduler]\nname = \"cfq\"\n",
        )
        .unwrap();
        let p = Profile::load(&f).unwrap();
        assert_eq!(p.name, "pocket");
        let dev = &p
            .sets()
            .iter()
            .find(|(k, _)| k == "device.profile")
            .unwrap()
            .1;
        assert!(
            dev.ends_with("x.toml") && Path::new(dev).is_absolute(),
            "{dev}"
        );
        assert!(p
            .sets()
            .contains(&("scheduler.name".to_string(), "cfq".to_string())));
        std::fs::write(&f, "jobs = 3\n").unwrap();
        assert!(Profile::load(&f).is_err());
        let e = resolve(&["nope".into()], &dir.join("phones")).unwrap_err();
        assert!(e.contains("unknown phone") && e.contains("generic"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
