//! The run report: a stable, versioned JSON schema and a human table.
//!
//! Units are in the field names (`_us`, `_s`, `mb_per_s` = 10^6 bytes per
//! second). Latency is measured per workload call (a read()/write()/fsync()
//! of a synthetic thread, or a trace record) from issue to completion.

use super::histogram::{LatencyDistribution, LatencyHistogram, LatencySummary};
use super::thread_io::{DiskIo, ThreadIo};
use crate::types::{Ns, NS_PER_S};
use serde::Serialize;
use std::collections::BTreeMap;

/// Version tag of the report schema.
pub const SCHEMA: &str = "mmcsim-report/2";

/// Counts of workload calls by kind.
#[derive(Clone, Debug, Default, Serialize, PartialEq, schemars::JsonSchema)]
pub struct RequestCounts {
    /// All calls (reads, writes, discards, flushes, fsyncs).
    pub count: u64,
    /// Read calls.
    pub reads: u64,
    /// Write calls.
    pub writes: u64,
    /// Discard records.
    pub discards: u64,
    /// Flush records.
    pub flushes: u64,
    /// fsync() calls.
    pub fsyncs: u64,
    /// fdatasync() calls (absent when none).
    #[serde(skip_serializing_if = "is_zero")]
    pub fdatasyncs: u64,
    /// sync() calls (absent when none).
    #[serde(skip_serializing_if = "is_zero")]
    pub syncs: u64,
    /// Namespace and descriptor calls: open, close, lseek, ftruncate,
    /// unlink, rename, mkdir (absent when none).
    #[serde(skip_serializing_if = "is_zero")]
    pub metadata_calls: u64,
    /// Bytes read by the workload.
    pub bytes_read: u64,
    /// Bytes written by the workload.
    pub bytes_written: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Throughput over the measured span (first issue to last completion).
#[derive(Clone, Debug, Default, Serialize, PartialEq, schemars::JsonSchema)]
pub struct Throughput {
    /// Calls per second.
    pub iops: f64,
    /// 10^6 bytes per second (reads + writes).
    pub mb_per_s: f64,
}

/// One direction's numbers.
#[derive(Clone, Debug, Default, Serialize, PartialEq, schemars::JsonSchema)]
pub struct DirectionStats {
    /// Calls.
    pub count: u64,
    /// Calls per second over the whole measured span.
    pub iops: f64,
    /// 10^6 bytes per second over the whole measured span.
    pub mb_per_s: f64,
    /// Latency distribution, µs.
    pub latency_us: LatencySummary,
}

/// One thread's (or traced process's) numbers.
#[derive(Clone, Debug, Default, Serialize, PartialEq, schemars::JsonSchema)]
pub struct ThreadStats {
    /// Thread index in the workload.
    pub id: u32,
    /// Job or process name.
    pub name: String,
    /// Process id.
    pub pid: u32,
    /// Calls completed.
    pub requests: u64,
    /// Calls per second over the thread's own span (first issue to last
    /// completion).
    pub iops: f64,
    /// 10^6 bytes per second over the thread's own span.
    pub mb_per_s: f64,
    /// Latency distribution, µs.
    pub latency_us: LatencySummary,
    /// System calls of the thread that failed (absent when none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calls: Option<FailedCalls>,
}

/// System calls that failed, by errno name (`"ENOENT": 2`). A failed call
/// is not counted in `requests`, the latency or the throughput: it costs
/// its thread the kernel path up to the failure and moves no data.
#[derive(Clone, Debug, Default, Serialize, PartialEq, schemars::JsonSchema)]
pub struct FailedCalls {
    /// Failed calls by errno name, in name order.
    pub failed: BTreeMap<&'static str, u64>,
}

impl FailedCalls {
    /// `Some` when any call failed.
    fn of(map: &BTreeMap<&'static str, u64>) -> Option<FailedCalls> {
        (!map.is_empty()).then(|| FailedCalls {
            failed: map.clone(),
        })
    }

