//! Building a simulation: each stage from its part of the scenario, the
//! device preconditioned and the files laid out (unmeasured), in an order
//! that keeps every random stream and report byte-stable.

use super::{mount, Simulation};
use crate::block::{BlockLayer, BlockStage};
use crate::config::Scenario;
use crate::device::{Emmc, PreconditionSummary};
use crate::driver::Driver;
use crate::engine::EventQueue;
use crate::error::{Error, Result};
use crate::host::{FileSpec, Files, Host, Mount, PageCache};
use crate::platform::{Cpu, Platform, SharedCpu};
use crate::sched::{Registry, SchedParams};
use crate::stats::report::Collector;
use crate::types::{Op, PAGE_BYTES, SECTORS_PER_PAGE};
use crate::workload::jobs::Jobs;
use crate::workload::replay::{self, Replay};
use std::borrow::Cow;

/// A device built from a scenario's profile and preconditioned with its
/// settings and seed, kept to start several simulations from (see
/// [`Simulation::with_prepared_device`]): preconditioning dominates the
/// start-up of a short run, and a sweep runs many cells on the same
/// profile, fill and seed.
///
/// It holds its own copy of the device (a few bytes per logical page);
/// each simulation started from it gets a clone.
#[derive(Clone, Debug)]
pub struct PreparedDevice {
    key: String,
    device: Emmc,
    summary: PreconditionSummary,
}

impl PreparedDevice {
    /// Builds the device `sc` describes and preconditions it, exactly as
    /// [`Simulation::new`] would before laying out files.
    pub fn new(sc: &Scenario) -> Result<PreparedDevice> {
        let key = PreparedDevice::key(sc)?;
        let mut device = Emmc::new(&sc.device_config()?)?;
        let summary = device.precondition(&sc.precondition, sc.seed);
        Ok(PreparedDevice {
            key,
            device,
            summary,
        })
    }

    /// What the preconditioned device depends on — the device profile
    /// with its overrides, the `[precondition]` settings and the seed — as
    /// a string: two scenarios with the same key can share one
    /// [`PreparedDevice`].
    pub fn key(sc: &Scenario) -> Result<String> {
        serde_json::to_string(&(sc.device_config()?, &sc.precondition, sc.seed))
            .map_err(Error::DeviceKey)
    }

    /// What preconditioning did.
    pub fn summary(&self) -> &PreconditionSummary {
        &self.summary
    }

    /// The device state as a compact versioned file (`simctl --save-state`),
    /// loadable with [`PreparedDevice::load_state`] by a scenario with the
    /// same key.
    pub fn save_state(&self) -> Result<Vec<u8>> {
        self.device
            .save_state(&self.summary, &self.key)
            .map_err(|source| Error::DeviceState { path: None, source })
    }

    /// The device `sc` describes, in the state saved in `bytes` (read from
    /// `path`, named in errors) instead of preconditioned: a state of
    /// another geometry, profile, `[precondition]` or seed, or a truncated
    /// or corrupted file, is an error naming the file and what is wrong.
    pub fn load_state(
        sc: &Scenario,
        bytes: &[u8],
        path: &std::path::Path,
    ) -> Result<PreparedDevice> {
        let key = PreparedDevice::key(sc)?;
        let mut device = Emmc::to_load(&sc.device_config()?)?;
        let summary = device
            .load_state(bytes, &key)
            .map_err(|source| Error::DeviceState {
                path: Some(path.to_path_buf()),
                source,
            })?;
        Ok(PreparedDevice {
            key,
            device,
            summary,
        })
    }
}

/// Builds every stage of `sc`, the scheduler from `registry`.
pub(super) fn build(sc: Scenario, registry: &Registry) -> Result<Simulation> {
    build_on(sc, registry, None)
}

