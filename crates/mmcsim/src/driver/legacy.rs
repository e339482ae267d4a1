//! The legacy `mmcqd` driver of Linux 3.x (reference io-schedulers.md
//! §1.5, emmc-parameters.md §1.3).
//!
//! Contract: one data request executes on the bus at a time; with request
//! pipelining (`driver_slots` = 2) the next request is fetched from the
//! block layer and prepared (command setup, DMA mapping) while the current
//! one runs, and is started once the current one's completion interrupt has
//! been handled. The driver pulls from the block layer only when it has a
//! free slot. When it has nothing to do, `mmcqd` sleeps and a new request
//! must wake it.

use super::RqId;
use super::{Driver, DriverConfig, DriverEvent, DriverEvents, Hw, RequestQueue};
use crate::device::host_interface::PACKED_HEADER_BLOCKS;
use crate::engine::EventQueue;
use crate::types::{Ns, Op};

/// State of the legacy MMC driver.
#[derive(Clone, Debug)]
pub struct LegacyDriver {
    slots: u32,
    /// Request on the device (until its completion interrupt is handled).
    pub executing: Option<RqId>,
    /// Request fetched and being (or done being) prepared.
    pub prepared: Option<RqId>,
    /// When the prepared request's preparation ends, ns.
    pub prepared_ready: Ns,
    /// `mmcqd`'s CPU is busy until then, ns.
    pub cpu_free: Ns,
    /// `mmcqd` sleeps: the next request must pay the wake-up.
    pub asleep: bool,
    /// Requests packed behind the prepared request (packed writes, or
    /// packed reads with `[features] packed_read`).
    pub prepared_pack: Vec<RqId>,
    /// Requests packed behind the executing request.
    pub executing_pack: Vec<RqId>,
    /// A request fetched while building a pack that did not fit it (the
    /// kernel requeues it); it is the next one prepared.
    pub stash: Option<super::DriverRequest>,
    /// An urgent-request notification is pending (`context_info.is_urgent`
    /// / `pending_is_urgent`): the request in flight could not be stopped,
    /// so at its completion the prepared request, unless urgent itself, is
    /// given back (`MMC_BLK_URGENT_DONE`).
    pub is_urgent: bool,
    /// The CMD13 busy poll of the executing write, from its data command's
    /// completion until a response finds the card ready.
    pub poll: Option<super::busy_poll::BusyPoll>,
    /// Requests of the pack the interrupt is ending that are still to end,
    /// in order (each after the completions of the one before).
    pub ending: std::collections::VecDeque<RqId>,
}

impl LegacyDriver {
    /// A driver with `slots` request slots (1 or 2), asleep.
    pub fn new(cfg: &DriverConfig) -> LegacyDriver {
        LegacyDriver {
            slots: cfg.driver_slots.clamp(1, 2),
            executing: None,
            prepared: None,
            prepared_ready: 0,
            cpu_free: 0,
            asleep: true,
            prepared_pack: Vec::new(),
            executing_pack: Vec::new(),
            stash: None,
            is_urgent: false,
            poll: None,
            ending: std::collections::VecDeque::new(),
        }
    }

    /// Requests currently held (executing + prepared).
    pub fn held(&self) -> u32 {
        self.executing.is_some() as u32
            + self.prepared.is_some() as u32
            + self.stash.is_some() as u32
    }

    /// True when the driver may fetch another request now.
    pub fn can_fetch(&self) -> bool {
        self.prepared.is_none() && self.held() < self.slots
    }

    /// True when the prepared request can go to the device at `now`.
    pub fn can_start(&self, now: Ns) -> bool {
        self.executing.is_none() && self.prepared.is_some() && self.prepared_ready <= now
    }
}

/// Most 512-byte blocks one CMD23 SET_BLOCK_COUNT can announce: its
/// argument's NUMBER_OF_BLOCKS field is bits 15:0 [spec: JESD84-B45 CMD23;
/// src: Linux 3.7+ `mmc_blk_prep_packed_list` caps the pack's blocks at
/// `0xffff`, as recalled].
pub const CMD23_MAX_BLOCKS: u64 = 0xffff;

