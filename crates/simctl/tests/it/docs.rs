//! The documentation: the README and the book under `docs/` keep their
//! promises. Every relative link resolves (file and heading), every chapter
//! is in `SUMMARY.md`, the book builds with `mdbook` (CI installs it), and
//! every shell example runs as written:
//!
//! * a ` ```sh ` block is executed, line by line, from a scratch folder that
//!   sees the repository's `configs/`, `traces/` and `tests/`, and each
//!   command must exit 0;
//! * ` ```sh,shared ` needs `../shared` beside the clone: executed when it is
//!   there (always in CI), otherwise SKIPPED;
//! * ` ```sh,pipe ` is a `simctl` command piped into other tools (`jq`):
//!   each line runs under `bash -o pipefail` with the built `simctl` first
//!   on `PATH`, must exit 0 and print something other than `null`; when a
//!   tool it pipes into is missing it is SKIPPED (a failure under CI, which
//!   installs them);
//! * ` ```sh,long ` holds what a test cannot run in seconds or at all here
//!   (`cargo install`, the whole `reproduce`, Slurm): each
//!   of its `simctl` command lines is parsed by `simctl`'s own argument
//!   parser, so a renamed command or option still fails here. The long
//!   runs themselves are the subject of their own tests (`reproduce.rs`,
//!   `slurm.rs`, `anywhere.rs`, `nexus5.rs`).
//!
//! Synopses (`simctl run SCENARIO [--json FILE]`) are ` ```text `.

use crate::common;
use crate::common::{root, shared_traces, skip_or_fail};
use clap::Parser;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The README and every Markdown file of the book.
fn documents() -> Vec<PathBuf> {
    let mut v = vec![root().join("README.md")];
    let mut dirs = vec![root().join("docs/src")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                v.push(p);
            }
        }
    }
    v.sort();
    v
}

/// GitHub's and mdBook's anchor of a heading: lower case, spaces to `-`,
/// punctuation other than `-` and `_` dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// Lines outside fenced code blocks, with their 1-based numbers.
fn prose(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut out = Vec::new();
    for (i, l) in text.lines().enumerate() {
        if l.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            out.push((i + 1, l));
        }
    }
    out
}

fn anchors(text: &str) -> Vec<String> {
    prose(text)
        .into_iter()
        .filter(|(_, l)| l.starts_with('#'))
        .map(|(_, l)| slug(l.trim_start_matches('#')))
        .collect()
}

/// The `](target)` links of a document's prose.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut v = Vec::new();
    for (n, l) in prose(text) {
        let mut rest = l;
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            let Some(j) = after.find(')') else { break };
            v.push((n, after[..j].to_string()));
            rest = &after[j..];
        }
    }
    v
}

