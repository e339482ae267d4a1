//! The grid file: axes of a sweep, parsed and checked with errors that
//! name the file, line and column.
//!
//! ```toml
//! schedulers = ["deadline", "noop", "cfq:slice_idle=0"]   # as in `compare`
//! workloads  = ["rand16-128m.toml", "sample.csv"]          # scenarios (.toml) or traces
//! devices    = ["generic-emmc.toml"]                       # optional: the workload's own
//! seeds      = [1, 2]                                      # optional: the workload's own
//! sets       = [[], ["queue.read_ahead_kb=0"]]             # optional: [[]]
//! trace_sets = ["trace.mode=closed"]                       # optional, traces only
//! ```
//!
//! Paths are relative to the grid file's folder. The cells are the
//! cartesian product, workloads outermost, then devices, set variants,
//! schedulers and seeds (innermost).

use super::cell::Cell;
use crate::compare::{parse_entries, Entry};
use anyhow::{anyhow, bail, Context, Result};
use mmcsim::config::parse_set;
use mmcsim::sched::Registry;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// The grid file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GridFile {
    /// Scheduler entries, `NAME[:TUNABLE=VALUE]...` or `all`.
    schedulers: Vec<Spanned<String>>,
    /// Scenario (`.toml`) or trace files.
    workloads: Vec<Spanned<String>>,
    /// Device profile files; absent: each workload's own device.
    #[serde(default)]
    devices: Option<Spanned<Vec<Spanned<String>>>>,
    /// Seeds; absent: each workload's own seed.
    #[serde(default)]
    seeds: Option<Spanned<Vec<u64>>>,
    /// Lists of extra `KEY=VALUE` overrides, one list per variant; absent:
    /// one empty variant.
    #[serde(default)]
    sets: Option<Spanned<Vec<Vec<Spanned<String>>>>>,
    /// `KEY=VALUE` overrides for trace workloads only (replay options such
    /// as `trace.mode=closed`), applied first.
    #[serde(default)]
    trace_sets: Vec<Spanned<String>>,
}

/// A set variant: its overrides as written, and parsed.
type Variant = (Vec<String>, Vec<(String, String)>);

/// A parsed, checked grid: its cells in order.
#[derive(Debug)]
pub struct Grid {
    /// Every cell of the cartesian product, by index.
    pub cells: Vec<Cell>,
}

/// `file:line:column` of byte `offset` in `text`.
fn locate(file: &Path, text: &str, offset: usize) -> String {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before
        .rfind('\n')
        .map_or(before.len(), |i| before.len() - i - 1)
        + 1;
    format!("{}:{line}:{col}", file.display())
}