    /// Failed calls in all.
    pub fn total(&self) -> u64 {
        self.failed.values().sum()
    }
}

/// Fairness across threads.
#[derive(Clone, Debug, Default, Serialize, PartialEq, schemars::JsonSchema)]
pub struct Fairness {
    /// Jain's index over the threads' throughput (1 = perfectly fair).
    pub jain: f64,
    /// The per-thread quantity the index is computed over.
    pub metric: &'static str,
}

/// A layer of the storage path a call's time is attributed to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layer {
    /// Dalvik → libcore → JNI above the system call.
    Platform,
    /// System-call entry, VFS, file system, page-cache copies.
    SyscallFs,
    /// Block layer and I/O scheduler CPU work on the calling thread: bio
    /// submission, plugging, the scheduler's insertion.
    BlockSubmit,
    /// Waiting in the block layer: from the end of the call's own path
    /// until the driver fetches the request it waits on (plug, scheduler
    /// queue, dispatch limits).
    QueueWait,
    /// MMC driver: mmcqd wake-up, dispatch hook, setup, DMA mapping, and
    /// waiting for the bus.
    Driver,
    /// The device serving the request's data command: from its issue on
    /// the bus to the host controller's transfer-complete interrupt.
    Device,
    /// The busy polling after a write's data command: the interrupt, then
    /// the driver's CMD13 SEND_STATUS requests until one finds the card out
    /// of the programming state (Linux 3.x `mmc_blk_err_check`).
    DeviceBusyPoll,
    /// Completion interrupt, IPI, remote wake-up and the waiting thread's
    /// wake-up.
    IrqWakeup,
}

/// A call's latency split by layer, ns; the parts add up to the latency.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Split {
    /// [`Layer::Platform`], ns.
    pub platform: Ns,
    /// [`Layer::SyscallFs`], ns.
    pub syscall_fs: Ns,
    /// [`Layer::BlockSubmit`], ns.
    pub block_submit: Ns,
    /// [`Layer::QueueWait`], ns.
    pub queue_wait: Ns,
    /// [`Layer::Driver`], ns.
    pub driver: Ns,
    /// [`Layer::Device`], ns.
    pub device: Ns,
    /// [`Layer::DeviceBusyPoll`], ns.
    pub device_busy_poll: Ns,
    /// [`Layer::IrqWakeup`], ns.
    pub irq_wakeup: Ns,
}

impl Split {
    /// Adds `ns` to `layer`.
    pub fn add(&mut self, layer: Layer, ns: Ns) {
        *match layer {
            Layer::Platform => &mut self.platform,
            Layer::SyscallFs => &mut self.syscall_fs,
            Layer::BlockSubmit => &mut self.block_submit,
            Layer::QueueWait => &mut self.queue_wait,
            Layer::Driver => &mut self.driver,
            Layer::Device => &mut self.device,
            Layer::DeviceBusyPoll => &mut self.device_busy_poll,
            Layer::IrqWakeup => &mut self.irq_wakeup,
        } += ns;
    }

    /// Sum of the parts, ns.
    pub fn total(&self) -> Ns {
        self.platform
            + self.syscall_fs
            + self.block_submit
            + self.queue_wait
            + self.driver
            + self.device
            + self.device_busy_poll
            + self.irq_wakeup
    }
}