/// Builds every stage of `sc`; the device is `prepared`'s (cloned when
/// borrowed, moved when owned) when given (which must have been prepared
/// from a scenario with the same
/// [`PreparedDevice::key`]), else built and preconditioned here.
pub(super) fn build_on(
    sc: Scenario,
    registry: &Registry,
    prepared: Option<Cow<'_, PreparedDevice>>,
) -> Result<Simulation> {
    if let Some(p) = &prepared {
        if PreparedDevice::key(&sc)? != p.key {
            return Err(Error::PreparedMismatch);
        }
    }
    let (mut driver, cpu, prepared) = build_driver(&sc, prepared)?;
    let platform = Platform::new(cpu.clone());
    let capacity = driver.device().capacity_sectors();
    let layer = build_block_layer(&sc, registry, &mut driver)?;
    let max_bio_sectors = sc.queue.max_sectors_kb * 2;
    let mut cache = PageCache::new(sc.host.page_cache_mib * (1 << 20) / PAGE_BYTES);
    let device = driver.device_mut();
    let (mount, precondition) = lay_out_files(&sc, device, capacity, &mut cache, prepared)?;
    let precondition_trace = precondition_with_trace(&sc, device, capacity)?;
    device.reset_stats();
    let block = BlockStage::new(layer, driver);

    let mut collector = Collector::new();
    let flusher = Jobs::buffered_writes(&sc.jobs, &sc.scripts);
    let mut host = Host::new(cpu, cache, mount, sc.writeback, flusher, max_bio_sectors);
    let mut jobs = Jobs::build(
        &sc.jobs,
        &sc.scripts,
        sc.seed,
        platform.cpu().clone(),
        &mut host,
        &mut collector,
    )?;
    add_programs(&sc, &mut jobs, &mut host, &mut collector);
    // The flusher takes the thread index after the synthetic threads, and
    // traced processes follow.
    let replay = match &sc.trace {
        Some(t) => Some(Replay::open(
            &sc.resolve(&t.path),
            t,
            capacity,
            host.threads(),
            max_bio_sectors,
            precondition_trace,
        )?),
        None => None,
    };
    Ok(Simulation {
        q: EventQueue::new(),
        jobs,
        replay,
        host,
        platform,
        block,
        collector,
        log: None,
        precondition,
        end: 0,
        integrity: None,
        events: 0,
        sc,
    })
}

/// The CPU every software layer runs on and the driver with its device:
/// a copy (or the state) of the prepared one, else a new one,
/// preconditioned later once the files are laid out. Built once: the copy
/// does not overwrite a fresh device (half the page faults of a sweep
/// cell's start-up). Also returns what the prepared device's
/// preconditioning did.
fn build_driver(
    sc: &Scenario,
    prepared: Option<Cow<'_, PreparedDevice>>,
) -> Result<(Driver, SharedCpu, Option<PreconditionSummary>)> {
    let profile = sc.device_config()?;
    // The CMDQ driver ends requests on the interrupt core.
    let cmdq = sc
        .driver
        .resolve(profile.cmdq.as_ref().map(|q| q.depth))?
        .is_some();
    let cpu = SharedCpu::new(Cpu::new(&sc.host, &sc.scheduler.name, cmdq));
    let (device, prepared) = match prepared {
        Some(Cow::Borrowed(p)) => (p.device.clone(), Some(p.summary.clone())),
        Some(Cow::Owned(p)) => (p.device, Some(p.summary)),
        None => (Emmc::new(&profile)?, None),
    };
    let driver = Driver::with_device(&sc.driver, &profile, device, cpu.clone())?;
    Ok((driver, cpu, prepared))
}

