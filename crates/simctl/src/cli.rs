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
