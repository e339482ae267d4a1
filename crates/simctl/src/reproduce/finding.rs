//! What a finding is: the runs it needs on one profile, and how it turns
//! their outputs into a verdict, numbers, a figure and a CSV.

use super::runner::{RunOutput, RunSpec};
pub use super::verdict::Side;
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
    /// Where the paper measured: the verdict is judged at the same point.
    pub boundary: Boundary,
    /// The columns of its CSV after `profile`.
    pub csv_header: &'static [&'static str],
}

/// Where a paper drew the line around what it timed. A finding is judged
/// on quantities taken at its paper's boundary, and the page names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Boundary {
    /// Inside the benchmark's own calls: its timers around each call or
    /// the whole run (the seed papers' micro-benchmarks, AndroBench's own
    /// timer placement). Device time is not separated from the rest.
    AppCalls,
    /// The MMC request log: a request's device time from its start on the
    /// bus to its completion (the seed papers' Fig. 4/5). Only reads are
    /// analysed, which no CMD13 polling follows.
    MmcRequest,
    /// Device time is the data command only: from the MMC core handing the
    /// request to the host driver (MSHCI) until its completion interrupt;
    /// the Linux 3.x CMD13 polling until the card leaves PRG that follows
    /// is host time (the Galaxy S II study). Report keys
    /// `breakdown_us.device_data_cmd` and `device_response_us.data_cmd`.
    DataCommand,
}

impl Boundary {
    /// The boundary in a sentence, as the page shows it.
    pub fn describe(self) -> &'static str {
        match self {
            Boundary::AppCalls => "inside the benchmark's own calls (its timers around each call or the run): whole-call latency and throughput, device time not separated",
            Boundary::MmcRequest => "the MMC request log: device time from a request's start on the bus to its completion (reads only, so no CMD13 busy polling)",
            Boundary::DataCommand => "device = the data command only, from the MMC core handing the request to the host driver until its completion interrupt; the CMD13 busy polling after a write counts as host time (breakdown_us.device_data_cmd, device_response_us.data_cmd)",
        }
    }

    /// Report key of the mean device time per call at this boundary.
    pub fn device_key(self) -> &'static str {
        match self {
            Boundary::DataCommand => "breakdown_us.device_data_cmd",
            Boundary::AppCalls | Boundary::MmcRequest => "breakdown_us.device",
        }
    }

    /// Report key of the mean device response time per device request at
    /// this boundary.
    pub fn device_response_key(self) -> &'static str {
        match self {
            Boundary::DataCommand => "device_response_us.data_cmd",
            Boundary::AppCalls | Boundary::MmcRequest => "device_response_us.mean",
        }
    }

    /// Host software's share of a run's mean call latency at this
    /// boundary: everything but the device time it counts.
    pub fn host_share(self, run: &RunOutput) -> Result<f64> {
        let total = num(run, "breakdown_us.total")?;
        let device = num(run, self.device_key())?;
        Ok(if total > 0.0 {
            (total - device) / total
        } else {
            0.0
        })
    }
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
    /// Why the verdict is judged with the CPU clock pinned
    /// (`host.governor=performance`), when the finding also runs with it
    /// pinned beside the free-clock runs; `None`: it runs as configured
    /// only. With the clock pinned the governor cannot settle at different
    /// clocks for the runs compared; the free-clock result beside it is the
    /// governor's contribution.
    fn pinned_verdict(&self) -> Option<&'static str> {
        None
    }
    /// Whether the finding runs on the generic profile (the scenarios as
    /// written); `Err(why)` when the scenario it runs names a phone's
    /// part, so a `generic` row would be that phone again.
    fn on_generic(&self) -> std::result::Result<(), &'static str> {
        Ok(())
    }
}

/// Whether a verdict rests on measurements the profile was fitted to, as
/// the profile's `[fit] targets` record it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Label {
    /// The profile was calibrated against this measurement or finding
    /// (`simctl calibrate`, recorded in its `[fit] targets`): agreement
    /// shows the fit, not a reproduction.
    Fitted,
    /// Nothing was fitted to them: a prediction.
    Predicted,
}

impl Label {
    /// `fitted` or `predicted`.
    pub fn name(self) -> &'static str {
        match self {
            Label::Fitted => "fitted",
            Label::Predicted => "predicted",
        }
    }
}

/// One quantity a finding judges, from one seed's runs.
#[derive(Clone, Debug)]
pub struct Check {
    /// The claim about the quantity, with its unit, as the verdict line
    /// shows it (e.g. `sequential / random 4 KiB read IOPS ≥ 3`).
    pub claim: String,
    /// The paper's side of the threshold.
    pub side: Side,
    /// The quantity in this seed.
    pub value: f64,
    /// Fitted or predicted: predicted as measured, then labelled from
    /// the profile's `[fit] targets` ([`Check::labelled`]).
    pub label: Label,
    /// The published measurement the check compares against, as a fit
    /// target names it (`TABLE:METRIC`), when there is one.
    pub measures: Option<String>,
}

impl Check {
    /// A predicted check.
    pub fn predicted(claim: impl Into<String>, side: Side, value: f64) -> Check {
        Check {
            claim: claim.into(),
            side,
            value,
            label: Label::Predicted,
            measures: None,
        }
    }

    /// The same check comparing against the published measurement
    /// `TABLE:METRIC`.
    pub fn measuring(mut self, target: String) -> Check {
        self.measures = Some(target);
        self
    }

    /// The check of finding `number` labelled from `fit_targets` (a
    /// profile's `[fit] targets`): fitted when they name the finding or the
    /// measurement the check compares against, else predicted.
    pub fn labelled(mut self, number: u32, fit_targets: &[String]) -> Check {
        let finding = format!("finding-{number}");
        let fitted = fit_targets
            .iter()
            .any(|t| *t == finding || Some(t) == self.measures.as_ref());
        self.label = if fitted {
            Label::Fitted
        } else {
            Label::Predicted
        };
        self
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
    /// The quantities judged, in this seed (the verdict is judged over
    /// the seeds; the first check is the finding's main quantity).
    pub checks: Vec<Check>,
    /// The numbers of this seed, one line.
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
