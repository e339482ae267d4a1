//! Published measurement tables (`configs/measurements/*.toml`), compiled
//! in: per scheduler, the mean and standard deviation of the runs a source
//! reports for each metric. `simctl reproduce` draws them beside the
//! simulated values; `simctl calibrate` takes their metrics as targets;
//! a profile's `[fit] targets` names them as `TABLE:METRIC`.

use serde::Deserialize;
use std::sync::OnceLock;

/// The tables in the tree: `(name, text)`; the name is the file stem.
const TABLES: &[(&str, &str)] = &[(
    "motog-2013-androbench34",
    include_str!("../../../configs/measurements/motog-2013-androbench34.toml"),
)];

/// One published measurement table.
#[derive(Debug, Deserialize)]
pub struct Table {
    /// Its name (the file stem), filled in after parsing.
    #[serde(skip)]
    pub name: &'static str,
    /// The source, in one line.
    pub source: String,
    /// The section of a run's JSON report that holds the metrics (e.g.
    /// `androbench`: the metric `seq_read_mb_s` is `androbench.seq_read_mb_s`).
    pub report_section: String,
    /// The schedulers, in the table's order.
    pub schedulers: Vec<String>,
    /// One entry per metric, in the source's order.
    pub metrics: Vec<Metric>,
}

/// One metric of a table.
#[derive(Debug, Deserialize)]
pub struct Metric {
    /// Key under the table's report section.
    pub key: String,
    /// Unit of the metric.
    pub unit: String,
    /// Mean of the runs, per scheduler (in [`Table::schedulers`] order).
    pub mean: Vec<f64>,
    /// Standard deviation of the runs, per scheduler.
    pub stdev: Vec<f64>,
}

/// Every table, parsed once (a unit test checks each parses).
pub fn all() -> &'static [Table] {
    static ALL: OnceLock<Vec<Table>> = OnceLock::new();
    ALL.get_or_init(|| {
        TABLES
            .iter()
            .map(|(name, text)| {
                let mut t: Table = toml::from_str(text)
                    .unwrap_or_else(|e| panic!("configs/measurements/{name}.toml: {e}"));
                t.name = name;
                t
            })
            .collect()
    })
}

/// The names of the tables, for messages.
pub fn names() -> Vec<&'static str> {
    all().iter().map(|t| t.name).collect()
}

/// The table called `name`, or an error naming the known ones.
pub fn find(name: &str) -> Result<&'static Table, String> {
    all().iter().find(|t| t.name == name).ok_or_else(|| {
        format!(
            "unknown measurement table `{name}` (known: {}; each is configs/measurements/NAME.toml)",
            names().join(", ")
        )
    })
}

impl Table {
    /// The metric `key`, or an error naming the table's metrics.
    pub fn metric(&self, key: &str) -> Result<&Metric, String> {
        self.metrics.iter().find(|m| m.key == key).ok_or_else(|| {
            let keys: Vec<&str> = self.metrics.iter().map(|m| m.key.as_str()).collect();
            format!(
                "measurement table `{}` has no metric `{key}` (metrics: {})",
                self.name,
                keys.join(", ")
            )
        })
    }

    /// The fit-target name of metric `key`: `TABLE:METRIC`.
    pub fn target_name(&self, key: &str) -> String {
        format!("{}:{key}", self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_parses_with_a_mean_and_deviation_per_scheduler() {
        assert!(!all().is_empty());
        for t in all() {
            for m in &t.metrics {
                assert_eq!(m.mean.len(), t.schedulers.len(), "{}: {}", t.name, m.key);
                assert_eq!(m.stdev.len(), t.schedulers.len(), "{}: {}", t.name, m.key);
            }
        }
        let t = find("motog-2013-androbench34").unwrap();
        assert_eq!(t.metric("rand_read_iops").unwrap().unit, "IOPS");
        assert!(t.metric("nope").unwrap_err().contains("seq_read_mb_s"));
        assert!(find("nope")
            .unwrap_err()
            .contains("motog-2013-androbench34"));
    }
}
