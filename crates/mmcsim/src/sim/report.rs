//! Assembling the report of a finished run.

use super::Simulation;
use crate::block::{BlockStats, QueueParams};
use crate::device::{DeviceConfig, DeviceStats, PreconditionSummary};
use crate::driver::DriverConfig;
use crate::host::cost::HostConfig;
use crate::host::page_cache::PageCacheStats;
use crate::platform::CpuStats;
use crate::sched::TunableInfo;
use crate::stats::report::{WorkloadSummary, SCHEMA};
use crate::types::Ns;
use serde::Serialize;
use std::fmt::Write;

/// What ran: the scenario's identity.
#[derive(Clone, Debug, Serialize, PartialEq, schemars::JsonSchema)]
pub struct RunInfo {
    /// Scenario name (or the trace path for `simctl replay`).
    pub name: String,
    /// `jobs`, `trace`, or `jobs+trace`.
    pub workload: &'static str,
    /// The replayed trace, as given.
    pub trace: Option<String>,
    /// Seed of every random stream.
    pub seed: u64,
    /// Digests of what ran, for a regression check to compare like with
    /// like.
    pub identity: super::identity::RunIdentity,
}

/// The scheduler and its tunables as the run used them.
#[derive(Clone, Debug, Serialize, PartialEq, schemars::JsonSchema)]
pub struct SchedulerInfo {
    /// Kernel name.
    pub name: String,
    /// `HZ` of the simulated kernel.
    pub hz: u32,
    /// Every tunable with value, default and unit.
    pub tunables: Vec<TunableInfo>,
}

/// The host section: every setting, then the CPU's results.
#[derive(Clone, Debug, Serialize, PartialEq, schemars::JsonSchema)]
pub struct HostReport {
    /// The host settings as the run used them (profile merged).
    #[serde(flatten)]
    pub config: HostConfig,
    /// What the CPU did.
    pub cpu: CpuStats,
}

/// What a run cost the simulator outside the block layer, as operation
/// counts: they describe the simulator's work, not the simulated system,
/// so they stay out of the JSON. The block layer's own counts are in
/// [`BlockStats`] (`elevator_calls`, `held_resubmits`, also out of the
/// JSON). Tests use them to guard complexity without timing anything
/// (e.g. an overloaded trace twice as long costs at most 2.2× as many of
/// each).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunCost {
    /// Events the simulation loop handled.
    pub events: u64,
    /// Trace-feed operations: records placed (issued or held), held
    /// records issued, and waiting processes visited on admissions.
    pub feed_ops: u64,
    /// Simulated time of the last event handled, ns.
    pub end_ns: Ns,
    /// When the last call or request completed, ns.
    pub last_done_ns: Ns,
}

