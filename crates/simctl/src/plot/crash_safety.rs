//! Speed against safety (`simctl plot --kind crash-safety SWEEPDIR`): one
//! point per configuration of a crash sweep (a grid with `[crash]`), its
//! uncut speed across (SQLite transactions per second when every cell ran
//! SQLite, else IOPS) and, up, the share of cuts that broke a promise
//! (`crash.cuts_violating`) and the acknowledged 4 KiB pages lost per cut.
//!
//! A configuration is a cell's coordinates but its seed: cells differing
//! only in seed are pooled (speeds averaged, cuts and counts summed).
//! Points carry numbers; the legend beside the chart names each
//! configuration by the coordinates that vary across the sweep, with its
//! numbers.

use super::{Figure, Mark, Panel, Series, XyPanel};
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

/// One configuration, pooled over its seeds.
#[derive(Clone, Debug, Default, PartialEq)]
struct Config {
    /// Coordinates, in `COORDS` order.
    coords: Vec<String>,
    /// Sum of the uncut speeds, and how many cells.
    speed_sum: f64,
    cells: u32,
    /// Whether every cell had SQLite's speed.
    sqlite: bool,
    cuts: u64,
    violating: u64,
    acked_lost: u64,
}

/// The coordinates that name a configuration.
const COORDS: [&str; 5] = ["workload", "phone", "device", "scheduler", "sets"];

/// `results.csv` of `input`: the file itself, or a sweep directory's.
fn results_file(input: &Path) -> PathBuf {
    if input.is_dir() {
        super::super::sweep::layout::results_path(input)
    } else {
        input.to_path_buf()
    }
}

/// The configurations of one `results.csv`, in the order of their first
/// cell.
fn configs(path: &Path) -> Result<Vec<Config>> {
    let text = crate::input::read_text(
        path,
        "sweep results (results.csv of a crash sweep)",
        crate::input::MAX_PLOT_INPUT_BYTES,
    )?;
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let header = r
        .headers()
        .with_context(|| format!("{}: not a CSV table", path.display()))?
        .clone();
    let col = |name: &str| header.iter().position(|h| h == name);
    let need = |name: &str| {
        col(name).with_context(|| {
            format!(
                "{}: no `{name}` column: --kind crash-safety reads the results.csv of a crash sweep (a grid with a [crash] table)",
                path.display()
            )
        })
    };
    let coords: Vec<usize> = COORDS.iter().map(|c| need(c)).collect::<Result<_>>()?;
    let (iops, tps) = (need("iops")?, need(crate::sweep::crash::SQLITE_TPS)?);
    let (cuts, violating, acked) = (
        need("crash.cuts")?,
        need("crash.cuts_violating")?,
        need("crash.acked_writes_lost")?,
    );
    let mut out: Vec<Config> = Vec::new();
    for (line, rec) in r.records().enumerate() {
        let rec = rec.with_context(|| format!("{}: row {}", path.display(), line + 2))?;
        let field = |i: usize| rec.get(i).unwrap_or_default();
        let num = |i: usize| -> Result<f64> {
            field(i).parse::<f64>().with_context(|| {
                format!(
                    "{}: row {}, column `{}`: `{}` is not a number",
                    path.display(),
                    line + 2,
                    &header[i],
                    field(i)
                )
            })
        };
        let key: Vec<String> = coords.iter().map(|&i| field(i).to_string()).collect();
        let sqlite = !field(tps).is_empty();
        let speed = if sqlite { num(tps)? } else { num(iops)? };
        let idx = match out.iter().position(|c| c.coords == key) {
            Some(i) => i,
            None => {
                out.push(Config {
                    coords: key,
                    sqlite: true,
                    ..Config::default()
                });
                out.len() - 1
            }
        };
        let c = &mut out[idx];
        c.speed_sum += speed;
        c.cells += 1;
        c.sqlite &= sqlite;
        c.cuts += num(cuts)? as u64;
        c.violating += num(violating)? as u64;
        c.acked_lost += num(acked)? as u64;
    }
    if out.is_empty() {
        bail!("{}: no finished cell to plot", path.display());
    }
    Ok(out)
}

