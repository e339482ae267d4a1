//! The shape of the code: the library reads as the storage path, no
//! import runs upward, and each stage talks only to the stage below it.
//!
//! Every top-level module a file of `crates/mmcsim/src` names — through
//! `crate::…` (also inside `use crate::{…}` groups) or through a
//! `super::…` chain that leaves its top-level module — is checked against
//! two rules:
//!
//! * **Layers** (below): a module may name only itself and modules of a
//!   lower layer. Schedulers may name only the scheduler API crate
//!   (`mmcsim_elevator`), which itself names nothing of the simulator; the
//!   library never depends on the CLI.
//! * **Adjacency**: a stage of the storage path (workload → host → block →
//!   driver → device) names only itself, the shared leaf modules (types,
//!   errors, the engine's clock and queue, stats, text files, the host
//!   CPU) and the stage directly below it ([`ADJACENT`]); requests go down
//!   one stage at a time and completions come back as events.
//!
//! Test fixtures (`tests.rs`, `testutil.rs`) may assemble real pieces of
//! other layers and are not checked. The crate's error type (`error.rs`)
//! may name each stage's own error type to wrap it (it holds no logic).

use crate::common::root;
use std::path::{Path, PathBuf};

/// Layers of the library, bottom first: a module may import its own layer
/// and any lower one.
const LAYERS: &[(&str, u32)] = &[
    // Utilities every stage may use.
    ("types", 0),
    ("error", 0),
    ("engine", 0),
    ("stats", 0),
    ("textfile", 0),
    // The host CPU every software layer charges time on.
    ("platform", 0),
    // The storage path, bottom up.
    ("device", 1),
    ("driver", 2),
    ("sched", 3),
    ("block", 4),
    ("host", 5),
    ("workload", 6),
    // Assembly: the scenario file and the simulation core.
    ("config", 7),
    ("sim", 8),
];

/// Shared leaf modules every stage may name.
const LEAVES: &[&str] = &["types", "error", "engine", "stats", "textfile", "platform"];

/// The stages of the storage path, each with the one stage directly below
/// it (`None`: the bottom). The block layer reaches the scheduler through
/// the scheduler API crate, never `crate::sched`.
const ADJACENT: &[(&str, Option<&str>)] = &[
    ("workload", Some("host")),
    ("host", Some("block")),
    ("block", Some("driver")),
    ("driver", Some("device")),
    ("device", None),
];

fn layer(module: &str) -> Option<u32> {
    LAYERS.iter().find(|l| l.0 == module).map(|l| l.1)
}

/// Every `.rs` file under `dir`.
pub(crate) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Test-only files, which may assemble pieces of several layers.
fn is_test_fixture(f: &Path) -> bool {
    f.file_name()
        .is_some_and(|n| n == "tests.rs" || n == "testutil.rs")
}

/// The module path of the file at `rel` (relative to `src/`):
/// `host/fs/mod.rs` → `[host, fs]`, `host/stage.rs` → `[host, stage]`.
pub(crate) fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| {
            c.as_os_str()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_string()
        })
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// The identifier at the start of `s`.
fn ident(s: &str) -> String {
    s.chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

/// The first path segment of each item of the `{…}` group at the start of
/// `s` (nested groups are skipped over).
fn group_heads(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0;
    let mut item_start = true;
    for (i, c) in s.char_indices() {
        match c {
            '{' => {
                depth += 1;
                item_start = depth == 1;
                continue;
            }
            '}' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            ',' if depth == 1 => {
                item_start = true;
                continue;
            }
            c if c.is_whitespace() => continue,
            _ => {}
        }
        if item_start && depth == 1 {
            let name = ident(&s[i..]);
            if !name.is_empty() {
                out.push(name);
            }
        }
        item_start = false;
    }
    out
}

/// Top-level module names a code line of the module at `path` refers to:
/// through `crate::name` or `crate::{name, …}`, and through a `super::`
/// chain that climbs out of its top-level module.
fn referenced_modules(line: &str, path: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("crate::") {
        let before = rest[..i].chars().last();
        let after = &rest[i + "crate::".len()..];
        rest = after;
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue; // e.g. `mmcsim_elevator::…` is not this crate
        }
        if after.starts_with('{') {
            out.extend(group_heads(after));
        } else {
            let name = ident(after);
            if !name.is_empty() {
                out.push(name);
            }
        }
    }
    let mut rest = line;
    while let Some(i) = rest.find("super::") {
        let before = rest[..i].chars().last();
        let mut after = &rest[i..];
        let mut climbs = 0;
        while let Some(a) = after.strip_prefix("super::") {
            climbs += 1;
            after = a;
        }
        rest = after;
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        if climbs >= path.len() {
            if after.starts_with('{') {
                out.extend(group_heads(after));
            } else {
                let name = ident(after);
                if !name.is_empty() {
                    out.push(name);
                }
            }
        }
    }
    out
}

