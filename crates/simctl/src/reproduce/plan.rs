//! What `simctl reproduce` will run, checked before anything runs: the
//! findings and profiles selected, and every distinct run (finding's spec
//! × profile × seed × clock), deduplicated in first-use order with its
//! scenario loaded. Every error here is unusable input.

use super::finding::Finding;
use super::profile::{self, Profile};
use super::runner::{self, RunSpec};
use super::sets::Reach;
use super::{findings, NotRun};
use crate::cli::ReproduceArgs;
use anyhow::{bail, Context, Result};
use mmcsim::config::{parse_set, Scenario};
use mmcsim::platform::governor::GovernorKind;
use mmcsim::sched::Registry;

/// The setting that pins the CPU clock: the performance governor keeps
/// the highest frequency of the host's table.
pub const PIN: (&str, &str) = ("host.governor", "performance");

/// The clock a set of runs had.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockKind {
    /// Pinned at the top of the frequency table ([`PIN`]).
    Pinned,
    /// The profile's own governor, free to move.
    Free,
    /// A host whose clock cannot move (the static model, or a userspace,
    /// performance or powersave governor): pinned and free are the same
    /// runs.
    Fixed,
}

/// One simulation to run.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    /// Index of the profile.
    pub profile: usize,
    /// What to run.
    pub spec: RunSpec,
    /// Its seed (`--set seed=`).
    pub seed: u64,
    /// Whether the clock is pinned ([`PIN`], after every other setting).
    pub pinned: bool,
}

/// The runs of one clock: per seed (1..=N), the indices of the finding's
/// runs in `Plan::jobs`.
pub struct ClockRuns {
    /// The clock.
    pub clock: ClockKind,
    /// `seeds[i]`: the job indices of seed `i + 1`, in the finding's order.
    pub seeds: Vec<Vec<usize>>,
}

/// A finding's runs on one profile: the verdict's clock first.
pub struct ProfileRuns {
    /// Index of the profile.
    pub profile: usize,
    /// The clocks, the verdict's first.
    pub clocks: Vec<ClockRuns>,
}

/// A finding's sensitivity probe as planned: the profile it runs on and,
/// for each value of the setting, the indices of its runs (seed 1) in
/// `jobs`.
pub struct Probe {
    /// Index of the profile.
    pub profile: usize,
    /// `(value, job indices)`.
    pub rows: Vec<(&'static str, Vec<usize>)>,
}

/// Everything `reproduce` runs and how it is put together.
pub struct Plan {
    /// The findings that run, in number order.
    pub findings: Vec<&'static dyn Finding>,
    /// The profiles selected.
    pub profiles: Vec<Profile>,
    /// Seeds per comparison.
    pub seeds: u32,
    /// Distinct runs, in first-use order.
    pub jobs: Vec<Job>,
    /// The scenario of each job.
    pub scenarios: Vec<Scenario>,
    /// For each finding, its runs on each profile it runs on.
    pub uses: Vec<Vec<ProfileRuns>>,
    /// Findings (or finding-profile pairs) left out, and why.
    pub not_run: Vec<NotRun>,
    /// The user's `--set` pairs.
    pub user_sets: Vec<(String, String)>,
    /// For each finding, its sensitivity probe: `None` when it has none,
    /// `Some(Err(why))` when it cannot run here.
    pub probes: Vec<Option<std::result::Result<Probe, String>>>,
    /// The user's `--set` pairs left out of some findings' runs (their
    /// scenarios have no part for them), one note each.
    pub set_notes: Vec<String>,
}

/// The distinct jobs and their scenarios, as they are added.
struct Jobs<'a> {
    jobs: Vec<Job>,
    scenarios: Vec<Scenario>,
    /// Per job, the user's pairs its scenario had no part for.
    skipped: Vec<Vec<(usize, String)>>,
    profiles: &'a [Profile],
    a: &'a ReproduceArgs,
    user_sets: &'a [(String, String)],
    /// The finding whose runs are being added.
    finding: u32,
    /// Where the user's pairs applied.
    reach: Reach,
}

