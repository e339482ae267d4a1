//! The grid file: axes of a sweep, parsed and checked with errors that
//! name the file, line and column.
//!
//! ```toml
//! schedulers = ["deadline", "noop", "cfq:slice_idle=0"]   # as in `compare`; optional with phones
//! workloads  = ["rand16-128m.toml", "sample.csv"]          # scenarios (.toml), fio job files or traces
//! phones     = ["motog-2013", "nexus-s.toml"]              # optional: names or phone files
//! devices    = ["generic-emmc.toml"]                       # optional: the workload's own
//! seeds      = [1, 2]                                      # optional: the workload's own
//! sets       = [[], ["queue.read_ahead_kb=0"]]             # optional: [[]]
//! trace_sets = ["trace.mode=closed"]                       # optional, traces only
//!
//! [crash]                                                  # optional: every cell runs `crash`
//! cuts = 20                                                # seeded power cuts per cell
//!
//! [slurm]                                                  # optional: #SBATCH options of --slurm
//! time = "02:00:00"
//! account = "storage-lab"
//! partition = "short"
//! mem = "4G"
//! ```
//!
//! Paths are relative to the grid file's folder. A phone is a file (a
//! path, or a name ending in `.toml`) or a name looked up in
//! `configs/phones/` of the grid's folder or the nearest of its parents,
//! as `--phone` does from the current directory ([`Phone::find`]). A phone
//! cell runs with the phone's device profile, host profile and default
//! scheduler, as `run --phone` does; a `devices` entry then replaces the
//! phone's device, and a `schedulers` list its scheduler (without the list
//! each phone runs its own, which the cell's `scheduler` names).
//!
//! The cells are the cartesian product, workloads outermost, then phones,
//! devices, set variants, schedulers and seeds (innermost). With a
//! `[crash]` table every cell is a power-cut campaign ([`super::crash`]).

use super::cell::{Cell, PhoneCell};
use super::crash::CrashGrid;
use crate::compare::{parse_entries, Entry};
use anyhow::{anyhow, bail, Context, Result};
use mmcsim::config::{parse_set, Phone};
use mmcsim::sched::Registry;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// The grid file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GridFile {
    /// Scheduler entries, `NAME[:TUNABLE=VALUE]...` or `all`; absent
    /// (only with `phones`): each phone's own.
    #[serde(default)]
    schedulers: Option<Spanned<Vec<Spanned<String>>>>,
    /// Scenario (`.toml`), fio job or trace files.
    workloads: Vec<Spanned<String>>,
    /// Phones, by name or file; absent: no phone (the workload's own
    /// profiles).
    #[serde(default)]
    phones: Option<Spanned<Vec<Spanned<String>>>>,
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
    /// `#SBATCH` options for `--slurm` (`time`, `account`, `partition`,
    /// `mem`, ...): strings or whole numbers.
    #[serde(default)]
    slurm: Option<Spanned<toml::Table>>,
    /// Run every cell as `simctl crash` with this many seeded cuts.
    #[serde(default)]
    crash: Option<Spanned<CrashGrid>>,
}

/// A set variant: its overrides as written, and parsed.
type Variant = (Vec<String>, Vec<(String, String)>);

/// A parsed, checked grid: its cells in order.
#[derive(Debug)]
pub struct Grid {
    /// Every cell of the cartesian product, by index.
    pub cells: Vec<Cell>,
    /// The `[slurm]` table's `#SBATCH` options, checked, in key order.
    pub slurm: Vec<super::slurm::SbatchOpt>,
    /// The `[crash]` table: every cell cuts the power this many times
    /// (`None`: every cell runs as `simctl run`).
    pub crash: Option<CrashGrid>,
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
        let text = mmcsim::textfile::read_config(path)
            .map_err(|e| crate::output::unusable(format!("grid: {e}")))?;
        Grid::parse(&text, path, registry)
    }

    /// Parses grid `text` read from `path` (used for locations and as the
    /// base of relative paths).
    pub fn parse(text: &str, path: &Path, registry: &Registry) -> Result<Grid> {
        let g: GridFile = toml::from_str(text)
            .map_err(|e| anyhow!("{}: {}", path.display(), e.to_string().trim_end()))?;
        let at = |offset: usize| locate(path, text, offset);
        let base = path.parent().unwrap_or(Path::new("")).to_path_buf();

        let phones = phones(&g, &base, &at)?;
        let schedulers = schedulers(&g, phones.is_some(), path, &at, registry)?;
        let workloads = workloads(&g, &base, path, &at)?;
        let devices = devices(&g, &base, &at)?;
        let seeds = seeds(&g, &at)?;
        let sets = sets(&g, &at)?;
        let trace_sets = parse_list(&g.trace_sets, "trace_sets", &at)?;
        let phones: Vec<Option<PhoneCell>> = match phones {
            None => vec![None],
            Some(list) => list.into_iter().map(Some).collect(),
        };
        let axes = Axes {
            workloads,
            phones,
            devices,
            sets,
            schedulers,
            seeds,
            trace_sets,
        };
        let mut cells = axes.cells();
        let width = cells.len().saturating_sub(1).to_string().len().max(4);
        for c in &mut cells {
            c.assign_id(width);
        }
        let slurm = match &g.slurm {
            None => Vec::new(),
            Some(t) => super::slurm::from_table(t.get_ref())
                .map_err(|e| anyhow!("{}: [slurm]: {e}", at(t.span().start)))?,
        };
        let crash = match &g.crash {
            None => None,
            Some(c) => Some(c.get_ref().checked(&at(c.span().start))?),
        };
        Ok(Grid {
            cells,
            slurm,
            crash,
        })
    }
}