/// Mean split of a call's latency by layer, µs per call. Each interval of
/// a call's life is attributed to one layer along its critical path (see
/// `host::call`), so the six parts add up to the mean latency (`total`,
/// exact; `latency_us.mean` comes from the histogram, within its 0.1 %
/// precision). `device` is split further where the papers measured it:
/// `device_data_cmd` + `device_busy_poll` = `device`.
#[derive(Clone, Debug, Default, Serialize, PartialEq, schemars::JsonSchema)]
pub struct Breakdown {
    /// Platform layer (Dalvik → libcore → JNI).
    pub platform: f64,
    /// System-call entry, VFS + file system, page-cache copies, throttling.
    pub syscall_fs: f64,
    /// Block layer: `block_submit + queue_wait`.
    pub block_queue: f64,
    /// Block layer and scheduler CPU work on the calling thread (bio
    /// submission, plugging, insertion).
    pub block_submit: f64,
    /// Waiting in the block layer until the driver fetches the request
    /// (plugged, queued in the scheduler, held back by dispatch limits).
    pub queue_wait: f64,
    /// MMC driver: mmcqd wake-up, dispatch hook, command setup, DMA
    /// mapping, waiting for the bus.
    pub driver: f64,
    /// Device service (command start to completion, busy polling
    /// included).
    pub device: f64,
    /// Device time of the data command: from its issue to the host
    /// controller's transfer-complete interrupt (the Galaxy S II study's
    /// "device").
    pub device_data_cmd: f64,
    /// Device time after the data command: the driver's CMD13 polling until
    /// the card leaves the programming state (with each poll's setup and
    /// interrupt but the last one's).
    pub device_busy_poll: f64,
    /// Completion interrupt, IPI and remote wake-up, waking the thread.
    pub irq_wakeup: f64,
    /// Exact mean latency: `platform + syscall_fs + block_queue + driver +
    /// device + irq_wakeup`.
    pub total: f64,
    /// Everything but device time (`total − device`): host software *and*
    /// every wait outside the device (queues, the bus, wake-up).
    pub not_device: f64,
    /// `not_device / total` (0 without calls).
    pub not_device_share: f64,
    /// The mean latency's shares by what the time was spent on; they add
    /// up to 1 (all 0 without calls).
    pub shares: Shares,
}

/// Shares of the mean call latency (fractions of `breakdown_us.total`),
/// each part of the path reported apart: the calling thread's own host
/// path, waiting in the block layer, the driver, the device, and the
/// interrupt and wake-up.
#[derive(Clone, Debug, Default, Serialize, PartialEq, schemars::JsonSchema)]
pub struct Shares {
    /// The calling thread's own path through host software: platform,
    /// system call and file system, block submission (its CPU work and the
    /// time it waits for a core or for host software it depends on, such
    /// as a FUSE daemon or the JBD2 thread), fraction. No block-queue wait.
    pub host_path: f64,
    /// Waiting in the block layer for the driver to fetch the request,
    /// fraction.
    pub queue_wait: f64,
    /// MMC driver (mmcqd wake-up, dispatch, setup, waiting for the bus),
    /// fraction.
    pub driver: f64,
    /// Device service (data command and busy polling), fraction.
    pub device: f64,
    /// Completion interrupt, IPI, wake-up of the waiting thread, fraction.
    pub irq_wakeup: f64,
}

/// Accumulates per-call results during a run.
#[derive(Clone, Debug)]
pub struct Collector {
    /// Latencies of the calls that are neither reads nor writes; the
    /// distribution of all calls is this one merged with `read` and `write`
    /// when the summary is made (bucket counts add exactly, so it equals
    /// recording every call a third time).
    other: LatencyHistogram,
    read: LatencyHistogram,
    write: LatencyHistogram,
    counts: RequestCounts,
    threads: Vec<Option<ThreadAcc>>,
    first_issue: Option<Ns>,
    last_done: Ns,
    /// Per-layer sums in [`Split`] order, ns.
    sum: [u128; 8],
    d2c_sum: u128,
    d2c_count: u64,
    /// Sums over device requests of data-command and busy-poll time, ns.
    data_cmd_sum: u128,
    busy_poll_sum: u128,
    /// CMD13 polls of all device requests.
    status_polls: u64,
    /// 4 KiB blocks of the write requests the device completed.
    device_blocks_written: u64,
    /// Cache flushes the device completed.
    device_flushes: u64,
    /// Which threads' calls have been recorded: while every recorded call
    /// came from one thread, that thread's latency histogram is not kept
    /// (it equals `read`, `write` and `other` merged, bucket for bucket)
    /// and is made by that merge when a second thread records or at the
    /// summary.
    recorders: Recorders,
    /// Failed system calls by errno name.
    failed: BTreeMap<&'static str, u64>,
    /// Keep each thread's results by direction ([`Collector::thread_io`]).
    keep_thread_io: bool,
    /// The device's requests by direction.
    disk: DiskIo,
    /// D→C time of the request [`Collector::request_done`] saw last, ns,
    /// counted by direction at [`Collector::device_request`].
    last_d2c: Ns,
}

/// The threads whose calls the collector has recorded so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Recorders {
    /// None yet.
    None,
    /// All from this thread; its histogram is left empty.
    Sole(u32),
    /// Several: every thread's histogram is kept.
    Many,
}

