//! Power cuts (`simctl crash`, `run --power-cut`): a run stopped at the
//! instant power fails, the card's state and recovery there
//! ([`crate::device::power_loss`]), and the crash report over many cuts.
//!
//! A cut is its own run from the start to its instant, so every cut sees
//! exactly the state an uninterrupted run has at that instant: same
//! scenario and seed ⇒ the same cut, byte for byte. Events at the instant
//! itself do not run (power fails first).

use super::{Report, RunOptions, Simulation};
use crate::device::power_loss::{CutOutcome, CutState, DurableAck, Readback};
use crate::error::Result;
use crate::host::durability::FileWriteLog;
use crate::host::fs::recovery::{FsRecovery, MediaAfterCut, PageState};
use crate::types::Ns;
pub use crate::workload::sqlite::recovery::SqliteCrash;
use crate::workload::sqlite::recovery::{FileMedia, FilePage};
use serde::Serialize;

/// Where power fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PowerCut {
    /// At this simulated instant, ns (before the events due then).
    At(Ns),
    /// Right after the K-th event handled (1-based; 0 = before the first),
    /// at that event's time.
    AfterEvent(u64),
}

impl Simulation {
    /// Runs the workload until power fails at `cut`, then cuts the
    /// device's power and recovers it: the report covers what ran before
    /// the cut, with a `crash` section of one cut.
    pub fn run_to_cut(mut self, opts: RunOptions, cut: PowerCut) -> Result<Report> {
        if opts.check_integrity {
            return Err(crate::error::Error::Exclusive {
                a: "--check-integrity",
                b: "a power cut",
                why: "both follow the FTL's translation journal",
            });
        }
        self.block.driver_mut().device_mut().start_power_tracking();
        self.host.record_durability();
        for p in self.jobs.programs_mut() {
            p.record_crash();
        }
        self.start(opts)?;
        let at = self.run_events(Some(cut))?.unwrap_or(self.end);
        let acks: Vec<DurableAck> = self
            .host
            .durability_acks()
            .iter()
            .map(|a| DurableAck {
                at: a.at,
                sector: a.sector,
                sectors: a.sectors,
            })
            .collect();
        let state = self
            .block
            .driver()
            .device()
            .power_cut(at, &acks)
            .expect("power tracking started above");
        let fs = self.host.fs_recovery(&Media(&state), at);
        let mut sqlite = SqliteCrash::default();
        if let Some(log) = self.host.file_write_log() {
            let files = Files {
                log,
                media: Media(&state),
            };
            for p in self.jobs.programs() {
                if let Some(s) = p.sqlite_recover(&files) {
                    sqlite.add(&s);
                }
            }
        }
        if let Some(log) = self.log.take() {
            log.finish()
                .map_err(|source| crate::error::Error::RequestLog { source })?;
        }
        let mut report = super::report::build(&self);
        report.crash = Some(CrashReport::from_cuts(vec![CutReport {
            device: state.outcome,
            fs,
            sqlite,
        }]));
        Ok(report)
    }
}

/// The card's recovered content as the host's recovery reads it.
struct Media<'a>(&'a CutState);

impl MediaAfterCut for Media<'_> {
    fn page(&self, lpn: u32, submitted: Ns) -> PageState {
        let before = self.0.version_arrived_by(lpn, submitted);
        match self.0.readback(lpn) {
            Readback::Version(v) if v > before => PageState::Since,
            Readback::Version(_) => PageState::Before,
            _ => PageState::Unreadable,
        }
    }
}

/// The files of the host as the card holds them after the cut.
struct Files<'a> {
    log: &'a FileWriteLog,
    media: Media<'a>,
}

impl FileMedia for Files<'_> {
    fn page(&self, path: &str, since: Ns, until: Ns, page: u64) -> FilePage {
        let Some(file) = self.log.file_of(path, since) else {
            return FilePage::Unwritten;
        };
        let writes = self.log.page_writes(file, page, since, until);
        // The page's newest location; older bios to it, newest first.
        let Some(&(lpn, _)) = writes.last() else {
            return FilePage::Unwritten;
        };
        for &(_, at) in writes.iter().rev().filter(|(l, _)| *l == lpn) {
            match self.media.page(lpn, at) {
                PageState::Since => return FilePage::Written(at),
                PageState::Unreadable => return FilePage::Torn,
                PageState::Before => {}
            }
        }
        FilePage::Unwritten
    }
}

/// One cut: the card's numbers and the file system's recovery.
#[derive(Clone, Debug, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct CutReport {
    /// The card after the cut and the FTL's recovery.
    #[serde(flatten)]
    pub device: CutOutcome,
    /// The file system's replay and check at mount.
    pub fs: FsRecovery,
    /// SQLite's open after the cut (hot-journal rollback, WAL replay)
    /// and its check.
    pub sqlite: SqliteCrash,
}

