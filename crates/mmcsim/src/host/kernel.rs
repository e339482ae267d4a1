//! The host core's side of [`Kernel`]: what a mounted file system may use
//! while it runs, lent from the host's own state and the stages below.

use super::call::Call;
use super::fs::{FsEvent, Kernel, PageRun};
use super::page_cache::{FileId, PageCache};
use super::stage::{Below, HostEvent, HostEvents, Notify, PageIo};
use super::task::Task;
use crate::block::request::{Bio, Submitter};
use crate::engine::Slab;
use crate::platform::SharedCpu;
use crate::stats::report::Layer;
use crate::stats::DeviceTimes;
use crate::types::{Ns, Op, SECTORS_PER_PAGE};

/// The host's state a file system borrows for one call.
pub(super) struct HostKernel<'a, 'b, E> {
    pub cache: &'a mut PageCache,
    pub ios: &'a mut Slab<PageIo>,
    pub tasks: &'a [Task],
    pub calls: &'a mut Slab<Call>,
    pub cpu: &'a SharedCpu,
    pub max_bio_sectors: u32,
    pub below: &'a mut Below<'b, E>,
}

impl<E: HostEvents> Kernel for HostKernel<'_, '_, E> {
    fn cache(&mut self) -> &mut PageCache {
        self.cache
    }

    fn max_bio_sectors(&self) -> u32 {
        self.max_bio_sectors
    }

    fn page_write_bios(
        &mut self,
        m: FileId,
        runs: &[PageRun],
        template: Bio,
        bios: &mut Vec<Bio>,
    ) -> u32 {
        page_write_bios(self.ios, m, runs, template, Notify::None, bios)
    }

    fn submit_cost(&mut self, thread: u32, at: Ns, n: u32) -> Ns {
        at + self.cpu.thread(thread, at, |c| n as Ns * c.block_submit)
    }

    fn submit_plugged(&mut self, now: Ns, thread: u32, bios: &mut Vec<Bio>) {
        let b = &mut *self.below;
        b.block.submit_plugged(now, thread, bios.drain(..), b.q);
    }

    fn at(&mut self, time: Ns, ev: FsEvent) {
        self.below.q.at(time, HostEvent::Fs(ev));
    }

    fn wake_task(&mut self, t: u32, now: Ns) {
        let wake = now + self.cpu.with(|c| c.wake_thread(t, now));
        if let Some(c) = self.tasks.get(t as usize).and_then(|k| k.call) {
            if let Some(call) = self.calls.get_mut(c) {
                call.charge(Layer::IrqWakeup, wake);
            }
        }
        self.below.q.at(wake, HostEvent::Step(t));
    }

    fn call_waited(&mut self, t: u32, times: DeviceTimes, now: Ns) {
        if let Some(c) = self.tasks.get(t as usize).and_then(|k| k.call) {
            if let Some(call) = self.calls.get_mut(c) {
                call.waited(times, now);
            }
        }
    }
}

/// Write bios for mapped `runs` of mapping `m` (pages under writeback),
/// each registered as page-cache I/O whose completion concerns `notify`;
/// appended to `bios`. Returns how many.
pub(super) fn page_write_bios(
    ios: &mut Slab<PageIo>,
    m: FileId,
    runs: &[PageRun],
    template: Bio,
    notify: Notify,
    bios: &mut Vec<Bio>,
) -> u32 {
    let mut n = 0;
    for r in runs {
        let sector = r.sector.expect("pages under writeback are mapped");
        let id = ios.insert(PageIo {
            mapping: m,
            first_page: r.page,
            sector,
            bios: 1,
            notify,
        });
        bios.push(Bio {
            op: Op::Write,
            sector,
            sectors: (r.pages * SECTORS_PER_PAGE) as u32,
            submitter: Submitter::PageIo(id),
            ..template
        });
        n += 1;
    }
    n
}