/// The block layer with the scenario's scheduler (from `registry`) and
/// its tunables; tells `driver` whether the scheduler marks urgent reads.
fn build_block_layer(
    sc: &Scenario,
    registry: &Registry,
    driver: &mut Driver,
) -> Result<BlockLayer> {
    let params = SchedParams {
        hz: sc.scheduler.hz,
        nonrot: !sc.queue.rotational,
    };
    let mut elevator = registry.create(&sc.scheduler.name, &params)?;
    for (name, value) in sc.scheduler.tunable_text() {
        elevator
            .set_tunable(&name, &value)
            .map_err(|source| Error::Tunable {
                name: name.to_string(),
                source,
            })?;
    }
    driver.set_scheduler_marks_urgent(elevator.is_urgent().is_some());
    Ok(BlockLayer::new(sc.queue.clone(), elevator, params))
}

/// Files: contiguous extents checked against the capacity, or a file
/// system holding them. Unmeasured set-up: the device is preconditioned
/// (unless `prepared`), then the files' data written.
fn lay_out_files(
    sc: &Scenario,
    device: &mut Emmc,
    capacity: u64,
    cache: &mut PageCache,
    prepared: Option<PreconditionSummary>,
) -> Result<(Mount, PreconditionSummary)> {
    let Some(fs) = &sc.fs else {
        let specs: Vec<FileSpec> = sc
            .files
            .iter()
            .map(|f| FileSpec {
                name: f.name.clone(),
                size_mib: f.size_mib,
                offset_mib: f.offset_mib,
            })
            .collect();
        let files = Files::layout(&specs, capacity, cache)?;
        let precondition = precondition_or_clone(device, prepared, sc);
        for (f, spec) in files.all().iter().zip(&sc.files) {
            if spec.prewrite {
                device.write_untimed(f.first_sector, f.pages * SECTORS_PER_PAGE);
            }
        }
        return Ok((Mount::Raw(files), precondition));
    };
    let mut mounted = mount::mkfs_and_populate(sc, fs, capacity, cache)?;
    let precondition = precondition_or_clone(device, prepared, sc);
    let prewritten: Vec<u32> = sc
        .files
        .iter()
        .filter(|f| f.prewrite)
        .filter_map(|f| mounted.lookup(&mount::path_components(&f.name)).ok())
        .collect();
    for (sector, sectors) in mounted.written_extents(&|ino| prewritten.contains(&ino)) {
        device.write_untimed(sector, sectors);
    }
    if fs.fstrim {
        for (sector, sectors) in mounted.fstrim() {
            device.trim_untimed(sector, sectors);
        }
    }
    Ok((Mount::Fs(mounted), precondition))
}

/// Applies the `[trace] precondition` trace's writes and discards to
/// `device` (unmeasured), when there is one.
fn precondition_with_trace(
    sc: &Scenario,
    device: &mut Emmc,
    capacity: u64,
) -> Result<Option<replay::PreconditionTrace>> {
    let Some((t, p)) = sc
        .trace
        .as_ref()
        .and_then(|t| t.precondition.as_ref().map(|p| (t, p)))
    else {
        return Ok(None);
    };
    let mut apply = |op, sector, sectors| match op {
        Op::Write => device.write_untimed(sector, sectors),
        Op::Discard => device.trim_untimed(sector, sectors),
        Op::Read | Op::Flush => {}
    };
    Ok(Some(replay::precondition(
        capacity,
        &mut apply,
        &sc.resolve(p),
        p,
        t,
    )?))
}

/// Preconditions `device` as `sc` says, unless it is a prepared device's
/// copy (`prepared`: what its preconditioning did).
fn precondition_or_clone(
    device: &mut Emmc,
    prepared: Option<PreconditionSummary>,
    sc: &Scenario,
) -> PreconditionSummary {
    match prepared {
        Some(summary) => summary,
        None => device.precondition(&sc.precondition, sc.seed),
    }
}

/// Adds the SQLite jobs and the AndroBench suite of `sc` to `jobs` (their
/// threads follow the job and script threads).
fn add_programs(sc: &Scenario, jobs: &mut Jobs, host: &mut Host, collector: &mut Collector) {
    for program in super::programs::build_all(sc) {
        jobs.add_program(program, host, collector);
    }
}
