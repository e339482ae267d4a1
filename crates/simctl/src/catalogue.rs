//! Finding phones, scenarios and the configuration folder by name from
//! any directory — on disk first (the nearest `configs/` of the current
//! directory or its parents), then in the tree bundled in the binary
//! ([`crate::bundled`]) — and the `simctl phones` / `simctl scenarios`
//! listings.

use crate::bundled::{self, CONFIGS};
use crate::output::Stdout;
use anyhow::{Context, Result};
use mmcsim::config::Phone;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Where a listed entry comes from.
fn origin(path: &Path, bundled_base: Option<&Path>) -> String {
    match bundled_base {
        Some(b) if path.starts_with(b) => "bundled".to_string(),
        _ => path.display().to_string(),
    }
}

/// Whether `s` names a file rather than a bundled entry (a path separator
/// in it).
fn is_path(s: &str) -> bool {
    s.contains('/') || s.contains(std::path::MAIN_SEPARATOR)
}

/// The phone `--phone NAME|FILE` names: a file with a separator or a
/// `.toml` suffix; else `configs/phones/NAME.toml` on disk from the current
/// directory up, else bundled. An unknown name lists both.
pub fn phone(name_or_file: &str) -> Result<Phone> {
    if is_path(name_or_file) || name_or_file.ends_with(".toml") {
        return Ok(Phone::load(Path::new(name_or_file))?);
    }
    let file = format!("{name_or_file}.toml");
    match bundled::base_for("phones", &file)? {
        Some(base) => Ok(Phone::find(name_or_file, &base)?),
        None => Err(crate::output::unusable(format!(
            "--phone {name_or_file}: no {CONFIGS}/phones/{file} in the current directory or its parents, and no bundled phone of that name; phones: {} (simctl phones lists them)",
            phone_names()?.join(", ")
        ))),
    }
}

/// Phone names on disk (nearest `configs/phones/`) and bundled, sorted,
/// without repeats.
fn phone_names() -> Result<Vec<String>> {
    let mut v = bundled::names("phones", "toml");
    if let Some(dir) = nearest_dir("phones")? {
        v.extend(stems(&dir, "toml"));
    }
    v.sort();
    v.dedup();
    Ok(v)
}

/// The nearest `configs/SUB/` folder on disk from the current directory.
fn nearest_dir(sub: &str) -> Result<Option<PathBuf>> {
    let here = std::env::current_dir().context("the current directory")?;
    Ok(here
        .ancestors()
        .map(|d| d.join(CONFIGS).join(sub))
        .find(|d| d.is_dir()))
}

/// File stems with extension `ext` in `dir`, sorted.
fn stems(dir: &Path, ext: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == ext))
        .filter_map(|p| Some(p.file_stem()?.to_str()?.to_string()))
        .collect();
    v.sort();
    v
}

/// The workload file `run`/`compare` are given: as written when it exists,
/// is `-` or has a path separator; else a scenario
/// (`configs/scenarios/NAME[.toml]`) or fio job (`configs/fio/NAME[.fio]`)
/// by name, on disk from the current directory up, else bundled; else an
/// error naming where it looked.
pub fn workload(given: &Path) -> Result<PathBuf> {
    let s = given.to_string_lossy();
    if s == "-" || given.exists() || is_path(&s) {
        return Ok(given.to_path_buf());
    }
    let candidates = [
        ("scenarios", format!("{s}.toml")),
        ("scenarios", s.to_string()),
        ("fio", format!("{s}.fio")),
        ("fio", s.to_string()),
    ];
    for (sub, file) in &candidates {
        if let Some(base) = bundled::base_for(sub, file)? {
            return Ok(base.join(CONFIGS).join(sub).join(file));
        }
    }
    Err(crate::output::unusable(format!(
        "{s}: no such file, and no scenario or fio job of that name in {CONFIGS}/scenarios/ or {CONFIGS}/fio/ (here or in a parent folder) or bundled; simctl scenarios lists them"
    )))
}