/// Most requests the legacy driver may pack behind (and with) `r` on a
/// card with features `f`; 1 when `r` is not packed. Linux 3.7+
/// `mmc_blk_prep_packed_list`: a write packs up to MAX_PACKED_WRITES when
/// the card and host support packed writes (`[features] packed`); this
/// model keeps FUA writes out (the reliable-write path sends them alone).
/// A read packs up to MAX_PACKED_READS only with the what-if `[features]
/// packed_read` (the kernel defines `MMC_CAP2_PACKED_RD` but never packs a
/// read, as recalled), with the same rules as a write.
pub fn pack_limit(f: &crate::device::FeaturesConfig, r: &super::DriverRequest) -> usize {
    let max = match r.op {
        Op::Write if f.packed => f.max_packed(),
        Op::Read if f.packed_read => f.max_packed_reads(),
        _ => 1,
    };
    if r.fua {
        1
    } else {
        max as usize
    }
}

/// Whether `n`, fetched while packing behind `lead`, may join the pack:
/// the same direction (`rq_data_dir`), and not FUA (a discard or flush
/// has another op and stops the pack, as in the kernel).
fn can_join(lead: &super::DriverRequest, n: &super::DriverRequest) -> bool {
    n.op == lead.op && !n.fua
}

/// 512-byte blocks a pack led by `lead` announces in its data CMD23 before
/// any member: the lead's sectors, plus the packed header block for a write
/// (it travels in the same CMD25, as the kernel counts it); a packed read
/// sends its header in a CMD25 of its own, so its data CMD23 counts the
/// entries' blocks only.
fn pack_blocks(lead: &super::DriverRequest) -> u64 {
    let header = if lead.op == Op::Write {
        PACKED_HEADER_BLOCKS
    } else {
        0
    };
    lead.sectors as u64 + header
}

impl Driver {
    fn legacy(&mut self) -> &mut LegacyDriver {
        match &mut self.hw {
            Hw::Legacy(d) => d,
            Hw::Cmdq(_) => unreachable!("legacy step on the CMDQ driver"),
        }
    }

    /// One `mmcqd` step: start the prepared request when the bus is free,
    /// then fetch and prepare the next one while a slot is free.
    pub(super) fn legacy_run<E: DriverEvents, Q: RequestQueue<E>>(
        &mut self,
        now: Ns,
        up: &mut Q,
        q: &mut EventQueue<E>,
    ) {
        if self.legacy().asleep {
            return;
        }
        if self.legacy().can_start(now) {
            self.legacy_start(now, q);
        }
        let d = self.legacy();
        if d.can_fetch() {
            if d.cpu_free > now {
                let at = d.cpu_free;
                self.kick_at(at, q);
                return;
            }
            let next = match self.legacy().stash.take() {
                Some(r) => Some(r),
                None => up.fetch(now),
            };
            match next {
                Some(r) => {
                    let mut prep = self.hold(now, r);
                    let mut pack = Vec::new();
                    let max = pack_limit(&self.device.config().features, &r);
                    if max > 1 {
                        // `mmc_blk_prep_packed_list`: pull further requests
                        // of the same direction until one cannot join (it is
                        // requeued) or the pack is full.
                        let mut blocks = pack_blocks(&r);
                        while pack.len() + 1 < max {
                            match up.fetch(now) {
                                Some(n)
                                    if can_join(&r, &n)
                                        && blocks + n.sectors as u64 <= CMD23_MAX_BLOCKS =>
                                {
                                    blocks += n.sectors as u64;
                                    // mmcqd prepares it after the one
                                    // before: `hold` returns its end.
                                    prep = self.hold(now, n);
                                    pack.push(n.id);
                                }
                                Some(n) => {
                                    self.legacy().stash = Some(n);
                                    break;
                                }
                                None => break,
                            }
                        }
                    }
                    let d = self.legacy();
                    d.prepared_pack = pack;
                    d.prepared = Some(r.id);
                    d.prepared_ready = now + prep;
                    d.cpu_free = now + prep;
                    if d.executing.is_none() {
                        self.kick_at(now + prep, q);
                    }
                }
                None => {
                    let d = self.legacy();
                    if d.held() == 0 {
                        d.asleep = true;
                        self.arm_bkops(now, q);
                    }
                }
            }
        } else if d.executing.is_none() && d.prepared.is_some() {
            let at = d.prepared_ready;
            self.kick_at(at, q);
        }
        up.dispatch_tried(q);
    }

