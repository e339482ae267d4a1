//! What an ensemble writes and `simctl merge` reads back: the manifest
//! (`ensemble.json`: the ensemble's parameters and each phone's sampled
//! keys), the outcome rows (`ensemble.csv`, one per phone, configuration
//! and finding) and the Moto G protocol rows (`motog-protocol.csv`, one per
//! configuration). Everything the summary shows is computed from these, so
//! a merged set of shards shows exactly what one unsharded run shows.

use super::super::verdict::Outcome;
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The manifest file in an ensemble's output directory.
pub const MANIFEST: &str = "ensemble.json";
/// The outcome rows.
pub const ROWS: &str = "ensemble.csv";
/// The Moto G protocol rows.
pub const MOTOG: &str = "motog-protocol.csv";

/// One sampled key of a phone.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct KeyInfo {
    /// The `--set` key.
    pub key: String,
    /// True for a range `[lo, hi]`, false for alternatives.
    pub range: bool,
    /// The range or the alternatives, as written (`[8, 64]`, `a | b`).
    pub spread: String,
    /// Why the value is unknown.
    pub reason: String,
}

/// One phone of the ensemble.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PhoneKeys {
    /// The phone's name.
    pub name: String,
    /// The Latin hypercube's seed (FNV-1a of the name).
    pub lhs_seed: u64,
    /// Its `[uncertain]` entries, in key order.
    pub keys: Vec<KeyInfo>,
}

/// `ensemble.json`: what was sampled and run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Manifest {
    /// Configurations per phone (`--ensemble M`).
    pub ensemble: usize,
    /// Seeds per configuration and finding (`--seeds N`).
    pub seeds: u32,
    /// The findings run, by number.
    pub findings: Vec<u32>,
    /// The phones sampled, in order.
    pub phones: Vec<PhoneKeys>,
    /// The user's `--set` pairs, as given.
    pub sets: Vec<String>,
    /// `I/N` when this directory holds one shard; absent when complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
}

impl Manifest {
    /// Every sampled key over the phones, in first-seen order (the CSV's
    /// value columns).
    pub fn columns(&self) -> Vec<String> {
        let mut c: Vec<String> = Vec::new();
        for p in &self.phones {
            for k in &p.keys {
                if !c.contains(&k.key) {
                    c.push(k.key.clone());
                }
            }
        }
        c
    }

    /// Position of phone `name`.
    pub fn phone_index(&self, name: &str) -> Option<usize> {
        self.phones.iter().position(|p| p.name == name)
    }

    /// Writes `ensemble.json` into `dir`.
    pub fn write(&self, dir: &Path) -> Result<()> {
        let mut text = serde_json::to_string_pretty(self)?;
        text.push('\n');
        crate::output::write_file(&dir.join(MANIFEST), text.as_bytes())
    }

    /// Reads `ensemble.json` from `dir`.
    pub fn read(dir: &Path) -> Result<Manifest> {
        let path = dir.join(MANIFEST);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("{}: cannot read", path.display()))?;
        serde_json::from_str(&text)
            .with_context(|| format!("{}: not an ensemble manifest", path.display()))
    }
}

/// One (phone, configuration, finding) outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The phone.
    pub phone: String,
    /// The configuration, 1..=M.
    pub configuration: usize,
    /// The finding's number.
    pub finding: u32,
    /// Its outcome in this configuration (worst of its checks).
    pub outcome: Outcome,
    /// Checks on the paper's side.
    pub passed: usize,
    /// Checks judged.
    pub checks: usize,
    /// The sampled values by key (the phone's keys only).
    pub values: Vec<(String, String)>,
}

/// The Moto G protocol's numbers for one configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct MotoRow {
    /// The configuration, 1..=M.
    pub configuration: usize,
    /// Per AndroBench metric (report key), the simulated mean over the
    /// nine schedulers and the seeds, in the metric's unit.
    pub metrics: Vec<(String, f64)>,
}

/// Parses an outcome cell.
fn outcome(cell: &str) -> Result<Outcome> {
    Ok(match cell {
        "PASS" => Outcome::Pass,
        "FAIL" => Outcome::Fail,
        "UNRESOLVED" => Outcome::Unresolved,
        other => bail!("outcome `{other}`: expected PASS, FAIL or UNRESOLVED"),
    })
}

/// Rows in the order every writer uses: phone order, configuration,
/// finding.
pub fn sort_rows(m: &Manifest, rows: &mut [Row]) {
    rows.sort_by_key(|r| (m.phone_index(&r.phone), r.configuration, r.finding));
}