/// The full report of a run (schema `mmcsim-report/2`).
#[derive(Clone, Debug, Serialize, PartialEq, schemars::JsonSchema)]
pub struct Report {
    /// Schema tag.
    pub schema: &'static str,
    /// Version of mmcsim that produced the report.
    pub mmcsim_version: &'static str,
    /// What ran.
    pub run: RunInfo,
    /// True when the run completed no request and the caller allowed it
    /// ([`super::RunOptions::allow_empty`]); absent from the JSON
    /// otherwise (a run that completes nothing is an error by default).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub empty: bool,
    /// Workload-level results (flattened: `requests`, `throughput`,
    /// `latency_us`, `read`, `write`, `threads`, `fairness`, ...).
    #[serde(flatten)]
    pub workload: WorkloadSummary,
    /// Device-level results: write amplification, GC, caches, wear.
    pub device: DeviceStats,
    /// Block-layer counters: merges, allocation waits, depth.
    pub block: BlockStats,
    /// Page-cache counters.
    pub page_cache: PageCacheStats,
    /// The scheduler.
    pub scheduler: SchedulerInfo,
    /// Queue attributes.
    pub queue: QueueParams,
    /// MMC driver settings.
    pub driver: DriverConfig,
    /// Host: the CPU model's settings (calibration values) and what the
    /// CPU did (`host.cpu`: mean clock, IPIs, per-core busy fraction).
    pub host: HostReport,
    /// The device profile with overrides applied (every calibration knob).
    pub device_profile: DeviceConfig,
    /// What preconditioning did before measurement.
    pub precondition: PreconditionSummary,
    /// The replayed trace: format, mode, rebasing, fit, recorded latency.
    pub trace: Option<crate::workload::replay::TraceInfo>,
    /// The file system (when the scenario has `[fs]`): options, geometry,
    /// journal commits and blocks, metadata written in place, flushes and
    /// FUA writes, allocations.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fs: Option<crate::host::fs::FsReport>,
    /// SQLite (when the scenario has SQLite jobs or AndroBench): settings,
    /// per-transaction block writes, flushes and syncs by operation, and
    /// per-file call counts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sqlite: Option<crate::workload::sqlite::report::SqliteReport>,
    /// AndroBench's result screen (when the scenario runs the suite).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub androbench: Option<crate::workload::androbench::AndrobenchReport>,
    /// What the per-command integrity check cost (only with
    /// [`super::RunOptions::check_integrity`]; absent from the JSON
    /// otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub integrity: Option<crate::device::IntegrityStats>,
    /// The power cut and recovery (only for a run cut short with
    /// [`super::Simulation::run_to_cut`]; absent from the JSON otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crash: Option<super::CrashReport>,
    /// What the run cost the simulator (not in the JSON).
    #[serde(skip)]
    pub cost: RunCost,
    /// Each thread's results by direction, when the simulation kept them
    /// ([`super::Simulation::keep_thread_io`]; not in the JSON).
    #[serde(skip)]
    pub thread_io: Vec<crate::stats::thread_io::ThreadIo>,
    /// The device's requests by direction (not in the JSON).
    #[serde(skip)]
    pub disk_io: crate::stats::thread_io::DiskIo,
}

pub(super) fn build(sim: &Simulation) -> Report {
    let sc = &sim.sc;
    let workload = match (sc.jobs.is_empty(), sc.trace.is_some()) {
        (false, true) => "jobs+trace",
        (true, true) => "trace",
        _ => "jobs",
    };
    Report {
        schema: SCHEMA,
        mmcsim_version: env!("CARGO_PKG_VERSION"),
        run: RunInfo {
            name: sc.name.clone(),
            workload,
            trace: sc.trace.as_ref().map(|t| t.path.display().to_string()),
            seed: sc.seed,
            identity: super::identity::identity(
                sc,
                sim.block.driver().device().config(),
                sim.block.elevator().name(),
                &sim.block.elevator().tunables(),
                SCHEMA,
            ),
        },
        empty: sim.collector.count() == 0,
        workload: sim.collector.summarize(),
        device: sim.block.driver().device().stats(),
        block: sim.block.stats(),
        page_cache: sim.host.cache_stats(),
        scheduler: SchedulerInfo {
            name: sim.block.elevator().name().to_string(),
            hz: sc.scheduler.hz,
            tunables: sim.block.elevator().tunables(),
        },
        queue: sim.block.params().clone(),
        driver: match sim.block.driver().cmdq_tags() {
            // Echo the resolved driver of a CMDQ run (a legacy run's
            // section is left as written, so its report is unchanged).
            Some(tags) => crate::driver::DriverConfig {
                mode: crate::driver::DriverMode::Cmdq,
                cmdq_depth: Some(tags),
                ..sc.driver.clone()
            },
            None => sc.driver.clone(),
        },
        host: HostReport {
            config: HostConfig {
                profile: sc.host.profile.as_deref().map(portable_path),
                ..sc.host.clone()
            },
            cpu: sim.platform.stats(sim.end),
        },
        device_profile: sim.block.driver().device().config().clone(),
        precondition: sim.precondition.clone(),
        trace: sim.replay.as_ref().map(|t| t.info()),
        fs: sim.host.fs_report(),
        sqlite: crate::workload::programs::sqlite_report(sim.jobs.programs(), &sc.sqlite),
        androbench: crate::workload::programs::androbench_report(sim.jobs.programs()),
        integrity: sim.integrity,
        crash: None,
        thread_io: sim.collector.thread_io(),
        disk_io: sim.collector.disk_io(),
        cost: RunCost {
            events: sim.events,
            feed_ops: sim.replay.as_ref().map_or(0, |r| r.feed_ops()),
            end_ns: sim.end,
            last_done_ns: sim.collector.last_done(),
        },
    }
}