/// A `--set` setting as a legend shows it: SQLite's journal mode by its
/// name (`OFF`), `synchronous` as `sync`, the cache switch
/// (`device.write_buffer.enabled`) as `cache`, any other key by its last
/// part (`fs.barrier=0` as `barrier=0`).
fn short_set(set: &str) -> String {
    let Some((k, v)) = set.split_once('=') else {
        return set.to_string();
    };
    match k {
        "sqlite.journal_mode" => v.to_uppercase(),
        "sqlite.synchronous" => format!("sync={v}"),
        "device.write_buffer.enabled" => format!("cache={v}"),
        _ => format!("{}={v}", k.rsplit('.').next().unwrap_or(k)),
    }
}

/// A coordinate as the legend shows it: a workload or profile path by its
/// file stem, a set variant by its short settings except those in
/// `common` (every configuration's).
fn show(coord: &str, value: &str, common: &[&str]) -> String {
    match coord {
        "sets" => {
            let own: Vec<String> = value
                .split(' ')
                .filter(|s| !s.is_empty() && !common.contains(s))
                .map(short_set)
                .collect();
            if own.is_empty() {
                "as configured".to_string()
            } else {
                own.join(" ")
            }
        }
        "workload" | "device" => Path::new(value)
            .file_stem()
            .map_or(value.to_string(), |s| s.to_string_lossy().into_owned()),
        _ => value.to_string(),
    }
}

/// The legend labels: the coordinates that vary across `configs`, a set
/// variant without the settings every configuration shares.
fn labels(configs: &[Config]) -> Vec<String> {
    let sets = COORDS.len() - 1;
    let common: Vec<&str> = configs[0].coords[sets]
        .split(' ')
        .filter(|s| {
            configs
                .iter()
                .all(|c| c.coords[sets].split(' ').any(|x| x == *s))
        })
        .collect();
    let varies: Vec<usize> = (0..COORDS.len())
        .filter(|&i| configs.iter().any(|c| c.coords[i] != configs[0].coords[i]))
        .collect();
    configs
        .iter()
        .map(|c| {
            let parts: Vec<String> = varies
                .iter()
                .map(|&i| show(COORDS[i], &c.coords[i], &common))
                .collect();
            if parts.is_empty() {
                show("sets", &c.coords[sets], &[])
            } else {
                parts.join(" · ")
            }
        })
        .collect()
}

/// The label slot of each point `(xs[i], ys[i])` ([`Mark::Numbered`]):
/// how many earlier points lie within 4 % of the axes' spans of it, so
/// numbers on one spot are written side by side.
fn slots(xs: &[f64], ys: &[f64], log_x: bool) -> Vec<u8> {
    let x = |v: f64| if log_x { v.max(1e-9).ln() } else { v };
    let span = |v: &mut dyn Iterator<Item = f64>| {
        let (lo, hi) = v.fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), a| {
            (l.min(a), h.max(a))
        });
        (hi - lo).max(1e-9)
    };
    let dx = 0.04 * span(&mut xs.iter().map(|v| x(*v)));
    let dy = 0.04 * span(&mut ys.iter().copied().chain([0.0]));
    (0..xs.len())
        .map(|i| {
            let near = (0..i)
                .filter(|&j| (x(xs[i]) - x(xs[j])).abs() < dx && (ys[i] - ys[j]).abs() < dy)
                .count();
            u8::try_from(near).unwrap_or(u8::MAX)
        })
        .collect()
}