    /// The prepared request goes to the device.
    fn legacy_start<E: DriverEvents>(&mut self, now: Ns, q: &mut EventQueue<E>) {
        let d = self.legacy();
        let Some(rq) = d.prepared.take() else {
            return;
        };
        d.executing = Some(rq);
        d.executing_pack = std::mem::take(&mut d.prepared_pack);
        if d.executing_pack.is_empty() {
            self.issue(now, rq, false, q);
        } else {
            let members = d.executing_pack.clone();
            self.issue_packed(now, rq, &members, q);
        }
    }

    /// Completion interrupt of `rq`: after a write, `mmcqd` polls CMD13
    /// until the card is ready (each poll's interrupt comes back here);
    /// then it starts the prepared request first, ends the old one (and,
    /// one by one in [`Driver::legacy_ended`], the rest of its pack), and
    /// runs again (`mmc_start_req`).
    pub(super) fn legacy_irq<E: DriverEvents, Q: RequestQueue<E>>(
        &mut self,
        now: Ns,
        rq: RqId,
        up: &mut Q,
        q: &mut EventQueue<E>,
    ) {
        if self.busy_poll_step(now, rq, q) {
            return;
        }
        self.legacy().executing = None;
        let members = std::mem::take(&mut self.legacy().executing_pack);
        self.share_poll_times(rq, &members);
        if std::mem::take(&mut self.legacy().is_urgent) {
            // MMC_BLK_URGENT_DONE: the urgent request goes next.
            self.give_back_prepared(now, up);
        }
        if self.legacy().can_start(now) {
            self.legacy_start(now, q);
        }
        self.legacy().ending.extend(members);
        self.end(now, rq, up, q);
    }

    /// The completions of the request the interrupt ended last have been
    /// delivered: the next request of its pack ends, or, the pack done,
    /// the queue runs and `mmcqd` takes its next step.
    pub(super) fn legacy_ended<E: DriverEvents, Q: RequestQueue<E>>(
        &mut self,
        now: Ns,
        up: &mut Q,
        q: &mut EventQueue<E>,
    ) {
        if let Some(m) = self.legacy().ending.pop_front() {
            self.end(now, m, up, q);
            return;
        }
        self.run_queue(now, up, q);
        if !self.legacy().asleep {
            self.legacy_run(now, up, q);
        }
    }
}

impl Driver {
    /// `mmcqd` woke for an urgent request (`mmc_wait_for_data_req_done`).
    /// A write in flight that is not urgent, not reliable, not packed and
    /// still receiving data (`mmc_should_stop_curr_req`:
    /// `get_xfer_remain` > 0) is stopped (`mmc_stop_request`: host stop,
    /// CMD12, then `mmc_interrupt_hpi`); otherwise the notification waits
    /// for the request's completion. With nothing on the bus the prepared
    /// request is given back at once (`mmc_start_req`).
    pub(super) fn legacy_urgent<E: DriverEvents, Q: RequestQueue<E>>(
        &mut self,
        now: Ns,
        up: &mut Q,
        q: &mut EventQueue<E>,
    ) {
        if !self.legacy().is_urgent {
            return;
        }
        let Some(rq) = self.legacy().executing else {
            self.legacy().is_urgent = false;
            self.give_back_prepared(now, up);
            self.legacy_run(now, up, q);
            return;
        };
        let r = self.held[rq as usize].0;
        let stoppable = r.op == Op::Write
            && !r.fua
            && !r.urgent
            && self.legacy().executing_pack.is_empty()
            && self.device.write_data_remaining();
        if !stoppable {
            return;
        }
        self.legacy().is_urgent = false;
        if let Some((end, _accepted)) = self.device.stop_write(now) {
            self.step_gen = self.step_gen.wrapping_add(1);
            q.at(end, DriverEvent::Stopped(rq));
        }
    }

