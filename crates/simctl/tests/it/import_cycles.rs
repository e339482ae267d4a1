//! Import cycles between the library's modules, counted and held to a
//! ratchet.
//!
//! A node is one module file of `crates/mmcsim/src` (`device/config.rs`,
//! `device/ftl/mod.rs`, …; test fixtures and `#[cfg(test)]` items left
//! out). An edge runs from a module to the deepest module that a path it
//! names resolves to: `crate::a::b::Item`, `super::…`, `self::…`, or a
//! child module named bare (`page::Foo` in `ftl/mod.rs`). Naming one's own
//! ancestors is not an edge (a child using its parent's items is how Rust
//! modules are built), and neither is the crate's error type (`error.rs`)
//! naming the stages' own error types to wrap them (as the layer test
//! allows). A cycle is a strongly connected component of more
//! than one module: modules that cannot be read, tested or moved apart —
//! `device/config.rs` and `device/ftl/*` naming each other is one.

use crate::architecture::{module_path, rust_files, strip_test_items};
use crate::common::root;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// Cycles (strongly connected components of more than one module) in
/// `crates/mmcsim/src`: may only fall.
const IMPORT_CYCLES_MAX: usize = 2;

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The `::`-separated identifiers at the start of `s` (`a::b::C` →
/// `[a, b, C]`), and what follows them.
fn segments(s: &str) -> (Vec<String>, &str) {
    let mut out = Vec::new();
    let mut rest = s;
    loop {
        let n = rest.chars().take_while(|&c| is_ident_char(c)).count();
        if n == 0 {
            break;
        }
        out.push(rest[..n].to_string());
        match rest[n..].strip_prefix("::") {
            Some(r) => rest = r,
            None => {
                rest = &rest[n..];
                break;
            }
        }
    }
    (out, rest)
}

/// The paths of a `{…}` group at the start of `s`, one level deep
/// (`{a::B, c}` → `[[a, B], [c]]`).
fn group_items(s: &str) -> Vec<Vec<String>> {
    let Some(body) = s.strip_prefix('{') else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (i, c) in body.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                out.push(segments(body[start..i].trim()).0);
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(segments(body[start..i].trim()).0);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.retain(|p| !p.is_empty());
    out
}

/// The absolute paths (from the crate root) a code line of module `at`
/// names.
fn named_paths(line: &str, at: &[String], modules: &BTreeSet<Vec<String>>) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < line.len() {
        let rest = &line[i..];
        let before = line[..i].chars().last();
        let starts_word = !before.is_some_and(|c| is_ident_char(c) || c == ':' || c == '.');
        let n = rest.chars().take_while(|&c| is_ident_char(c)).count();
        if n == 0 {
            i += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        }
        if starts_word && rest[n..].starts_with("::") {
            let (segs, tail) = segments(rest);
            let base: Option<Vec<String>> = match segs[0].as_str() {
                "crate" => Some(Vec::new()),
                "self" => Some(at.to_vec()),
                "super" => {
                    let climbs = segs.iter().take_while(|s| *s == "super").count();
                    (climbs <= at.len()).then(|| at[..at.len() - climbs].to_vec())
                }
                first => {
                    let mut child = at.to_vec();
                    child.push(first.to_string());
                    modules.contains(&child).then(|| at.to_vec())
                }
            };
            if let Some(base) = base {
                let skip = match segs[0].as_str() {
                    "crate" | "self" => 1,
                    "super" => segs.iter().take_while(|s| *s == "super").count(),
                    _ => 0,
                };
                let mut path = base;
                path.extend(segs[skip..].iter().cloned());
                let groups = if tail.starts_with('{') {
                    group_items(tail)
                } else {
                    Vec::new()
                };
                if groups.is_empty() {
                    out.push(path);
                } else {
                    for g in groups {
                        let mut p = path.clone();
                        p.extend(g);
                        out.push(p);
                    }
                }
            }
            let consumed = rest.len() - tail.len();
            i += consumed.max(n);
            continue;
        }
        i += n;
    }
    out
}

