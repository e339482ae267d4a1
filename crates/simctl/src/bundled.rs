//! The configuration tree bundled in the binary (`configs/` at build time:
//! phones, device and host profiles, scenarios, fio jobs, sweeps,
//! calibration files, baselines), so `simctl` works from any directory.
//!
//! Names resolve against files on disk first: the nearest `configs/` in
//! the current directory or one of its parents (a clone of the
//! repository, or a user's own tree) overrides the bundled copy. When none
//! has the file, the bundled tree is written out once, content-addressed,
//! under the user's cache directory (`$MMCSIM_CACHE_DIR`, else
//! `$XDG_CACHE_HOME/mmcsim`, else `~/.cache/mmcsim`, else the system's
//! temporary directory), and used from there: profiles refer to each
//! other by relative paths, which then resolve as in the repository, and
//! error messages name real files a user can open and copy.

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

include!(concat!(env!("OUT_DIR"), "/bundled_configs.rs"));

/// The folder name the tree lives under, in a repository and in the
/// cache.
pub const CONFIGS: &str = "configs";

/// 64-bit FNV-1a over every bundled path and text: names the extracted
/// tree, so binaries with different bundles never share one.
pub fn digest() -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (path, text) in FILES {
        for b in path.bytes().chain([0]).chain(text.bytes()).chain([0]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// The bundled file at `rel` (a path under `configs/`, `/`-separated).
pub fn file(rel: &str) -> Option<&'static str> {
    FILES.iter().find(|(p, _)| *p == rel).map(|(_, t)| *t)
}

/// Names of the bundled files under `dir/` with extension `ext`, sorted,
/// without the extension (`phones`, `toml` → `nexus-s`, ...).
pub fn names(dir: &str, ext: &str) -> Vec<String> {
    let prefix = format!("{dir}/");
    let suffix = format!(".{ext}");
    let mut v: Vec<String> = FILES
        .iter()
        .filter_map(|(p, _)| p.strip_prefix(&prefix)?.strip_suffix(&suffix))
        .filter(|n| !n.contains('/'))
        .map(str::to_string)
        .collect();
    v.sort();
    v
}

/// The cache folder the tree is written under.
fn cache_base() -> PathBuf {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(d) = env("MMCSIM_CACHE_DIR") {
        return d;
    }
    if let Some(d) = env("XDG_CACHE_HOME") {
        return d.join("mmcsim");
    }
    if let Some(h) = env("HOME") {
        return h.join(".cache").join("mmcsim");
    }
    std::env::temp_dir().join("mmcsim")
}

/// The folder holding the bundled `configs/` tree on disk, written out
/// (or repaired, file by file, where a file is missing or differs) on
/// first use. Each file is written to a temporary name and renamed into
/// place, so concurrent `simctl` processes never see a partial file; the
/// tree's own folder is named by [`digest`], so it holds only this
/// bundle.
pub fn root() -> Result<PathBuf> {
    extract_under(&cache_base())
}

/// [`root`] under the cache folder `cache`.
fn extract_under(cache: &Path) -> Result<PathBuf> {
    let base = cache.join(format!(
        "bundled-{}-{:016x}",
        env!("CARGO_PKG_VERSION"),
        digest()
    ));
    let tree = base.join(CONFIGS);
    for (rel, text) in FILES {
        let path = tree.join(rel);
        if std::fs::read(&path).is_ok_and(|b| b == text.as_bytes()) {
            continue;
        }
        write_one(&path, text).with_context(|| {
            format!("writing the bundled {CONFIGS}/{rel} to {}", path.display())
        })?;
    }
    Ok(base)
}

/// Writes `text` at `path` through a temporary file in the same folder;
/// refuses to replace anything but a regular file.
fn write_one(path: &Path, text: &str) -> Result<()> {
    let dir = path.parent().context("a bundled file has a folder")?;
    std::fs::create_dir_all(dir)?;
    if let Ok(m) = std::fs::symlink_metadata(path) {
        if !m.file_type().is_file() {
            bail!("{} exists and is not a regular file", path.display());
        }
    }
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    std::io::Write::write_all(&mut tmp, text.as_bytes())?;
    tmp.persist(path)?;
    Ok(())
}

/// The nearest folder, `from` or one of its parents, that has
/// `configs/SUB/FILE` on disk.
pub fn on_disk(from: &Path, sub: &str, file: &str) -> Option<PathBuf> {
    from.ancestors()
        .find(|d| d.join(CONFIGS).join(sub).join(file).is_file())
        .map(Path::to_path_buf)
}

/// The folder to look in for `configs/SUB/FILE`: the nearest on disk from
/// the current directory, else the bundled tree when it has the file;
/// `None` when neither has it.
pub fn base_for(sub: &str, file: &str) -> Result<Option<PathBuf>> {
    let here = std::env::current_dir().context("the current directory")?;
    if let Some(d) = on_disk(&here, sub, file) {
        return Ok(Some(d));
    }
    if self::file(&format!("{sub}/{file}")).is_some() {
        return Ok(Some(root()?));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundle_holds_every_phone_and_scenario_of_the_tree() {
        let repo = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join(CONFIGS);
        for (sub, ext) in [
            ("phones", "toml"),
            ("scenarios", "toml"),
            ("devices", "toml"),
        ] {
            let mut disk: Vec<String> = std::fs::read_dir(repo.join(sub))
                .unwrap()
                .filter_map(|e| {
                    let p = e.unwrap().path();
                    (p.extension()? == ext)
                        .then(|| p.file_stem().unwrap().to_str().unwrap().to_string())
                })
                .collect();
            disk.sort();
            assert_eq!(names(sub, ext), disk, "{sub}");
        }
        assert!(file("phones/motog-2013.toml")
            .unwrap()
            .contains("motog-2013"));
        assert_eq!(digest(), digest());
    }

    #[test]
    fn the_tree_is_written_once_and_repaired_where_it_differs() {
        let dir = tempfile::tempdir().unwrap();
        let base = extract_under(dir.path()).unwrap();
        assert!(base.starts_with(dir.path()));
        let phone = base.join("configs/phones/nexus-s.toml");
        assert_eq!(
            std::fs::read_to_string(&phone).unwrap(),
            file("phones/nexus-s.toml").unwrap()
        );
        std::fs::write(&phone, "edited").unwrap();
        assert_eq!(extract_under(dir.path()).unwrap(), base);
        assert_eq!(
            std::fs::read_to_string(&phone).unwrap(),
            file("phones/nexus-s.toml").unwrap()
        );
    }
}
