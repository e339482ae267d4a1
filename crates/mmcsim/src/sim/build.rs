//! Building a simulation: each stage from its part of the scenario, the
//! device preconditioned and the files laid out (unmeasured), in an order
//! that keeps every random stream and report byte-stable.

use super::{mount, Simulation};
use crate::block::{BlockLayer, BlockStage};
use crate::config::Scenario;
use crate::driver::Driver;
use crate::engine::EventQueue;
use crate::error::{Error, Result};
use crate::host::{FileSpec, Files, Host, Mount, PageCache};
use crate::platform::{Cpu, Platform, SharedCpu};
use crate::sched::{Registry, SchedParams};
use crate::stats::report::Collector;
use crate::types::{PAGE_BYTES, SECTORS_PER_PAGE};
use crate::workload::jobs::Jobs;
use crate::workload::replay::{self, Replay};

/// Builds every stage of `sc`, the scheduler from `registry`.
pub(super) fn build(sc: Scenario, registry: &Registry) -> Result<Simulation> {
    let profile = sc.device_config()?;
    // The CPU every software layer runs on; the CMDQ driver ends requests
    // on the interrupt core.
    let cmdq = sc
        .driver
        .resolve(profile.cmdq.as_ref().map(|q| q.depth))
        .map_err(Error::config)?
        .is_some();
    let cpu = SharedCpu::new(Cpu::new(&sc.host, &sc.scheduler.name, cmdq));
    let platform = Platform::new(cpu.clone());
    let mut driver = Driver::new(&sc.driver, &profile, cpu.clone())?;
    let capacity = driver.device().capacity_sectors();

    let params = SchedParams {
        hz: sc.scheduler.hz,
        nonrot: !sc.queue.rotational,
    };
    let mut elevator = registry
        .create(&sc.scheduler.name, &params)
        .map_err(|e| Error::config(e.to_string()))?;
    for (name, value) in sc.scheduler.tunable_text() {
        elevator
            .set_tunable(&name, &value)
            .map_err(|e| Error::config(format!("iosched.{name}: {e}")))?;
    }
    let max_bio_sectors = sc.queue.max_sectors_kb * 2;
    let block = BlockStage::new(BlockLayer::new(sc.queue.clone(), elevator, params));

    // Files: contiguous extents checked against the capacity, or an ext4
    // file system holding them.
    let mut cache = PageCache::new(sc.host.page_cache_mib * (1 << 20) / PAGE_BYTES);
    let device = driver.device_mut();
    let (mount, precondition) = match &sc.fs {
        None => {
            let specs: Vec<FileSpec> = sc
                .files
                .iter()
                .map(|f| FileSpec {
                    name: f.name.clone(),
                    size_mib: f.size_mib,
                    offset_mib: f.offset_mib,
                })
                .collect();
            let files = Files::layout(&specs, capacity, &mut cache)?;
            // Unmeasured set-up: precondition, then write the files' data.
            let precondition = device.precondition(&sc.precondition, sc.seed);
            for (f, spec) in files.all().iter().zip(&sc.files) {
                if spec.prewrite {
                    device.write_untimed(f.first_sector, f.pages * SECTORS_PER_PAGE);
                }
            }
            (Mount::Raw(files), precondition)
        }
        Some(fs) => {
            let ext4 = mount::mkfs_and_populate(&sc, fs, capacity, &mut cache)?;
            let precondition = device.precondition(&sc.precondition, sc.seed);
            let prewritten: Vec<u32> = sc
                .files
                .iter()
                .filter(|f| f.prewrite)
                .filter_map(|f| ext4.lookup(&mount::path_components(&f.name)).ok())
                .collect();
            for (sector, sectors) in ext4.written_extents(&|ino| prewritten.contains(&ino)) {
                device.write_untimed(sector, sectors);
            }
            (Mount::Ext4(Box::new(ext4)), precondition)
        }
    };
    let precondition_trace = match sc
        .trace
        .as_ref()
        .and_then(|t| t.precondition.as_ref().map(|p| (t, p)))
    {
        Some((t, p)) => Some(replay::precondition(device, &sc.resolve(p), p, t)?),
        None => None,
    };
    device.reset_stats();

    let mut collector = Collector::new();
    let flusher = Jobs::buffered_writes(&sc.jobs, &sc.scripts);
    let mut host = Host::new(cpu, cache, mount, sc.writeback, flusher, max_bio_sectors);
    let jobs = Jobs::build(&sc.jobs, &sc.scripts, sc.seed, &mut host, &mut collector)?;
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
        driver,
        collector,
        log: None,
        precondition,
        bios: Vec::with_capacity(64),
        error: None,
        end: 0,
        sc,
    })
}
