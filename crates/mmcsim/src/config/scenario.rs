//! The scenario file: everything one simulation run needs.

use super::scenario_rule::{ScenarioRule, MAX_FILES, MAX_SQLITE_STATEMENTS, MAX_THREADS};
use crate::block::QueueParams;
use crate::device::{DeviceConfig, Precondition};
use crate::driver::DriverConfig;
use crate::error::{Error, Result, SettingError};
pub use crate::host::cost::HostConfig;
pub use crate::host::fs::FsConfig;
use crate::host::writeback::WritebackParams;
pub use crate::workload::androbench::AndrobenchSpec;
pub use crate::workload::spec::{
    FitMode, JobOp, JobSpec, Order, Pattern, ReplayMode, SchedPolicy, ScriptSpec, TraceSpec,
};
pub use crate::workload::sqlite::{SqliteConfig, SqliteJobSpec};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The generic eMMC profile, built into the binary so `simctl replay` works
/// from any directory.
pub const GENERIC_PROFILE: &str = include_str!("../../../../configs/devices/generic-emmc.toml");

/// A simulation run: device, host, queue, scheduler, preconditioning, files
/// and a workload (synthetic jobs or a trace).
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Short name used in reports.
    #[serde(default)]
    pub name: String,
    /// What the scenario reproduces and why.
    #[serde(default)]
    pub description: String,
    /// Seed of every random stream of the run.
    #[serde(default = "default_seed", deserialize_with = "seed_u64")]
    pub seed: u64,
    /// The Android release whose framework opens SQLite databases (`"4.4"`;
    /// a phone sets it): the `[sqlite]` keys left out take its defaults
    /// (`workload::sqlite::platform`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub android_version: Option<String>,
    /// `profile` (a path relative to the scenario file, or `generic`) plus
    /// tables that override the profile's sections.
    #[serde(default)]
    #[schemars(with = "serde_json::Map<String, serde_json::Value>")]
    pub device: toml::Table,
    /// The host: CPU, governor, per-layer costs, page cache
    /// (`profile = "../hosts/..."` merges a host profile under these keys).
    #[serde(default)]
    pub host: HostConfig,
    /// Block queue attributes (sysfs `queue/`).
    #[serde(default)]
    pub queue: QueueParams,
    /// The MMC driver (`driver_slots`: requests it holds at once).
    #[serde(default)]
    pub driver: DriverConfig,
    /// Page-cache writeback (sysctl `vm.dirty_*`).
    #[serde(default)]
    pub writeback: WritebackParams,
    /// The I/O scheduler and its tunables.
    #[serde(default)]
    pub scheduler: SchedulerSpec,
    /// Device preconditioning before measurement (not measured).
    #[serde(default)]
    pub precondition: Precondition,
    /// The file system on the device (`[fs]`); absent = files are raw
    /// contiguous extents with no metadata.
    #[serde(default)]
    pub fs: Option<FsConfig>,
    /// Files: contiguous extents of the device, or (with `[fs]`) files
    /// created in the file system before the run.
    #[serde(default)]
    pub files: Vec<FileSpec>,
    /// Synthetic jobs (closed-loop threads).
    #[serde(default)]
    pub jobs: Vec<JobSpec>,
    /// Scripted threads: each issues a fixed list of system calls.
    #[serde(default)]
    pub scripts: Vec<ScriptSpec>,
    /// A trace to replay instead of (or beside) jobs.
    #[serde(default)]
    pub trace: Option<TraceSpec>,
    /// How SQLite opens the databases of `[[sqlite_jobs]]` and of the
    /// AndroBench suite (`[sqlite]`: journal mode, synchronous, page size).
    #[serde(default, skip_serializing_if = "is_default_sqlite")]
    pub sqlite: SqliteConfig,
    /// SQLite jobs: threads running SQL statements on their database.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sqlite_jobs: Vec<SqliteJobSpec>,
    /// The AndroBench suite (`[androbench]`, needs `[fs]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub androbench: Option<AndrobenchSpec>,
    /// Folder relative paths are resolved against (the scenario's folder).
    #[serde(skip)]
    pub base_dir: PathBuf,
}