impl CutReport {
    /// True when the cut broke a promise the stack made: an acknowledged
    /// write lost or another page's data read (a flying write); the file
    /// system inconsistent or missing a committed transaction after its
    /// replay; SQLite missing a committed transaction, showing an
    /// uncommitted one, or holding torn or mixed pages after its recovery.
    /// A torn page of a write never acknowledged is not one (the write may
    /// be lost; its page is only unreadable).
    pub fn violates(&self) -> bool {
        let d = &self.device;
        let q = &self.sqlite;
        d.acked_writes_lost
            + d.flying_writes
            + self.fs.inconsistencies()
            + self.fs.committed_transactions_lost
            + q.committed_lost
            + q.uncommitted_visible
            + q.corrupt_pages
            > 0
    }
}

/// A mean and a 99th percentile.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct MeanP99 {
    /// Mean.
    pub mean: f64,
    /// 99th percentile (nearest rank).
    pub p99: f64,
}

/// The crash report over a set of cuts: totals over every cut, and each
/// cut's numbers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct CrashReport {
    /// Cuts made.
    pub cuts: u64,
    /// Acknowledged 4 KiB pages lost, summed over the cuts (each cut
    /// counts the logical pages whose acknowledged version did not read
    /// back: an fsync or O_SYNC write returned, or a FUA write or
    /// FLUSH_CACHE completed, and the data is not durable).
    pub acked_writes_lost: u64,
    /// Cuts that lost at least one acknowledged write.
    pub cuts_losing_acked_writes: u64,
    /// Cuts after which some promise was broken ([`CutReport::violates`]):
    /// an acknowledged write lost, a flying write, a file-system
    /// inconsistency or committed transaction lost, or a SQLite committed
    /// transaction lost, uncommitted one visible or corrupt page. The
    /// safety axis of a crash sweep (`simctl plot --kind crash-safety`).
    pub cuts_violating: u64,
    /// Logical pages reading torn data, summed over the cuts.
    pub torn_pages: u64,
    /// Logical pages lost to MLC paired-page corruption, summed.
    pub paired_page_victims: u64,
    /// Logical pages reading another page's data, summed.
    pub flying_writes: u64,
    /// Logical pages reading an older version than the card received,
    /// summed (what a volatile cache loses).
    pub older_pages: u64,
    /// Cuts that interrupted an upper (MSB) page program.
    pub msb_program_cuts: u64,
    /// Acknowledged pages lost to paired pages, summed.
    pub acked_lost_to_paired_pages: u64,
    /// File-system inconsistencies found after recovery, summed over the
    /// cuts: the sum of `fs`'s bad replayed log blocks, partial
    /// transactions, torn metadata blocks and stale data blocks.
    pub fs_inconsistencies: u64,
    /// The file system's recovery, summed over the cuts (ext4 with a
    /// journal; zero otherwise).
    pub fs: FsRecovery,
    /// SQLite after its recovery, summed over the cuts (connections of
    /// `[[sqlite_jobs]]`; zero without one).
    pub sqlite: SqliteCrash,
    /// The FTL's mount time after each cut, ms.
    pub recovery_ms: MeanP99,
    /// Each cut, in the order made.
    pub per_cut: Vec<CutReport>,
}

impl CrashReport {
    /// The report of `cuts`.
    pub fn from_cuts(per_cut: Vec<CutReport>) -> CrashReport {
        let cuts: Vec<&CutOutcome> = per_cut.iter().map(|c| &c.device).collect();
        let sum = |f: fn(&CutOutcome) -> u64| cuts.iter().map(|c| f(c)).sum::<u64>();
        let mut fs = FsRecovery::default();
        let mut sqlite = SqliteCrash::default();
        for c in &per_cut {
            fs.add(&c.fs);
            sqlite.add(&c.sqlite);
        }
        let mut ms: Vec<f64> = cuts.iter().map(|c| c.recovery_ms).collect();
        ms.sort_by(f64::total_cmp);
        let recovery_ms = if ms.is_empty() {
            MeanP99::default()
        } else {
            let rank = ((ms.len() as f64 * 0.99).ceil() as usize).clamp(1, ms.len());
            MeanP99 {
                mean: ms.iter().sum::<f64>() / ms.len() as f64,
                p99: ms[rank - 1],
            }
        };
        CrashReport {
            cuts: cuts.len() as u64,
            acked_writes_lost: sum(|c| c.acked_writes_lost),
            cuts_losing_acked_writes: sum(|c| u64::from(c.acked_writes_lost > 0)),
            cuts_violating: per_cut.iter().map(|c| u64::from(c.violates())).sum(),
            torn_pages: sum(|c| c.torn_pages),
            paired_page_victims: sum(|c| c.paired_page_victims),
            flying_writes: sum(|c| c.flying_writes),
            older_pages: sum(|c| c.older_pages),
            msb_program_cuts: sum(|c| u64::from(c.msb_program_cut)),
            acked_lost_to_paired_pages: sum(|c| c.acked_lost_to_paired_pages),
            fs_inconsistencies: fs.inconsistencies(),
            fs,
            sqlite,
            recovery_ms,
            per_cut,
        }
    }