/// Code lines of `text`: comments and doc comments dropped.
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().filter_map(|(i, l)| {
        let code = l.split("//").next().unwrap_or("");
        (!code.trim().is_empty()).then_some((i + 1, code))
    })
}

/// What the adjacency rule allows `module` to name besides itself, when it
/// is a stage of the storage path.
fn adjacency(module: &str) -> Option<Option<&'static str>> {
    ADJACENT.iter().find(|a| a.0 == module).map(|a| a.1)
}

/// The rule violations of the file at `rel` (relative to `src/`) with
/// source `text`.
fn violations_in(rel: &Path, text: &str) -> Vec<String> {
    let path = module_path(rel);
    let module = path[0].clone();
    let mut out = Vec::new();
    if module == "error" || module == "lib" {
        return out;
    }
    let own = layer(&module).unwrap_or_else(|| panic!("{} belongs to no layer", rel.display()));
    for (n, line) in code_lines(text) {
        for m in referenced_modules(line, &path) {
            if m == module {
                continue;
            }
            let Some(other) = layer(&m) else {
                continue; // an item of lib.rs, e.g. crate::Result
            };
            let at = format!("{}:{n}", rel.display());
            if module == "sched" {
                out.push(format!(
                    "{at}: `sched` imports `{m}`: schedulers may import only mmcsim_elevator"
                ));
            } else if other > own {
                out.push(format!(
                    "{at}: `{module}` (layer {own}) imports `{m}` (layer {other}), a layer above it"
                ));
            } else if let Some(below) = adjacency(&module) {
                if !LEAVES.contains(&m.as_str()) && below != Some(m.as_str()) {
                    out.push(format!(
                        "{at}: `{module}` names `{m}`, which is not the stage directly below it ({}): talk to the next stage down, or move the shared type to a leaf module",
                        below.unwrap_or("none: it is the bottom")
                    ));
                }
            }
        }
    }
    out
}

#[test]
fn every_stage_names_only_itself_the_leaves_and_the_stage_below() {
    let src = root().join("crates/mmcsim/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut violations = Vec::new();
    for f in files.iter().filter(|f| !is_test_fixture(f)) {
        let rel = f.strip_prefix(&src).unwrap();
        let text = std::fs::read_to_string(f).unwrap();
        violations.extend(violations_in(rel, &text));
    }
    assert!(
        violations.is_empty(),
        "imports that run against the storage path:\n{}",
        violations.join("\n")
    );
}

#[test]
fn block_layer_names_no_scheduler_implementation() {
    let dir = root().join("crates/mmcsim/src/block");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    for f in files.into_iter().filter(|f| !is_test_fixture(f)) {
        let text = std::fs::read_to_string(&f).unwrap();
        for (n, line) in code_lines(&text) {
            assert!(
                !line.contains("crate::sched") && !line.contains("mmcsim::sched"),
                "{}:{n}: the block layer must use the scheduler API (mmcsim_elevator), not a scheduler: {line}",
                f.display()
            );
        }
    }
}

#[test]
fn the_scheduler_api_crate_depends_on_nothing_of_the_simulator() {
    let dir = root().join("crates/mmcsim-elevator");
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    for name in ["mmcsim", "simctl"] {
        assert!(
            !manifest
                .lines()
                .any(|l| l.trim_start().starts_with(&format!("{name} "))
                    || l.trim_start().starts_with(&format!("{name}."))),
            "mmcsim-elevator must not depend on {name}"
        );
    }
    let mut files = Vec::new();
    rust_files(&dir.join("src"), &mut files);
    assert!(!files.is_empty());
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for (n, line) in code_lines(&text) {
            assert!(
                !line.contains("mmcsim::") && !line.contains("simctl::"),
                "{}:{n}: the scheduler API imports the simulator: {line}",
                f.display()
            );
        }
    }
}