    /// The stop sequence of write `rq` ended (`MMC_BLK_URGENT`): the
    /// prepared request, unless urgent, and then the stopped write are
    /// re-inserted into the scheduler — the write whole, as msm-3.4
    /// `mmc_blk_reinsert_req` does for a request that is not packed (the
    /// sectors the card accepted are sent again) — and `mmcqd` fetches the
    /// urgent request.
    pub(super) fn legacy_stopped<E: DriverEvents, Q: RequestQueue<E>>(
        &mut self,
        now: Ns,
        rq: RqId,
        up: &mut Q,
        q: &mut EventQueue<E>,
    ) {
        self.legacy().executing = None;
        self.give_back_prepared(now, up);
        up.reinsert(now, rq);
        if self.legacy().can_start(now) {
            self.legacy_start(now, q);
        }
        self.legacy_run(now, up, q);
    }

    /// Gives the prepared request (and its pack, last member first) back
    /// to the scheduler unless it is urgent (`MMC_REQ_NOREINSERT_MASK`).
    fn give_back_prepared<E, Q: RequestQueue<E>>(&mut self, now: Ns, up: &mut Q) {
        let Some(p) = self.legacy().prepared else {
            return;
        };
        if self.held[p as usize].0.urgent {
            return;
        }
        let d = self.legacy();
        d.prepared = None;
        let pack = std::mem::take(&mut d.prepared_pack);
        for &m in pack.iter().rev() {
            up.reinsert(now, m);
        }
        up.reinsert(now, p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_packed_only_with_packed_read() {
        use crate::device::FeaturesConfig;
        use crate::driver::DriverRequest;
        let rq = |op, fua| DriverRequest {
            id: 0,
            op,
            sector: 0,
            sectors: 8,
            fua,
            urgent: false,
            secure: false,
            hint: None,
        };
        let mut f = FeaturesConfig {
            packed: true,
            ..FeaturesConfig::default()
        };
        assert_eq!(
            pack_limit(&f, &rq(Op::Read, false)),
            1,
            "Linux packs writes only"
        );
        assert_eq!(pack_limit(&f, &rq(Op::Write, false)), 8);
        assert_eq!(pack_limit(&f, &rq(Op::Write, true)), 1, "FUA goes alone");
        f.packed = false;
        f.packed_read = true;
        f.max_packed_reads = Some(5);
        assert_eq!(pack_limit(&f, &rq(Op::Read, false)), 5);
        assert_eq!(pack_limit(&f, &rq(Op::Write, false)), 1);
        assert_eq!(pack_limit(&f, &rq(Op::Flush, false)), 1);
        assert!(can_join(&rq(Op::Read, false), &rq(Op::Read, false)));
        assert!(!can_join(&rq(Op::Read, false), &rq(Op::Write, false)));
        assert_eq!(pack_blocks(&rq(Op::Read, false)), 8, "header sent apart");
        assert_eq!(
            pack_blocks(&rq(Op::Write, false)),
            9,
            "header block counted"
        );
    }

    #[test]
    fn one_slot_driver_never_prefetches_while_a_request_runs() {
        let mut d = LegacyDriver::new(&DriverConfig {
            driver_slots: 1,
            ..Default::default()
        });
        assert!(d.can_fetch());
        d.executing = Some(3);
        assert!(!d.can_fetch());
        let mut d2 = LegacyDriver::new(&DriverConfig::default());
        d2.executing = Some(3);
        assert!(d2.can_fetch(), "pipelining prepares the next request");
        d2.prepared = Some(4);
        d2.prepared_ready = 100;
        assert!(!d2.can_start(200), "waits for the executing request");
        d2.executing = None;
        assert!(!d2.can_start(50) && d2.can_start(100));
    }
}