#[derive(Clone, Debug)]
struct ThreadAcc {
    /// Index of its job, for a job thread.
    job: Option<u32>,
    name: String,
    pid: u32,
    hist: LatencyHistogram,
    bytes: u64,
    first_issue: Option<Ns>,
    last_done: Ns,
    /// Calls completing before this time are not recorded (ramp-up), ns.
    ramp_end: Ns,
    /// Its failed system calls by errno name.
    failed: BTreeMap<&'static str, u64>,
    /// Its results by direction, when kept.
    io: Option<Box<ThreadIo>>,
}

/// Kind of a completed call, for the counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallKind {
    /// read().
    Read,
    /// write().
    Write,
    /// A discard record.
    Discard,
    /// A flush record.
    Flush,
    /// fsync().
    Fsync,
    /// fdatasync().
    Fdatasync,
    /// open() / creat().
    Open,
    /// close().
    Close,
    /// lseek().
    Lseek,
    /// ftruncate().
    Ftruncate,
    /// unlink().
    Unlink,
    /// rename().
    Rename,
    /// mkdir().
    Mkdir,
    /// sync().
    Sync,
    /// stat() / lstat() / access().
    Stat,
    /// mknod().
    Mknod,
    /// truncate() by path.
    Truncate,
    /// opendir() + getdents64() + closedir().
    Readdir,
}

/// One finished call.
#[derive(Clone, Copy, Debug)]
pub struct CallRecord {
    /// Thread index.
    pub thread: u32,
    /// Kind.
    pub kind: CallKind,
    /// Bytes moved.
    pub bytes: u64,
    /// Issue time, ns.
    pub issue: Ns,
    /// Completion time, ns.
    pub done: Ns,
    /// Its latency by layer (adds up to `done − issue`), ns.
    pub split: Split,
}

impl Default for Collector {
    fn default() -> Self {
        Self::new()
    }
}

impl Collector {
    /// When the last recorded call or request completed, ns (0 = none).
    pub fn last_done(&self) -> Ns {
        self.last_done
    }

    /// An empty collector.
    pub fn new() -> Collector {
        Collector {
            other: LatencyHistogram::new(),
            read: LatencyHistogram::new(),
            write: LatencyHistogram::new(),
            counts: RequestCounts::default(),
            threads: Vec::new(),
            first_issue: None,
            last_done: 0,
            sum: [0; 8],
            d2c_sum: 0,
            d2c_count: 0,
            data_cmd_sum: 0,
            busy_poll_sum: 0,
            status_polls: 0,
            device_blocks_written: 0,
            device_flushes: 0,
            recorders: Recorders::None,
            failed: BTreeMap::new(),
            keep_thread_io: false,
            disk: DiskIo::default(),
            last_d2c: 0,
        }
    }

    /// Keeps each thread's results by direction from now on (for
    /// [`Collector::thread_io`]); calls recorded before are not in them.
    pub fn keep_thread_io(&mut self) {
        self.keep_thread_io = true;
        for (i, t) in self.threads.iter_mut().enumerate() {
            if let Some(t) = t {
                t.io.get_or_insert_with(|| {
                    Box::new(ThreadIo {
                        id: i as u32,
                        name: t.name.clone(),
                        ..ThreadIo::default()
                    })
                });
            }
        }
    }

    /// Notes that thread `id` belongs to job `job` (its index in the
    /// scenario's jobs), for [`Collector::thread_io`].
    pub fn set_job(&mut self, id: u32, job: u32) {
        if let Some(Some(t)) = self.threads.get_mut(id as usize) {
            if let Some(io) = t.io.as_mut() {
                io.job = Some(job);
            }
            t.job = Some(job);
        }
    }

    /// Each declared thread's results by direction (empty unless
    /// [`Collector::keep_thread_io`] was called), in thread order.
    pub fn thread_io(&self) -> Vec<ThreadIo> {
        self.threads
            .iter()
            .flatten()
            .filter_map(|t| {
                t.io.as_deref().map(|io| ThreadIo {
                    job: t.job,
                    ..io.clone()
                })
            })
            .collect()
    }