#[test]
fn the_library_never_depends_on_the_cli() {
    for krate in ["crates/mmcsim", "crates/mmcsim-elevator"] {
        let manifest = std::fs::read_to_string(root().join(krate).join("Cargo.toml")).unwrap();
        assert!(
            !manifest.contains("simctl"),
            "{krate}/Cargo.toml depends on the CLI"
        );
        let mut files = Vec::new();
        rust_files(&root().join(krate).join("src"), &mut files);
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            assert!(
                !text.contains("simctl::"),
                "{} imports the CLI",
                f.display()
            );
        }
    }
}

#[test]
fn the_checker_catches_planted_violations() {
    let check = |rel: &str, src: &str| violations_in(Path::new(rel), src);
    // Upward: the device naming the block layer.
    let v = check("device/mod.rs", "use crate::block::request::RqId;");
    assert!(v.len() == 1 && v[0].contains("a layer above"), "{v:?}");
    // Skip-level: the host lending itself the driver, in a `use` group.
    let v = check(
        "host/stage.rs",
        "use crate::{block::BlockStage, driver::Driver};",
    );
    assert!(
        v.len() == 1 && v[0].contains("`host` names `driver`"),
        "{v:?}"
    );
    // Skip-level through a `super::` chain leaving a deep module: a
    // workload touching the device.
    let v = check(
        "workload/sqlite/pager.rs",
        "let d = super::super::super::device::Emmc::new(&p);",
    );
    assert!(
        v.len() == 1 && v[0].contains("`workload` names `device`"),
        "{v:?}"
    );
    // A scheduler naming the block layer.
    assert_eq!(
        check("sched/noop.rs", "use crate::block::BlockLayer;").len(),
        1
    );
    // Allowed: the stage below, a leaf, itself, another crate's path, a
    // comment.
    for (rel, ok) in [
        (
            "host/stage.rs",
            "use crate::block::{split_bio, BlockStage};",
        ),
        (
            "workload/replay.rs",
            "use crate::{host::Below, stats::DeviceTimes};",
        ),
        (
            "block/stage.rs",
            "use crate::driver::Driver; use super::request::Bio;",
        ),
        (
            "driver/mod.rs",
            "use crate::device::Emmc; use crate::platform::SharedCpu;",
        ),
        ("host/fs/ext4/vfs.rs", "use super::super::FileSystem;"),
        (
            "block/mod.rs",
            "use mmcsim_elevator::Elevator; // crate::driver::Driver",
        ),
        (
            "sim/mod.rs",
            "use crate::{block::BlockStage, workload::replay::Replay};",
        ),
    ] {
        assert_eq!(check(rel, ok), Vec::<String>::new(), "{rel}: {ok}");
    }
}

/// The host core's files: `crates/mmcsim/src/host/*.rs`, not the file
/// systems under `host/fs/`.
fn host_core_files() -> Vec<PathBuf> {
    let dir = root().join("crates/mmcsim/src/host");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "rs"))
        .filter(|p| !is_test_fixture(p))
        .collect();
    files.sort();
    assert!(files.len() > 5, "host core files under {}", dir.display());
    files
}

#[test]
fn the_host_core_names_no_file_system_implementation() {
    // System calls, descriptors, page cache, read-ahead and writeback
    // reach a file system only through host::fs::FileSystem; ext4 and its
    // journal are plug-ins the registry (host/fs/mod.rs) builds.
    let mut violations = Vec::new();
    for f in host_core_files() {
        let text = std::fs::read_to_string(&f).unwrap();
        for (n, line) in code_lines(&text) {
            let lower = line.to_ascii_lowercase();
            if lower.contains("ext4") || lower.contains("jbd2") {
                violations.push(format!("{}:{n}: {}", f.display(), line.trim()));
            }
        }
    }
    assert!(
        violations.is_empty(),
        "the host core names a file system implementation (use host::fs::FileSystem):\n{}",
        violations.join("\n")
    );
}