/// Code lines of `text`: comments and `#[cfg(test)]` items dropped.
fn code(text: &str) -> String {
    strip_test_items(text)
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The module graph: modules by name, and each one's edges.
type Graph = BTreeMap<Vec<String>, BTreeSet<Vec<String>>>;

/// The edges of module `at` with source `text`, given every module.
fn edges_of(at: &[String], text: &str, modules: &BTreeSet<Vec<String>>) -> BTreeSet<Vec<String>> {
    let mut out = BTreeSet::new();
    for line in code(text).lines() {
        for path in named_paths(line, at, modules) {
            let target = (1..=path.len())
                .rev()
                .map(|k| path[..k].to_vec())
                .find(|p| modules.contains(p));
            if let Some(t) = target {
                if !at.starts_with(&t) {
                    out.insert(t);
                }
            }
        }
    }
    out
}

fn library_graph() -> Graph {
    let src = root().join("crates/mmcsim/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.retain(|f| {
        !f.file_name()
            .is_some_and(|n| n == "tests.rs" || n == "testutil.rs" || n == "lib.rs")
            && !f.components().any(|c| c.as_os_str() == "tests")
    });
    let named: Vec<(Vec<String>, PathBuf)> = files
        .into_iter()
        .map(|f| (module_path(f.strip_prefix(&src).unwrap()), f))
        .collect();
    let modules: BTreeSet<Vec<String>> = named.iter().map(|m| m.0.clone()).collect();
    named
        .iter()
        .map(|(m, f)| {
            if *m == ["error"] {
                return (m.clone(), BTreeSet::new());
            }
            let text = std::fs::read_to_string(f).unwrap();
            (m.clone(), edges_of(m, &text, &modules))
        })
        .collect()
}

/// Strongly connected components of more than one node (Tarjan), each
/// sorted, in order.
fn cycles(g: &Graph) -> Vec<Vec<Vec<String>>> {
    struct State<'g> {
        g: &'g Graph,
        index: BTreeMap<&'g Vec<String>, usize>,
        low: BTreeMap<&'g Vec<String>, usize>,
        stack: Vec<&'g Vec<String>>,
        on: BTreeSet<&'g Vec<String>>,
        out: Vec<Vec<Vec<String>>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g Vec<String>) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on.insert(v);
        for w in s.g.get(v).into_iter().flatten() {
            let Some((w, _)) = s.g.get_key_value(w) else {
                continue;
            };
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on.remove(w);
                comp.push(w.clone());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.push(comp);
            }
        }
    }
    let mut s = State {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in g.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.out.sort();
    s.out
}

fn show(c: &[Vec<String>]) -> String {
    c.iter()
        .map(|m| m.join("::"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[test]
fn import_cycles_in_the_library_only_fall() {
    let found = cycles(&library_graph());
    let list: Vec<String> = found
        .iter()
        .map(|c| format!("{} modules: {}", c.len(), show(c)))
        .collect();
    eprintln!(
        "import cycles in crates/mmcsim/src: {}\n{}",
        found.len(),
        list.join("\n")
    );
    assert!(
        found.len() <= IMPORT_CYCLES_MAX,
        "{} import cycles in crates/mmcsim/src, more than the ratchet's {IMPORT_CYCLES_MAX}: move the shared type to a leaf module or pass it down\n{}",
        found.len(),
        list.join("\n")
    );
    assert!(
        found.len() == IMPORT_CYCLES_MAX,
        "{} import cycles left, fewer than the ratchet's {IMPORT_CYCLES_MAX}: lower IMPORT_CYCLES_MAX",
        found.len()
    );
}

#[test]
fn the_cycle_count_sees_sibling_cycles_and_not_parent_use() {
    let m = |s: &str| -> Vec<String> { s.split('/').map(str::to_string).collect() };
    let modules: BTreeSet<Vec<String>> = ["dev", "dev/config", "dev/ftl", "dev/ftl/page", "types"]
        .into_iter()
        .map(m)
        .collect();
    let mut g = Graph::new();
    let src = [
        ("dev", "pub mod config;\nuse ftl::Mapping;\n"),
        ("dev/config", "use super::ftl::page::PageConfig; // ftl\n"),
        (
            "dev/ftl",
            "mod page;\nuse crate::types::Ns;\nuse super::Emmc;\n",
        ),
        (
            "dev/ftl/page",
            "use crate::dev::{config::FtlConfig, Emmc};\nuse super::super::ftl::Mapping;\n",
        ),
        (
            "types",
            "pub type Ns = u64;\n#[cfg(test)]\nmod t { use crate::dev::config::X; }\n",
        ),
    ];
    for (name, text) in src {
        g.insert(m(name), edges_of(&m(name), text, &modules));
    }
    // config → ftl/page → config is a cycle; `ftl/page` naming its parent
    // `ftl` (and `dev`) is not an edge; the test module of `types` is not
    // read.
    assert_eq!(
        g[&m("dev/ftl/page")],
        [m("dev/config")].into_iter().collect()
    );
    assert!(g[&m("types")].is_empty());
    let found = cycles(&g);
    assert_eq!(
        found,
        vec![vec![m("dev/config"), m("dev/ftl/page")]],
        "{found:?}"
    );
}