    /// A text summary.
    pub fn to_table(&self) -> String {
        format!(
            "crash: {} cuts ({} breaking a promise) | acknowledged writes lost {} (on {} cuts; {} to paired pages) | torn pages {} | paired-page victims {} | flying writes {} | older pages {} | MSB-program cuts {} | fs inconsistencies {} ({} transactions replayed, {} committed lost) | sqlite committed lost {} / uncommitted visible {} / corrupt pages {} | recovery ms mean {:.1} p99 {:.1}\n",
            self.cuts,
            self.cuts_violating,
            self.acked_writes_lost,
            self.cuts_losing_acked_writes,
            self.acked_lost_to_paired_pages,
            self.torn_pages,
            self.paired_page_victims,
            self.flying_writes,
            self.older_pages,
            self.msb_program_cuts,
            self.fs_inconsistencies,
            self.fs.transactions_replayed,
            self.fs.committed_transactions_lost,
            self.sqlite.committed_lost,
            self.sqlite.uncommitted_visible,
            self.sqlite.corrupt_pages,
            self.recovery_ms.mean,
            self.recovery_ms.p99,
        )
    }
}

/// How a crash campaign picks its cuts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CutPlan {
    /// `cuts` instants drawn uniformly over `[0, end]` (`end`: when the
    /// uncut run's last call or request completed) from the seeded stream
    /// `power-cut` of `seed`.
    Seeded {
        /// Number of cuts.
        cuts: u64,
        /// Seed of the draw.
        seed: u64,
    },
    /// One cut.
    One(PowerCut),
}

/// A crash campaign's result: the uncut run (its speed) and the cuts.
#[derive(Clone, Debug)]
pub struct CrashCampaign {
    /// The report of the uncut run.
    pub full: Report,
    /// The cuts' report.
    pub crash: CrashReport,
}

/// The instants of `plan` for a run ending at `end` ns.
pub fn cut_instants(plan: CutPlan, end: Ns) -> Vec<PowerCut> {
    use rand::Rng;
    match plan {
        CutPlan::One(c) => vec![c],
        CutPlan::Seeded { cuts, seed } => {
            let mut rng = crate::engine::component_rng(seed, "power-cut");
            (0..cuts)
                .map(|_| PowerCut::At(rng.random_range(0..=end)))
                .collect()
        }
    }
}

impl CrashCampaign {
    /// The uncut run's report with the `crash` section of the cuts (what a
    /// crash sweep's cell file holds).
    pub fn into_report(self) -> Report {
        let mut r = self.full;
        r.crash = Some(self.crash);
        r
    }
}

/// Runs `sc` once uncut (its speed and its end), then once per cut of
/// `plan`, each from the start on a copy of one preconditioned device;
/// `progress(done, total)` is called after each cut.
pub fn crash_campaign(
    sc: &crate::config::Scenario,
    registry: &crate::sched::Registry,
    plan: CutPlan,
    progress: impl FnMut(u64, u64),
) -> Result<CrashCampaign> {
    let device = super::PreparedDevice::new(sc)?;
    crash_campaign_on(sc, registry, &device, plan, progress)
}

/// [`crash_campaign`] on `device`, preconditioned for `sc` already (a
/// sweep shares one between the cells that precondition the same device).
pub fn crash_campaign_on(
    sc: &crate::config::Scenario,
    registry: &crate::sched::Registry,
    device: &super::PreparedDevice,
    plan: CutPlan,
    mut progress: impl FnMut(u64, u64),
) -> Result<CrashCampaign> {
    let full = Simulation::with_prepared_device(sc.clone(), registry, device)?.run(RunOptions {
        allow_empty: true,
        ..RunOptions::default()
    })?;
    let instants = cut_instants(plan, full.cost.last_done_ns);
    let total = instants.len() as u64;
    let mut cuts: Vec<CutReport> = Vec::with_capacity(instants.len());
    for (i, cut) in instants.into_iter().enumerate() {
        let sim = Simulation::with_prepared_device(sc.clone(), registry, device)?;
        let r = sim.run_to_cut(
            RunOptions {
                allow_empty: true,
                ..RunOptions::default()
            },
            cut,
        )?;
        if let Some(c) = r.crash {
            cuts.extend(c.per_cut);
        }
        progress(i as u64 + 1, total);
    }
    Ok(CrashCampaign {
        full,
        crash: CrashReport::from_cuts(cuts),
    })
}