#[test]
fn file_systems_reach_the_host_core_only_through_the_kernel_interface() {
    // A file system sees the page cache, the system-call types and the
    // host::fs::Kernel the host lends; never the host stage, its tasks or
    // calls, the flusher or the host's events.
    let dir = root().join("crates/mmcsim/src/host/fs");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    files.sort();
    let forbidden = [
        "::stage",
        "::task",
        "::call::",
        "::call;",
        "::flusher",
        "HostKernel",
        "HostEvent",
        "Below",
    ];
    let mut violations = Vec::new();
    for f in files.iter().filter(|f| !is_test_fixture(f)) {
        let text = std::fs::read_to_string(f).unwrap();
        for (n, line) in code_lines(&text) {
            if let Some(w) = forbidden.iter().find(|w| line.contains(*w)) {
                violations.push(format!("{}:{n}: `{w}` in {}", f.display(), line.trim()));
            }
        }
    }
    assert!(
        violations.is_empty(),
        "a file system reaches into the host core:\n{}",
        violations.join("\n")
    );
}

#[test]
fn the_trace_readers_and_the_vocabulary_depend_on_nothing_of_the_simulator() {
    // Other tools read traces with mmcsim-trace alone; mmcsim-types is the
    // leaf every crate shares.
    for (krate, allowed) in [
        ("crates/mmcsim-trace", &["mmcsim-types"][..]),
        ("crates/mmcsim-types", &[][..]),
    ] {
        let dir = root().join(krate);
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        for line in manifest.lines().map(str::trim_start) {
            let name: String = line
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                .collect();
            assert!(
                !(name.starts_with("mmcsim") || name == "simctl")
                    || allowed.contains(&name.as_str())
                    || line.starts_with("name"),
                "{krate}/Cargo.toml depends on {name}"
            );
        }
        let mut files = Vec::new();
        rust_files(&dir.join("src"), &mut files);
        assert!(!files.is_empty());
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            for (n, line) in code_lines(&text) {
                assert!(
                    !line.contains("mmcsim::")
                        && !line.contains("mmcsim_elevator::")
                        && !line.contains("simctl::"),
                    "{}:{n}: {krate} imports the simulator: {line}",
                    f.display()
                );
            }
        }
    }
}

// ---------------------------------------------------------------------
// Function length: no non-test function over `MAX_FN_LINES` lines.
// ---------------------------------------------------------------------

/// The longest a non-test function may be, in source lines (signature to
/// closing brace).
const MAX_FN_LINES: usize = 100;

/// Functions allowed to exceed [`MAX_FN_LINES`], as `(file under crates/,
/// fn name)`: the schedulers' kernel-shaped dispatch functions, which read
/// best beside the kernel function they model.
const LONG_FN_ALLOWED: &[(&str, &str)] = &[];

/// Functions over [`MAX_FN_LINES`] still waiting to be split along their
/// mechanism's steps (issue 26). Each entry is debt, not permission: the
/// test fails if one is gone (so it must leave this list) or a new one
/// appears.
const LONG_FN_PENDING: &[(&str, &str)] = &[];

/// Skips the string, char or comment starting at `i` in `b`, returning the
/// index after it, or `None` when `b[i]` starts none of these.
fn skip_literal(b: &[u8], i: usize) -> Option<usize> {
    let at = |k: usize| b.get(k).copied().unwrap_or(0);
    match b[i] {
        b'/' if at(i + 1) == b'/' => {
            let mut k = i;
            while k < b.len() && b[k] != b'\n' {
                k += 1;
            }
            Some(k)
        }
        b'/' if at(i + 1) == b'*' => {
            let mut k = i + 2;
            while k + 1 < b.len() && !(b[k] == b'*' && b[k + 1] == b'/') {
                k += 1;
            }
            Some(k + 2)
        }
        b'r' if (at(i + 1) == b'"' || at(i + 1) == b'#')
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
        {
            let mut k = i + 1;
            let mut hashes = 0;
            while at(k) == b'#' {
                hashes += 1;
                k += 1;
            }
            if at(k) != b'"' {
                return None;
            }
            k += 1;
            loop {
                if k >= b.len() {
                    return Some(k);
                }
                if b[k] == b'"' && (1..=hashes).all(|h| at(k + h) == b'#') {
                    return Some(k + 1 + hashes);
                }
                k += 1;
            }
        }
        b'"' => {
            let mut k = i + 1;
            while k < b.len() && b[k] != b'"' {
                k += if b[k] == b'\\' { 2 } else { 1 };
            }
            Some(k + 1)
        }
        b'\'' if at(i + 1) == b'\\' => {
            let mut k = i + 2;
            while k < b.len() && b[k] != b'\'' {
                k += 1;
            }
            Some(k + 1)
        }
        b'\'' if at(i + 2) == b'\'' => Some(i + 3),
        _ => None,
    }
}

