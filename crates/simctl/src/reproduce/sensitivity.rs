//! A finding's sensitivity probe: its runs repeated on the generic profile
//! with one device setting at each value of the setting's sourced range,
//! seed 1 only (each value's quantities compared with the claim's
//! threshold as points, not intervals), and shown beside the verdict (a
//! line on stdout, `finding-N-sensitivity.csv`, a table on the report page)
//! without changing it. It tells a reader where in the sourced range the
//! finding's mechanism produces the published effect.

use super::finding::{Finding, Sensitivity};
use super::plan::Probe;
use super::profile::Profile;
use super::runner::RunOutput;
use anyhow::{Context, Result};

/// One value of the setting and what the finding measured with it.
#[derive(Clone, Debug)]
pub struct Row {
    /// The value, as `--set` text.
    pub value: &'static str,
    /// Whether the finding's claim held with it.
    pub pass: bool,
    /// The numbers, as the verdict line gives them.
    pub summary: String,
}

/// The probe's outcome.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The finding's number.
    pub number: u32,
    /// What was varied, over which range, and why it matters.
    pub about: &'static Sensitivity,
    /// The profile it ran on.
    pub profile: String,
    /// One row per value, or why the probe did not run.
    pub rows: std::result::Result<Vec<Row>, String>,
}

impl Outcome {
    /// The line printed under the verdict.
    pub fn line(&self) -> String {
        let head = format!(
            "  sensitivity of finding {} (not in the verdict)",
            self.number
        );
        match &self.rows {
            Err(why) => format!("{head}: not run: {why}"),
            Ok(rows) => {
                let cells: Vec<String> = rows
                    .iter()
                    .map(|r| format!("{}: {} ({})", r.value, verdict(r.pass), r.summary))
                    .collect();
                format!(
                    "{head}, {} profile, seed 1, {} = {}{}",
                    self.profile,
                    self.about.key,
                    cells.join("; "),
                    if self.inert() {
                        " — the same at every value: the setting does not reach this device's mechanism"
                    } else {
                        ""
                    }
                )
            }
        }
    }
}

impl Outcome {
    /// True when every value gave the same numbers (for example a
    /// `--set device.ftl.mapping=hybrid`, whose block map never consults
    /// the mapping cache).
    pub fn inert(&self) -> bool {
        match &self.rows {
            Ok(rows) => rows.len() > 1 && rows.iter().all(|r| r.summary == rows[0].summary),
            Err(_) => false,
        }
    }
}

/// `PASS` or `FAIL`.
pub fn verdict(pass: bool) -> &'static str {
    if pass {
        "PASS"
    } else {
        "FAIL"
    }
}

/// Measures finding `f` at each value of `probe` from the run `outputs`
/// and writes `finding-N-sensitivity.csv` into `dir` (when it ran).
pub fn measure(
    f: &dyn Finding,
    about: &'static Sensitivity,
    probe: &std::result::Result<Probe, String>,
    profiles: &[Profile],
    outputs: &[RunOutput],
    dir: &std::path::Path,
) -> Result<Outcome> {
    let n = f.about().number;
    let probe = match probe {
        Ok(p) => p,
        Err(why) => {
            return Ok(Outcome {
                number: n,
                about,
                profile: super::profile::GENERIC.to_string(),
                rows: Err(why.clone()),
            })
        }
    };
    let profile = profiles[probe.profile].name.clone();
    let mut rows = Vec::new();
    let mut csv = csv::Writer::from_writer(Vec::new());
    csv.write_record(["profile", "setting", "value", "verdict", "measured"])?;
    for (value, idx) in &probe.rows {
        let runs: Vec<&RunOutput> = idx.iter().map(|&i| &outputs[i]).collect();
        let m = f.measure(&runs).with_context(|| {
            format!(
                "finding-{n} on {profile} with {}={value} (sensitivity)",
                about.key
            )
        })?;
        // One seed: each quantity against its threshold as a point.
        let pass = m.checks.iter().all(|c| {
            let point = super::verdict::Interval {
                mean: c.value,
                lo: c.value,
                hi: c.value,
                n: 1,
            };
            super::verdict::judge(c.side, &point) == super::verdict::Outcome::Pass
        });
        csv.write_record([
            profile.as_str(),
            about.key,
            value,
            verdict(pass),
            m.summary.as_str(),
        ])?;
        rows.push(Row {
            value,
            pass,
            summary: m.summary,
        });
    }
    let bytes = csv.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?;
    crate::output::write_file(&dir.join(format!("finding-{n}-sensitivity.csv")), &bytes)?;
    Ok(Outcome {
        number: n,
        about,
        profile,
        rows: Ok(rows),
    })
}
