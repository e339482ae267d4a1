//! The objective of `simctl calibrate`: run every target's scenario (under
//! each of its schedulers) with a parameter vector and sum the weighted
//! squared relative errors.
//!
//! Runs of one evaluation go in parallel (rayon) and are collected in
//! target order, so the value does not depend on the number of threads.
//! Evaluations are cached by the (rounded) parameter values: the search
//! never runs the same point twice.

use super::params::Param;
use super::targets::{metric, Goal, Target};
use crate::reproduce::single;
use anyhow::{anyhow, Context, Result};
use mmcsim::config::Scenario;
use mmcsim::sched::Registry;
use mmcsim::sim::{RunOptions, Simulation};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// One run of one target.
#[derive(Clone, Debug)]
pub struct Row {
    /// Index of the target.
    pub target: usize,
    /// Scheduler the run used, when the target names schedulers.
    pub scheduler: Option<String>,
    /// The metric's value in the run's report.
    pub achieved: f64,
    /// Signed relative error against the measurement.
    pub relative_error: f64,
}

/// The outcome of one parameter vector.
#[derive(Clone, Debug)]
pub struct Evaluation {
    /// Parameter values, as written to the profile.
    pub x: Vec<f64>,
    /// Every run, in target then scheduler order.
    pub rows: Vec<Row>,
    /// Σ over targets of weight × mean over its runs of relative error².
    pub objective: f64,
}

/// The calibration problem: targets, free parameters, the overrides that
/// select the profile, and the evaluation cache.
pub struct Problem<'a> {
    /// Measurements to reproduce.
    pub targets: &'a [Target],
    /// Free parameters.
    pub params: &'a [Param],
    /// Overrides applied before the parameters (profile selection).
    pub base_sets: Vec<(String, String)>,
    /// Schedulers.
    pub registry: &'a Registry,
    /// The phone file calibrated, if a phone (finding targets run on it).
    pub phone: Option<std::path::PathBuf>,
    /// The tree's `configs` folder (finding targets run its scenarios).
    pub configs: std::path::PathBuf,
    cache: Mutex<BTreeMap<Vec<u64>, Arc<Evaluation>>>,
}

