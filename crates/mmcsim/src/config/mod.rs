//! Scenario files (TOML) and command-line overrides.
//!
//! A scenario names a device profile, the host, queue and scheduler settings,
//! preconditioning, the files laid out on the device, and either synthetic
//! jobs or a trace. `--set KEY=VALUE` overrides any value by a dotted path
//! before the scenario is validated, using sysfs-like prefixes:
//! `queue.<attr>` (e.g. `queue.read_ahead_kb`), `iosched.<tunable>`
//! (e.g. `iosched.fifo_batch`), `scheduler.<key>`, `device.<section>.<key>`,
//! `host.<key>`, `writeback.<key>`, `fs.<key>`, `precondition.<key>` and
//! `seed`. A [`Phone`] (`configs/phones/*.toml`) is a set of such
//! overrides choosing a device profile, a host profile and a scheduler.

mod overrides;
mod phone;
mod scenario;
mod scenario_rule;
pub mod uncertain;

pub use overrides::{apply_set, parse_set};
pub use phone::{check_fit_targets, Phone, PHONES_DIR};
pub use scenario::{
    FileSpec, FitMode, FsConfig, HostConfig, JobOp, JobSpec, Order, Pattern, ReplayMode, Scenario,
    SchedPolicy, SchedulerSpec, ScriptSpec, TraceSpec,
};
pub use scenario_rule::{ScenarioRule, MAX_FILES, MAX_SQLITE_STATEMENTS, MAX_THREADS};
