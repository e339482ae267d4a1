//! One call in progress — a thread's `read()`/`write()`/`fsync()`, or a
//! block-level trace record — the bios it waits for, and the split of its
//! latency by layer.
//!
//! The split rule: a call's life from issue to return is cut at the
//! instants where it moves from one layer to the next, and each interval
//! goes to exactly one layer, so the parts add up to the latency.
//! `mark` is the end of the part already attributed; [`Call::charge`]
//! gives `[mark, until)` to a layer. Host CPU steps are charged as they are
//! scheduled (platform, system call + file system, block submission
//! (`block_submit`),
//! wake-up). A wait for I/O is attributed along its critical path — the
//! request whose completion ended the wait (the call's last one, or the one
//! holding the page it sleeps on): until the driver fetched it
//! `queue_wait`, until it started on the bus `driver` (mmcqd wake-up,
//! dispatch hook, setup, DMA mapping, waiting for the bus), until its data
//! command completed `device`, until the driver's CMD13 polls found the card
//! ready `device_busy_poll`, then `irq_wakeup` (interrupt, IPI, remote
//! wake-up, and the waiting thread's wake-up). Intervals before `mark`
//! (e.g. a read-ahead request dispatched before this call waited on it)
//! are not counted twice. Time a call spends throttled in
//! balance_dirty_pages is `syscall_fs`.

use crate::stats::report::{CallKind, CallRecord, Collector, Layer, Split};
use crate::stats::DeviceTimes;
use crate::types::Ns;

/// A call in progress.
#[derive(Clone, Debug)]
pub struct Call {
    /// Thread index of the caller (the report's thread id).
    pub thread: u32,
    /// What the call is.
    pub kind: CallKind,
    /// Bytes it moves.
    pub bytes: u64,
    /// When it was issued, ns.
    pub issue: Ns,
    /// Bios owned by this call not yet completed.
    pub pending: u32,
    /// End of the part of its life already attributed to a layer, ns.
    pub mark: Ns,
    /// Its latency so far, by layer, ns.
    pub split: Split,
    /// Issue a cache flush once the data bios complete (fsync, O_SYNC).
    pub then_flush: bool,
    /// An asynchronous I/O (io_submit): it completes without its thread
    /// waiting in the call ([`super::Host::aio_submit`]).
    pub aio: bool,
    /// The request whose completion last ended a wait of this call (a
    /// FUSE daemon's lower I/O, handed on to the call it serves).
    pub last_io: Option<DeviceTimes>,
    /// Sector ranges `(sector, sectors)` of the write bios it waited for,
    /// kept only while the host records durability (module
    /// `durability`).
    pub wrote: Vec<(u64, u64)>,
}

impl Call {
    /// A call of `thread` issued at `now`.
    pub fn new(now: Ns, thread: u32, kind: CallKind, bytes: u64) -> Call {
        Call {
            thread,
            kind,
            bytes,
            issue: now,
            pending: 0,
            mark: now,
            split: Split::default(),
            then_flush: false,
            aio: false,
            last_io: None,
            wrote: Vec::new(),
        }
    }

    /// Attributes `[mark, until)` to `layer` (nothing when `until` is not
    /// past `mark`).
    pub fn charge(&mut self, layer: Layer, until: Ns) {
        if until > self.mark {
            self.split.add(layer, until - self.mark);
            self.mark = until;
        }
    }

    /// The call's wait ended at `now` with the completion of the request
    /// that ran at `t`: attributes the wait along that request's path.
    pub fn waited(&mut self, t: DeviceTimes, now: Ns) {
        self.last_io = Some(t);
        self.charge(Layer::QueueWait, t.fetch);
        self.charge(Layer::Driver, t.start);
        self.charge(Layer::Device, t.data_done);
        self.charge(Layer::DeviceBusyPoll, t.done);
        self.charge(Layer::IrqWakeup, now);
    }

    /// One of its bios completed at `now` on the request that ran at `t`.
    /// Returns true when it was the last bio the call waited for (whose
    /// request is then the critical one: the wait is attributed).
    pub fn bio_done(&mut self, t: DeviceTimes, now: Ns) -> bool {
        self.pending -= 1;
        if self.pending == 0 {
            self.waited(t, now);
        }
        self.pending == 0
    }

    /// The call returns at `now`: what is left unattributed is its own
    /// kernel path (`syscall_fs`); it is recorded.
    pub fn finish(mut self, now: Ns, collector: &mut Collector) {
        self.charge(Layer::SyscallFs, now);
        collector.record(&CallRecord {
            thread: self.thread,
            kind: self.kind,
            bytes: self.bytes,
            issue: self.issue,
            done: now,
            split: self.split,
        });
    }
}

impl Call {
    /// The call fails with `errno` (its name, `"ENOENT"`): it is
    /// counted as failed, not as a completed call.
    pub fn fail(self, errno: &'static str, collector: &mut Collector) {
        collector.record_failed(self.thread, errno);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parts_add_up_and_nothing_is_counted_twice() {
        let mut c = Call::new(1_000, 0, CallKind::Write, 4096);
        c.charge(Layer::Platform, 3_000);
        c.charge(Layer::SyscallFs, 5_000);
        c.charge(Layer::BlockSubmit, 6_000);
        c.pending = 2;
        let t = DeviceTimes {
            fetch: 4_000, // fetched before the mark: not counted again
            start: 8_000,
            data_done: 18_000,
            done: 20_000,
            status_polls: 1,
        };
        assert!(!c.bio_done(t, 21_000));
        assert!(c.bio_done(t, 22_000));
        c.charge(Layer::IrqWakeup, 25_000);
        let s = c.split;
        assert_eq!(s.total(), 24_000);
        assert_eq!(s.driver, 2_000);
        assert_eq!(s.device, 10_000);
        assert_eq!(s.device_busy_poll, 2_000);
        assert_eq!(s.irq_wakeup, 5_000);
    }
}