/// A seed: a TOML integer ≥ 0, or (for seeds of 2^63 and more, which TOML
/// integers cannot hold) its decimal text.
fn seed_u64<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<u64, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Seed {
        Int(i64),
        Text(String),
    }
    let bad = |found: String| {
        serde::de::Error::custom(format!(
            "seed = {found}: expected an unsigned integer 0..=18446744073709551615"
        ))
    };
    match Seed::deserialize(d)? {
        Seed::Int(i) => u64::try_from(i).map_err(|_| bad(i.to_string())),
        Seed::Text(t) => t.trim().parse().map_err(|_| bad(format!("{t:?}"))),
    }
}

fn is_default_sqlite(c: &SqliteConfig) -> bool {
    *c == SqliteConfig::default()
}

fn default_seed() -> u64 {
    1
}

/// The scheduler of the queue (`queue/scheduler`) and its tunables
/// (`queue/iosched/*`).
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct SchedulerSpec {
    /// Kernel name, e.g. `deadline`.
    pub name: String,
    /// Kernel tick rate `HZ` (tunables are kept in jiffies). The reference
    /// writes defaults at HZ=1000; Android 3.x trees used 100-300.
    pub hz: u32,
    /// Tunables by sysfs name, in sysfs units (ms for times).
    #[schemars(with = "BTreeMap<String, serde_json::Value>")]
    pub tunables: BTreeMap<String, toml::Value>,
}

impl Default for SchedulerSpec {
    fn default() -> Self {
        SchedulerSpec {
            name: "deadline".into(),
            hz: 1000,
            tunables: BTreeMap::new(),
        }
    }
}

impl SchedulerSpec {
    /// Checks the tick rate: `hz` is 1..=10000 ticks per second.
    pub fn validate(&self) -> std::result::Result<(), SettingError> {
        if self.hz == 0 || self.hz > 10_000 {
            return Err(SettingError::Invalid {
                key: "scheduler.hz".into(),
                value: self.hz.to_string(),
                expected: "1..=10000 ticks per second".into(),
            });
        }
        Ok(())
    }

    /// Tunables as sysfs text, in name order.
    pub fn tunable_text(&self) -> Vec<(String, String)> {
        self.tunables
            .iter()
            .map(|(k, v)| {
                let text = match v {
                    toml::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                (k.clone(), text)
            })
            .collect()
    }
}

/// A file: a contiguous extent of the device (no `[fs]`), or a file the
/// file system holds before the run (`[fs]`: `name` is its path, relative
/// to `/` unless absolute; missing directories are created; 0 MiB makes an
/// empty file).
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileSpec {
    /// Name jobs refer to.
    pub name: String,
    /// Size, MiB.
    pub size_mib: u64,
    /// Start on the device, MiB; absent = right after the previous file
    /// (the first at 0).
    #[serde(default)]
    pub offset_mib: Option<u64>,
    /// Write the file's data (untimed, sequentially) before the run, so
    /// reads find mapped pages, as a benchmark's preparation phase does.
    #[serde(default = "yes")]
    pub prewrite: bool,
}

fn yes() -> bool {
    true
}

impl Scenario {
    /// Loads a scenario file, applies `--set` overrides, and validates it.
    pub fn load(path: &Path, sets: &[(String, String)]) -> Result<Scenario> {
        let text = crate::textfile::read_config(path)?;
        let base = path.parent().unwrap_or(Path::new("")).to_path_buf();
        Scenario::from_toml(&text, &path.display().to_string(), base, sets)
    }

    /// Parses scenario text (`source` names it in errors), applies `--set`
    /// overrides, and validates it.
    pub fn from_toml(
        text: &str,
        source: &str,
        base_dir: PathBuf,
        sets: &[(String, String)],
    ) -> Result<Scenario> {
        let mut value: toml::Value = toml::from_str(text).map_err(|e| Error::toml(source, e))?;
        for (k, v) in sets {
            super::apply_set(&mut value, k, v)?;
        }
        crate::workload::sqlite::platform::apply_android_defaults(&mut value)
            .map_err(|e| Error::setting(source, e))?;
        crate::platform::apply_host_profile(&mut value, &base_dir)?;
        let mut sc: Scenario = value
            .try_into()
            .map_err(|e: toml::de::Error| Error::toml(source, e))?;
        sc.base_dir = base_dir;
        sc.validate(source)?;
        Ok(sc)
    }