/// `(name, first line, line count)` of every function with a body in
/// `text`, skipping `#[cfg(test)]` items. Lines are 1-based.
fn function_spans(text: &str) -> Vec<(String, usize, usize)> {
    let b = text.as_bytes();
    let line_of = |i: usize| b[..i].iter().filter(|&&c| c == b'\n').count() + 1;
    let mut out = Vec::new();
    // Open functions: (name, start line, brace depth of its body).
    let mut open: Vec<(String, usize, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut skip_until_depth: Option<usize> = None;
    let mut pending_fn: Option<(String, usize)> = None;
    let mut cfg_test = false;
    let mut i = 0;
    while i < b.len() {
        if let Some(k) = skip_literal(b, i) {
            i = k;
            continue;
        }
        let word_start = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if b[i..].starts_with(b"#[cfg(test)]") {
            cfg_test = true;
        } else if word_start && b[i..].starts_with(b"fn ") {
            let name = ident(&text[i + 3..]);
            pending_fn = Some((name, line_of(i)));
        }
        match b[i] {
            b'{' => {
                depth += 1;
                if cfg_test && skip_until_depth.is_none() {
                    skip_until_depth = Some(depth);
                }
                cfg_test = false;
                if let Some((name, line)) = pending_fn.take() {
                    open.push((name, line, depth));
                }
            }
            b'}' => {
                if open.last().is_some_and(|o| o.2 == depth) {
                    let (name, line, _) = open.pop().unwrap();
                    if skip_until_depth.is_none() {
                        out.push((name.clone(), line, line_of(i) - line + 1));
                    }
                }
                if skip_until_depth == Some(depth) {
                    skip_until_depth = None;
                }
                depth = depth.saturating_sub(1);
            }
            // A declaration without a body (trait method) or a test item
            // without braces (`#[cfg(test)] use …;`).
            b';' if open.last().is_none_or(|o| o.2 < depth + 1) => {
                pending_fn = None;
                cfg_test = false;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// `(file, fn name, lines)` of every non-test function over
/// [`MAX_FN_LINES`] in the workspace's library and CLI sources.
fn long_functions() -> Vec<(String, String, usize)> {
    let crates = root().join("crates");
    let mut files = Vec::new();
    rust_files(&crates, &mut files);
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let rel = f
            .strip_prefix(&crates)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if !rel.contains("/src/") || is_test_fixture(&f) || rel.contains("/tests/") {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        for (name, _, lines) in function_spans(&text) {
            if lines > MAX_FN_LINES {
                out.push((rel.clone(), name, lines));
            }
        }
    }
    out
}

#[test]
fn no_function_is_over_a_hundred_lines() {
    let long = long_functions();
    let listed =
        |f: &str, n: &str, list: &[(&str, &str)]| list.iter().any(|e| e.0 == f && e.1 == n);
    let offenders: Vec<String> = long
        .iter()
        .filter(|(f, n, _)| !listed(f, n, LONG_FN_ALLOWED) && !listed(f, n, LONG_FN_PENDING))
        .map(|(f, n, l)| format!("{f}: fn {n} is {l} lines"))
        .collect();
    assert!(
        offenders.is_empty(),
        "functions over {MAX_FN_LINES} lines (split them along the mechanism's steps):\n{}",
        offenders.join("\n")
    );
    let stale: Vec<String> = LONG_FN_PENDING
        .iter()
        .filter(|(f, n)| !long.iter().any(|l| l.0 == *f && l.1 == *n))
        .map(|(f, n)| format!("{f}: fn {n}"))
        .collect();
    assert!(
        stale.is_empty(),
        "split already; remove from LONG_FN_PENDING:\n{}",
        stale.join("\n")
    );
}

#[test]
fn the_function_length_check_catches_a_long_function() {
    let body: String = (0..MAX_FN_LINES)
        .map(|k| format!("    let _x{k} = \"}}{{\";\n"))
        .collect();
    let text = format!(
        "/// Doc.\npub fn short() {{ let _ = '{{'; }}\nfn long_one(a: u32) -> u32 {{\n{body}    a\n}}\n\
         #[cfg(test)]\nmod tests {{\n    fn long_test() {{\n{body}    }}\n}}\ntrait T {{ fn decl(&self); fn d(&self) {{}} }}\n"
    );
    let spans = function_spans(&text);
    let names: Vec<&str> = spans.iter().map(|s| s.0.as_str()).collect();
    assert_eq!(names, ["short", "long_one", "d"], "{spans:?}");
    assert_eq!(spans[1].2, MAX_FN_LINES + 3);
    assert!(spans[1].2 > MAX_FN_LINES && spans[0].2 == 1);
}

/// The library crates, whose errors are typed (issue 26 item 5).
const LIBRARY_CRATES: &[&str] = &["mmcsim", "mmcsim-trace", "mmcsim-types", "mmcsim-elevator"];

/// How many `Result<…, String>` types `text` names, in code outside
/// `#[cfg(test)]` items (whitespace and line breaks inside the type are
/// ignored).
fn result_string_count(text: &str) -> usize {
    let code = strip_test_items(text);
    let flat: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    let b = flat.as_bytes();
    let mut n = 0;
    let mut from = 0;
    while let Some(k) = flat[from..].find("Result<") {
        let start = from + k + "Result<".len();
        // The matching `>`, then the last top-level argument before it.
        let (mut depth, mut i) = (1usize, start);
        while i < b.len() && depth > 0 {
            match b[i] {
                b'<' | b'(' | b'[' => depth += 1,
                b'>' | b')' | b']' => depth -= 1,
                _ => {}
            }
            i += 1;
        }
        // `Result<String>` is the crate's alias with its typed error: only
        // an error argument of `String` counts.
        let args = flat[start..i - 1].trim_end_matches(',');
        let last = last_type_argument(args);
        if depth == 0 && last.len() < args.len() && last == "String" {
            n += 1;
        }
        from = start;
    }
    n
}

/// The last top-level, comma-separated argument of `args`.
fn last_type_argument(args: &str) -> &str {
    let mut depth = 0usize;
    let mut last = 0;
    for (i, c) in args.char_indices() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => last = i + 1,
            _ => {}
        }
    }
    &args[last..]
}

/// `text` with every `#[cfg(test)]` item (a braced block or a `;` item)
/// removed.
pub(crate) fn strip_test_items(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(k) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..k]);
        let after = &rest[k..];
        let brace = after.find('{');
        let semi = after.find(';');
        let end = match (brace, semi) {
            (Some(b), Some(s)) if s < b => s + 1,
            (Some(b), _) => {
                let mut depth = 0usize;
                let mut end = after.len();
                for (i, c) in after[b..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = b + i + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            }
            (None, Some(s)) => s + 1,
            (None, None) => after.len(),
        };
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// `(file under crates/, count)` of every library source naming
/// `Result<_, String>`.
fn result_string_files() -> Vec<(String, usize)> {
    let crates = root().join("crates");
    let mut out = Vec::new();
    for c in LIBRARY_CRATES {
        let mut files = Vec::new();
        rust_files(&crates.join(c).join("src"), &mut files);
        files.sort();
        for f in files {
            if is_test_fixture(&f) {
                continue;
            }
            let n = result_string_count(&std::fs::read_to_string(&f).unwrap());
            if n > 0 {
                let rel = f
                    .strip_prefix(&crates)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                out.push((rel, n));
            }
        }
    }
    out
}

/// No `Result<_, String>` in the library crates: a function whose error is
/// bare text names no file, line or field and cannot be matched on; a
/// typed error (see `mmcsim::error`) replaces it.
#[test]
fn library_errors_are_typed() {
    let files = result_string_files();
    let list: Vec<String> = files.iter().map(|(f, n)| format!("{f}: {n}")).collect();
    assert!(
        files.is_empty(),
        "`Result<_, String>` in the library crates: return a typed error (mmcsim::error) naming the file, line and field instead\n{}",
        list.join("\n")
    );
}

#[test]
fn the_result_string_count_sees_multi_line_types_and_skips_tests() {
    let text = "fn a() -> Result<u32, String> { todo!() }\n\
                fn b() -> std::result::Result<\n    Vec<(u32, u8)>,\n    String,\n> { todo!() }\n\
                fn c() -> Result<u32, Error> { todo!() }\n\
                fn d() -> Result<String, Error> { todo!() }\n\
                fn f() -> Result<String> { todo!() }\n\
                #[cfg(test)]\nmod tests { fn e() -> Result<(), String> { Ok(()) } }\n";
    assert_eq!(result_string_count(text), 2);
}