    /// The device's requests by direction.
    pub fn disk_io(&self) -> DiskIo {
        self.disk.clone()
    }

    /// Declares thread `id` with its name and pid. Ids need not be dense:
    /// an id never declared (the writeback flusher's) is not reported.
    pub fn add_thread(&mut self, id: u32, name: &str, pid: u32) {
        if self.recorders == Recorders::Sole(id) {
            // Declared again after recording: its histogram starts empty,
            // and from now on every thread's is kept.
            self.recorders = Recorders::Many;
        }
        let id = id as usize;
        if self.threads.len() <= id {
            self.threads.resize(id + 1, None);
        }
        let io = self.keep_thread_io.then(|| {
            Box::new(ThreadIo {
                id: id as u32,
                name: name.to_string(),
                ..ThreadIo::default()
            })
        });
        self.threads[id] = Some(ThreadAcc {
            io,
            job: None,
            name: name.to_string(),
            pid,
            hist: LatencyHistogram::new(),
            bytes: 0,
            first_issue: None,
            last_done: 0,
            ramp_end: 0,
            failed: BTreeMap::new(),
        });
    }

    /// Records a system call of thread `thread` that failed with the errno
    /// named `errno` (`"ENOENT"`): counted apart from completed calls.
    pub fn record_failed(&mut self, thread: u32, errno: &'static str) {
        *self.failed.entry(errno).or_insert(0) += 1;
        if let Some(Some(t)) = self.threads.get_mut(thread as usize) {
            *t.failed.entry(errno).or_insert(0) += 1;
        }
    }

    /// Excludes thread `id`'s calls completing before `end` (ns) from the
    /// statistics: its ramp-up (fio `ramp_time`). The thread must have
    /// been declared.
    pub fn set_ramp_end(&mut self, id: u32, end: Ns) {
        if let Some(Some(t)) = self.threads.get_mut(id as usize) {
            t.ramp_end = end;
        }
    }

    /// Records one finished call.
    pub fn record(&mut self, c: &CallRecord) {
        if self
            .threads
            .get(c.thread as usize)
            .is_some_and(|t| t.as_ref().is_some_and(|t| c.done < t.ramp_end))
        {
            return;
        }
        let per_thread = match self.recorders {
            Recorders::Sole(s) if s == c.thread => false,
            Recorders::None => {
                self.recorders = Recorders::Sole(c.thread);
                false
            }
            Recorders::Sole(s) => {
                // A second thread: the first one's histogram is every call
                // recorded so far.
                let first = self.all_latencies();
                self.threads[s as usize]
                    .as_mut()
                    .expect("calls come from declared threads")
                    .hist = first;
                self.recorders = Recorders::Many;
                true
            }
            Recorders::Many => true,
        };
        let lat = c.done.saturating_sub(c.issue);
        if !matches!(c.kind, CallKind::Read | CallKind::Write) {
            self.other.record(lat);
        }
        match c.kind {
            CallKind::Read => {
                self.read.record(lat);
                self.counts.reads += 1;
                self.counts.bytes_read += c.bytes;
            }
            CallKind::Write => {
                self.write.record(lat);
                self.counts.writes += 1;
                self.counts.bytes_written += c.bytes;
            }
            CallKind::Discard => self.counts.discards += 1,
            CallKind::Flush => self.counts.flushes += 1,
            CallKind::Fsync => self.counts.fsyncs += 1,
            CallKind::Fdatasync => self.counts.fdatasyncs += 1,
            CallKind::Sync => self.counts.syncs += 1,
            CallKind::Open
            | CallKind::Close
            | CallKind::Lseek
            | CallKind::Ftruncate
            | CallKind::Unlink
            | CallKind::Rename
            | CallKind::Mkdir
            | CallKind::Stat
            | CallKind::Mknod
            | CallKind::Truncate
            | CallKind::Readdir => self.counts.metadata_calls += 1,
        }
        self.counts.count += 1;
        self.first_issue = Some(self.first_issue.map_or(c.issue, |f| f.min(c.issue)));
        self.last_done = self.last_done.max(c.done);
        debug_assert_eq!(c.split.total(), lat, "the split adds up to the latency");
        let p = &c.split;
        let parts = [
            p.platform,
            p.syscall_fs,
            p.block_submit,
            p.queue_wait,
            p.driver,
            p.device,
            p.device_busy_poll,
            p.irq_wakeup,
        ];
        for (s, v) in self.sum.iter_mut().zip(parts) {
            *s += v as u128;
        }
        let t = self.threads[c.thread as usize]
            .as_mut()
            .expect("calls come from declared threads");
        if per_thread {
            t.hist.record(lat);
        }
        if matches!(c.kind, CallKind::Read | CallKind::Write) {
            t.bytes += c.bytes;
        }
        if let Some(io) = t.io.as_mut() {
            match c.kind {
                CallKind::Read => io.read.record(c.bytes, c.issue, c.done),
                CallKind::Write => io.write.record(c.bytes, c.issue, c.done),
                CallKind::Fsync | CallKind::Fdatasync => io.sync.record(0, c.issue, c.done),
                _ => {}
            }
        }
        t.first_issue = Some(t.first_issue.map_or(c.issue, |f| f.min(c.issue)));
        t.last_done = t.last_done.max(c.done);
    }