    /// A scenario that replays `trace` on the generic profile with every
    /// other setting at its default.
    pub fn for_trace(trace: &Path, sets: &[(String, String)]) -> Result<Scenario> {
        let mut t = toml::Table::new();
        t.insert("name".into(), trace.display().to_string().into());
        let mut tr = toml::Table::new();
        tr.insert("path".into(), trace.display().to_string().into());
        t.insert("trace".into(), toml::Value::Table(tr));
        let mut value = toml::Value::Table(t);
        for (k, v) in sets {
            super::apply_set(&mut value, k, v)?;
        }
        crate::workload::sqlite::platform::apply_android_defaults(&mut value)?;
        crate::platform::apply_host_profile(&mut value, Path::new(""))?;
        let mut sc: Scenario = value
            .try_into()
            .map_err(|e: toml::de::Error| Error::toml("replay", e))?;
        sc.base_dir = PathBuf::new();
        sc.validate("replay")?;
        Ok(sc)
    }

    /// Resolves a path written in the scenario against its folder.
    pub fn resolve(&self, p: &Path) -> PathBuf {
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.base_dir.join(p)
        }
    }

    /// The device configuration: the profile with the scenario's overrides
    /// merged over it, validated.
    pub fn device_config(&self) -> Result<DeviceConfig> {
        let mut overrides = self.device.clone();
        let profile = overrides.remove("profile");
        let (text, source): (std::borrow::Cow<str>, String) = match profile {
            None => (GENERIC_PROFILE.into(), "generic".into()),
            Some(toml::Value::String(p)) if p == "generic" => {
                (GENERIC_PROFILE.into(), "generic".into())
            }
            Some(toml::Value::String(p)) => {
                let path = self.resolve(Path::new(&p));
                let text = crate::textfile::read_config(&path)?;
                (text.into(), path.display().to_string())
            }
            Some(other) => {
                return Err(SettingError::Invalid {
                    key: "device.profile".into(),
                    value: other.to_string(),
                    expected: "a path to a device TOML or \"generic\"".into(),
                }
                .into())
            }
        };
        let cfg = self.merged_device_config(&text, &source, overrides)?;
        // A bad driver setting is left for the driver to report.
        let cmdq = self.driver.resolve(cfg.cmdq.as_ref().map(|q| q.depth));
        cfg.check_packing_with_driver(&source, matches!(cmdq, Ok(Some(_))))?;
        Ok(cfg)
    }

    /// The profile `text` (named `source`) with `overrides` merged over it,
    /// validated.
    fn merged_device_config(
        &self,
        text: &str,
        source: &str,
        overrides: toml::Table,
    ) -> Result<DeviceConfig> {
        if overrides.is_empty() {
            // Errors point at the profile file's own lines.
            return DeviceConfig::from_toml_str(text, source);
        }
        let mut base = parse_profile(text, source)?;
        drop_other_schemes(&mut base, &overrides);
        merge(&mut base, overrides);
        // With settings merged over it there is no file line to point at:
        // the error names the key (`in nand.t_r_us`) and says where such a
        // value may come from.
        let cfg: DeviceConfig = toml::Value::Table(base).try_into().map_err(|e: toml::de::Error| {
            Error::toml(
                format!(
                    "{source} with the scenario's [device] settings and --set device.*: invalid device profile"
                ),
                e,
            )
        })?;
        cfg.validate(&format!(
            "{source} with the scenario's [device] settings and --set device.*"
        ))?;
        Ok(cfg)
    }

    /// Checks the scenario: each stage's own settings, then the rules
    /// between its parts (a workload, the file system, files, threads,
    /// jobs). `source` names the scenario in errors.
    fn validate(&self, source: &str) -> Result<()> {
        let bad = |r: ScenarioRule| Error::setting(source, SettingError::Scenario(Box::new(r)));
        self.validate_stages(source)?;
        if self.jobs.is_empty()
            && self.scripts.is_empty()
            && self.trace.is_none()
            && self.sqlite_jobs.is_empty()
            && self.androbench.is_none()
        {
            return Err(bad(ScenarioRule::NoWorkload));
        }
        self.validate_sqlite(source)?;
        self.validate_fs().map_err(bad)?;
        self.validate_scripts().map_err(bad)?;
        if let Some(t) = &self.trace {
            t.validate()
                .map_err(|e| Error::setting(source, SettingError::Trace(e)))?;
        }
        if self.files.len() > MAX_FILES {
            return Err(bad(ScenarioRule::TooManyFiles {
                count: self.files.len(),
            }));
        }
        self.validate_threads().map_err(bad)?;
        self.validate_files().map_err(bad)?;
        self.jobs
            .iter()
            .try_for_each(|j| self.validate_job(j))
            .map_err(bad)
    }