impl Grid {
    /// Reads and checks the grid file `path`; schedulers are checked
    /// against `registry`.
    pub fn load(path: &Path, registry: &Registry) -> Result<Grid> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading grid {}", path.display()))?;
        Grid::parse(&text, path, registry)
    }

    /// Parses grid `text` read from `path` (used for locations and as the
    /// base of relative paths).
    pub fn parse(text: &str, path: &Path, registry: &Registry) -> Result<Grid> {
        let g: GridFile = toml::from_str(text)
            .map_err(|e| anyhow!("{}: {}", path.display(), e.to_string().trim_end()))?;
        let at = |offset: usize| locate(path, text, offset);
        let base = path.parent().unwrap_or(Path::new("")).to_path_buf();

        if g.schedulers.is_empty() {
            bail!(
                "{}: `schedulers` is empty; list at least one, e.g. schedulers = [\"deadline\"]",
                path.display()
            );
        }
        let mut schedulers: Vec<Entry> = Vec::new();
        for s in &g.schedulers {
            // Compare's parser (`all`, or NAME[:TUNABLE=VALUE]...); its
            // messages name the command-line flag, the grid names the key.
            let entries = parse_entries(s.get_ref(), registry).map_err(|e| {
                let msg = e.to_string();
                let msg = msg
                    .strip_prefix("--schedulers: ")
                    .unwrap_or(&msg)
                    .to_string();
                anyhow!("{}: schedulers: {msg}", at(s.span().start))
            })?;
            for e in entries {
                if schedulers.iter().any(|x| x.label == e.label) {
                    bail!(
                        "{}: schedulers: `{}` is listed twice",
                        at(s.span().start),
                        e.label
                    );
                }
                schedulers.push(e);
            }
        }

        if g.workloads.is_empty() {
            bail!(
                "{}: `workloads` is empty; list scenario (.toml) or trace files",
                path.display()
            );
        }
        let mut workloads = Vec::new();
        for w in &g.workloads {
            let p = base.join(w.get_ref());
            if !p.is_file() {
                bail!(
                    "{}: workloads: `{}` not found (looked for {}; paths are relative to the grid file)",
                    at(w.span().start),
                    w.get_ref(),
                    p.display()
                );
            }
            if workloads
                .iter()
                .any(|(n, _): &(String, PathBuf)| n == w.get_ref())
            {
                bail!(
                    "{}: workloads: `{}` is listed twice",
                    at(w.span().start),
                    w.get_ref()
                );
            }
            workloads.push((w.get_ref().clone(), p));
        }

        let devices: Vec<Option<(String, PathBuf)>> = match &g.devices {
            None => vec![None],
            Some(list) => {
                if list.get_ref().is_empty() {
                    bail!("{}: `devices` is empty; list device profiles or leave the key out to use each workload's own", at(list.span().start));
                }
                let mut out = Vec::new();
                for d in list.get_ref() {
                    let p = base.join(d.get_ref());
                    if !p.is_file() {
                        bail!(
                            "{}: devices: `{}` not found (looked for {}; paths are relative to the grid file)",
                            at(d.span().start),
                            d.get_ref(),
                            p.display()
                        );
                    }
                    // Device paths in a scenario are relative to the
                    // scenario's folder: pass an absolute one.
                    let abs = std::path::absolute(&p)
                        .with_context(|| format!("{}: devices", at(d.span().start)))?;
                    if out
                        .iter()
                        .flatten()
                        .any(|(n, _): &(String, PathBuf)| n == d.get_ref())
                    {
                        bail!(
                            "{}: devices: `{}` is listed twice",
                            at(d.span().start),
                            d.get_ref()
                        );
                    }
                    out.push(Some((d.get_ref().clone(), abs)));
                }
                out
            }
        };

        let seeds: Vec<Option<u64>> = match &g.seeds {
            None => vec![None],
            Some(list) => {
                if list.get_ref().is_empty() {
                    bail!("{}: `seeds` is empty; list seeds or leave the key out to use each workload's own", at(list.span().start));
                }
                let mut out = Vec::new();
                for &s in list.get_ref() {
                    if out.contains(&Some(s)) {
                        bail!("{}: seeds: {s} is listed twice", at(list.span().start));
                    }
                    out.push(Some(s));
                }
                out
            }
        };

        let parse_list = |list: &[Spanned<String>], what: &str| -> Result<Vec<(String, String)>> {
            list.iter()
                .map(|s| {
                    parse_set(s.get_ref())
                        .map_err(|e| anyhow!("{}: {what}: {e}", at(s.span().start)))
                })
                .collect()
        };
        let sets: Vec<Variant> = match &g.sets {
            None => vec![(Vec::new(), Vec::new())],
            Some(list) => {
                if list.get_ref().is_empty() {
                    bail!(
                        "{}: `sets` is empty; write [[]] for no overrides, or leave the key out",
                        at(list.span().start)
                    );
                }
                let mut out = Vec::new();
                for v in list.get_ref() {
                    let text: Vec<String> = v.iter().map(|s| s.get_ref().clone()).collect();
                    if out.iter().any(|(t, _): &Variant| *t == text) {
                        let loc = v.first().map_or(list.span().start, |s| s.span().start);
                        bail!("{}: sets: the variant {text:?} is listed twice", at(loc));
                    }
                    out.push((text, parse_list(v, "sets")?));
                }
                out
            }
        };
        let trace_sets = parse_list(&g.trace_sets, "trace_sets")?;

        let mut cells = Vec::new();
        for (workload, workload_path) in &workloads {
            for device in &devices {
                for (variant, (set_text, set_pairs)) in sets.iter().enumerate() {
                    for sched in &schedulers {
                        for &seed in &seeds {
                            cells.push(Cell {
                                index: cells.len(),
                                id: String::new(),
                                scheduler: sched.clone(),
                                workload: workload.clone(),
                                workload_path: workload_path.clone(),
                                device: device.clone(),
                                seed,
                                set_variant: variant,
                                sets: set_text.clone(),
                                set_pairs: set_pairs.clone(),
                                trace_sets: trace_sets.clone(),
                            });
                        }
                    }
                }
            }
        }
        let width = cells.len().saturating_sub(1).to_string().len().max(4);
        for c in &mut cells {
            c.assign_id(width);
        }
        Ok(Grid { cells })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(text: &str) -> Result<Grid> {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        Grid::parse(text, &root.join("grid.toml"), &mmcsim::sched::builtin())
    }

    /// 2 schedulers × 2 workloads × 1 device × 2 seeds × 2 set variants.
    const SIXTEEN: &str = r#"
schedulers = ["deadline", "cfq:slice_idle=0"]
workloads = ["configs/scenarios/rand16-128m.toml", "traces/sample.csv"]
devices = ["configs/devices/generic-emmc.toml"]
seeds = [1, 2]
sets = [[], ["queue.read_ahead_kb=0"]]
"#;

    #[test]
    fn the_product_is_ordered_and_ids_are_stable() {
        let g = grid(SIXTEEN).unwrap();
        assert_eq!(g.cells.len(), 16);
        let c = &g.cells[5];
        assert_eq!(c.index, 5);
        assert_eq!(c.workload, "configs/scenarios/rand16-128m.toml");
        assert_eq!(c.set_variant, 1);
        assert_eq!(c.scheduler.label, "deadline");
        assert_eq!(c.seed, Some(2));
        assert!(c.id.starts_with("0005-"), "{}", c.id);
        let again = grid(SIXTEEN).unwrap();
        let ids: Vec<_> = g.cells.iter().map(|c| &c.id).collect();
        let ids2: Vec<_> = again.cells.iter().map(|c| &c.id).collect();
        assert_eq!(ids, ids2);
        let mut uniq = ids.clone();
        uniq.sort();
        uniq.dedup();
        assert_eq!(uniq.len(), ids.len());
    }

    #[test]
    fn errors_name_file_line_and_column() {
        let e =
            grid("schedulers = [\"deadline\"]\nworkloads = [\"traces/sample.csv\"]\nbogus = 1\n")
                .unwrap_err()
                .to_string();
        assert!(
            e.contains("grid.toml") && e.contains("line 3") && e.contains("bogus"),
            "{e}"
        );
        let e =
            grid("schedulers = [\"deadline\", \"nope\"]\nworkloads = [\"traces/sample.csv\"]\n")
                .unwrap_err()
                .to_string();
        assert!(e.contains("grid.toml:1:27") && e.contains("nope"), "{e}");
        let e = grid("schedulers = [\"noop\"]\nworkloads = [\"traces/missing.csv\"]\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("grid.toml:2:14") && e.contains("not found"),
            "{e}"
        );
        let e = grid(
            "schedulers = [\"noop\"]\nworkloads = [\"traces/sample.csv\"]\nsets = [[\"queue\"]]\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("grid.toml:3:10") && e.contains("KEY=VALUE"),
            "{e}"
        );
        let e = grid("schedulers = [\"noop\", \"noop\"]\nworkloads = [\"traces/sample.csv\"]\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("twice"), "{e}");
    }
}