    /// A device request ended at the block layer `d2c` ns after the driver
    /// fetched it (blktrace D→C); its data command took `data_cmd` ns on
    /// the device, the busy polling after it `busy_poll` ns in
    /// `status_polls` CMD13s.
    pub fn request_done(&mut self, d2c: Ns, data_cmd: Ns, busy_poll: Ns, status_polls: u32) {
        self.d2c_sum += d2c as u128;
        self.last_d2c = d2c;
        self.d2c_count += 1;
        self.data_cmd_sum += data_cmd as u128;
        self.busy_poll_sum += busy_poll as u128;
        self.status_polls += u64::from(status_polls);
    }

    /// A device request of `op` over `sectors` 512-byte sectors ended:
    /// counted in 4 KiB blocks written and cache flushes.
    pub fn device_request(&mut self, op: crate::types::Op, sectors: u32) {
        let d = match op {
            crate::types::Op::Read => Some(0),
            crate::types::Op::Write => Some(1),
            _ => None,
        };
        if let Some(d) = d {
            self.disk.ios[d] += 1;
            self.disk.ticks_ns[d] += u128::from(self.last_d2c);
        }
        match op {
            crate::types::Op::Write => self.device_blocks_written += u64::from(sectors).div_ceil(8),
            crate::types::Op::Flush => self.device_flushes += 1,
            _ => {}
        }
    }

    /// (4 KiB blocks written, cache flushes) the device completed so far.
    pub fn device_io(&self) -> (u64, u64) {
        (self.device_blocks_written, self.device_flushes)
    }

    /// The latency distribution of every recorded call: reads, writes and
    /// the rest merged.
    fn all_latencies(&self) -> LatencyHistogram {
        let mut all = self.read.clone();
        all.merge(&self.write);
        all.merge(&self.other);
        all
    }

    /// Calls recorded so far.
    pub fn count(&self) -> u64 {
        self.counts.count
    }

    /// Measured span in ns: first issue to last completion.
    pub fn span_ns(&self) -> Ns {
        self.first_issue
            .map_or(0, |f| self.last_done.saturating_sub(f))
    }

    /// Mean split by layer, µs per call.
    pub fn breakdown(&self) -> Breakdown {
        let n = self.counts.count.max(1) as f64;
        let us = |v: u128| v as f64 / n / 1000.0;
        let [platform, syscall_fs, submit, wait, driver, data_cmd, busy_poll, irq] = self.sum;
        let total: u128 = self.sum.iter().sum();
        let device = data_cmd + busy_poll;
        let share = |v: u128| {
            if total > 0 {
                v as f64 / total as f64
            } else {
                0.0
            }
        };
        Breakdown {
            platform: us(platform),
            syscall_fs: us(syscall_fs),
            block_queue: us(submit + wait),
            block_submit: us(submit),
            queue_wait: us(wait),
            driver: us(driver),
            device: us(device),
            device_data_cmd: us(data_cmd),
            device_busy_poll: us(busy_poll),
            irq_wakeup: us(irq),
            total: us(total),
            not_device: us(total - device),
            not_device_share: share(total - device),
            shares: Shares {
                host_path: share(platform + syscall_fs + submit),
                queue_wait: share(wait),
                driver: share(driver),
                device: share(device),
                irq_wakeup: share(irq),
            },
        }
    }