/// `reproduce --configs DIR`: `DIR` when given or present; for the
/// default (`configs`) absent here, the nearest `configs/` with phones/ of
/// a parent, else the bundled tree.
pub fn configs_dir(given: &Path) -> Result<PathBuf> {
    if given != Path::new(CONFIGS) || given.is_dir() {
        return Ok(given.to_path_buf());
    }
    if let Some(d) = nearest_dir("phones")? {
        return Ok(d.parent().map(Path::to_path_buf).unwrap_or(d));
    }
    Ok(bundled::root()?.join(CONFIGS))
}

/// Every phone's file: on disk (nearest `configs/phones/`) over bundled.
fn phone_files() -> Result<(Vec<PathBuf>, PathBuf)> {
    let disk = nearest_dir("phones")?;
    let base = bundled::root()?;
    let files = phone_names()?
        .into_iter()
        .map(|n| {
            let f = format!("{n}.toml");
            match &disk {
                Some(d) if d.join(&f).is_file() => d.join(&f),
                _ => base.join(CONFIGS).join("phones").join(&f),
            }
        })
        .collect();
    Ok((files, base))
}

/// `simctl phones`.
pub fn phones(json: bool, out: &mut Stdout) -> Result<ExitCode> {
    let (files, base) = phone_files()?;
    let mut rows = Vec::new();
    for f in &files {
        let p = Phone::load(f)?;
        rows.push(serde_json::json!({
            "name": p.name,
            "description": p.description,
            "android_version": p.android_version,
            "kernel": p.kernel,
            "scheduler": p.scheduler,
            "benchmark_fs": p.benchmark_fs.map(|f| f.name()),
            "source": origin(f, Some(&base)),
        }));
    }
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&rows)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(
        out,
        "{:<14} {:<8} {:<9} {:<9} {:<9} description",
        "phone", "android", "scheduler", "bench fs", "source"
    )?;
    for r in &rows {
        let s = |k: &str| r[k].as_str().unwrap_or("-").to_string();
        let src = s("source");
        writeln!(
            out,
            "{:<14} {:<8} {:<9} {:<9} {:<9} {}",
            s("name"),
            s("android_version"),
            s("scheduler"),
            s("benchmark_fs"),
            if src == "bundled" {
                src.as_str()
            } else {
                "disk"
            },
            s("description")
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `simctl scenarios`: bundled scenarios and fio jobs, and those on disk
/// in the nearest `configs/scenarios/` and `configs/fio/`.
pub fn scenarios(json: bool, out: &mut Stdout) -> Result<ExitCode> {
    let base = bundled::root()?;
    let mut rows = Vec::new();
    for (sub, ext) in [("scenarios", "toml"), ("fio", "fio")] {
        let disk = nearest_dir(sub)?;
        let mut names = bundled::names(sub, ext);
        if let Some(d) = &disk {
            names.extend(stems(d, ext));
        }
        names.sort();
        names.dedup();
        for n in names {
            let f = format!("{n}.{ext}");
            let path = match &disk {
                Some(d) if d.join(&f).is_file() => d.join(&f),
                _ => base.join(CONFIGS).join(sub).join(&f),
            };
            let text = mmcsim::textfile::read_config(&path)?;
            rows.push(serde_json::json!({
                "name": n,
                "kind": if ext == "toml" { "scenario" } else { "fio job" },
                "description": describe(&text, ext),
                "source": origin(&path, Some(&base)),
            }));
        }
    }
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&rows)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(
        out,
        "{:<22} {:<9} {:<8} description",
        "name", "kind", "source"
    )?;
    for r in &rows {
        let s = |k: &str| r[k].as_str().unwrap_or("-").to_string();
        let src = s("source");
        writeln!(
            out,
            "{:<22} {:<9} {:<8} {}",
            s("name"),
            s("kind"),
            if src == "bundled" {
                src.as_str()
            } else {
                "disk"
            },
            s("description")
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// A scenario's `description`, or an fio job file's first comment line.
fn describe(text: &str, ext: &str) -> String {
    if ext == "toml" {
        return text
            .parse::<toml::Table>()
            .ok()
            .and_then(|t| t.get("description")?.as_str().map(str::to_string))
            .unwrap_or_default();
    }
    text.lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix(['#', ';'])
                .map(|c| c.trim().to_string())
        })
        .unwrap_or_default()
}
