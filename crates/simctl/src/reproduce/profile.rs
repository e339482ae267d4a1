//! The profiles a finding runs on: the scenarios as written (the generic
//! eMMC profile and their own hosts), or a phone from `configs/phones/`.
//!
//! A phone file is a scenario fragment: `name` and `description`, and the
//! tables `device`, `host`, `scheduler`, `queue`, `driver`, `writeback` and
//! `fs`, merged over each scenario (a phone's `device.profile` and
//! `host.profile` paths are relative to the phone file). `device = "PATH"`,
//! `host = "PATH"` and `scheduler = "NAME"` are short for
//! `device.profile`, `host.profile` and `scheduler.name`.

use std::path::{Path, PathBuf};

/// Scenario sections a phone may set.
const SECTIONS: [&str; 7] = [
    "device",
    "host",
    "scheduler",
    "queue",
    "driver",
    "writeback",
    "fs",
];

/// One profile.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    /// Its name (`generic`, or the phone's).
    pub name: String,
    /// The phone file, if any.
    pub source: Option<PathBuf>,
    /// Tables merged over each scenario.
    overlay: toml::Table,
}

impl Profile {
    /// The scenarios as written: the generic eMMC profile.
    pub fn generic() -> Profile {
        Profile {
            name: "generic".into(),
            source: None,
            overlay: toml::Table::new(),
        }
    }

    /// Loads a phone file.
    pub fn load(path: &Path) -> Result<Profile, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("--phone {}: {e}", path.display()))?;
        let doc: toml::Table =
            toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let dir = path.parent().unwrap_or(Path::new(""));
        let mut name = path
            .file_stem()
            .map_or_else(|| "phone".to_string(), |s| s.to_string_lossy().into());
        let mut overlay = toml::Table::new();
        for (k, v) in doc {
            match (k.as_str(), v) {
                ("name", toml::Value::String(s)) => name = s,
                ("description", toml::Value::String(_)) => {}
                ("device" | "host", toml::Value::String(p)) => {
                    let mut t = toml::Table::new();
                    t.insert("profile".into(), p.into());
                    overlay.insert(k, toml::Value::Table(t));
                }
                ("scheduler", toml::Value::String(s)) => {
                    let mut t = toml::Table::new();
                    t.insert("name".into(), s.into());
                    overlay.insert(k, toml::Value::Table(t));
                }
                (s, toml::Value::Table(t)) if SECTIONS.contains(&s) => {
                    overlay.insert(k, toml::Value::Table(t));
                }
                (other, _) => {
                    return Err(format!(
                        "{}: key `{other}` cannot be applied to a scenario; a phone file has name, description and the tables {}",
                        path.display(),
                        SECTIONS.join(", ")
                    ))
                }
            }
        }
        for section in ["device", "host"] {
            if let Some(toml::Value::Table(t)) = overlay.get_mut(section) {
                if let Some(toml::Value::String(p)) = t.get_mut("profile") {
                    if p != "generic" && Path::new(p.as_str()).is_relative() {
                        *p = std::path::absolute(dir.join(&*p))
                            .map_err(|e| format!("{}: {section}.profile: {e}", path.display()))?
                            .display()
                            .to_string();
                    }
                }
            }
        }
        Ok(Profile {
            name,
            source: Some(path.to_path_buf()),
            overlay,
        })
    }

    /// `scenario` (a TOML document) with this profile merged over it.
    pub fn apply(&self, scenario: &mut toml::Table) {
        merge(scenario, &self.overlay);
    }
}

fn merge(into: &mut toml::Table, from: &toml::Table) {
    for (k, v) in from {
        match (into.get_mut(k), v) {
            (Some(toml::Value::Table(a)), toml::Value::Table(b)) => merge(a, b),
            _ => {
                into.insert(k.clone(), v.clone());
            }
        }
    }
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
        let profile = if p == "generic" {
            Profile::generic()
        } else if p.ends_with(".toml") || p.contains('/') {
            Profile::load(Path::new(p))?
        } else {
            let file = phones_dir.join(format!("{p}.toml"));
            if !file.is_file() {
                let names: Vec<String> = bundled()
                    .iter()
                    .filter_map(|b| b.file_stem().map(|s| s.to_string_lossy().into_owned()))
                    .chain(["generic".to_string()])
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
    fn a_phone_file_merges_over_a_scenario_with_paths_from_its_folder() {
        let dir = std::env::temp_dir().join(format!("mmcsim-phone-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("pocket.toml");
        std::fs::write(
            &f,
            "name = \"pocket\"\ndevice = \"../devices/x.toml\"\nscheduler = \"cfq\"\n[queue]\nread_ahead_kb = 64\n",
        )
        .unwrap();
        let p = Profile::load(&f).unwrap();
        let mut sc: toml::Table =
            toml::from_str("[device]\nprofile = \"a.toml\"\n[queue]\nnr_requests = 8\n").unwrap();
        p.apply(&mut sc);
        let dev = sc["device"]["profile"].as_str().unwrap();
        assert!(
            dev.ends_with("devices/x.toml") && Path::new(dev).is_absolute(),
            "{dev}"
        );
        assert_eq!(sc["queue"]["nr_requests"].as_integer(), Some(8));
        assert_eq!(sc["queue"]["read_ahead_kb"].as_integer(), Some(64));
        assert_eq!(sc["scheduler"]["name"].as_str(), Some("cfq"));

        std::fs::write(&f, "jobs = 3\n").unwrap();
        assert!(Profile::load(&f).unwrap_err().contains("key `jobs`"));
        let e = resolve(&["nope".into()], &dir).unwrap_err();
        assert!(e.contains("unknown phone") && e.contains("generic"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