impl Jobs<'_> {
    /// The index of `job`, adding it (and loading its scenario) when new.
    fn add(&mut self, job: Job) -> Result<usize> {
        if let Some(i) = self.jobs.iter().position(|j| *j == job) {
            self.reach.record(self.finding, &self.skipped[i]);
            return Ok(i);
        }
        let (sc, skipped) = self.scenario(&job)?;
        self.jobs.push(job);
        self.scenarios.push(sc);
        self.skipped.push(skipped);
        Ok(self.jobs.len() - 1)
    }

    /// The scenario of `job`, loaded with the user's pairs it has a part
    /// for (recorded for the current finding), and the pairs left out.
    fn scenario(&mut self, job: &Job) -> Result<(Scenario, Vec<(usize, String)>)> {
        let profile = &self.profiles[job.profile];
        let context = || format!("{}: {}", profile.name, job.spec.describe());
        let skipped = runner::lacking(profile, &job.spec, &self.a.configs, self.user_sets)
            .with_context(context)?;
        let mut sets: Vec<(String, String)> = self
            .user_sets
            .iter()
            .enumerate()
            .filter(|(i, _)| !skipped.iter().any(|(k, _)| k == i))
            .map(|(_, s)| s.clone())
            .collect();
        sets.push(("seed".into(), job.seed.to_string()));
        if job.pinned {
            sets.push((PIN.0.into(), PIN.1.into()));
        }
        let sc = runner::scenario(
            &job.profile,
            &job.spec,
            self.profiles,
            &self.a.configs,
            &sets,
        )
        .with_context(context)?;
        self.reach.record(self.finding, &skipped);
        Ok((sc, skipped))
    }

    /// Whether the host of `job`'s scenario can change its clock; the job
    /// is added to the runs unless `verdict_only` (then it is not run).
    fn clock_moves(&mut self, job: Job, verdict_only: bool) -> Result<bool> {
        let loaded;
        let sc = if verdict_only {
            loaded = self.scenario(&job)?.0;
            &loaded
        } else {
            let i = self.add(job)?;
            &self.scenarios[i]
        };
        let host = &sc.host;
        Ok(host.freq_table_mhz.len() > 1
            && !matches!(
                host.governor,
                GovernorKind::Userspace | GovernorKind::Performance | GovernorKind::Powersave
            ))
    }

    /// The runs of `f` on profile `p` at one clock, seeds 1..=`seeds`.
    fn clock_runs(
        &mut self,
        f: &dyn Finding,
        registry: &Registry,
        p: usize,
        clock: ClockKind,
        seeds: u32,
    ) -> Result<ClockRuns> {
        let mut per_seed = Vec::new();
        for seed in 1..=u64::from(seeds) {
            let idx = f
                .runs(registry)
                .into_iter()
                .map(|spec| {
                    self.add(Job {
                        profile: p,
                        spec,
                        seed,
                        pinned: clock == ClockKind::Pinned,
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            per_seed.push(idx);
        }
        Ok(ClockRuns {
            clock,
            seeds: per_seed,
        })
    }
}

/// The findings named (or all), in number order.
fn select(a: &ReproduceArgs) -> Result<Vec<&'static dyn Finding>> {
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
    Ok(selected)
}

/// The user's `--set` pairs; the seed and (for pinned runs) the governor
/// are `reproduce`'s own.
fn user_sets(a: &ReproduceArgs) -> Result<Vec<(String, String)>> {
    let sets = a
        .set
        .iter()
        .map(|s| parse_set(s))
        .collect::<mmcsim::Result<Vec<_>>>()?;
    if sets.iter().any(|(k, _)| k == "seed") {
        bail!("--set seed: reproduce sets the seed of every run itself (1..=N, --seeds N)");
    }
    Ok(sets)
}

/// Selects findings and profiles, builds the distinct runs and loads
/// their scenarios.
pub fn plan(a: &ReproduceArgs, registry: &Registry) -> Result<Plan> {
    let profiles =
        profile::resolve(&a.phones, &a.configs.join("phones")).map_err(anyhow::Error::msg)?;
    plan_for(a, registry, profiles, false)
}

/// [`plan`] over the given profiles; with `verdict_only` (an ensemble)
/// each finding runs only at its verdict's clock and without its
/// sensitivity probe.
pub fn plan_for(
    a: &ReproduceArgs,
    registry: &Registry,
    profiles: Vec<Profile>,
    verdict_only: bool,
) -> Result<Plan> {
    if a.seeds == 0 {
        bail!("--seeds 0: expected at least 1 (2 or more give an interval)");
    }
    let selected = select(a)?;
    let user_sets = user_sets(a)?;
    let mut jobs = Jobs {
        jobs: Vec::new(),
        scenarios: Vec::new(),
        skipped: Vec::new(),
        profiles: &profiles,
        a,
        user_sets: &user_sets,
        finding: 0,
        reach: Reach::new(&a.set),
    };
    let (mut uses, mut not_run, mut run, mut probes) = (vec![], vec![], vec![], vec![]);
    for f in selected {
        let about = f.about();
        let Some(applies) = applies(f, &profiles, a, &mut not_run)? else {
            continue;
        };
        run.push(f);
        jobs.finding = about.number;
        let mut per_profile = Vec::new();
        for &p in &applies {
            let mut clocks = Vec::new();
            if f.pinned_verdict().is_some() {
                let first = f
                    .runs(registry)
                    .into_iter()
                    .next()
                    .with_context(|| format!("finding-{} has no runs", about.number))?;
                let moves = jobs.clock_moves(
                    Job {
                        profile: p,
                        spec: first,
                        seed: 1,
                        pinned: false,
                    },
                    verdict_only,
                )?;
                if moves {
                    clocks.push(jobs.clock_runs(f, registry, p, ClockKind::Pinned, a.seeds)?);
                    if !verdict_only {
                        clocks.push(jobs.clock_runs(f, registry, p, ClockKind::Free, a.seeds)?);
                    }
                } else {
                    clocks.push(jobs.clock_runs(f, registry, p, ClockKind::Fixed, a.seeds)?);
                }
            } else {
                clocks.push(jobs.clock_runs(f, registry, p, ClockKind::Free, a.seeds)?);
            }
            per_profile.push(ProfileRuns { profile: p, clocks });
        }
        uses.push(per_profile);
        probes.push(if verdict_only {
            None
        } else {
            probe(f, registry, &applies, &mut jobs)?
        });
    }
    jobs.reach.check()?;
    let set_notes = jobs.reach.notes();
    Ok(Plan {
        findings: run,
        seeds: a.seeds,
        jobs: jobs.jobs,
        scenarios: jobs.scenarios,
        profiles,
        uses,
        not_run,
        user_sets,
        probes,
        set_notes,
    })
}

/// The profiles finding `f` runs on; `None` (with a note) when it runs on
/// none of them and was not named, an error when it was named.
fn applies(
    f: &dyn Finding,
    profiles: &[Profile],
    a: &ReproduceArgs,
    not_run: &mut Vec<NotRun>,
) -> Result<Option<Vec<usize>>> {
    let about = f.about();
    let mut skipped = Vec::new();
    let applies: Vec<usize> = (0..profiles.len())
        .filter(|&p| {
            f.only_on()
                .is_none_or(|o| o.contains(&profiles[p].name.as_str()))
        })
        .filter(|&p| match f.on_generic() {
            Err(why) if profiles[p].name == profile::GENERIC => {
                skipped.push(why);
                false
            }
            _ => true,
        })
        .collect();
    if applies.is_empty() {
        let reason = match (f.only_on(), skipped.first()) {
            (Some(only), _) => {
                let mut given: Vec<&str> = profiles.iter().map(|p| p.name.as_str()).collect();
                given.dedup();
                format!(
                    "it is about the phone measured ({}), which is not among the profiles ({}); add --phone {}",
                    only.join(", "),
                    given.join(", "),
                    only.first().copied().unwrap_or("NAME")
                )
            }
            (None, Some(why)) => why.to_string(),
            (None, None) => "no profile selected".to_string(),
        };
        if a.findings.is_empty() {
            not_run.push(NotRun {
                number: about.number,
                title: about.title,
                profile: None,
                reason,
            });
            return Ok(None);
        }
        bail!("finding-{}: {reason}", about.number);
    }
    for why in skipped {
        not_run.push(NotRun {
            number: about.number,
            title: about.title,
            profile: Some(profile::GENERIC.to_string()),
            reason: why.to_string(),
        });
    }
    Ok(Some(applies))
}

/// The sensitivity probe of `f`, when it has one: its runs on the generic
/// profile (seed 1) at each value of the setting.
fn probe(
    f: &dyn Finding,
    registry: &Registry,
    applies: &[usize],
    jobs: &mut Jobs,
) -> Result<Option<std::result::Result<Probe, String>>> {
    let Some(sens) = f.sensitivity() else {
        return Ok(None);
    };
    let Some(generic) = applies
        .iter()
        .copied()
        .find(|&p| jobs.profiles[p].name == profile::GENERIC)
    else {
        return Ok(Some(Err(format!(
            "it runs on the {} profile, which is not among those selected",
            profile::GENERIC
        ))));
    };
    if jobs.user_sets.iter().any(|(k, _)| k == sens.key) {
        return Ok(Some(Err(format!(
            "--set {} fixes the setting it varies",
            sens.key
        ))));
    }
    let mut rows = Vec::new();
    for &v in sens.values {
        let idx = f
            .runs(registry)
            .into_iter()
            .map(|mut spec| {
                spec.sets.push((sens.key.to_string(), v.to_string()));
                jobs.add(Job {
                    profile: generic,
                    spec,
                    seed: 1,
                    pinned: false,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        rows.push((v, idx));
    }
    Ok(Some(Ok(Probe {
        profile: generic,
        rows,
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(findings: &[&str], phones: &[&str]) -> ReproduceArgs {
        ReproduceArgs {
            findings: findings.iter().map(|s| s.to_string()).collect(),
            phones: phones.iter().map(|s| s.to_string()).collect(),
            set: Vec::new(),
            seeds: 2,
            out: "unused".into(),
            jobs: Some(1),
            configs: std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
                .join("configs"),
            ensemble: None,
            shard: None,
        }
    }

    fn names(p: &Plan, uses: &[ProfileRuns]) -> Vec<String> {
        uses.iter()
            .map(|u| p.profiles[u.profile].name.clone())
            .collect()
    }

    /// Finding 7 is about the Moto G: on other profiles it does not run,
    /// said on the page and on stderr when the findings were not named, an
    /// error when it was.
    #[test]
    fn a_finding_about_one_phone_runs_only_there() {
        let reg = mmcsim::sched::builtin();
        let p = plan(&args(&["1", "7"], &["generic"]), &reg);
        let e = p.err().unwrap().to_string();
        assert!(e.contains("finding-7") && e.contains("motog-2013"), "{e}");

        let p = plan(&args(&["3", "7"], &["motog-2013", "generic"]), &reg).unwrap();
        assert_eq!(
            names(&p, &p.uses[0]),
            ["motog-2013", "generic"],
            "finding 3"
        );
        assert_eq!(names(&p, &p.uses[1]), ["motog-2013"], "finding 7");
        let f7 = &p.uses[1][0].clocks;
        assert_eq!(f7.len(), 1, "finding 7 runs as configured only");
        assert_eq!(f7[0].seeds.len(), 2, "two seeds");
        assert_eq!(f7[0].seeds[0].len(), 9, "nine schedulers");
        assert!(p.not_run.is_empty());
    }

    /// Findings 1-5 run pinned and free on a phone whose governor moves
    /// the clock (the pinned runs first: they are the verdict's), once on
    /// the generic profile's fixed clock; every seed is its own run.
    #[test]
    fn address_order_findings_run_pinned_and_free_over_the_seeds() {
        let reg = mmcsim::sched::builtin();
        let p = plan(&args(&["2"], &["motog-2013", "generic"]), &reg).unwrap();
        let kinds = |u: &ProfileRuns| u.clocks.iter().map(|c| c.clock).collect::<Vec<_>>();
        assert_eq!(kinds(&p.uses[0][0]), [ClockKind::Pinned, ClockKind::Free]);
        assert_eq!(kinds(&p.uses[0][1]), [ClockKind::Fixed]);
        let mut seen = std::collections::BTreeSet::new();
        for c in &p.uses[0][0].clocks {
            for (s, idx) in c.seeds.iter().enumerate() {
                for &i in idx {
                    assert_eq!(p.jobs[i].seed, s as u64 + 1);
                    assert_eq!(p.jobs[i].pinned, c.clock == ClockKind::Pinned);
                    assert_eq!(p.scenarios[i].seed, s as u64 + 1);
                    assert!(seen.insert(i), "every seed and clock is its own run");
                }
            }
        }
        let pinned = p.uses[0][0].clocks[0].seeds[0][0];
        assert_eq!(p.scenarios[pinned].host.governor, GovernorKind::Performance);
        let free = p.uses[0][0].clocks[1].seeds[0][0];
        assert_eq!(p.scenarios[free].host.governor, GovernorKind::Intellidemand);
        // The seed is reproduce's own.
        let mut a = args(&["1"], &["generic"]);
        a.set = vec!["seed=3".into()];
        assert!(plan(&a, &reg)
            .err()
            .unwrap()
            .to_string()
            .contains("--seeds"));
        a.set.clear();
        a.seeds = 0;
        assert!(plan(&a, &reg).is_err());
    }

    /// Finding 6's scenario names the Galaxy S II's parts: it does not run
    /// on the generic profile (that row would be the galaxy-s2 again), and
    /// says so.
    #[test]
    fn finding_6_has_no_generic_row() {
        let reg = mmcsim::sched::builtin();
        let p = plan(&args(&["6"], &["galaxy-s2", "generic"]), &reg).unwrap();
        assert_eq!(names(&p, &p.uses[0]), ["galaxy-s2"]);
        assert_eq!(p.not_run.len(), 1);
        assert_eq!(p.not_run[0].profile.as_deref(), Some("generic"));
        assert!(
            p.not_run[0].reason.contains("galaxy-s2"),
            "{}",
            p.not_run[0].reason
        );
        let e = plan(&args(&["6"], &["generic"]), &reg)
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("finding-6") && e.contains("--phone galaxy-s2"),
            "{e}"
        );
    }

    /// The seed micro-benchmarks (findings 1-5) run on each phone's
    /// benchmark file system, as the papers did (Nexus S on VFAT, Nexus 7 on
    /// FUSE over ext4); the generic profile and a phone without
    /// `benchmark_fs` keep the raw file, and finding 6 keeps its own.
    #[test]
    fn seed_benchmarks_run_on_the_phones_benchmark_file_system() {
        use mmcsim::host::fs::FsType;
        let reg = mmcsim::sched::builtin();
        let mut a = args(
            &["1", "2", "3", "6"],
            &["nexus-s", "nexus7-2012", "motog-2013", "generic"],
        );
        a.seeds = 1;
        let p = plan(&a, &reg).unwrap();
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
