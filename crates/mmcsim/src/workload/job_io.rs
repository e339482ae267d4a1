//! What a synthetic job thread issues next: its files (one offset
//! generator each, and one for the writes of a sequential mix), the
//! per-call sizes of each direction, its passes (fio `loops`: `requests`
//! calls or `bytes_per_pass` bytes each, then the end-of-pass fsync()s of
//! `end_fsync` / `fsync_on_close`), the file it serves next
//! (`file_service`), and its rate limit ([`super::rate`]).

use super::block_sizes::BlockSizes;
use super::rate::{dir, RateLimit};
use super::spec::{FileService, JobOp, JobSpec, Order, Pattern};
use super::synthetic::OffsetGen;
use crate::engine::SimRng;
use crate::host::Fd;
use crate::types::Ns;
use rand::Rng;

/// One file of a thread: its descriptor and offsets.
#[derive(Clone, Debug)]
struct FileIo {
    fd: Fd,
    gen: OffsetGen,
    /// The offsets of a sequential mixed job's writes (its reads use
    /// `gen`), as fio keeps `last_pos` per direction.
    write_gen: Option<OffsetGen>,
}

/// A job thread's I/O state.
#[derive(Clone, Debug)]
pub struct JobIo {
    files: Vec<FileIo>,
    /// Sizes of reads and writes.
    sizes: [BlockSizes; 2],
    /// Calls left in this pass.
    remaining: u64,
    /// Bytes left in this pass, when the pass is counted in bytes.
    bytes_left: Option<u64>,
    /// Calls and bytes of a pass.
    per_pass: (u64, Option<u64>),
    /// Passes left after this one.
    passes_left: u32,
    /// fsync()s queued at the end of this pass (descriptors), and whether
    /// they were queued.
    end_syncs: Vec<Fd>,
    end_queued: bool,
    /// fsync()s per file at the end of a pass: 0, 1 (`end_fsync`) or 2
    /// (`fsync_on_close`: fio's end-of-pass fsync and the one at close).
    syncs_per_file: u32,
    /// The file served now, and calls made on it since it was chosen.
    cur: usize,
    calls_on_cur: u64,
    service: FileService,
    service_calls: u64,
    rate: Option<RateLimit>,
    /// The direction drawn for the next call (kept while the thread
    /// sleeps for its rate).
    pending_read: Option<bool>,
    /// Percent of calls that are reads.
    read_percent: u32,
}

impl JobIo {
    /// The state of one thread of `job` starting at `start` ns, with its
    /// files' descriptors and sizes (`files`: one per file of
    /// [`JobSpec::all_files`]); `rng` is the thread's stream.
    pub fn new(job: &JobSpec, files: &[(Fd, u64)], start: Ns, rng: &mut SimRng) -> JobIo {
        let files: Vec<FileIo> = files
            .iter()
            .map(|&(fd, bytes)| {
                let gen = OffsetGen::new(job, bytes, rng);
                // A sequential mix keeps one position per direction (fio's
                // last_pos[ddir]); a random one shares its offsets.
                let write_gen = (job.op == JobOp::Readwrite
                    && job.pattern != Pattern::Random
                    && job.order != Order::Shuffled)
                    .then(|| gen.clone());
                FileIo { fd, gen, write_gen }
            })
            .collect();
        // Without `requests`, a job counted in bytes or with a duration
        // runs until they end; one without makes one pass over its region.
        let calls = match (
            job.requests,
            job.duration_ms.or(job.bytes_per_pass.map(|_| 0.0)),
        ) {
            (Some(n), _) => n,
            (None, Some(_)) => u64::MAX,
            (None, None) => files.iter().map(|f| f.gen.slots()).sum(),
        };
        let read_percent = match job.op {
            JobOp::Read => 100,
            JobOp::Write => 0,
            JobOp::Readwrite => job.rwmix_read.unwrap_or(50),
        };
        let syncs_per_file = if job.op == JobOp::Read {
            0
        } else {
            u32::from(job.end_fsync || job.fsync_on_close) + u32::from(job.fsync_on_close)
        };
        JobIo {
            sizes: [job.block_sizes(true), job.block_sizes(false)],
            remaining: calls,
            bytes_left: job.bytes_per_pass,
            per_pass: (calls, job.bytes_per_pass),
            passes_left: job.loops.saturating_sub(1),
            end_syncs: Vec::new(),
            end_queued: false,
            syncs_per_file,
            cur: 0,
            calls_on_cur: 0,
            service: job.file_service,
            service_calls: u64::from(job.file_service_calls.max(1)),
            rate: RateLimit::new(
                [job.read_rate_bytes_per_s, job.write_rate_bytes_per_s],
                [job.read_rate_iops, job.write_rate_iops],
                start,
            ),
            pending_read: None,
            read_percent,
            files,
        }
    }

