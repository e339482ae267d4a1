//! `simctl reproduce`: regenerate the seed papers' findings on each
//! profile, each as a figure (PNG + SVG), the data behind it (CSV) and a
//! verdict computed from the run outputs, plus one self-contained report
//! page (`index.html`).
//!
//! Each finding is one module of [`findings`], implementing
//! [`finding::Finding`]: the runs it needs and how their reports and
//! request logs become a verdict. The distinct runs of every selected
//! finding on every profile run once each, in parallel, and are collected in
//! a fixed order: the outputs are byte-identical for any `--jobs`.

mod finding;
mod findings;
mod page;
mod profile;
mod runner;
mod sensitivity;

use crate::cli::ReproduceArgs;
use crate::output::Stdout;
use anyhow::{Context, Result};
use finding::{Finding, Measure};
use mmcsim::config::{parse_set, Scenario};
use mmcsim::sched::Registry;
use profile::Profile;
use runner::{Job, RunOutput};
use std::io::Write;
use std::process::ExitCode;

/// What was asked, checked before anything runs.
struct Plan {
    findings: Vec<&'static dyn Finding>,
    profiles: Vec<Profile>,
    /// Distinct runs, in first-use order (finding, profile, spec).
    jobs: Vec<Job>,
    scenarios: Vec<Scenario>,
    /// For each finding, the profiles it runs on (indices into
    /// `profiles`), each with the indices of its runs in `jobs`.
    uses: Vec<Vec<(usize, Vec<usize>)>>,
    /// Findings left out because none of the profiles is one they are
    /// about (only when the findings were not named).
    not_run: Vec<NotRun>,
    user_sets: Vec<(String, String)>,
    /// For each finding, its sensitivity probe: `None` when it has none,
    /// `Some(Err(why))` when it cannot run here.
    probes: Vec<Option<std::result::Result<Probe, String>>>,
}