    /// Device response times per device request.
    fn device_response(&self) -> DeviceResponse {
        let mean = |sum: u128| {
            if self.d2c_count > 0 {
                sum as f64 / self.d2c_count as f64 / 1000.0
            } else {
                0.0
            }
        };
        DeviceResponse {
            requests: self.d2c_count,
            mean: mean(self.d2c_sum),
            data_cmd: mean(self.data_cmd_sum),
            busy_poll: mean(self.busy_poll_sum),
            status_polls: self.status_polls,
        }
    }

    /// Builds the workload part of the report.
    pub fn summarize(&self) -> WorkloadSummary {
        let span_s = self.span_ns() as f64 / NS_PER_S as f64;
        let rate = |n: f64| if span_s > 0.0 { n / span_s } else { 0.0 };
        let threads: Vec<ThreadStats> = self
            .threads
            .iter()
            .enumerate()
            .filter_map(|(i, t)| t.as_ref().map(|t| (i, t)))
            .map(|(i, t)| {
                let s = t.first_issue.map_or(0, |f| t.last_done.saturating_sub(f)) as f64
                    / NS_PER_S as f64;
                let sole;
                let hist = if self.recorders == Recorders::Sole(i as u32) {
                    sole = self.all_latencies();
                    &sole
                } else {
                    &t.hist
                };
                let n = hist.count();
                ThreadStats {
                    id: i as u32,
                    name: t.name.clone(),
                    pid: t.pid,
                    requests: n,
                    iops: if s > 0.0 { n as f64 / s } else { 0.0 },
                    mb_per_s: if s > 0.0 {
                        t.bytes as f64 / 1e6 / s
                    } else {
                        0.0
                    },
                    latency_us: hist.summary(),
                    calls: FailedCalls::of(&t.failed),
                }
            })
            .collect();
        let iops: Vec<f64> = threads.iter().map(|t| t.iops).collect();
        WorkloadSummary {
            simulated_time_s: span_s,
            requests: self.counts.clone(),
            throughput: Throughput {
                iops: rate(self.counts.count as f64),
                mb_per_s: rate((self.counts.bytes_read + self.counts.bytes_written) as f64 / 1e6),
            },
            latency_us: self.all_latencies().summary(),
            read: DirectionStats {
                count: self.counts.reads,
                iops: rate(self.counts.reads as f64),
                mb_per_s: rate(self.counts.bytes_read as f64 / 1e6),
                latency_us: self.read.summary(),
            },
            write: DirectionStats {
                count: self.counts.writes,
                iops: rate(self.counts.writes as f64),
                mb_per_s: rate(self.counts.bytes_written as f64 / 1e6),
                latency_us: self.write.summary(),
            },
            fairness: Fairness {
                jain: super::fairness::jain(&iops),
                metric: "iops",
            },
            threads,
            calls: FailedCalls::of(&self.failed),
            breakdown_us: self.breakdown(),
            device_response_us: self.device_response(),
            latency_histogram: self.all_latencies().distribution(),
        }
    }
}

/// The workload-level results of a run.
#[derive(Clone, Debug, Serialize, PartialEq, schemars::JsonSchema)]
pub struct WorkloadSummary {
    /// Measured span (first issue to last completion), s.
    pub simulated_time_s: f64,
    /// Call counts.
    pub requests: RequestCounts,
    /// Throughput.
    pub throughput: Throughput,
    /// Latency of all calls, µs.
    pub latency_us: LatencySummary,
    /// Reads.
    pub read: DirectionStats,
    /// Writes.
    pub write: DirectionStats,
    /// Per thread (synthetic) or per process (trace).
    pub threads: Vec<ThreadStats>,
    /// System calls that failed, all threads together (absent when none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calls: Option<FailedCalls>,
    /// Fairness across threads.
    pub fairness: Fairness,
    /// Mean latency split, µs.
    pub breakdown_us: Breakdown,
    /// Device response time per device request, µs.
    pub device_response_us: DeviceResponse,
    /// The latency distribution of every call (the histogram behind
    /// `latency_us`), for CDFs drawn from all recorded values.
    pub latency_histogram: LatencyDistribution,
}