impl Report {
    /// The report as pretty-printed JSON (deterministic: fields in schema
    /// order).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("report serializes")
    }

    /// A human-readable summary table.
    pub fn to_table(&self) -> String {
        let mut s = String::new();
        self.head_lines(&mut s);
        self.trace_lines(&mut s);
        self.latency_lines(&mut s);
        self.host_lines(&mut s);
        if let Some(a) = &self.androbench {
            s.push_str(&a.screen());
        }
        self.device_lines(&mut s);
        s
    }

    /// The run line, the empty-run warning and the call counts.
    fn head_lines(&self, s: &mut String) {
        let w = &self.workload;
        let _ = writeln!(
            s,
            "mmcsim {} | {} | scheduler {} (HZ={}) | seed {}",
            self.mmcsim_version,
            self.run.name,
            self.scheduler.name,
            self.scheduler.hz,
            self.run.seed
        );
        if self.empty {
            let _ = writeln!(
                s,
                "EMPTY RUN: no request completed (allowed by --allow-empty)"
            );
        }
        let _ = writeln!(
            s,
            "calls {} (R {} / W {} / D {} / F {} / fsync {}) in {:.3} s simulated",
            w.requests.count,
            w.requests.reads,
            w.requests.writes,
            w.requests.discards,
            w.requests.flushes,
            w.requests.fsyncs,
            w.simulated_time_s
        );
    }

    /// A replay's backlog and its recorded-vs-simulated service times.
    fn trace_lines(&self, s: &mut String) {
        let Some(t) = &self.trace else { return };
        let b = t.backlog;
        if !b.is_empty() {
            let _ = writeln!(
                s,
                "replay fell behind the trace: {} records waited for their process (at most {} held), up to {:.3} s after their arrival",
                b.deferred,
                b.max_held,
                b.max_wait_ns as f64 / 1e9
            );
        }
        if let Some(rows) = &t.recorded_vs_simulated {
            let each: Vec<String> = rows
                .iter()
                .map(|r| {
                    format!(
                        "{} {} {:.0}/{:.0}",
                        &r.direction[..1].to_uppercase(),
                        r.size_class,
                        r.recorded_p50_us,
                        r.simulated_p50_us
                    )
                })
                .collect();
            let _ = writeln!(
                s,
                "device service p50 µs, recorded/simulated: {}",
                each.join(" | ")
            );
        }
        if let Some(v) = &t.validation {
            for (what, rows) in [
                ("device service", &v.device_service),
                ("total latency", &v.total_latency),
            ] {
                let each: Vec<String> = rows
                    .iter()
                    .map(|r| {
                        format!(
                            "{} {} {:.2}{}",
                            &r.direction[..1].to_uppercase(),
                            r.size_class,
                            r.ks_d,
                            if r.differs_05 { "*" } else { "" }
                        )
                    })
                    .collect();
                if !each.is_empty() {
                    let _ = writeln!(
                        s,
                        "{what} KS D recorded vs simulated (* differs at 5 %): {}",
                        each.join(" | ")
                    );
                }
            }
        }
    }

    /// Throughput and latency percentiles (all, reads, writes) and the
    /// failed calls.
    fn latency_lines(&self, s: &mut String) {
        let w = &self.workload;
        let _ = writeln!(
            s,
            "{:<8} {:>10} {:>9} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
            "", "IOPS", "MB/s", "mean µs", "p50 µs", "p90 µs", "p99 µs", "p99.9 µs", "max µs"
        );
        let mut line =
            |name: &str, iops: f64, mbps: f64, l: &crate::stats::histogram::LatencySummary| {
                let _ = writeln!(
                    s,
                    "{:<8} {:>10.1} {:>9.2} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>10.1}",
                    name, iops, mbps, l.mean, l.p50, l.p90, l.p99, l.p999, l.max
                );
            };
        line(
            "all",
            w.throughput.iops,
            w.throughput.mb_per_s,
            &w.latency_us,
        );
        if w.read.count > 0 {
            line("read", w.read.iops, w.read.mb_per_s, &w.read.latency_us);
        }
        if w.write.count > 0 {
            line("write", w.write.iops, w.write.mb_per_s, &w.write.latency_us);
        }
        if let Some(c) = &w.calls {
            let each: Vec<String> = c.failed.iter().map(|(e, n)| format!("{e} {n}")).collect();
            let _ = writeln!(
                s,
                "failed calls {} (not counted above): {}",
                c.total(),
                each.join(" | ")
            );
        }
    }

    /// The latency split, the CPU and the threads' fairness.
    fn host_lines(&self, s: &mut String) {
        let w = &self.workload;
        let b = &w.breakdown_us;
        let _ = writeln!(
            s,
            "latency split (mean µs): platform {:.1} | syscall+fs {:.1} | block submit {:.1} | queue wait {:.1} | driver {:.1} | device {:.1} (data command {:.1}, busy poll {:.1}) | irq+wakeup {:.1} | not device {:.1}%",
            b.platform,
            b.syscall_fs,
            b.block_submit,
            b.queue_wait,
            b.driver,
            b.device,
            b.device_data_cmd,
            b.device_busy_poll,
            b.irq_wakeup,
            b.not_device_share * 100.0
        );
        let c = &self.host.cpu;
        let _ = writeln!(
            s,
            "cpu: {} governor | mean clock {:.0} MHz | IPIs {} | busy {}",
            c.governor,
            c.mean_freq_mhz,
            c.ipis,
            c.cores
                .iter()
                .map(|k| format!("{:.0}%", k.busy_fraction * 100.0))
                .collect::<Vec<_>>()
                .join("/")
        );
        let _ = writeln!(
            s,
            "threads {} | Jain's fairness {:.4}",
            w.threads.len(),
            w.fairness.jain
        );
    }

    /// The device: WAF, GC and its pauses, warnings, hybrid merges and the
    /// integrity check.
    fn device_lines(&self, s: &mut String) {
        let d = &self.device;
        let _ = writeln!(
            s,
            "device: WAF {:.3} | GC runs {} ({} pages moved) | read-buffer hits {:.1}% | map-cache hits {:.1}% | erase count min/mean/max {}/{:.2}/{}",
            d.waf,
            d.gc_runs,
            d.gc_pages_moved,
            d.read_buffer_hit_rate * 100.0,
            d.map_cache_hit_rate * 100.0,
            d.erase_count.min,
            d.erase_count.mean,
            d.erase_count.max
        );
        if d.gc.pauses > 0 {
            let _ = writeln!(
                s,
                "GC pauses {} (µs): p50 {:.0} | p99 {:.0} | max {:.0}{}",
                d.gc.pauses,
                d.gc.pause_us.p50,
                d.gc.pause_us.p99,
                d.gc.pause_us.max,
                d.gc.bound_us
                    .map_or(String::new(), |b| format!(" | bound {b:.0}"))
            );
        }
        for w in &d.warnings {
            let _ = writeln!(s, "warning: {w}");
        }
        if let Some(m) = &d.merges {
            let _ = writeln!(
                s,
                "hybrid merges: switch {} | partial {} | full {}",
                m.switch, m.partial, m.full
            );
        }
        if let Some(i) = &self.integrity {
            let _ = writeln!(
                s,
                "integrity: checked after each of {} device commands ({} logical + {} physical pages, {} full checks), {} violations",
                i.checked_commands, i.checked_pages, i.checked_slots, i.full_checks, i.violations
            );
        }
    }
}

/// `path` as a report shows it: an absolute path under the working
/// directory (a phone's host profile is resolved to one) relative to it,
/// so the same run from another checkout writes the same report; any
/// other path as written.
fn portable_path(path: &str) -> String {
    let p = std::path::Path::new(path);
    std::env::current_dir()
        .ok()
        .and_then(|cwd| p.strip_prefix(cwd).ok().map(|r| r.display().to_string()))
        .unwrap_or_else(|| path.to_string())
}
