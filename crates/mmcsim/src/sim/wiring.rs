//! How completions climb the stack: the view of everything above the
//! driver that the driver gets while it runs ([`RequestQueue`]). A finished
//! request is logged, ended in the block layer, and each of its bios is
//! handed to the stage that submitted it — the host (system calls, page
//! cache, writeback) or trace replay.

use super::event::Event;
use super::log::{LogRow, RequestLog};
use crate::block::request::{Bio, RqId, Submitter};
use crate::block::BlockStage;
use crate::driver::{DeviceTimes, Driver, DriverRequest, RequestQueue};
use crate::engine::EventQueue;
use crate::error::Error;
use crate::host::{Below, Host};
use crate::stats::report::Collector;
use crate::types::Ns;
use crate::workload::replay::Replay;

/// The stages above the driver, lent to it for one driver event.
pub(super) struct Up<'a> {
    pub block: &'a mut BlockStage,
    pub host: &'a mut Host,
    pub replay: Option<&'a mut Replay>,
    pub collector: &'a mut Collector,
    pub log: &'a mut Option<RequestLog>,
    /// Completed bios (scratch, reused).
    pub bios: &'a mut Vec<Bio>,
    /// An error raised while a completion climbed (e.g. a malformed trace
    /// record met by closed-loop read-ahead); the run stops with it.
    pub error: &'a mut Option<Error>,
}

impl RequestQueue<Event> for Up<'_> {
    fn fetch(&mut self, now: Ns) -> Option<DriverRequest> {
        self.block.fetch(now)
    }

    fn dispatch_tried(&mut self, q: &mut EventQueue<Event>) {
        self.block.sync_timer(q);
    }

    fn end_request(
        &mut self,
        now: Ns,
        rq: RqId,
        times: DeviceTimes,
        driver: &mut Driver,
        q: &mut EventQueue<Event>,
    ) {
        if let Some(log) = self.log.as_mut() {
            let r = self.block.layer.request(rq);
            log.row(&LogRow {
                submit_ns: r.start_ns,
                dispatch_ns: r.dispatch_ns.unwrap_or(times.start),
                device_start_ns: times.start,
                complete_ns: times.done,
                sector: r.sector,
                sectors: r.sectors,
                op: r.op,
                fua: r.fua,
                thread: r.thread,
            });
        }
        self.collector.request_done(
            now.saturating_sub(times.fetch),
            times.data_cmd(),
            times.busy_poll(),
            times.status_polls,
        );
        let r = self.block.layer.request(rq);
        self.collector.device_request(r.op, r.sectors);
        let mut bios = std::mem::take(self.bios);
        bios.clear();
        self.block.complete(now, rq, &mut bios);
        if let Some(replay) = self.replay.as_deref_mut().filter(|r| r.holds_records()) {
            // Records held while their process waited go in where the
            // admission happened, before the completed bios climb.
            let mut below = Below {
                block: self.block,
                driver,
                q,
                collector: self.collector,
            };
            if let Err(e) = replay.admitted(now, &mut below) {
                self.error.get_or_insert(e);
            }
        }
        for bio in &bios {
            let mut below = Below {
                block: self.block,
                driver,
                q,
                collector: self.collector,
            };
            match (self.replay.as_deref_mut(), bio.submitter) {
                (Some(replay), Submitter::Replay(id)) => {
                    if let Err(e) = replay.bio_done(now, id, times, &mut below) {
                        self.error.get_or_insert(e);
                    }
                }
                _ => self.host.bio_done(now, bio, times, &mut below),
            }
        }
        *self.bios = bios;
    }

    fn run_queue(&mut self, now: Ns, driver: &mut Driver, q: &mut EventQueue<Event>) {
        self.block.run_queue(now, driver, q);
    }

    fn reinsert(&mut self, now: Ns, rq: RqId) {
        self.block.reinsert(now, rq);
    }
}
