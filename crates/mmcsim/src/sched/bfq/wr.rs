//! Weight raising (interactive, soft real-time, async) and large-burst
//! detection (reference §5.3 "Weight raising", "Bursts").

use super::{Bfq, BfqEvent};
use mmcsim_elevator::SchedCtx;

/// `bfq_large_burst_thresh`: queues in a burst that make it large.
pub const LARGE_BURST_THRESH: u32 = 11;
/// `bfq_burst_interval`, ms.
pub const BURST_INTERVAL_MS: u64 = 500;

/// Reference rates (sectors/µs << 16) of slow and fast devices, `[rotational,
/// non-rotational]` (`R_slow`, `R_fast`).
pub const R_SLOW: [u64; 2] = [1000, 10700];
/// See [`R_SLOW`].
pub const R_FAST: [u64; 2] = [14000, 33000];
/// Reference raising durations, ms (`T_slow`, `T_fast`).
pub const T_SLOW_MS: [u64; 2] = [5500, 1000];
/// See [`T_SLOW_MS`].
pub const T_FAST_MS: [u64; 2] = [2600, 2000];

impl Bfq {
    /// `device_speed_thresh` for this queue's rotational kind.
    fn speed_thresh(&self) -> u64 {
        let d = self.params.nonrot as usize;
        (R_FAST[d] + R_SLOW[d]) / 2
    }

    /// `RT_prod` for a fast or slow device.
    pub(super) fn rt_prod(&self, fast: bool) -> u64 {
        let d = self.params.nonrot as usize;
        if fast {
            R_FAST[d] * self.params.ms_to_jiffies(T_FAST_MS[d])
        } else {
            R_SLOW[d] * self.params.ms_to_jiffies(T_SLOW_MS[d])
        }
    }

    /// Re-classifies the device as fast or slow after a peak-rate update.
    pub(super) fn update_device_speed(&mut self) {
        let thresh = self.speed_thresh();
        if self.device_fast && self.peak_rate < thresh {
            self.device_fast = false;
            self.rt_prod = self.rt_prod(false);
        } else if !self.device_fast && self.peak_rate > thresh {
            self.device_fast = true;
            self.rt_prod = self.rt_prod(true);
        }
    }

    /// `bfq_wr_duration`: `wr_max_time`, or RT_prod / peak_rate if 0.
    pub(super) fn wr_duration(&self) -> i64 {
        if self.tun.wr_max_time > 0 {
            return self.tun.wr_max_time as i64;
        }
        (self.rt_prod / self.peak_rate.max(1)) as i64
    }

    /// `bfq_bfqq_softrt_next_start`.
    pub(super) fn softrt_next_start(&self, ctx: &SchedCtx, q: u32) -> i64 {
        let bq = &self.queues[q as usize];
        let hz = self.params.hz as u64;
        let a = bq.last_idle_bklogged
            + (hz * bq.service_from_backlogged / self.tun.wr_max_softrt_rate.max(1)) as i64;
        let b = self.jiffies(ctx) + self.tun.slice_idle as i64 + 4;
        a.max(b)
    }

    /// Starts a raising period of `duration` jiffies.
    pub(super) fn start_wr(&mut self, ctx: &SchedCtx, q: u32, duration: i64) {
        let coeff = self.tun.wr_coeff;
        let bq = &mut self.queues[q as usize];
        bq.wr_coeff = coeff;
        bq.wr_cur_max_time = duration;
        self.emit(BfqEvent::Raise {
            at: ctx.now,
            queue: q,
            pid: self.queues[q as usize].pid,
            duration,
        });
    }

    /// `bfq_bfqq_end_wr`.
    pub(super) fn end_wr(&mut self, q: u32) {
        let bq = &mut self.queues[q as usize];
        bq.wr_coeff = 1;
        bq.wr_cur_max_time = 0;
    }

    /// `bfq_update_wr_data`, at each dispatch: raising ends when its time is
    /// up or the queue is in a large burst; the weight follows at once.
    pub(super) fn update_wr_data(&mut self, ctx: &SchedCtx, q: u32) {
        let now = self.jiffies(ctx);
        let bq = &self.queues[q as usize];
        if bq.wr_coeff > 1
            && (bq.in_large_burst || bq.last_wr_start_finish + bq.wr_cur_max_time < now)
        {
            self.queues[q as usize].last_wr_start_finish = now;
            self.end_wr(q);
        }
        let bq = &self.queues[q as usize];
        let e = &mut self.wf.ents[q as usize];
        if (e.weight > bq.orig_weight) != (bq.wr_coeff > 1) {
            e.new_weight = bq.orig_weight * bq.wr_coeff;
            self.wf.apply_weight(q);
        }
    }

    /// `bfq_handle_burst`: a sync queue turning busy joins the current burst
    /// if it comes < 500 ms after the previous insertion; at 11 queues the
    /// burst is large.
    pub(super) fn handle_burst(&mut self, ctx: &SchedCtx, q: u32, idle_for_long_time: bool) {
        let now = self.jiffies(ctx);
        if idle_for_long_time {
            if self.queues[q as usize].in_burst_list {
                self.burst.retain(|&x| x != q);
                self.queues[q as usize].in_burst_list = false;
            }
            self.queues[q as usize].in_large_burst = false;
        }
        let bq = &self.queues[q as usize];
        if bq.in_burst_list || bq.in_large_burst {
            return;
        }
        let interval = self.params.ms_to_jiffies(self.variant.burst_interval_ms) as i64;
        if self.last_ins_in_burst + interval < now {
            // A new burst begins with this queue.
            self.large_burst = false;
            for &x in &self.burst {
                self.queues[x as usize].in_burst_list = false;
            }
            self.burst.clear();
            self.burst.push(q);
            self.queues[q as usize].in_burst_list = true;
            self.burst_size = 1;
        } else if self.large_burst {
            self.queues[q as usize].in_large_burst = true;
        } else {
            self.burst_size += 1;
            if self.burst_size == self.variant.large_burst_thresh {
                self.large_burst = true;
                for &x in &self.burst {
                    let bx = &mut self.queues[x as usize];
                    bx.in_large_burst = true;
                    bx.in_burst_list = false;
                }
                self.burst.clear();
                self.queues[q as usize].in_large_burst = true;
            } else {
                self.burst.push(q);
                self.queues[q as usize].in_burst_list = true;
            }
        }
        self.last_ins_in_burst = now;
    }
}