/// Writes `ensemble.csv`.
pub fn write_rows(m: &Manifest, rows: &[Row], dir: &Path) -> Result<()> {
    let cols = m.columns();
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = [
        "phone",
        "configuration",
        "finding",
        "outcome",
        "checks_passed",
        "checks",
    ]
    .map(String::from)
    .to_vec();
    header.extend(cols.iter().cloned());
    w.write_record(&header)?;
    for r in rows {
        let mut rec = vec![
            r.phone.clone(),
            r.configuration.to_string(),
            format!("finding-{}", r.finding),
            r.outcome.name().to_string(),
            r.passed.to_string(),
            r.checks.to_string(),
        ];
        for c in &cols {
            rec.push(
                r.values
                    .iter()
                    .find(|(k, _)| k == c)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default(),
            );
        }
        w.write_record(&rec)?;
    }
    let bytes = w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?;
    crate::output::write_file(&dir.join(ROWS), &bytes)
}

/// Reads `ensemble.csv` from `dir`.
pub fn read_rows(m: &Manifest, dir: &Path) -> Result<Vec<Row>> {
    let path = dir.join(ROWS);
    let bad =
        |line: usize, what: String| anyhow::anyhow!("{}: line {line}: {what}", path.display());
    let mut rd = csv::Reader::from_path(&path)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    let header: Vec<String> = rd.headers()?.iter().map(String::from).collect();
    let cols = m.columns();
    if header[6.min(header.len())..] != cols[..] {
        bail!(
            "{}: its columns are not those of {MANIFEST}",
            path.display()
        );
    }
    let mut rows = Vec::new();
    for (i, rec) in rd.records().enumerate() {
        let rec = rec?;
        let line = i + 2;
        let phone = rec[0].to_string();
        let keys = &m.phones[m
            .phone_index(&phone)
            .ok_or_else(|| bad(line, format!("phone `{phone}` is not in {MANIFEST}")))?]
        .keys;
        let num = |j: usize| -> Result<usize> {
            rec[j]
                .parse()
                .map_err(|_| bad(line, format!("`{}`: expected a count", &rec[j])))
        };
        let finding = rec[2]
            .strip_prefix("finding-")
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| bad(line, format!("`{}`: expected finding-N", &rec[2])))?;
        let values = keys
            .iter()
            .map(|k| {
                let j = 6 + cols.iter().position(|c| *c == k.key).unwrap_or(0);
                (k.key.clone(), rec.get(j).unwrap_or("").to_string())
            })
            .collect();
        rows.push(Row {
            phone,
            configuration: num(1)?,
            finding,
            outcome: outcome(&rec[3]).map_err(|e| bad(line, e.to_string()))?,
            passed: num(4)?,
            checks: num(5)?,
            values,
        });
    }
    Ok(rows)
}

/// Writes `motog-protocol.csv` (`keys`: the metrics' report keys).
pub fn write_motog(rows: &[MotoRow], keys: &[String], dir: &Path) -> Result<()> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header = vec!["phone".to_string(), "configuration".to_string()];
    header.extend(keys.iter().cloned());
    w.write_record(&header)?;
    for r in rows {
        let mut rec = vec![super::motog::PHONE.to_string(), r.configuration.to_string()];
        rec.extend(r.metrics.iter().map(|(_, v)| format!("{v}")));
        w.write_record(&rec)?;
    }
    let bytes = w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?;
    crate::output::write_file(&dir.join(MOTOG), &bytes)
}

/// Reads `motog-protocol.csv` from `dir`, if there is one.
pub fn read_motog(dir: &Path) -> Result<Vec<MotoRow>> {
    let path = dir.join(MOTOG);
    if !path.is_file() {
        return Ok(Vec::new());
    }
    let mut rd = csv::Reader::from_path(&path)?;
    let keys: Vec<String> = rd.headers()?.iter().skip(2).map(String::from).collect();
    let mut rows = Vec::new();
    for (i, rec) in rd.records().enumerate() {
        let rec = rec?;
        let bad = || anyhow::anyhow!("{}: line {}: expected numbers", path.display(), i + 2);
        let configuration = rec[1].parse().map_err(|_| bad())?;
        let metrics = keys
            .iter()
            .enumerate()
            .map(|(j, k)| Ok((k.clone(), rec[j + 2].parse::<f64>().map_err(|_| bad())?)))
            .collect::<Result<Vec<_>>>()?;
        rows.push(MotoRow {
            configuration,
            metrics,
        });
    }
    Ok(rows)
}