/// The figure of the crash sweeps `inputs` (directories or their
/// `results.csv`).
pub fn figure(inputs: &[PathBuf]) -> Result<Figure> {
    if inputs.is_empty() {
        bail!("no input given: name a crash sweep's output directory");
    }
    let mut all = Vec::new();
    for i in inputs {
        all.extend(configs(&results_file(i))?);
    }
    let sqlite = all.iter().all(|c| c.sqlite);
    let x_label = if sqlite {
        "SQLite transactions/s (uncut run)"
    } else {
        "IOPS (uncut run)"
    };
    let labels = labels(&all);
    // Speeds spanning more than a decade (journal modes do) on a log axis.
    let (lo, hi) = all
        .iter()
        .map(|c| c.speed_sum / f64::from(c.cells.max(1)))
        .fold((f64::INFINITY, 0.0f64), |(l, h), v| (l.min(v), h.max(v)));
    let log_x = lo > 0.0 && hi / lo > 10.0;
    let x_label = if log_x {
        format!("{x_label}, log scale")
    } else {
        x_label.to_string()
    };
    let speeds: Vec<f64> = all
        .iter()
        .map(|c| c.speed_sum / f64::from(c.cells.max(1)))
        .collect();
    let pct: Vec<f64> = all
        .iter()
        .map(|c| 100.0 * c.violating as f64 / c.cuts.max(1) as f64)
        .collect();
    let per_cut: Vec<f64> = all
        .iter()
        .map(|c| c.acked_lost as f64 / c.cuts.max(1) as f64)
        .collect();
    let series = |ys: &[f64], value: &dyn Fn(&Config) -> String| {
        let slots = slots(&speeds, ys, log_x);
        all.iter()
            .zip(&labels)
            .enumerate()
            .map(|(i, (c, label))| {
                let n = u16::try_from(i + 1).unwrap_or(u16::MAX);
                Series {
                    name: format!("{n}: {label} ({})", value(c)),
                    points: vec![(speeds[i], ys[i])],
                    mark: Mark::Numbered { n, slot: slots[i] },
                }
            })
            .collect::<Vec<_>>()
    };
    let share = series(&pct, &|c| format!("{}/{}", c.violating, c.cuts));
    let lost = series(&per_cut, &|c| format!("{} lost", c.acked_lost));
    let panel = |title: &str, y_label: &str, series: Vec<Series>| {
        let top = series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .fold(0.0f64, f64::max);
        Panel::Xy(XyPanel {
            title: title.to_string(),
            x_label: x_label.clone(),
            y_label: y_label.to_string(),
            log_x,
            x_time_us: false,
            y_range: Some((0.0, (top * 1.15).max(1.0))),
            series,
        })
    };
    Figure::new(
        "Speed against safety after power cuts",
        vec![
            panel(
                "Cuts that broke a promise",
                "cuts with a violation (%)",
                share,
            ),
            panel(
                "Acknowledged writes lost",
                "acknowledged 4 KiB pages lost per cut",
                lost,
            ),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(workload: &str, sets: &str) -> Config {
        Config {
            coords: vec![
                workload.into(),
                String::new(),
                String::new(),
                "noop".into(),
                sets.into(),
            ],
            ..Config::default()
        }
    }

    #[test]
    fn legends_name_what_varies_briefly() {
        let c = [
            config(
                "w/sqlite.toml",
                "fs.barrier=1 sqlite.journal_mode=off device.ftl.atomic_write=true",
            ),
            config("w/sqlite.toml", "fs.barrier=1"),
            config(
                "w/sqlite.toml",
                "fs.barrier=1 device.write_buffer.enabled=false",
            ),
        ];
        assert_eq!(
            labels(&c),
            ["OFF atomic_write=true", "as configured", "cache=false"]
        );
        let c = [
            config("w/a.toml", "fs.barrier=0"),
            config("w/b.toml", "fs.barrier=0"),
        ];
        assert_eq!(labels(&c), ["a", "b"]);
    }

    #[test]
    fn numbers_on_one_spot_take_the_next_slots() {
        let xs = [67.8, 67.9, 79.3, 1600.0, 79.3];
        let ys = [0.0, 0.0, 0.0, 97.0, 22.0];
        assert_eq!(slots(&xs, &ys, true), [0, 1, 0, 0, 0]);
        assert_eq!(slots(&xs, &[0.0; 5], false), [0, 1, 2, 0, 3]);
    }
}