#[test]
fn every_relative_link_resolves_to_a_file_and_heading() {
    let mut broken = Vec::new();
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        for (line, target) in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (file, anchor) = match target.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (target.as_str(), None),
            };
            let path = if file.is_empty() {
                doc.clone()
            } else {
                doc.parent().unwrap().join(file)
            };
            let here = format!("{}:{line}: ({target})", doc.display());
            if !path.exists() {
                broken.push(format!("{here}: no such file"));
                continue;
            }
            if let Some(a) = anchor {
                let t = std::fs::read_to_string(&path).unwrap_or_default();
                if !anchors(&t).iter().any(|h| h == a) {
                    broken.push(format!("{here}: no heading with anchor #{a}"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_chapter_is_in_the_summary_and_the_readme_stays_short() {
    let src = root().join("docs/src");
    let summary = std::fs::read_to_string(src.join("SUMMARY.md")).unwrap();
    let listed: Vec<String> = links(&summary).into_iter().map(|(_, t)| t).collect();
    for doc in documents() {
        let Ok(rel) = doc.strip_prefix(&src) else {
            continue;
        };
        let rel = rel.to_string_lossy().replace('\\', "/");
        if rel != "SUMMARY.md" {
            assert!(listed.contains(&rel), "{rel} is not in SUMMARY.md");
        }
    }
    let readme = std::fs::metadata(root().join("README.md")).unwrap().len();
    assert!(
        readme < 20 * 1024,
        "README.md is {readme} bytes: keep it to what a newcomer needs first (< 20 KiB), the rest goes in the book"
    );
}

#[test]
fn the_book_builds_with_mdbook() {
    let test = "the_book_builds_with_mdbook";
    if Command::new("mdbook").arg("--version").output().is_err() {
        skip_or_fail(
            test,
            "needs mdbook (`cargo install mdbook`), which is not on PATH",
        );
        return;
    }
    let out = common::scratch("docs-book");
    let o = Command::new("mdbook")
        .arg("build")
        .arg(root().join("docs"))
        .arg("-d")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "mdbook build docs failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for page in [
        "index.html",
        "guide/traces.html",
        "reference/report.html",
        "images/reproduce-finding-3.png",
    ] {
        assert!(out.join(page).exists(), "the book has no {page}");
    }
}

/// A fenced shell example: where it is, how it is marked, its command
/// lines (continuations joined, comments dropped).
struct Example {
    at: String,
    tag: String,
    commands: Vec<String>,
}

fn examples() -> Vec<Example> {
    let mut v = Vec::new();
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        let mut cur: Option<Example> = None;
        let mut pending = String::new();
        for (i, raw) in text.lines().enumerate() {
            let l = raw.trim_start();
            if let Some(info) = l.strip_prefix("```") {
                match cur.take() {
                    Some(e) => v.push(e),
                    None if info.starts_with("sh") => {
                        cur = Some(Example {
                            at: format!("{}:{}", doc.display(), i + 1),
                            tag: info.to_string(),
                            commands: Vec::new(),
                        })
                    }
                    None => {
                        cur = Some(Example {
                            at: String::new(),
                            tag: "skip".into(),
                            commands: Vec::new(),
                        })
                    }
                }
                continue;
            }
            let Some(e) = cur.as_mut() else { continue };
            let line = match l.find(" #") {
                Some(c) => &l[..c],
                None if l.starts_with('#') => "",
                None => l,
            };
            let line = line.trim_end();
            if let Some(head) = line.strip_suffix('\\') {
                pending.push_str(head);
                pending.push(' ');
                continue;
            }
            pending.push_str(line);
            let cmd = std::mem::take(&mut pending).trim().to_string();
            if !cmd.is_empty() {
                e.commands.push(cmd);
            }
        }
    }
    v.retain(|e| e.tag != "skip");
    v
}

/// The `simctl` arguments of a command line, if it runs simctl: `simctl
/// ARGS`, `cargo run --release [-q] -p simctl -- ARGS` or `$S ARGS`.
fn simctl_args(cmd: &str) -> Option<Vec<String>> {
    let cmd = cmd.split(" | ").next().unwrap();
    let cmd = cmd.rsplit(" && ").next().unwrap();
    let words: Vec<String> = cmd.split_whitespace().map(str::to_string).collect();
    let start = match words.first()?.as_str() {
        "simctl" | "$S" => 1,
        "cargo" if words.iter().any(|w| w == "simctl") && words.get(1)? == "run" => {
            words.iter().position(|w| w == "--")? + 1
        }
        _ => return None,
    };
    Some(words[start..].to_vec())
}

/// A scratch folder that sees the repository's inputs.
fn workdir() -> PathBuf {
    let d = common::scratch("docs-examples");
    for name in ["configs", "traces", "crates"] {
        let link = d.join(name);
        if !link.exists() {
            std::os::unix::fs::symlink(root().join(name), &link).unwrap();
        }
    }
    let shared = d.join("../shared");
    if !shared.exists() && shared_traces(&root()).exists() {
        let _ = std::os::unix::fs::symlink(root().join("../shared"), &shared);
    }
    d
}

/// The program a pipeline sends `simctl`'s output through (`jq` of
/// `simctl ... | jq '.a | .b'`: the first word after the first pipe).
fn piped_tools(cmd: &str) -> Vec<String> {
    cmd.split_once(" | ")
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .map(|t| vec![t.to_string()])
        .unwrap_or_default()
}

fn on_path(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// Runs a `simctl ... | tool` line under bash with the built simctl first
/// on `PATH`; it must exit 0 and print something other than `null`.
fn run_pipe_in(dir: &Path, at: &str, cmd: &str) {
    let bin = Path::new(env!("CARGO_BIN_EXE_simctl")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = Command::new("bash")
        .args(["-o", "pipefail", "-c", cmd])
        .env("PATH", path)
        .current_dir(dir)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{at}: `{cmd}` exited {:?}:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        !out.trim().is_empty() && out.trim() != "null",
        "{at}: `{cmd}` printed nothing but {:?}: the key it selects is not in the output",
        out.trim()
    );
}

fn run_in(dir: &Path, at: &str, cmd: &str, args: &[String]) {
    let o = Command::new(env!("CARGO_BIN_EXE_simctl"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{at}: `{cmd}` exited {:?}:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn every_shell_example_runs_or_parses_as_written() {
    let test = "every_shell_example_runs_or_parses_as_written";
    let dir = workdir();
    let have_shared = shared_traces(&root()).exists();
    let (mut ran, mut parsed) = (0, 0);
    for e in examples() {
        for cmd in &e.commands {
            if cmd.starts_with("S=") {
                continue;
            }
            let Some(args) = simctl_args(cmd) else {
                assert!(
                    e.tag.contains("long"),
                    "{}: `{cmd}` is not a simctl command: mark its block ```sh,long (or ```text for a synopsis)",
                    e.at
                );
                continue;
            };
            let argv = std::iter::once("simctl".to_string()).chain(args.iter().cloned());
            if let Err(err) = simctl::Cli::try_parse_from(argv) {
                panic!("{}: `{cmd}` does not parse:\n{err}", e.at);
            }
            match e.tag.as_str() {
                "sh" => {
                    run_in(&dir, &e.at, cmd, &args);
                    ran += 1;
                }
                "sh,shared" if have_shared => {
                    run_in(&dir, &e.at, cmd, &args);
                    ran += 1;
                }
                "sh,shared" => {
                    skip_or_fail(test, &format!("{}: `{cmd}` needs ../shared", e.at));
                    parsed += 1;
                }
                "sh,pipe" => match piped_tools(cmd).into_iter().find(|t| !on_path(t)) {
                    None => {
                        run_pipe_in(&dir, &e.at, cmd);
                        ran += 1;
                    }
                    Some(tool) => {
                        skip_or_fail(test, &format!("{}: `{cmd}` needs `{tool}`", e.at));
                        parsed += 1;
                    }
                },
                "sh,long" => parsed += 1,
                other => panic!("{}: unknown example tag ```{other}", e.at),
            }
        }
    }
    assert!(ran >= 20, "only {ran} examples ran");
    eprintln!("documentation examples: {ran} ran, {parsed} parsed only");
}

/// The key paths of the report's schema, as `simctl schema --markdown`
/// lists them.
fn schema_keys() -> Vec<String> {
    simctl::schema::keys(&simctl::schema::report_schema())
        .into_iter()
        .map(|k| k.path)
        .collect()
}

/// Whether `path` (array indices as `[]`) is a key of the schema, a map
/// key (`*`) standing for any name.
fn in_schema(keys: &[String], path: &str) -> bool {
    keys.iter().any(|k| {
        let (a, b): (Vec<&str>, Vec<&str>) = (k.split('.').collect(), path.split('.').collect());
        a.len() == b.len()
            && a.iter()
                .zip(&b)
                .all(|(x, y)| x == y || *x == "*" || *x == "*[]")
    })
}

/// Every key path of a JSON document.
fn json_paths(v: &serde_json::Value, path: &str, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                let here = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                out.push(here.clone());
                json_paths(x, &here, out);
            }
        }
        serde_json::Value::Array(a) => {
            for x in a {
                json_paths(x, &format!("{path}[]"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn the_report_keys_chapter_is_what_the_binary_generates() {
    let page = root().join("docs/src/reference/report-keys.md");
    let now = simctl::schema::markdown(&simctl::schema::report_schema());
    if std::env::var_os("MMCSIM_BLESS").is_some() {
        std::fs::write(&page, &now).unwrap();
    }
    let committed = std::fs::read_to_string(&page).unwrap_or_default();
    assert!(
        committed == now,
        "{} differs from `simctl schema --markdown`: regenerate it with MMCSIM_BLESS=1 cargo test -p simctl --test it docs",
        page.display()
    );
    let out = common::simctl_ok(&["schema", "--markdown"]);
    assert_eq!(out, now, "the command prints the chapter");
}

#[test]
fn every_key_of_every_golden_report_is_in_the_schema() {
    let keys = schema_keys();
    assert!(keys.len() > 300, "{} keys", keys.len());
    let mut missing = std::collections::BTreeSet::new();
    let mut reports = 0;
    for e in std::fs::read_dir(root().join("crates/simctl/tests/golden/reports")).unwrap() {
        let p = e.unwrap().path();
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        let mut paths = Vec::new();
        json_paths(&v, "", &mut paths);
        for path in paths {
            if !in_schema(&keys, &path) {
                missing.insert(path);
            }
        }
        reports += 1;
    }
    assert!(reports > 20);
    assert!(
        missing.is_empty(),
        "report keys the schema does not describe:\n{}",
        missing.into_iter().collect::<Vec<_>>().join("\n")
    );
}

/// `a.{b,c}.d` → `a.b.d`, `a.c.d`.
fn expand(p: &str) -> Vec<String> {
    match (p.find('{'), p.find('}')) {
        (Some(i), Some(j)) if i < j => p[i + 1..j]
            .split(',')
            .flat_map(|alt| expand(&format!("{}{}{}", &p[..i], alt.trim(), &p[j + 1..])))
            .collect(),
        _ => vec![p.to_string()],
    }
}

#[test]
fn every_key_the_report_chapter_documents_is_in_the_schema() {
    let keys = schema_keys();
    let text = std::fs::read_to_string(root().join("docs/src/reference/report.md")).unwrap();
    let mut checked = 0;
    let mut missing = Vec::new();
    for (n, line) in prose(&text) {
        let Some(cell) = line.strip_prefix("| ").and_then(|l| l.split(" | ").next()) else {
            continue;
        };
        for code in cell.split('`').skip(1).step_by(2) {
            let plain = code.trim_end_matches(".*").trim_end_matches("[]");
            let looks_like_key = plain.contains('.') || keys.iter().any(|k| k == plain);
            if !looks_like_key || plain.contains(' ') || plain.contains('"') {
                continue;
            }
            for p in expand(plain) {
                let p = p.replace("{ERRNO}", "*").replace(".ERRNO", ".*");
                checked += 1;
                if !in_schema(&keys, &p) {
                    missing.push(format!("report.md:{n}: `{p}`"));
                }
            }
        }
    }
    assert!(checked > 40, "only {checked} documented keys found");
    assert!(
        missing.is_empty(),
        "documented report keys the schema does not have:\n{}",
        missing.join("\n")
    );
}