/// Device response time as blktrace measures it (D→C): from the driver
/// fetching a request to its completion reaching the block layer (driver
/// setup, bus, device, completion interrupt, IPI), per device request.
#[derive(Clone, Debug, Default, Serialize, PartialEq, schemars::JsonSchema)]
pub struct DeviceResponse {
    /// Device requests completed.
    pub requests: u64,
    /// Mean D→C, µs.
    pub mean: f64,
    /// Mean device time of a request's data command, from its issue to the
    /// transfer-complete interrupt, µs.
    pub data_cmd: f64,
    /// Mean device time of the busy polling after it (CMD13s until the
    /// card is ready), µs; 0 for reads.
    pub busy_poll: f64,
    /// CMD13 SEND_STATUS polls the driver sent, all requests together.
    pub status_polls: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iops_and_breakdown_come_from_the_recorded_calls() {
        let mut c = Collector::new();
        c.add_thread(0, "a", 10);
        c.add_thread(1, "b", 11);
        for i in 0..10u64 {
            c.record(&CallRecord {
                thread: (i % 2) as u32,
                kind: CallKind::Read,
                bytes: 4096,
                issue: i * 1_000_000,
                done: i * 1_000_000 + 500_000,
                split: Split {
                    syscall_fs: 100_000,
                    queue_wait: 100_000,
                    device: 300_000,
                    ..Split::default()
                },
            });
        }
        let s = c.summarize();
        assert_eq!(s.requests.reads, 10);
        // 10 calls over 9.5 ms.
        assert!((s.throughput.iops - 10.0 / 0.0095).abs() < 1e-6);
        assert!((s.breakdown_us.syscall_fs - 100.0).abs() < 1e-9);
        assert!((s.breakdown_us.block_queue - 100.0).abs() < 1e-9);
        assert!((s.breakdown_us.device - 300.0).abs() < 1e-9);
        assert!((s.breakdown_us.total - 500.0).abs() < 1e-9);
        assert!((s.breakdown_us.queue_wait - 100.0).abs() < 1e-9);
        assert!((s.breakdown_us.not_device_share - 0.4).abs() < 1e-9);
        // The shares keep the queue wait apart from the host path.
        assert!((s.breakdown_us.shares.host_path - 0.2).abs() < 1e-9);
        assert!((s.breakdown_us.shares.queue_wait - 0.2).abs() < 1e-9);
        assert!((s.breakdown_us.shares.device - 0.6).abs() < 1e-9);
        assert!(s.fairness.jain > 0.99);
        assert_eq!(s.threads[1].requests, 5);
    }

    #[test]
    fn a_sole_threads_histogram_is_the_merge_of_all_calls() {
        // Thread 0 alone for a while (its histogram is not kept), then a
        // second thread: both summaries equal direct recording.
        let mut c = Collector::new();
        c.add_thread(0, "a", 10);
        c.add_thread(1, "b", 11);
        let mut direct = [LatencyHistogram::new(), LatencyHistogram::new()];
        let kinds = [CallKind::Read, CallKind::Write, CallKind::Flush];
        for i in 0..60u64 {
            let thread = u32::from(i >= 40 && i % 3 == 0);
            let lat = 1_000 + i * i * 7_919 % 900_000;
            direct[thread as usize].record(lat);
            c.record(&CallRecord {
                thread,
                kind: kinds[(i % 3) as usize],
                bytes: 4096,
                issue: i * 1_000_000,
                done: i * 1_000_000 + lat,
                split: Split {
                    device: lat,
                    ..Split::default()
                },
            });
            if i == 30 {
                let s = c.summarize();
                assert_eq!(s.threads[0].latency_us, direct[0].summary());
                assert_eq!(s.threads[0].requests, 31);
                assert_eq!(s.threads[1].requests, 0);
            }
        }
        let s = c.summarize();
        for (t, d) in s.threads.iter().zip(&direct) {
            assert_eq!(t.latency_us, d.summary());
            assert_eq!(t.requests, d.count());
        }
    }
}
