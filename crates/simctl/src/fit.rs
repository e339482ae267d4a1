//! What a profile was fitted to: the names in `[fit] targets` and in a
//! calibration target's `measurement` or `finding`, checked against the
//! measurement tables ([`crate::measurements`]) and the findings of
//! `simctl reproduce`.
//!
//! A name is `TABLE:METRIC` (a metric of a published measurement table,
//! e.g. `motog-2013-androbench34:seq_read_mb_s`) or `finding-N` (the
//! claim of finding N, as `simctl reproduce N` judges it).

use anyhow::{anyhow, Context, Result};
use std::path::Path;

/// One thing a profile can be fitted to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FitTarget {
    /// A metric of a published measurement table.
    Measurement {
        /// The table's name.
        table: &'static str,
        /// The metric's key in it.
        metric: String,
    },
    /// A finding's claim.
    Finding(u32),
}

impl FitTarget {
    /// Parses and checks `name` (`TABLE:METRIC` or `finding-N`);
    /// `findings` are the numbers `reproduce` knows.
    pub fn parse(name: &str, findings: &[u32]) -> std::result::Result<FitTarget, String> {
        if let Some(n) = name.strip_prefix("finding-") {
            let n: u32 = n
                .parse()
                .map_err(|_| format!("`{name}`: expected finding-N with N a finding's number"))?;
            if !findings.contains(&n) {
                let known: Vec<String> = findings.iter().map(|n| format!("finding-{n}")).collect();
                return Err(format!(
                    "unknown finding `{name}` (known: {})",
                    known.join(", ")
                ));
            }
            return Ok(FitTarget::Finding(n));
        }
        let Some((table, metric)) = name.split_once(':') else {
            return Err(format!(
                "`{name}`: expected \"TABLE:METRIC\" (a metric of configs/measurements/TABLE.toml) or \"finding-N\""
            ));
        };
        let t = crate::measurements::find(table)?;
        t.metric(metric)?;
        Ok(FitTarget::Measurement {
            table: t.name,
            metric: metric.to_string(),
        })
    }
}

/// Checks every name of `[fit] targets` in `src`; the error names the
/// file, the entry and what is known.
pub fn check(src: &str, targets: &[String], findings: &[u32]) -> Result<Vec<FitTarget>> {
    targets
        .iter()
        .enumerate()
        .map(|(i, t)| {
            FitTarget::parse(t, findings).map_err(|e| anyhow!("{src}: [fit] targets[{i}]: {e}"))
        })
        .collect()
}

/// The `[fit] targets` of a device or host profile file (empty without
/// `[fit]`), checked for form.
pub fn targets_of_file(path: &Path) -> Result<Vec<String>> {
    let src = path.display().to_string();
    let text = mmcsim::textfile::read_config(path).with_context(|| src.clone())?;
    let table: toml::Table =
        toml::from_str(&text).map_err(|e| anyhow!("{src}: {}", e.to_string().trim_end()))?;
    let Some(fit) = table.get("fit") else {
        return Ok(Vec::new());
    };
    let targets = fit
        .as_table()
        .filter(|t| t.keys().all(|k| k == "targets"))
        .and_then(|t| t.get("targets"))
        .and_then(toml::Value::as_array)
        .ok_or_else(|| {
            anyhow!(
                "{src}: [fit] holds one key, targets = [\"TABLE:METRIC\" or \"finding-N\", ...]"
            )
        })?;
    let names = targets
        .iter()
        .enumerate()
        .map(|(i, v)| {
            v.as_str().map(str::to_string).ok_or_else(|| {
                anyhow!(
                    "{src}: [fit] targets[{i}] is a {}, expected a string",
                    v.type_str()
                )
            })
        })
        .collect::<Result<Vec<String>>>()?;
    mmcsim::config::check_fit_targets(&src, &names)?;
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_a_table_metric_or_a_finding_and_unknown_ones_are_located() {
        let f = [1, 3, 7];
        assert_eq!(
            FitTarget::parse("motog-2013-androbench34:rand_read_iops", &f).unwrap(),
            FitTarget::Measurement {
                table: "motog-2013-androbench34",
                metric: "rand_read_iops".into()
            }
        );
        assert_eq!(
            FitTarget::parse("finding-3", &f).unwrap(),
            FitTarget::Finding(3)
        );
        let e = FitTarget::parse("finding-9", &f).unwrap_err();
        assert!(
            e.contains("unknown finding") && e.contains("finding-7"),
            "{e}"
        );
        let e = FitTarget::parse("motog-2013-androbench34:iops", &f).unwrap_err();
        assert!(
            e.contains("no metric `iops`") && e.contains("rand_read_iops"),
            "{e}"
        );
        let e = FitTarget::parse("galaxy:x", &f).unwrap_err();
        assert!(e.contains("unknown measurement table `galaxy`"), "{e}");
        let e = FitTarget::parse("seq-read", &f).unwrap_err();
        assert!(e.contains("TABLE:METRIC"), "{e}");
        let e = check("p.toml", &["finding-1".into(), "x:y".into()], &f).unwrap_err();
        assert!(
            e.to_string().starts_with("p.toml: [fit] targets[1]: "),
            "{e}"
        );
    }
}