    /// Each stage's own settings, checked by its owner: host, scheduler,
    /// driver, queue, writeback, preconditioning.
    fn validate_stages(&self, source: &str) -> Result<()> {
        let setting = |e| Error::setting(source, e);
        self.host.validate().map_err(setting)?;
        self.scheduler.validate().map_err(setting)?;
        self.driver.validate_slots().map_err(setting)?;
        self.queue.validate().map_err(setting)?;
        self.writeback.validate()?;
        self.precondition.validate(source)
    }

    /// `[fs]`: its own settings, a partition that holds the smallest
    /// ext4, and no raw extents beside it.
    fn validate_fs(&self) -> std::result::Result<(), ScenarioRule> {
        let Some(fs) = &self.fs else {
            return Ok(());
        };
        crate::host::fs::validate(fs).map_err(ScenarioRule::Fs)?;
        let min = crate::host::fs::min_blocks(fs).div_ceil(256);
        if let Some(s) = fs.partition_size_mib.filter(|&s| s < min) {
            return Err(ScenarioRule::PartitionTooSmall {
                size_mib: s,
                min_mib: min,
            });
        }
        if let Some(f) = self.files.iter().find(|f| f.offset_mib.is_some()) {
            return Err(ScenarioRule::RawExtentWithFs {
                file: f.name.clone(),
            });
        }
        Ok(())
    }

    /// Files: a raw extent is at least 1 MiB; names are unique.
    fn validate_files(&self) -> std::result::Result<(), ScenarioRule> {
        let mut names = std::collections::BTreeSet::new();
        for f in &self.files {
            if f.size_mib == 0 && self.fs.is_none() {
                return Err(ScenarioRule::EmptyFile {
                    file: f.name.clone(),
                });
            }
            if !names.insert(f.name.as_str()) {
                return Err(ScenarioRule::FileTwice {
                    file: f.name.clone(),
                });
            }
        }
        Ok(())
    }

    /// A job: its file exists, and the job's own rules hold against it.
    fn validate_job(&self, j: &JobSpec) -> std::result::Result<(), ScenarioRule> {
        let file_bytes = |name: &str| {
            self.files
                .iter()
                .find(|f| f.name == name)
                .map(|f| f.size_mib << 20)
        };
        let Some(bytes) = file_bytes(&j.file) else {
            let known: Vec<&str> = self.files.iter().map(|f| f.name.as_str()).collect();
            return Err(ScenarioRule::Job(
                crate::workload::job_error::JobRule::UnknownFile {
                    file: j.file.clone(),
                    known: if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    },
                }
                .of(&j.name),
            ));
        };
        j.check_against_file(&j.file, bytes, file_bytes)
            .map_err(ScenarioRule::Job)
    }
}

impl Scenario {
    /// Checks the `[[scripts]]`: a file system to run on, calls, times.
    fn validate_scripts(&self) -> std::result::Result<(), ScenarioRule> {
        for s in &self.scripts {
            let script = || s.name.clone();
            if self.fs.is_none() {
                return Err(ScenarioRule::ScriptWithoutFs { script: script() });
            }
            if s.calls.is_empty() {
                return Err(ScenarioRule::ScriptWithoutCalls { script: script() });
            }
            let at = |time| ScenarioRule::ScriptTime {
                script: script(),
                time,
            };
            crate::workload::spec::checked_time_ns("think_time_us", s.think_time_us, 1e3)
                .map_err(at)?;
            crate::workload::spec::checked_time_ns("start_ms", s.start_ms, 1e6).map_err(at)?;
        }
        Ok(())
    }

