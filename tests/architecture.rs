//! The shape of the code: the library reads as the storage path, and no
//! import runs upward.
//!
//! Every `crate::…` path in `crates/mmcsim/src` (and every `super::…` that
//! leaves its top-level module) is checked against the layer order below: a
//! module may name only itself and modules of a lower layer. Schedulers may
//! name only the scheduler API crate (`mmcsim_elevator`), which itself names
//! nothing of the simulator; the library never depends on the CLI. Test
//! fixtures (`tests.rs`, `testutil.rs`) may assemble real pieces of other
//! layers and are not checked. The crate's error type (`error.rs`) may name
//! each stage's own error type to wrap it (it holds no logic).

mod common;
use common::root;
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

fn layer(module: &str) -> Option<u32> {
    LAYERS.iter().find(|l| l.0 == module).map(|l| l.1)
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
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

/// Top-level module names a line refers to through `crate::name` (and, in
/// a top-level module's root file, `super::name`).
fn referenced_modules(line: &str, root_file: bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut prefixes = vec!["crate::"];
    if root_file {
        prefixes.push("super::");
    }
    for prefix in prefixes {
        let mut rest = line;
        while let Some(i) = rest.find(prefix) {
            let after = &rest[i + prefix.len()..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.push(name);
            }
            rest = after;
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

#[test]
fn no_module_of_the_library_imports_a_layer_above_it() {
    let src = root().join("crates/mmcsim/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut violations = Vec::new();
    for f in files.iter().filter(|f| !is_test_fixture(f)) {
        let rel = f.strip_prefix(&src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let module = first.trim_end_matches(".rs").to_string();
        if module == "error" {
            continue;
        }
        let Some(own) = layer(&module) else {
            // lib.rs declares the modules.
            assert_eq!(module, "lib", "{} belongs to no layer", rel.display());
            continue;
        };
        // `super::` leaves the module only from its root file.
        let root_file = rel.components().count() == 1
            || rel.file_name().is_some_and(|n| n == "mod.rs") && rel.components().count() == 2;
        let text = std::fs::read_to_string(f).unwrap();
        for (n, line) in code_lines(&text) {
            for m in referenced_modules(line, root_file) {
                if m == module {
                    continue;
                }
                let Some(other) = layer(&m) else {
                    continue; // an item of lib.rs, e.g. crate::Result
                };
                let sched_rule = module == "sched";
                if other > own || sched_rule {
                    violations.push(format!(
                        "{}:{n}: `{module}` (layer {own}) imports `{m}` (layer {other}){}",
                        rel.display(),
                        if sched_rule {
                            ": schedulers may import only mmcsim_elevator"
                        } else {
                            ""
                        }
                    ));
                }
            }
        }
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
fn the_checker_sees_an_upward_import() {
    // The rule itself: the device naming the block layer is caught.
    let refs = referenced_modules("use crate::block::request::RqId;", false);
    assert_eq!(refs, vec!["block"]);
    assert!(layer("block").unwrap() > layer("device").unwrap());
    let root_refs = referenced_modules("use super::host::Host;", true);
    assert_eq!(root_refs, vec!["host"]);
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
