//! Command-line grammar.

use clap::{Args, Parser, Subcommand, ValueEnum};
use mmcsim::config::{FitMode, ReplayMode};
use mmcsim::workload::trace::{Format, OpenOptions, TimeUnit};
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
    /// Replay a block trace (any supported format, see `simctl trace
    /// formats`), open loop at the recorded times or closed loop per
    /// process.
    Replay {
        /// Trace file (format detected from content; gzip read
        /// transparently; see `simctl trace formats`), or `-` for standard
        /// input.
        trace: PathBuf,
        #[command(flatten)]
        replay: TraceArgs,
        #[command(flatten)]
        run: RunArgs,
    },
    /// Run a scenario file (TOML: device, host, queue, scheduler,
    /// preconditioning, files and synthetic jobs or a trace) or an fio job
    /// file (`.fio`, or detected from its content) on the default device,
    /// host and scheduler.
    Run {
        /// Scenario file, e.g. configs/scenarios/rand16-128m.toml, or fio
        /// job file, e.g. configs/fio/randread-4k.fio; `-` reads either
        /// from standard input.
        scenario: PathBuf,
        #[command(flatten)]
        run: RunArgs,
    },
    /// Cut the power while a workload runs (a scenario .toml, an fio job
    /// file or a trace): the workload runs once uncut, then once per cut
    /// from the start to the cut's instant; the card loses what its
    /// `[power_loss]` profile says, its FTL recovers, and the report counts
    /// acknowledged writes lost, torn pages, paired-page victims, flying
    /// writes and the recovery time. Same seed, same report.
    Crash {
        /// Scenario file (.toml), fio job file (.fio) or trace file.
        workload: PathBuf,
        /// Cuts at instants drawn uniformly over the uncut run (seeded by
        /// --seed, else the scenario's seed).
        #[arg(long, value_name = "N", default_value_t = 10, value_parser = at_least_one_u64())]
        cuts: u64,
        /// One cut at this simulated instant instead, with a unit: ns, us,
        /// ms or s (e.g. 250ms, 1.5s); a time after the run's end cuts an
        /// idle card.
        #[arg(long, value_name = "TIME", conflicts_with_all = ["at_event", "cuts"])]
        at: Option<String>,
        /// One cut right after the K-th simulation event instead (0 =
        /// before the first).
        #[arg(long = "at-event", value_name = "K", conflicts_with = "cuts")]
        at_event: Option<u64>,
        #[command(flatten)]
        sim: SimArgs,
    },
    /// Run one workload (a scenario .toml, an fio job file or a trace)
    /// under several schedulers and show them side by side.
    Compare {
        /// Scenario file (.toml), fio job file (.fio) or trace file.
        workload: PathBuf,
        /// `all`, or a comma-separated list of NAME[:TUNABLE=VALUE]...,
        /// e.g. `deadline,cfq,cfq:slice_idle=0`.
        #[arg(long, value_name = "LIST", default_value = "all")]
        schedulers: String,
        /// Write bar charts and latency CDFs to PREFIX.png and PREFIX.svg
        /// (with --seeds: bars at the mean, 95 % error bars).
        #[arg(long, value_name = "PREFIX")]
        plot: Option<PathBuf>,
        /// Run every scheduler at seeds 1..=N and report each metric's
        /// mean and 95 % confidence interval over them (Student t, N − 1
        /// degrees of freedom) in the table, the JSON (`seeds`) and the
        /// plot's error bars. One seed (the default) gives no interval.
        #[arg(long, value_name = "N", default_value_t = 1, value_parser = at_least_one())]
        seeds: usize,
        /// Simulations run in parallel (default: one per core); the output
        /// is identical whatever the number.
        #[arg(long, value_name = "N")]
        jobs: Option<usize>,
        #[command(flatten)]
        sim: SimArgs,
        /// How a trace workload is read and replayed (not for a scenario:
        /// set its `trace.<key>` with --set).
        #[command(flatten, next_help_heading = "Trace workload options")]
        replay: TraceArgs,
    },
    /// Run every cell of a parameter grid (schedulers × workloads ×
    /// devices × seeds × set variants) in parallel, into DIR/cells/*.json
    /// and DIR/results.csv; an interrupted sweep resumes.
    Sweep {
        /// Grid file (TOML): schedulers, workloads, devices, seeds, sets.
        grid: PathBuf,
        /// Output directory.
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// Simulations run in parallel (default: one per core); the output
        /// is identical whatever the number.
        #[arg(long, value_name = "N")]
        jobs: Option<usize>,
        /// Run only shard I of N (cells whose index mod N is I-1); combine
        /// shard directories with `simctl merge`.
        #[arg(long, value_name = "I/N")]
        shard: Option<String>,
        /// Do not run: write Slurm batch scripts (a job array, one shard
        /// per task, and a dependent merge job) and print the sbatch
        /// commands.
        #[arg(long)]
        slurm: bool,
        /// Array tasks (shards) of the --slurm job (default: the number of
        /// cells, at most 16).
        #[arg(long, value_name = "N", requires = "slurm", value_parser = at_least_one())]
        shards: Option<usize>,
        /// An #SBATCH option for both --slurm scripts, KEY=VALUE with KEY
        /// sbatch's long option (time=02:00:00, account=..., partition=...,
        /// mem=4G); repeatable; over the grid's [slurm] table. Each array
        /// task requests --cpus-per-task = --jobs (default 1).
        #[arg(long = "sbatch-opt", value_name = "KEY=VALUE", requires = "slurm")]
        sbatch_opt: Vec<String>,
    },
    /// Fit device- and host-profile parameters to measurements: Nelder–Mead
    /// over log-scaled bounded parameters, each evaluation running every
    /// target scenario in parallel; writes the calibrated profiles (comments
    /// kept) with a [calibration.record] table, and prints the fit.
    Calibrate {
        /// Device profile (configs/devices/*.toml) or phone
        /// (configs/phones/*.toml: its device and host profiles can be
        /// fitted, its scheduler is used for the runs).
        profile: PathBuf,
        /// Targets file (TOML): [[targets]] with scenario, metric (JSON
        /// path in the report, e.g. throughput.iops), value or band,
        /// optional weight and schedulers.
        #[arg(long, value_name = "FILE")]
        targets: PathBuf,
        /// A free parameter and its bounds, KEY=LOW:HIGH with KEY a
        /// device profile key as for --set (e.g.
        /// device.nand.t_r_us=40:120) or, for a phone, a host profile key
        /// (e.g. host.syscall_us=10:80). Repeatable; device and host
        /// parameters are fitted jointly.
        #[arg(long = "param", value_name = "KEY=LOW:HIGH", required = true)]
        params: Vec<String>,
        /// Nelder–Mead iterations at most.
        #[arg(long, value_name = "N", default_value_t = 30)]
        max_iters: u64,
        /// Where to write the calibrated device profile (needed when a
        /// device.* parameter is fitted).
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Where to write the calibrated host profile (needed when a host.*
        /// parameter is fitted).
        #[arg(long, value_name = "FILE")]
        host_out: Option<PathBuf>,
        /// Simulations run in parallel (default: one per core); the output
        /// is identical whatever the number.
        #[arg(long, value_name = "N")]
        jobs: Option<usize>,
    },
    /// Combine the output directories of `simctl sweep --shard` runs into
    /// the layout of an unsharded sweep, refusing overlapping or missing
    /// cells; or those of `simctl reproduce --ensemble M --shard I/N` into
    /// the unsharded ensemble (its `ensemble.json` says which).
    Merge {
        /// Shard output directories.
        #[arg(required = true, value_name = "DIR")]
        dirs: Vec<PathBuf>,
        /// Output directory.
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
    /// Compare a report (or comparison) with a baseline of the same
    /// workload, device, host and schema (`run.identity`); exit 0 when
    /// every metric is within tolerance or improved, 1 when one regressed
    /// beyond its tolerance (or improved, with --fail-on-improvement), 2 on
    /// unusable input or a baseline of another workload, device, host or
    /// schema.
    Check {
        /// The new report (JSON from --json of run, replay or compare).
        report: PathBuf,
        /// The baseline report to compare with.
        #[arg(long, value_name = "FILE")]
        baseline: PathBuf,
        /// Allowed change of a metric in percent, either way, e.g.
        /// `latency_us.p99=20`; adds metrics or overrides the defaults:
        /// throughput.iops, throughput.mb_per_s, read.iops, write.iops 3 %;
        /// latency_us.mean 10 %; latency_us.p99, read.latency_us.p99,
        /// write.latency_us.p99 15 %; latency_us.p999 25 %; fairness.jain
        /// 2 %; device.waf 5 %. Repeatable.
        #[arg(long = "tolerance", value_name = "METRIC=PCT")]
        tolerances: Vec<String>,
        /// Check even when the report and the baseline ran another
        /// workload, device, host or schema (the differences are listed).
        #[arg(long)]
        allow_mismatch: bool,
        /// Fail (exit 1) when a metric improved beyond its tolerance too: a
        /// baseline that is no longer representative.
        #[arg(long)]
        fail_on_improvement: bool,
    },
    /// Regenerate the seed papers' findings on each profile: a figure
    /// (PNG, SVG), its data (CSV) and a PASS/FAIL verdict per finding, and
    /// DIR/index.html; findings 2-4 also probe their mechanism on the
    /// generic profile across the mapping cache's sourced size range
    /// (DIR/finding-N-sensitivity.csv, never part of the verdict); exit 0
    /// when all pass, 1 when one fails, 2 on unusable input.
    Reproduce(ReproduceArgs),
    /// Draw a figure from reports, comparisons or request logs: latency
    /// CDFs, per-thread bars, throughput and queue depth over time, the
    /// address-difference scatter; speed against safety from crash sweeps.
    Plot {
        /// Inputs: JSON reports (`--json` of run, replay, sweep cells), a
        /// comparison (`compare --json`) or request logs (`run --log`);
        /// recognised by content. With `--kind crash-safety`: crash
        /// sweeps' output directories (or their results.csv).
        #[arg(required = true, value_name = "FILE")]
        inputs: Vec<PathBuf>,
        /// What to draw.
        #[arg(long, value_enum)]
        kind: crate::plot::inputs::Kind,
        /// Output file; `.png` or `.svg` picks the format.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// With `--kind cdf` on a replay report with `trace.validation`:
        /// draw only this direction and size class's recorded and
        /// simulated CDFs, e.g. `write/4KiB` (classes `4KiB`, `8-16KiB`,
        /// `17-64KiB`, `>64KiB`).
        #[arg(long, value_name = "DIR/CLASS")]
        class: Option<crate::plot::inputs::ClassFilter>,
    },
    /// Trace tools: list formats, inspect a trace, convert it to CSV.
    #[command(subcommand)]
    Trace(TraceCommand),
    /// List the I/O schedulers with their tunables, defaults and units.
    Schedulers {
        /// Kernel tick rate used to show jiffies-based defaults.
        #[arg(long, default_value_t = 1000)]
        hz: u32,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// List the phones (`--phone NAME`): on disk in the nearest
    /// configs/phones/ of the current directory or its parents, and those
    /// bundled in the binary.
    Phones {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// List the scenarios `simctl run NAME` finds: on disk in the nearest
    /// configs/scenarios/, and those bundled in the binary.
    Scenarios {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Print a shell completion script, e.g. `simctl completions bash >
    /// ~/.local/share/bash-completion/completions/simctl`.
    Completions {
        /// The shell to complete in.
        shell: clap_complete::Shell,
    },
    /// Print the JSON Schema (draft 2020-12) of a document simctl writes,
    /// generated from the types that write it: `report` (`--json` of run
    /// and replay, schema `mmcsim-report/2`).
    Schema {
        /// Which document.
        #[arg(value_enum, default_value_t = SchemaDoc::Report)]
        doc: SchemaDoc,
        /// Instead, print the table of every key path with its type and
        /// meaning (the book's "Report keys" chapter).
        #[arg(long)]
        markdown: bool,
    },
    /// Print the manual page (roff), e.g. `simctl man > simctl.1`.
    Man {
        /// Instead, write one page per command (simctl.1,
        /// simctl-replay.1, ...) into this folder.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

/// A document whose JSON Schema `simctl schema` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SchemaDoc {
    /// The report of `run`/`replay --json`.
    Report,
}

/// A parser of counts that must be at least 1 (`--shards 0` is a usage
/// error, not silently one).
fn at_least_one() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::new().range(1..)
}

/// A count of at least 1, as u64.
fn at_least_one_u64() -> clap::builder::RangedU64ValueParser<u64> {
    clap::builder::RangedU64ValueParser::new().range(1..)
}

/// Options of `simctl reproduce`.
#[derive(Clone, Debug, Args)]
pub struct ReproduceArgs {
    /// Findings to reproduce, by number (`3`) or name (`finding-3`);
    /// default: all.
    #[arg(value_name = "FINDING")]
    pub findings: Vec<String>,
    /// A phone: a phone file, or a name in CONFIGS/phones/ (`generic`: the
    /// scenarios as written). Repeatable; default: every bundled phone and
    /// generic.
    #[arg(long = "phone", value_name = "NAME|FILE")]
    pub phones: Vec<String>,
    /// Override a setting in every run (as `simctl run --set`), applied
    /// after the profile and the finding's own settings. Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Seeds per comparison: every run repeats with seed 1..=N and each
    /// verdict is judged on the 95 % confidence interval (Student t) of
    /// the per-seed values. One seed gives no interval (UNRESOLVED).
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub seeds: u32,
    /// Output directory.
    #[arg(long, value_name = "DIR", default_value = "reproduce")]
    pub out: PathBuf,
    /// Simulations run in parallel (default: one per core); the outputs
    /// are identical whatever the number.
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// The folder of scenarios/, devices/, hosts/ and phones/.
    #[arg(long, value_name = "DIR", default_value = "configs")]
    pub configs: PathBuf,
    /// Sample each phone's `[uncertain]` internals at M points of a seeded
    /// Latin hypercube and run the findings in every configuration (at the
    /// verdict's clock, seeds as --seeds): writes DIR/ensemble.csv and the
    /// fraction of configurations in which each finding passes.
    #[arg(long, value_name = "M")]
    pub ensemble: Option<usize>,
    /// With --ensemble: run only shard I of N (configurations whose index
    /// mod N is I-1); combine shard directories with `simctl merge`.
    #[arg(long, value_name = "I/N", requires = "ensemble")]
    pub shard: Option<String>,
}

/// `simctl trace` subcommands.
#[derive(Debug, Subcommand)]
pub enum TraceCommand {
    /// List the trace formats mmcsim reads, with an example line each.
    Formats,
    /// Summarise a trace: request count, time span, operation mix, size
    /// histogram, sequential fraction, address range, per-process
    /// breakdown.
    Inspect {
        /// Trace file.
        trace: PathBuf,
        #[command(flatten)]
        read: ReadArgs,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Convert a trace to the native CSV format.
    Convert {
        /// Trace file.
        trace: PathBuf,
        /// Output format.
        #[arg(long, value_enum, value_name = "FORMAT", default_value_t = ConvertTo::Csv)]
        to: ConvertTo,
        /// Output file (default: stdout).
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
        #[command(flatten)]
        read: ReadArgs,
    },
}

/// What `simctl trace convert` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ConvertTo {
    /// The native CSV (`simctl trace formats`: native).
    Csv,
}

/// How a trace file is read (format, units, devices).
#[derive(Debug, Args, Default)]
pub struct ReadArgs {
    /// Trace format, overriding detection.
    #[arg(long, value_name = "NAME", ignore_case = true)]
    pub format: Option<Format>,
    /// Time unit for formats that do not fix one.
    #[arg(long, value_name = "UNIT", ignore_case = true)]
    pub time_unit: Option<TimeUnit>,
    /// Only this device of a multi-device trace: its id, or `MAJ,MIN` for
    /// a trace naming devices as blkparse does (`179,0`); `simctl trace
    /// inspect` lists them.
    #[arg(long, value_name = "ID|MAJ,MIN", value_parser = parse_device_id)]
    pub device_id: Option<u32>,
    /// Every device of a multi-device trace (not with `--device-id`).
    #[arg(long, conflicts_with = "device_id")]
    pub all_devices: bool,
}

/// A device id: a number, or `MAJ,MIN` (a `dev_t`, `major << 20 | minor`,
/// as blkparse, block ftrace and blktrace captures name devices).
fn parse_device_id(s: &str) -> Result<u32, String> {
    if s.contains(',') {
        return mmcsim::workload::trace::common::parse_dev(s.trim().as_bytes()).ok_or_else(|| {
            format!("`{s}`: expected MAJ,MIN with a major below 4096 and a minor below 2^20 (e.g. 179,0)")
        });
    }
    s.trim().parse::<u32>().map_err(|_| {
        format!("`{s}`: expected a device id (an unsigned 32-bit number) or MAJ,MIN (e.g. 179,0)")
    })
}

impl ReadArgs {
    /// The options for opening the trace.
    pub fn open_options(&self) -> OpenOptions {
        OpenOptions {
            format: self.format,
            time_unit: self.time_unit,
            device_id: self.device_id,
            all_devices: self.all_devices,
            rebase: false,
        }
    }
}

/// How a trace is read and replayed (for `replay`, and `compare` of a
/// trace).
#[derive(Debug, Args, Default)]
pub struct TraceArgs {
    /// How the file is read.
    #[command(flatten)]
    pub read: ReadArgs,
    /// Open loop at the recorded times, or closed loop per process (fair
    /// for comparing schedulers).
    #[arg(long, value_name = "MODE")]
    pub mode: Option<ReplayMode>,
    /// Time scale for timed replay (2 = twice as fast).
    #[arg(long, value_name = "X")]
    pub speed: Option<f64>,
    /// Requests beyond the device's capacity (default: error).
    #[arg(long, value_name = "HOW")]
    pub fit: Option<FitMode>,
    /// Replay this trace's writes and discards (unmeasured) before
    /// measurement, e.g. a Pixel 6a `_precond` file.
    #[arg(long, value_name = "FILE")]
    pub precondition: Option<PathBuf>,
}

/// The name a closed choice has on the command line and in a scenario.
fn name_of(v: &impl ValueEnum) -> String {
    v.to_possible_value()
        .map(|p| p.get_name().to_string())
        .unwrap_or_default()
}

impl TraceArgs {
    /// The options as `trace.<key>` overrides.
    pub fn sets(&self) -> Vec<(String, String)> {
        let mut s = Vec::new();
        let mut put = |k: &str, v: String| s.push((format!("trace.{k}"), v));
        if let Some(v) = self.read.format {
            put("format", v.name().to_string());
        }
        if let Some(v) = self.read.time_unit {
            put("time_unit", v.name().to_string());
        }
        if let Some(v) = self.read.device_id {
            put("device_id", v.to_string());
        }
        if self.read.all_devices {
            put("all_devices", "true".into());
        }
        if let Some(v) = &self.mode {
            put("mode", name_of(v));
        }
        if let Some(v) = self.speed {
            put("speed", v.to_string());
        }
        if let Some(v) = &self.fit {
            put("fit", name_of(v));
        }
        if let Some(v) = &self.precondition {
            put("precondition", v.display().to_string());
        }
        s
    }
}

/// Options of every simulating command (`replay`, `run`, `compare`).
#[derive(Debug, Args)]
pub struct SimArgs {
    /// Phone profile: NAME (configs/phones/NAME.toml, found from the
    /// current directory up) or FILE. Replaces the scenario's device
    /// profile, host profile and scheduler; --device, --scheduler and
    /// --set still apply on top.
    #[arg(long, value_name = "NAME|FILE")]
    pub phone: Option<String>,
    /// Device profile TOML (default: the scenario's, or the built-in
    /// generic eMMC).
    #[arg(long, value_name = "FILE")]
    pub device: Option<PathBuf>,
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
    /// Write the report as a tidy CSV table to FILE (`-` for stdout): one
    /// row per run, scheduler and metric, columns
    /// run,scenario,scheduler,seed,metric,value,unit.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Do not print the summary table.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Options of one simulation (`replay`, `run`).
#[derive(Debug, Args)]
pub struct RunArgs {
    /// I/O scheduler by kernel name (see `simctl schedulers`).
    #[arg(long, value_name = "NAME")]
    pub scheduler: Option<String>,
    /// Write one CSV row per device request to FILE.
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Accept a run that completes no request (a trace without records, a
    /// job with requests = 0): the report then says "empty": true. Without
    /// it such a run is an error.
    #[arg(long)]
    pub allow_empty: bool,
    /// Write the device state right after preconditioning to FILE (a
    /// compact versioned binary file), for --load-state.
    #[arg(long, value_name = "FILE", conflicts_with = "load_state")]
    pub save_state: Option<PathBuf>,
    /// Start from a device state saved with --save-state instead of
    /// preconditioning (same device profile, [precondition] and seed; the
    /// report is the same byte for byte).
    #[arg(long, value_name = "FILE")]
    pub load_state: Option<PathBuf>,
    /// Check the FTL after every device command: each logical page maps to
    /// its newest version and each valid physical page is mapped exactly
    /// once (cost per command proportional to the pages it touched). The
    /// first violation stops the run with an error; the report gains an
    /// "integrity" section.
    #[arg(long)]
    pub check_integrity: bool,
    /// End the run with an error at the first system call that fails (a
    /// script's on_error = "stop" for every thread): names the script,
    /// the call and its errno.
    #[arg(long)]
    pub strict: bool,
    /// Cut the power at this simulated instant (with a unit: ns, us, ms
    /// or s, e.g. 250ms): the run stops there, the card loses what its
    /// `[power_loss]` profile says and recovers, and the report gains a
    /// `crash` section (see `simctl crash`).
    #[arg(long, value_name = "TIME")]
    pub power_cut: Option<String>,
    /// What goes to standard output: `normal` (the summary table), `json`
    /// (fio's JSON output: jobs[].read/write with iops, bw, clat_ns
    /// percentiles ..., for scripts that parse fio) or `json+` (with the
    /// latency histograms' buckets). For `run` of a job file or scenario
    /// with [[jobs]].
    #[arg(long, value_name = "FORMAT", default_value = "normal")]
    pub output_format: crate::fio_out::OutputFormat,
    #[command(flatten)]
    pub sim: SimArgs,
}