/// A grid's axes, parsed and checked; their product is the cells.
struct Axes {
    workloads: Vec<(String, PathBuf)>,
    phones: Vec<Option<PhoneCell>>,
    devices: Vec<Option<(String, PathBuf)>>,
    sets: Vec<Variant>,
    schedulers: Vec<Entry>,
    seeds: Vec<Option<u64>>,
    trace_sets: Vec<(String, String)>,
}

impl Axes {
    /// The cells in order: workload, phone, device, set variant,
    /// scheduler, seed (the last varies fastest); ids not yet assigned.
    fn cells(&self) -> Vec<Cell> {
        let Axes {
            workloads,
            phones,
            devices,
            sets,
            schedulers,
            seeds,
            trace_sets,
        } = self;
        let mut cells = Vec::new();
        for (workload, workload_path) in workloads {
            for phone in phones {
                // Without a schedulers list, the phone's own.
                let own: Vec<Entry>;
                let scheds = match phone {
                    Some(p) if schedulers.is_empty() => {
                        own = vec![p.own_scheduler()];
                        &own
                    }
                    _ => schedulers,
                };
                for device in devices {
                    for (variant, (set_text, set_pairs)) in sets.iter().enumerate() {
                        for sched in scheds {
                            for &seed in seeds {
                                cells.push(Cell {
                                    index: cells.len(),
                                    id: String::new(),
                                    scheduler: sched.clone(),
                                    workload: workload.clone(),
                                    workload_path: workload_path.clone(),
                                    phone: phone.clone(),
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
        }
        cells
    }
}

/// The `schedulers` entries (none, with `phones`, when the key is left
/// out: each phone's own).
fn schedulers(
    g: &GridFile,
    with_phones: bool,
    path: &Path,
    at: &dyn Fn(usize) -> String,
    registry: &Registry,
) -> Result<Vec<Entry>> {
    let listed: &[Spanned<String>] = match &g.schedulers {
        Some(list) if list.get_ref().is_empty() => bail!(
            "{}: `schedulers` is empty; list at least one, e.g. schedulers = [\"deadline\"]{}",
            at(list.span().start),
            if with_phones {
                ", or leave the key out to run each phone's own"
            } else {
                ""
            }
        ),
        Some(list) => list.get_ref(),
        None if with_phones => &[],
        None => bail!(
            "{}: no `schedulers`; list them, e.g. schedulers = [\"deadline\"], or give `phones` to run each phone's own",
            path.display()
        ),
    };
    let mut schedulers: Vec<Entry> = Vec::new();
    for s in listed {
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
    Ok(schedulers)
}

/// The `workloads`, each found relative to the grid's folder.
fn workloads(
    g: &GridFile,
    base: &Path,
    path: &Path,
    at: &dyn Fn(usize) -> String,
) -> Result<Vec<(String, PathBuf)>> {
    if g.workloads.is_empty() {
        bail!(
            "{}: `workloads` is empty; list scenario (.toml), fio job or trace files",
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
    Ok(workloads)
}

/// The `devices` (`[None]` without the key: each workload's own).
fn devices(
    g: &GridFile,
    base: &Path,
    at: &dyn Fn(usize) -> String,
) -> Result<Vec<Option<(String, PathBuf)>>> {
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
    Ok(devices)
}

/// The `seeds` (`[None]` without the key: each workload's own).
fn seeds(g: &GridFile, at: &dyn Fn(usize) -> String) -> Result<Vec<Option<u64>>> {
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
    Ok(seeds)
}

/// `KEY=VALUE` items of `list`, an error naming `what` and the item's place.
fn parse_list(
    list: &[Spanned<String>],
    what: &str,
    at: &dyn Fn(usize) -> String,
) -> Result<Vec<(String, String)>> {
    list.iter()
        .map(|s| parse_set(s.get_ref()).map_err(|e| anyhow!("{}: {what}: {e}", at(s.span().start))))
        .collect()
}

/// The `sets` variants (one empty variant without the key).
fn sets(g: &GridFile, at: &dyn Fn(usize) -> String) -> Result<Vec<Variant>> {
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
                out.push((text, parse_list(v, "sets", at)?));
            }
            out
        }
    };
    Ok(sets)
}

/// The grid's phones, loaded (`None` without the key): a path or a
/// `.toml` name relative to the grid's folder, else a name found from it.
fn phones(
    g: &GridFile,
    base: &Path,
    at: &dyn Fn(usize) -> String,
) -> Result<Option<Vec<PhoneCell>>> {
    let Some(list) = &g.phones else {
        return Ok(None);
    };
    if list.get_ref().is_empty() {
        bail!(
            "{}: `phones` is empty; list phones (names in configs/phones/ or files) or leave the key out",
            at(list.span().start)
        );
    }
    // A grid named without a folder (`sweep grid.toml`) has an empty base,
    // which `absolute` refuses: that folder is the current one.
    let from = if base.as_os_str().is_empty() {
        std::env::current_dir()
    } else {
        std::path::absolute(base)
    }
    .with_context(|| format!("{}: phones", at(list.span().start)))?;
    let mut out: Vec<PhoneCell> = Vec::new();
    for p in list.get_ref() {
        let written = p.get_ref();
        let is_file = written.contains('/')
            || written.contains(std::path::MAIN_SEPARATOR)
            || written.ends_with(".toml");
        let phone = if is_file {
            // Canonical, as `--phone FILE` from the repository root gives
            // it: the profile paths the report shows do not depend on how
            // the grid spells the way to the file.
            let file = from.join(written);
            Phone::load(&std::fs::canonicalize(&file).unwrap_or(file))
        } else {
            Phone::find(written, &from)
        }
        .map_err(|e| {
            let msg = e.to_string();
            let msg = msg
                .strip_prefix(&format!("--phone {written}: "))
                .unwrap_or(&msg)
                .to_string();
            anyhow!("{}: phones: `{written}`: {msg}", at(p.span().start))
        })?;
        if out.iter().any(|o| o.name == phone.name) {
            bail!(
                "{}: phones: `{written}` is phone `{}`, listed twice",
                at(p.span().start),
                phone.name
            );
        }
        out.push(PhoneCell {
            name: phone.name.clone(),
            scheduler: phone.scheduler.clone(),
            sets: phone.sets(),
        });
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(text: &str) -> Result<Grid> {
        let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
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
    fn phones_nest_inside_workloads_and_bring_their_own_scheduler() {
        let g = grid(
            "workloads = [\"configs/scenarios/rand16-128m.toml\", \"traces/sample.csv\"]\nphones = [\"motog-2013\", \"configs/phones/nexus-s.toml\"]\nseeds = [1, 2]\n",
        )
        .unwrap();
        let coords: Vec<(usize, &str, &str)> = g
            .cells
            .iter()
            .map(|c| {
                let phone = c.phone.as_ref().unwrap();
                assert_eq!(c.scheduler.scheduler, phone.scheduler);
                assert_eq!(&c.overrides()[..phone.sets.len()], &phone.sets[..]);
                (c.index, phone.name.as_str(), c.workload.as_str())
            })
            .collect();
        assert_eq!(coords.len(), 8);
        assert_eq!(
            coords[1],
            (1, "motog-2013", "configs/scenarios/rand16-128m.toml")
        );
        assert_eq!(
            coords[2],
            (2, "nexus-s", "configs/scenarios/rand16-128m.toml")
        );
        assert_eq!(coords[4], (4, "motog-2013", "traces/sample.csv"));
        // A schedulers list replaces the phone's scheduler: it comes after
        // the phone's overrides.
        let g = grid(
            "schedulers = [\"deadline\", \"bfq\"]\nworkloads = [\"traces/sample.csv\"]\nphones = [\"motog-2013\"]\n",
        )
        .unwrap();
        assert_eq!(g.cells.len(), 2);
        let o = g.cells[1].overrides();
        let last_sched = o.iter().rposition(|(k, _)| k == "scheduler.name").unwrap();
        assert_eq!(o[last_sched].1, "bfq");
        assert!(o.iter().any(|(k, v)| k == "scheduler.hz" && v == "100"));
    }

    /// The ids (the file names of finished cells, so what a resumed sweep
    /// looks for) of a grid without phones are those computed before
    /// phones existed: FNV-1a of scheduler, workload, device, seed and
    /// sets.
    #[test]
    fn ids_of_grids_without_phones_are_what_they_were() {
        let g = grid(SIXTEEN).unwrap();
        assert_eq!(g.cells[5].id, "0005-7c845580");
        assert_eq!(g.cells[15].id, "0015-e04617a1");
    }

    #[test]
    fn a_crash_table_makes_every_cell_a_power_cut_campaign() {
        let g = grid(SIXTEEN).unwrap();
        assert_eq!(g.crash, None);
        let g = grid(&format!("{SIXTEEN}\n[crash]\ncuts = 25\n")).unwrap();
        assert_eq!(g.crash.map(|c| c.cuts), Some(25));
        // The cells and their ids are those of the grid without it.
        assert_eq!(g.cells[5].id, "0005-7c845580");
        let e = grid(&format!("{SIXTEEN}\n[crash]\ncuts = 0\n"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("grid.toml:") && e.contains("cuts = 0"), "{e}");
        let e = grid(&format!("{SIXTEEN}\n[crash]\ncut = 3\n"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("cut") && e.contains("line 9"), "{e}");
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