    /// A state that issues nothing (a scripted thread's).
    pub fn none() -> JobIo {
        JobIo {
            files: Vec::new(),
            sizes: [BlockSizes::Fixed(0), BlockSizes::Fixed(0)],
            remaining: 0,
            bytes_left: None,
            per_pass: (0, None),
            passes_left: 0,
            end_syncs: Vec::new(),
            end_queued: true,
            syncs_per_file: 0,
            cur: 0,
            calls_on_cur: 0,
            service: FileService::Roundrobin,
            service_calls: 1,
            rate: None,
            pending_read: None,
            read_percent: 0,
        }
    }

    /// The descriptor of the file served now (fsync() every N writes).
    pub fn fd(&self) -> Fd {
        self.files.get(self.cur).map_or(0, |f| f.fd)
    }

    /// True when this pass's calls (or bytes) are done.
    pub fn pass_done(&self) -> bool {
        self.remaining == 0 || self.bytes_left == Some(0)
    }

    /// At the end of a pass (or of the run): the next end-of-pass fsync()
    /// to issue, if any.
    pub fn end_sync(&mut self) -> Option<Fd> {
        if !self.end_queued {
            self.end_queued = true;
            for f in self.files.iter().rev() {
                for _ in 0..self.syncs_per_file {
                    self.end_syncs.push(f.fd);
                }
            }
        }
        self.end_syncs.pop()
    }

    /// Starts the next pass, if one is left (fio `loops`): the offsets go
    /// on (a sequential job wraps to the start of its region).
    pub fn next_pass(&mut self) -> bool {
        if self.passes_left == 0 {
            return false;
        }
        self.passes_left -= 1;
        (self.remaining, self.bytes_left) = self.per_pass;
        self.end_queued = false;
        true
    }

    /// The direction of the next call and the earliest time it may be
    /// issued (its rate); `rng` draws a mixed job's direction, kept until
    /// the call is made.
    pub fn direction(&mut self, now: Ns, rng: &mut SimRng) -> (bool, Ns) {
        let read = *self
            .pending_read
            .get_or_insert_with(|| match self.read_percent {
                100 => true,
                0 => false,
                p => rng.random_range(0..100u32) < p,
            });
        let Some(rate) = &self.rate else {
            return (read, now);
        };
        let mixed = !matches!(self.read_percent, 0 | 100);
        let (d, at) = rate.choose(now, dir(read), mixed);
        let read = d == 0;
        self.pending_read = Some(read);
        (read, at)
    }

    /// The next call, in direction `read`: its descriptor, offset and
    /// size; counts it against the pass and the rate.
    pub fn next_call(&mut self, read: bool, rng: &mut SimRng) -> (Fd, u64, u64) {
        self.pending_read = None;
        self.choose_file(rng);
        let sizes = &self.sizes[dir(read)];
        let f = &mut self.files[self.cur];
        let gen = match (&mut f.write_gen, read) {
            (Some(w), false) => w,
            _ => &mut f.gen,
        };
        let (offset, bytes) = gen.next_io(rng, sizes);
        self.remaining = self.remaining.saturating_sub(1);
        if let Some(b) = &mut self.bytes_left {
            *b = b.saturating_sub(bytes);
        }
        if let Some(r) = &mut self.rate {
            r.issued(dir(read), bytes);
        }
        self.calls_on_cur += 1;
        (f.fd, offset, bytes)
    }

    /// Switches files per `file_service` before a call.
    fn choose_file(&mut self, rng: &mut SimRng) {
        let n = self.files.len();
        if n < 2 {
            return;
        }
        let turn = match self.service {
            FileService::Sequential => self.files[self.cur].gen.slots(),
            _ => self.service_calls,
        };
        if self.calls_on_cur < turn {
            return;
        }
        self.calls_on_cur = 0;
        self.cur = match self.service {
            FileService::Random => rng.random_range(0..n),
            _ => (self.cur + 1) % n,
        };
    }
}