    /// One limit on threads: job threads, scripts and SQLite jobs together
    /// (before anything is allocated); job pids neither wrap nor overlap.
    fn validate_threads(&self) -> std::result::Result<(), ScenarioRule> {
        let jobs: u64 = self.jobs.iter().map(|j| u64::from(j.threads)).sum();
        let scripts = self.scripts.len() as u64;
        let sqlite = self.sqlite_jobs.len() as u64;
        if jobs + scripts + sqlite > MAX_THREADS {
            return Err(ScenarioRule::TooManyThreads {
                jobs,
                scripts,
                sqlite,
            });
        }
        let mut ranges: Vec<(u64, u64, &str)> = Vec::new();
        for (ji, j) in self.jobs.iter().enumerate() {
            let first = u64::from(j.pid.unwrap_or(1000 + 100 * ji as u32));
            let last = first + u64::from(j.threads.max(1)) - 1;
            if last > u64::from(u32::MAX) {
                return Err(ScenarioRule::PidWraps {
                    job: j.name.clone(),
                    first,
                    threads: j.threads,
                    last,
                });
            }
            if let Some((f, l, other)) = ranges.iter().find(|(f, l, _)| first <= *l && *f <= last) {
                return Err(ScenarioRule::PidOverlap {
                    job: j.name.clone(),
                    first,
                    last,
                    other: other.to_string(),
                    other_first: *f,
                    other_last: *l,
                });
            }
            ranges.push((first, last, &j.name));
        }
        let each =
            |j: &crate::workload::sqlite::SqliteJobSpec| j.transactions.saturating_add(j.prefill());
        if let Some(j) = self
            .sqlite_jobs
            .iter()
            .find(|j| each(j) > MAX_SQLITE_STATEMENTS)
        {
            return Err(ScenarioRule::SqliteJobStatements {
                job: j.name.clone(),
                transactions: j.transactions,
                rows: j.prefill(),
            });
        }
        let statements: u64 = self
            .sqlite_jobs
            .iter()
            .map(each)
            .fold(0, u64::saturating_add);
        if statements > MAX_SQLITE_STATEMENTS {
            return Err(ScenarioRule::SqliteStatements { statements });
        }
        Ok(())
    }

    /// Checks `[sqlite]`, `[[sqlite_jobs]]` and `[androbench]`.
    fn validate_sqlite(&self, source: &str) -> Result<()> {
        let bad =
            |r: ScenarioRule| Err(Error::setting(source, SettingError::Scenario(Box::new(r))));
        self.sqlite
            .validate()
            .map_err(|e| Error::setting(source, e))?;
        let uses = !self.sqlite_jobs.is_empty() || self.androbench.is_some();
        if uses && self.fs.is_none() {
            return bad(ScenarioRule::SqliteWithoutFs);
        }
        let mut names = std::collections::BTreeSet::new();
        for j in &self.sqlite_jobs {
            j.validate(&self.sqlite)
                .map_err(|e| Error::setting(source, SettingError::SqliteJob(Box::new(e))))?;
            if !names.insert(j.name.as_str()) {
                return bad(ScenarioRule::SqliteJobTwice {
                    job: j.name.clone(),
                });
            }
        }
        if let Some(a) = &self.androbench {
            a.settings(&self.sqlite)
                .map_err(|e| Error::setting(source, e))?;
        }
        Ok(())
    }
}

fn parse_profile(text: &str, source: &str) -> Result<toml::Table> {
    toml::from_str(text).map_err(|e| Error::toml(source, e))
}

/// Deep-merges `over` into `base` (tables merge, values replace).
/// When the overrides change `ftl.mapping`, the profile's sections of its
/// own scheme (`[ftl.hybrid]`, `[ftl.dftl]`) no longer apply: they are
/// dropped unless the overrides set them too, so `--set
/// device.ftl.mapping=page` on a hybrid profile is that profile with a page
/// map (its other values unchanged).
fn drop_other_schemes(base: &mut toml::Table, over: &toml::Table) {
    let mapping = |t: &toml::Table| {
        t.get("ftl")
            .and_then(|f| f.get("mapping"))
            .and_then(|m| m.as_str())
            .map(str::to_string)
    };
    let Some(new) = mapping(over) else {
        return;
    };
    if mapping(base).as_deref() == Some(new.as_str()) {
        return;
    }
    let over_ftl = over.get("ftl").and_then(|f| f.as_table());
    if let Some(toml::Value::Table(ftl)) = base.get_mut("ftl") {
        for scheme in ["hybrid", "dftl"] {
            if over_ftl.is_none_or(|o| !o.contains_key(scheme)) {
                ftl.remove(scheme);
            }
        }
    }
}

fn merge(base: &mut toml::Table, over: toml::Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}
