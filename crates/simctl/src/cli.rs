//! Command-line grammar.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// Simulate an Android phone's storage path — threads, page cache, block
/// layer, I/O scheduler, MMC driver and eMMC device — from a trace or a
/// scenario, deterministically.
#[derive(Debug, Parser)]
#[command(name = "simctl", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Replay a block trace (native CSV) open loop: each request is issued
    /// at its recorded time.
    Replay {
        /// Trace file (native CSV: time_<unit>,op,sector,sectors[,pid,process,sync]).
        trace: PathBuf,
        #[command(flatten)]
        common: RunArgs,
    },
    /// Run a scenario file (TOML): device, host, queue, scheduler,
    /// preconditioning, files and synthetic jobs or a trace.
    Run {
        /// Scenario file, e.g. configs/scenarios/rand16-128m.toml.
        scenario: PathBuf,
        #[command(flatten)]
        common: RunArgs,
    },
    /// Run one workload (a scenario .toml or a trace) under several
    /// schedulers and show them side by side.
    Compare {
        /// Scenario file (.toml) or trace file.
        workload: PathBuf,
        /// `all`, or a comma-separated list of NAME[:TUNABLE=VALUE]...,
        /// e.g. `deadline,cfq,cfq:slice_idle=0`.
        #[arg(long, value_name = "LIST", default_value = "all")]
        schedulers: String,
        /// Write bar charts to PREFIX.png and PREFIX.svg.
        #[arg(long, value_name = "PREFIX")]
        plot: Option<PathBuf>,
        /// Simulations run in parallel (default: one per core); the output
        /// is identical whatever the number.
        #[arg(long, value_name = "N")]
        jobs: Option<usize>,
        #[command(flatten)]
        common: RunArgs,
    },
    /// Compare a report (or comparison) with a baseline; exit 1 when a
    /// metric regressed beyond its tolerance, 2 on unusable input.
    Check {
        /// The new report (JSON from --json of run, replay or compare).
        report: PathBuf,
        /// The baseline report to compare with.
        #[arg(long, value_name = "FILE")]
        baseline: PathBuf,
        /// Allowed worsening of a metric in percent, e.g.
        /// `latency_us.p99=20`; adds metrics or overrides the defaults.
        /// Repeatable.
        #[arg(long = "tolerance", value_name = "METRIC=PCT")]
        tolerances: Vec<String>,
    },
    /// List the I/O schedulers with their tunables, defaults and units.
    Schedulers {
        /// Kernel tick rate used to show jiffies-based defaults.
        #[arg(long, default_value_t = 1000)]
        hz: u32,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
}

/// Options shared by `replay` and `run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Device profile TOML (default: the scenario's, or the built-in
    /// generic eMMC).
    #[arg(long, value_name = "FILE")]
    pub device: Option<PathBuf>,
    /// I/O scheduler by kernel name (see `simctl schedulers`).
    #[arg(long, value_name = "NAME")]
    pub scheduler: Option<String>,
    /// Override a setting: iosched.<tunable>, queue.<attr>,
    /// device.<section>.<key>, host.<key>, precondition.<key>,
    /// scheduler.hz, seed. Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Seed of every random stream (same seed ⇒ identical report).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Write the JSON report to FILE (`-` for stdout).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write one CSV row per device request to FILE.
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Do not print the summary table.
    #[arg(long, short)]
    pub quiet: bool,
}
