//! The driver's view of the queue above it ([`RequestQueue`]): the block
//! stage, plus the request log and the collector that record each request
//! the device served. A finished request is logged and ended in the block
//! layer, which queues its completions as events; the event loop delivers
//! them to their submitters (see `Simulation::complete`).

use super::event::Event;
use super::log::{LogRow, RequestLog};
use crate::block::request::RqId;
use crate::block::BlockStage;
use crate::driver::{DeviceTimes, DriverRequest, RequestQueue, Ring};
use crate::engine::EventQueue;
use crate::stats::report::Collector;
use crate::types::Ns;

/// The block stage and the request accounting, lent to the driver for one
/// driver event.
pub(super) struct Up<'a> {
    pub block: &'a mut BlockStage,
    pub collector: &'a mut Collector,
    pub log: &'a mut Option<RequestLog>,
}

impl RequestQueue<Event> for Up<'_> {
    fn fetch(&mut self, now: Ns) -> Option<DriverRequest> {
        self.block.fetch(now)
    }

    fn dispatch_tried(&mut self, q: &mut EventQueue<Event>) {
        self.block.sync_timer(q);
    }

    fn end_request(&mut self, now: Ns, rq: RqId, times: DeviceTimes, q: &mut EventQueue<Event>) {
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
        self.block.end_request(now, rq, times, q);
    }

    fn run_queue(&mut self, takes_urgent: bool, q: &mut EventQueue<Event>) -> Option<Ring> {
        self.block.ring(takes_urgent, q)
    }

    fn reinsert(&mut self, now: Ns, rq: RqId) {
        self.block.reinsert(now, rq);
    }
}