/// A finding's sensitivity probe as planned: the profile it runs on and,
/// for each value of the setting, the indices of its runs in `jobs`.
struct Probe {
    profile: usize,
    rows: Vec<(&'static str, Vec<usize>)>,
}

/// A finding that did not run, and why.
pub struct NotRun {
    number: u32,
    title: &'static str,
    reason: String,
}

/// Runs `simctl reproduce`: exit 0 when every selected finding passes, 1
/// when one fails, 2 on unusable input.
pub fn reproduce(a: &ReproduceArgs, registry: &Registry, out: &mut Stdout) -> Result<ExitCode> {
    let plan = match plan(a, registry) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e:#}");
            return Ok(ExitCode::from(2));
        }
    };
    crate::output::create_dir("--out", &a.out)?;
    for n in &plan.not_run {
        eprintln!("note: finding-{} not run: {}", n.number, n.reason);
    }
    let bar = crate::compare::progress_bar(plan.jobs.len() as u64);
    let work = |(job, sc): (&Job, Scenario)| -> Result<RunOutput> {
        let r = runner::run(sc, &job.spec, &plan.profiles[job.profile].name, registry);
        bar.inc(1);
        r
    };
    let items: Vec<(&Job, Scenario)> = plan.jobs.iter().zip(plan.scenarios.clone()).collect();
    let outputs = crate::compare::parallel(items, a.jobs, work)?;
    bar.finish_and_clear();
    let outputs = outputs.into_iter().collect::<Result<Vec<_>>>()?;

    let mut sections = Vec::new();
    let mut all_pass = true;
    for ((f, uses), probe) in plan.findings.iter().zip(&plan.uses).zip(&plan.probes) {
        let mut measures = Vec::new();
        for (p, idx) in uses {
            let p = &plan.profiles[*p];
            let runs: Vec<&RunOutput> = idx.iter().map(|&i| &outputs[i]).collect();
            let m = f
                .measure(&runs)
                .with_context(|| format!("finding-{} on {}", f.about().number, p.name))?;
            measures.push((p, m, runs));
        }
        let mut s = write_finding(*f, &measures, &plan.user_sets, &a.out)?;
        if let (Some(sens), Some(probe)) = (f.sensitivity(), probe) {
            s.sensitivity = Some(sensitivity::measure(
                *f,
                sens,
                probe,
                &plan.profiles,
                &outputs,
                &a.out,
            )?);
        }
        writeln!(out, "{}", s.verdict_line())?;
        if let Some(line) = s.sensitivity.as_ref().map(sensitivity::Outcome::line) {
            writeln!(out, "{line}")?;
        }
        all_pass &= s.pass;
        sections.push(s);
    }
    let version = outputs
        .first()
        .and_then(|o| o.report["mmcsim_version"].as_str())
        .unwrap_or(env!("CARGO_PKG_VERSION"))
        .to_string();
    let html = page::render(&page::Page {
        version,
        command: command_line(a),
        profiles: &plan.profiles,
        sections: &sections,
        not_run: &plan.not_run,
    });
    let index = a.out.join("index.html");
    crate::output::write_file(&index, html.as_bytes())?;
    writeln!(out, "report page: {}", index.display())?;
    Ok(if all_pass {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Selects findings and profiles, builds the distinct runs and loads
/// their scenarios; every error here is unusable input.
fn plan(a: &ReproduceArgs, registry: &Registry) -> Result<Plan> {
    let all = findings::all();
    let mut selected: Vec<&'static dyn Finding> = Vec::new();
    for want in &a.findings {
        let n = want.strip_prefix("finding-").unwrap_or(want);
        let f = all
            .iter()
            .find(|f| f.about().number.to_string() == n)
            .with_context(|| {
                let known: Vec<String> = all.iter().map(|f| f.about().number.to_string()).collect();
                format!(
                    "unknown finding `{want}`; known: {} (or finding-N)",
                    known.join(", ")
                )
            })?;
        if !selected
            .iter()
            .any(|s| s.about().number == f.about().number)
        {
            selected.push(*f);
        }
    }
    if selected.is_empty() {
        selected = all;
    }
    selected.sort_by_key(|f| f.about().number);
    let profiles =
        profile::resolve(&a.phones, &a.configs.join("phones")).map_err(anyhow::Error::msg)?;
    let user_sets = a
        .set
        .iter()
        .map(|s| parse_set(s))
        .collect::<mmcsim::Result<Vec<_>>>()?;
    let mut jobs: Vec<Job> = Vec::new();
    let mut uses = Vec::new();
    let mut not_run = Vec::new();
    let mut run = Vec::new();
    let mut probes = Vec::new();
    for f in selected {
        let about = f.about();
        let applies: Vec<usize> = (0..profiles.len())
            .filter(|&p| {
                f.only_on()
                    .is_none_or(|o| o.contains(&profiles[p].name.as_str()))
            })
            .collect();
        if applies.is_empty() {
            let only = f.only_on().unwrap_or_default();
            let given: Vec<&str> = profiles.iter().map(|p| p.name.as_str()).collect();
            let reason = format!(
                "it is about the phone measured ({}), which is not among the profiles ({}); add --phone {}",
                only.join(", "),
                given.join(", "),
                only.first().copied().unwrap_or("NAME")
            );
            if a.findings.is_empty() {
                not_run.push(NotRun {
                    number: about.number,
                    title: about.title,
                    reason,
                });
                continue;
            }
            anyhow::bail!("finding-{}: {reason}", about.number);
        }
        run.push(f);
        let mut add = |job: Job| match jobs.iter().position(|j| *j == job) {
            Some(i) => i,
            None => {
                jobs.push(job);
                jobs.len() - 1
            }
        };
        let mut per_profile = Vec::new();
        for &p in &applies {
            let idx = f
                .runs(registry)
                .into_iter()
                .map(|spec| add(Job { profile: p, spec }))
                .collect();
            per_profile.push((p, idx));
        }
        uses.push(per_profile);
        probes.push(f.sensitivity().map(|sens| {
            let generic = applies
                .iter()
                .copied()
                .find(|&p| profiles[p].name == profile::GENERIC)
                .ok_or_else(|| {
                    format!(
                        "it runs on the {} profile, which is not among those selected",
                        profile::GENERIC
                    )
                })?;
            if user_sets.iter().any(|(k, _)| k == sens.key) {
                return Err(format!("--set {} fixes the setting it varies", sens.key));
            }
            let rows = sens
                .values
                .iter()
                .map(|&v| {
                    let idx = f
                        .runs(registry)
                        .into_iter()
                        .map(|mut spec| {
                            spec.sets.push((sens.key.to_string(), v.to_string()));
                            add(Job {
                                profile: generic,
                                spec,
                            })
                        })
                        .collect();
                    (v, idx)
                })
                .collect();
            Ok(Probe {
                profile: generic,
                rows,
            })
        }));
    }
    let scenarios = jobs
        .iter()
        .map(|j| {
            runner::scenario(j, &profiles, &a.configs, &user_sets)
                .with_context(|| format!("{}: {}", profiles[j.profile].name, j.spec.describe()))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Plan {
        findings: run,
        profiles,
        jobs,
        scenarios,
        uses,
        not_run,
        user_sets,
        probes,
    })
}

/// The command line that reproduces the outputs (`--jobs` left out: it
/// changes nothing in them).
fn command_line(a: &ReproduceArgs) -> String {
    let mut c = vec!["simctl".to_string(), "reproduce".to_string()];
    c.extend(a.findings.iter().cloned());
    for p in &a.phones {
        c.push(format!("--phone {p}"));
    }
    for s in &a.set {
        c.push(format!("--set {s}"));
    }
    c.push(format!("--out {}", a.out.display()));
    if a.configs != std::path::Path::new("configs") {
        c.push(format!("--configs {}", a.configs.display()));
    }
    c.join(" ")
}

/// A finding's outcome over every profile, as written and shown.
pub struct Section {
    number: u32,
    title: &'static str,
    source: &'static str,
    claim: &'static str,
    /// Where the paper measured (and the verdict is judged).
    boundary: finding::Boundary,
    note: Option<&'static str>,
    pass: bool,
    measured: String,
    /// `(profile, quantity)` rows.
    table: Vec<(String, finding::Quantity)>,
    /// `(profile, run description)` of every run used.
    runs: Vec<(String, String, String)>,
    svg: String,
    omitted: Vec<String>,
    /// The sensitivity probe's outcome, when one ran or was skipped.
    sensitivity: Option<sensitivity::Outcome>,
}

impl Section {
    fn verdict_line(&self) -> String {
        format!(
            "{} finding-{}: {} — {}",
            sensitivity::verdict(self.pass),
            self.number,
            self.claim,
            self.measured
        )
    }
}

/// The file system a run's report says it ran on: `fuse over ext4 (N
/// daemon threads)`, `vfat`, `ext4`, or `none (raw file)`.
fn file_system(rep: &serde_json::Value) -> String {
    let fs = &rep["fs"];
    if let Some(fuse) = fs.get("fuse") {
        return format!(
            "fuse over {} ({} daemon threads)",
            fuse["lower"].as_str().unwrap_or("?"),
            fuse["daemon_threads"]
        );
    }
    fs["config"]["type"]
        .as_str()
        .unwrap_or("none (raw file)")
        .to_string()
}

/// Writes finding-N.{png,svg,csv} and returns its section.
fn write_finding(
    f: &dyn Finding,
    measures: &[(&Profile, Measure, Vec<&RunOutput>)],
    user_sets: &[(String, String)],
    dir: &std::path::Path,
) -> Result<Section> {
    let n = f.about().number;
    let many = measures.len() > 1;
    let mut panels = Vec::new();
    let mut csv = csv::Writer::from_writer(Vec::new());
    let mut header = vec!["profile"];
    header.extend_from_slice(f.about().csv_header);
    csv.write_record(&header)?;
    let mut table = Vec::new();
    let mut runs = Vec::new();
    let mut summaries = Vec::new();
    for (p, m, rs) in measures {
        for mut panel in m.panels.clone() {
            let title = match &mut panel {
                crate::plot::Panel::Bars(b) => &mut b.title,
                crate::plot::Panel::Xy(x) => &mut x.title,
            };
            *title = format!("{}: {title}", p.name);
            panels.push(panel);
        }
        for row in &m.csv {
            csv.write_record(
                std::iter::once(p.name.as_str()).chain(row.iter().map(String::as_str)),
            )?;
        }
        table.extend(m.table.iter().map(|q| (p.name.clone(), q.clone())));
        for r in rs {
            let rep = &r.report;
            let sets: Vec<String> = user_sets.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let extra = if sets.is_empty() {
                String::new()
            } else {
                format!(" (then --set {})", sets.join(" "))
            };
            runs.push((
                p.name.clone(),
                format!("{}{extra}", r.run),
                format!(
                    "device {}, host {}, file system {}, scheduler {}, seed {}",
                    rep["device_profile"]["name"].as_str().unwrap_or("?"),
                    rep["host"]["profile"].as_str().unwrap_or("static model"),
                    file_system(rep),
                    rep["scheduler"]["name"].as_str().unwrap_or("?"),
                    rep["run"]["seed"]
                ),
            ));
        }
        let verdict = if m.pass { "" } else { " [fails]" };
        summaries.push(if many {
            format!("{}: {}{verdict}", p.name, m.summary)
        } else {
            m.summary.clone()
        });
    }
    let figure = crate::plot::Figure::new(format!("Finding {n}: {}", f.about().title), panels)?;
    let prefix = dir.join(format!("finding-{n}"));
    let svg = figure.write_both_at(&prefix)?;
    let bytes = csv.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?;
    crate::output::write_file(&prefix.with_extension("csv"), &bytes)?;
    Ok(Section {
        number: n,
        title: f.about().title,
        source: f.about().source,
        claim: f.about().claim,
        boundary: f.about().boundary,
        note: f.note(),
        pass: measures.iter().all(|(_, m, _)| m.pass),
        measured: summaries.join("; "),
        table,
        runs,
        svg,
        omitted: figure.omitted.clone(),
        sensitivity: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(findings: &[&str], phones: &[&str]) -> ReproduceArgs {
        ReproduceArgs {
            findings: findings.iter().map(|s| s.to_string()).collect(),
            phones: phones.iter().map(|s| s.to_string()).collect(),
            set: Vec::new(),
            out: "unused".into(),
            jobs: Some(1),
            configs: std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("configs"),
        }
    }

    /// Finding 7 is about the Moto G: on other profiles it does not run,
    /// said on the page and on stderr when the findings were not named, an
    /// error when it was.
    #[test]
    fn a_finding_about_one_phone_runs_only_there() {
        let reg = mmcsim::sched::builtin();
        let p = plan(&args(&[], &["generic"]), &reg).unwrap();
        assert!(p.findings.iter().all(|f| f.about().number != 7));
        assert_eq!(p.not_run.len(), 1);
        assert_eq!(p.not_run[0].number, 7);
        assert!(
            p.not_run[0].reason.contains("add --phone motog-2013"),
            "{}",
            p.not_run[0].reason
        );

        let e = plan(&args(&["7"], &["generic"]), &reg)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("finding-7") && e.contains("motog-2013"), "{e}");

        let p = plan(&args(&["3", "7"], &["motog-2013", "generic"]), &reg).unwrap();
        let names = |uses: &[(usize, Vec<usize>)]| -> Vec<String> {
            uses.iter()
                .map(|(i, _)| p.profiles[*i].name.clone())
                .collect()
        };
        assert_eq!(names(&p.uses[0]), ["motog-2013", "generic"], "finding 3");
        assert_eq!(names(&p.uses[1]), ["motog-2013"], "finding 7");
        assert_eq!(p.uses[1][0].1.len(), 9, "nine schedulers");
        assert!(p.not_run.is_empty());
    }

    /// The seed micro-benchmarks (findings 1-5) run on each phone's
    /// benchmark file system, as the papers did (Nexus S on VFAT, Nexus 7 on
    /// FUSE over ext4); the generic profile and a phone without
    /// `benchmark_fs` keep the raw file, and finding 6 keeps its own.
    #[test]
    fn seed_benchmarks_run_on_the_phones_benchmark_file_system() {
        use mmcsim::host::fs::FsType;
        let reg = mmcsim::sched::builtin();
        let p = plan(
            &args(
                &["1", "2", "3", "6"],
                &["nexus-s", "nexus7-2012", "motog-2013", "generic"],
            ),
            &reg,
        )
        .unwrap();
        for (job, sc) in p.jobs.iter().zip(&p.scenarios) {
            let profile = &p.profiles[job.profile];
            let fs = sc.fs.as_ref().map(|f| f.fs_type);
            let want = if job.spec.on_benchmark_fs {
                match profile.name.as_str() {
                    "nexus-s" => Some(FsType::Vfat),
                    "nexus7-2012" => Some(FsType::Fuse),
                    _ => None,
                }
            } else {
                None
            };
            assert_eq!(fs, want, "{}: {}", profile.name, job.spec.describe());
        }
        assert!(p.jobs.iter().any(|j| j.spec.on_benchmark_fs));
        assert!(p.jobs.iter().any(|j| !j.spec.on_benchmark_fs), "finding 6");
    }
}
