//! The user's `--set` pairs against each run's scenario. A pair that
//! names an optional part of a scenario (the AndroBench suite, SQLite, a
//! file system, a trace, the N-th job) changes nothing in a scenario that
//! has no such part: it is not applied there (adding the section would
//! make a half-written workload, e.g. an `[androbench]` table without its
//! `version`), and `reproduce` says once which findings it left out. A
//! pair that reaches no run at all is unusable input.

use std::collections::{BTreeMap, BTreeSet};

/// What a scenario tree lacks for `key` to apply, or `None` when it
/// applies (every section but the optional ones always does: the queue,
/// scheduler, driver, device and host exist in every run with their
/// defaults).
pub fn lacks(tree: &toml::Value, key: &str) -> Option<String> {
    let mut parts = key.split('.');
    let section = parts.next()?;
    let has = |name: &str| tree.get(name).is_some();
    match section {
        "androbench" | "trace" | "fs" => (!has(section)).then(|| format!("no [{section}] section")),
        "sqlite" => (!(has("sqlite") || has("sqlite_jobs") || has("androbench")))
            .then(|| "no SQLite workload ([sqlite], [[sqlite_jobs]] or [androbench])".to_string()),
        "jobs" => {
            // A malformed index is left to the override's own error.
            let n: usize = parts.next()?.parse().ok()?;
            let jobs = tree
                .get("jobs")
                .and_then(toml::Value::as_array)
                .map_or(0, Vec::len);
            (n >= jobs).then(|| format!("no job {n} (it has {jobs} [[jobs]])"))
        }
        _ => None,
    }
}

/// Where each user `--set` pair was applied and where not, over the runs
/// of a plan.
#[derive(Default)]
pub struct Reach {
    /// The pairs as given (`KEY=VALUE`).
    given: Vec<String>,
    /// Pair index → findings whose runs had it applied.
    applied: BTreeMap<usize, BTreeSet<u32>>,
    /// Pair index → findings whose scenario lacked its section, and what
    /// it lacked (the first reason met).
    skipped: BTreeMap<usize, (BTreeSet<u32>, String)>,
}

impl Reach {
    /// Tracks the pairs `given` (as the user wrote them).
    pub fn new(given: &[String]) -> Reach {
        Reach {
            given: given.to_vec(),
            ..Reach::default()
        }
    }

    /// Records one run of finding `n`: `skipped` are the pair indices not
    /// applied (with what the scenario lacked), every other pair was.
    pub fn record(&mut self, n: u32, skipped: &[(usize, String)]) {
        for i in 0..self.given.len() {
            match skipped.iter().find(|(k, _)| *k == i) {
                Some((_, why)) => {
                    let e = self
                        .skipped
                        .entry(i)
                        .or_insert_with(|| (BTreeSet::new(), why.clone()));
                    e.0.insert(n);
                }
                None => {
                    self.applied.entry(i).or_default().insert(n);
                }
            }
        }
    }

    /// An error naming the first pair that reached no run of any selected
    /// finding (it would change nothing: unusable input).
    pub fn check(&self) -> anyhow::Result<()> {
        for (i, g) in self.given.iter().enumerate() {
            if !self.applied.contains_key(&i) {
                let why = self
                    .skipped
                    .get(&i)
                    .map_or("no run".to_string(), |(_, w)| w.clone());
                anyhow::bail!(
                    "--set {g}: no selected finding's scenario has what it sets ({why}); it would change nothing"
                );
            }
        }
        Ok(())
    }

    /// One note per pair left out of some findings' runs: `--set K=V not
    /// applied to finding-1, finding-2 (their scenario has no [androbench]
    /// section)`.
    pub fn notes(&self) -> Vec<String> {
        self.skipped
            .iter()
            .map(|(i, (findings, why))| {
                let fs: Vec<String> = findings.iter().map(|n| format!("finding-{n}")).collect();
                let to: Vec<String> = self.applied[i]
                    .iter()
                    .map(|n| format!("finding-{n}"))
                    .collect();
                format!(
                    "--set {} not applied to {} (a scenario of theirs has {why}); applied to {}",
                    self.given[*i],
                    fs.join(", "),
                    to.join(", ")
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(s: &str) -> toml::Value {
        toml::from_str(s).unwrap()
    }

    #[test]
    fn optional_sections_apply_only_where_the_scenario_has_them() {
        let bench = tree("[androbench]\nversion = \"3.4\"\n[[jobs]]\nname = \"a\"\n");
        let plain = tree("[queue]\nread_ahead_kb = 128\n");
        assert_eq!(lacks(&bench, "androbench.repetitions"), None);
        assert_eq!(
            lacks(&bench, "sqlite.journal_mode"),
            None,
            "AndroBench runs SQLite"
        );
        assert_eq!(lacks(&bench, "jobs.0.sync"), None);
        assert!(lacks(&bench, "jobs.1.sync").unwrap().contains("no job 1"));
        assert!(lacks(&plain, "androbench.repetitions")
            .unwrap()
            .contains("[androbench]"));
        assert!(lacks(&plain, "sqlite.journal_mode").is_some());
        assert!(lacks(&plain, "fs.journal").is_some());
        for always in [
            "queue.read_ahead_kb",
            "device.map_cache.entries",
            "host.governor",
            "iosched.fifo_batch",
        ] {
            assert_eq!(lacks(&plain, always), None, "{always}");
        }
        assert_eq!(
            lacks(&plain, "jobs.x.sync"),
            None,
            "left to the override's error"
        );
    }

    #[test]
    fn a_pair_that_reaches_no_run_is_an_error_and_a_partial_one_a_note() {
        let mut r = Reach::new(&[
            "androbench.repetitions=1".into(),
            "queue.read_ahead_kb=0".into(),
        ]);
        r.record(1, &[(0, "no [androbench] section".into())]);
        r.record(2, &[(0, "no [androbench] section".into())]);
        let e = r.check().unwrap_err().to_string();
        assert!(
            e.contains("--set androbench.repetitions=1") && e.contains("[androbench]"),
            "{e}"
        );
        r.record(7, &[]);
        r.check().unwrap();
        assert_eq!(
            r.notes(),
            ["--set androbench.repetitions=1 not applied to finding-1, finding-2 (a scenario of theirs has no [androbench] section); applied to finding-7"]
        );
    }
}