impl<'a> Problem<'a> {
    /// A problem with an empty cache.
    pub fn new(
        targets: &'a [Target],
        params: &'a [Param],
        base_sets: Vec<(String, String)>,
        registry: &'a Registry,
    ) -> Problem<'a> {
        Problem {
            targets,
            params,
            base_sets,
            registry,
            phone: None,
            configs: std::path::PathBuf::from("configs"),
            cache: Mutex::new(BTreeMap::new()),
        }
    }

    /// Distinct parameter vectors evaluated so far.
    pub fn evaluations(&self) -> usize {
        self.cache.lock().expect("cache lock").len()
    }

    /// Parameter values at search coordinates `u`.
    pub fn x_of(&self, u: &[f64]) -> Vec<f64> {
        self.params
            .iter()
            .zip(u)
            .map(|(p, &u)| p.at_unit(u))
            .collect()
    }

    /// Evaluates the parameter values `x` (cached).
    pub fn evaluate(&self, x: &[f64]) -> Result<Arc<Evaluation>> {
        let key: Vec<u64> = x.iter().map(|v| v.to_bits()).collect();
        if let Some(e) = self.cache.lock().expect("cache lock").get(&key) {
            return Ok(e.clone());
        }
        let mut sets = self.base_sets.clone();
        for (p, &v) in self.params.iter().zip(x) {
            sets.push((p.key.clone(), p.text(v)));
        }
        let runs: Vec<(usize, Option<&String>)> = self
            .targets
            .iter()
            .enumerate()
            .filter(|(_, t)| !matches!(t.goal, Goal::Finding(_)))
            .flat_map(|(i, t)| {
                if t.schedulers.is_empty() {
                    vec![(i, None)]
                } else {
                    t.schedulers.iter().map(|s| (i, Some(s))).collect()
                }
            })
            .collect();
        // Targets that read different metrics of one scenario under one
        // scheduler (AndroBench's seven numbers) share its simulation.
        let mut sims: Vec<(usize, Option<&String>)> = Vec::new();
        let sim_of: Vec<usize> = runs
            .iter()
            .map(|&(i, s)| {
                let same = |&(j, t): &(usize, Option<&String>)| {
                    self.targets[j].scenario == self.targets[i].scenario && t == s
                };
                sims.iter().position(same).unwrap_or_else(|| {
                    sims.push((i, s));
                    sims.len() - 1
                })
            })
            .collect();
        let reports = sims
            .into_par_iter()
            .map(|(i, s)| self.simulate(i, s, &sets))
            .collect::<Result<Vec<serde_json::Value>>>()?;
        let mut rows = runs
            .iter()
            .zip(&sim_of)
            .map(|(&(i, s), &k)| self.row(i, s, &reports[k]))
            .collect::<Result<Vec<Row>>>()?;
        let findings: Vec<(usize, u32)> = self
            .targets
            .iter()
            .enumerate()
            .filter_map(|(i, t)| match t.goal {
                Goal::Finding(n) => Some((i, n)),
                _ => None,
            })
            .collect();
        let finding_rows = findings
            .into_par_iter()
            .map(|(i, n)| self.finding_row(i, n, &params_only(&sets, self.base_sets.len())))
            .collect::<Result<Vec<Row>>>()?;
        rows.extend(finding_rows);
        rows.sort_by_key(|r| r.target);
        let mut objective = 0.0;
        for (i, t) in self.targets.iter().enumerate() {
            let mine: Vec<&Row> = rows.iter().filter(|r| r.target == i).collect();
            let mean = mine
                .iter()
                .map(|r| r.relative_error * r.relative_error)
                .sum::<f64>()
                / mine.len() as f64;
            objective += t.weight * mean;
        }
        let e = Arc::new(Evaluation {
            x: x.to_vec(),
            rows,
            objective,
        });
        self.cache
            .lock()
            .expect("cache lock")
            .insert(key, e.clone());
        Ok(e)
    }

    /// Where target `i` under `scheduler` runs, for messages.
    fn at(&self, i: usize, scheduler: Option<&String>) -> String {
        let t = &self.targets[i];
        format!(
            "target `{}` ({}{})",
            t.name,
            t.scenario_text,
            scheduler
                .map(|s| format!(", scheduler {s}"))
                .unwrap_or_default()
        )
    }

    /// Runs target `i`'s scenario under `scheduler` with `sets`; returns
    /// the report as JSON.
    fn simulate(
        &self,
        i: usize,
        scheduler: Option<&String>,
        sets: &[(String, String)],
    ) -> Result<serde_json::Value> {
        let mut sets = sets.to_vec();
        if let Some(s) = scheduler {
            sets.push(("scheduler.name".into(), s.clone()));
        }
        let at = || self.at(i, scheduler);
        let sc = Scenario::load(&self.targets[i].scenario, &sets).with_context(at)?;
        let report = Simulation::with_registry(sc, self.registry)
            .and_then(|s| s.run(RunOptions::default()))
            .with_context(at)?;
        serde_json::from_str(&report.to_json()).context("reading the run's report")
    }

    /// Target `i`'s row: finding `n` run once on the profile with the
    /// parameters `sets`, scored by the root mean square of its checks'
    /// hinges ([`single::shortfall`]).
    fn finding_row(&self, i: usize, n: u32, sets: &[(String, String)]) -> Result<Row> {
        let on = match &self.phone {
            Some(p) => single::On::Phone(p),
            None => single::On::Device(&self.base_sets),
        };
        let checks = single::run_finding(n, on, sets, &self.configs, self.registry)
            .with_context(|| self.at(i, None))?;
        let mean_sq = checks
            .iter()
            .map(|c| single::shortfall(c).powi(2))
            .sum::<f64>()
            / checks.len().max(1) as f64;
        Ok(Row {
            target: i,
            scheduler: None,
            achieved: mean_sq.sqrt(),
            relative_error: mean_sq.sqrt(),
        })
    }

    /// Target `i`'s row under `scheduler`, read from the run's `json`.
    fn row(&self, i: usize, scheduler: Option<&String>, json: &serde_json::Value) -> Result<Row> {
        let t = &self.targets[i];
        let achieved =
            metric(json, &t.metric).map_err(|m| anyhow!("{}: {m}", self.at(i, scheduler)))?;
        let measured = t
            .goal
            .measured(scheduler.map(String::as_str))
            .with_context(|| {
                format!(
                    "{}: no measured value for this scheduler",
                    self.at(i, scheduler)
                )
            })?;
        Ok(Row {
            target: i,
            scheduler: scheduler.cloned(),
            achieved,
            relative_error: measured.relative_error(achieved),
        })
    }
}

/// The fitted parameters' overrides: `sets` after the first `base`
/// (the profile's own).
fn params_only(sets: &[(String, String)], base: usize) -> Vec<(String, String)> {
    sets[base.min(sets.len())..].to_vec()
}

/// The cost the search minimises, at search coordinates: the objective at
/// the clamped, rounded point plus the squared distance outside the unit
/// box (which steers the simplex back inside the bounds).
pub struct Cost<'p, 'a>(pub &'p Problem<'a>);

impl argmin::core::CostFunction for Cost<'_, '_> {
    type Param = Vec<f64>;
    type Output = f64;

    fn cost(&self, u: &Vec<f64>) -> std::result::Result<f64, argmin::core::Error> {
        let outside: f64 = u.iter().map(|&v| (v - v.clamp(0.0, 1.0)).powi(2)).sum();
        let e = self.0.evaluate(&self.0.x_of(u))?;
        Ok(e.objective + outside)
    }
}
