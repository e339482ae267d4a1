//! What a finding is: the runs it needs on one profile, and how it turns
//! their outputs into a verdict, numbers, a figure and a CSV.

use super::runner::{RunOutput, RunSpec};
use crate::plot::Panel;
use anyhow::Result;
use mmcsim::sched::Registry;

/// What a finding is, as the outputs name it.
#[derive(Clone, Copy, Debug)]
pub struct About {
    /// Its number (`finding-N`).
    pub number: u32,
    /// A short title.
    pub title: &'static str,
    /// The paper (and figure) it comes from.
    pub source: &'static str,
    /// The paper's claim, as an ordering or a band.
    pub claim: &'static str,
    /// The columns of its CSV after `profile`.
    pub csv_header: &'static [&'static str],
}

/// One published finding, reproduced on a profile.
pub trait Finding: Sync {
    /// Its number, title, source, claim and CSV columns.
    fn about(&self) -> &'static About;
    /// The runs it needs on one profile (the profile's settings and the
    /// user's `--set` are added by the caller).
    fn runs(&self, registry: &Registry) -> Vec<RunSpec>;
    /// The measurement on one profile, from the outputs of [`Finding::runs`]
    /// in the same order.
    fn measure(&self, runs: &[&RunOutput]) -> Result<Measure>;
    /// The profiles (by name) the finding is about, when it is about one
    /// measured phone and means nothing elsewhere; `None`: every profile.
    fn only_on(&self) -> Option<&'static [&'static str]> {
        None
    }
    /// How to read the figure and table, when they need more than the
    /// claim (shown on the report page).
    fn note(&self) -> Option<&'static str> {
        None
    }
    /// The device parameter the finding's mechanism hinges on, swept over
    /// its sourced range on the generic profile beside the verdict (not
    /// part of it); `None`: no such probe.
    fn sensitivity(&self) -> Option<&'static Sensitivity> {
        None
    }
}

/// A probe of the mechanism behind a finding: its runs repeated on the
/// generic profile with one setting at each value of its sourced range.
/// It shows where in that range the claimed effect appears, so a FAIL with
/// the profile's own value can be read against the mechanism; it never
/// changes the verdict.
#[derive(Clone, Copy, Debug)]
pub struct Sensitivity {
    /// The setting, as `--set` names it (for example
    /// `device.map_cache.entries`).
    pub key: &'static str,
    /// The values tried, in order, as `--set` text.
    pub values: &'static [&'static str],
    /// The range the values span and where it comes from.
    pub range: &'static str,
    /// What the setting does to the mechanism, in a sentence or two.
    pub mechanism: &'static str,
}

/// A finding measured on one profile.
#[derive(Clone, Debug)]
pub struct Measure {
    /// Whether the claim holds on this profile.
    pub pass: bool,
    /// The numbers the verdict rests on, one line.
    pub summary: String,
    /// Quantities: published beside simulated.
    pub table: Vec<Quantity>,
    /// The CSV rows (without the profile column).
    pub csv: Vec<Vec<String>>,
    /// The panels of the figure (titles without the profile).
    pub panels: Vec<Panel>,
}

/// One quantity of the measured-vs-simulated table.
#[derive(Clone, Debug)]
pub struct Quantity {
    /// What it is, with its unit.
    pub name: String,
    /// What the paper reports (a number, band or ordering; `—` when it
    /// gives none).
    pub published: String,
    /// What the simulator gives.
    pub simulated: String,
}

impl Quantity {
    /// A row of the table.
    pub fn new(name: &str, published: &str, simulated: String) -> Quantity {
        Quantity {
            name: name.into(),
            published: published.into(),
            simulated,
        }
    }
}

/// The number at dotted `path` of a run's report.
pub fn num(run: &RunOutput, path: &str) -> Result<f64> {
    crate::plot::inputs::number(&run.report, path, &run.label)
}

/// A value for a CSV cell (shortest text that reads back the same f64).
pub fn cell(v: f64) -> String {
    format!("{v}")
}
