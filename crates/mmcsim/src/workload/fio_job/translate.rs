//! A job's options translated into the scenario's files and jobs.

use super::job::Options;
use super::option_error::{JobProblem, LineProblem};
use super::section::Section;
use super::{FioFile, FioReportJob, FioWorkload, DEFAULT_PERCENTILES};
use crate::error::{Error, Result};
use crate::workload::block_sizes::BlockSizes;
use crate::workload::spec::{JobOp, JobSpec, Order, Pattern, SchedPolicy};

/// What one clone works on: its files, offset and region.
struct CloneFiles {
    files: Vec<String>,
    /// Clones (threads) sharing these files.
    threads: u32,
    offset: u64,
}

impl Options {
    /// Adds this job's files and job specs to `w`; `start_ms` is when its
    /// threads start, `group` its reporting group.
    pub(super) fn translate(
        &self,
        s: &Section,
        start_ms: f64,
        group: u32,
        w: &mut FioWorkload,
        source: &str,
    ) -> Result<()> {
        let located = |line: usize, problem: LineProblem| Error::FioLine {
            origin: source.to_string(),
            line: if line == 0 { s.line } else { line },
            problem: Box::new(problem),
        };
        let at = |line: usize, problem: JobProblem| {
            located(
                line,
                LineProblem::Job {
                    job: self.name.clone(),
                    problem,
                },
            )
        };
        let m = &self.more;
        let op = self.rw.op();
        let (sizes, min_bs, fixed) = self.call_sizes(op);
        let nfiles = self.file_count().map_err(|(l, e)| at(l, e))?;
        let (total, per_file) = self.sizes(nfiles).map_err(|(l, e)| at(l, e))?;
        let io_bytes = m.io_size.map_or(total, |(n, _)| n);
        if per_file < min_bs || io_bytes < min_bs {
            let line = self.size.map_or(self.bs_line, |(_, l)| l);
            return Err(at(
                line,
                JobProblem::SizeBelowBlock {
                    bytes: per_file.min(io_bytes),
                    block: min_bs,
                },
            ));
        }
        self.check_times().map_err(|(l, e)| at(l, e))?;
        if let (Some(line), true) = (m.create_on_open, op != JobOp::Write) {
            return Err(at(line, JobProblem::CreateOnOpenRead));
        }
        let (pattern, order, stride) = self.pattern(min_bs);
        // What every clone shares: the pattern, its length and call sizes.
        let mut template = self.base_spec(op, pattern, order, start_ms);
        template.region_bytes = Some(per_file);
        template.stride_bytes = stride;
        (template.requests, template.bytes_per_pass) = match (self.time_based, fixed) {
            (true, _) => (m.number_ios, None),
            (false, true) => {
                let n = io_bytes / min_bs;
                (Some(m.number_ios.map_or(n, |c| c.min(n))), None)
            }
            (false, false) => (m.number_ios, Some(io_bytes)),
        };
        self.set_sizes(&mut template, &sizes, fixed, min_bs);
        if self.rw.random() {
            template.distribution = m.distribution.clone();
            template.random_percent = m.random_percent.filter(|&p| p < 100);
            template.align_bytes = m.blockalign.map(|(a, _)| a);
        }
        for c in self.clones(nfiles) {
            let fb = match self.filesize {
                Some((f, _)) => f,
                None => c.offset + per_file,
            };
            if c.offset + per_file > fb {
                let line = self.size.map_or(0, |(_, l)| l);
                return Err(at(
                    line,
                    JobProblem::PastFileEnd {
                        offset: c.offset,
                        size: per_file,
                        file_bytes: fb,
                    },
                ));
            }
            self.add_files(w, &c.files, fb);
            let mut job = template.clone();
            job.file = c.files[0].clone();
            job.more_files = c.files[1..].to_vec();
            job.threads = c.threads;
            job.region_offset_bytes = c.offset;
            job.check_io()
                .map_err(|e| located(s.line, LineProblem::Rules(e)))?;
            w.jobs.push(job);
            w.report.push(self.report_job(group));
        }
        Ok(())
    }

    /// The read and write call sizes, the smallest call either direction
    /// `op` uses makes, and whether every call of `op` has that one size.
    fn call_sizes(&self, op: JobOp) -> ([BlockSizes; 2], u64, bool) {
        let m = &self.more;
        let sizes = [
            BlockSizes::new(self.bs.0, m.bssplit[0].as_deref().unwrap_or(&[])),
            BlockSizes::new(self.bs.1, m.bssplit[1].as_deref().unwrap_or(&[])),
        ];
        let used: Vec<&BlockSizes> = match op {
            JobOp::Read => vec![&sizes[0]],
            JobOp::Write => vec![&sizes[1]],
            JobOp::Readwrite => vec![&sizes[0], &sizes[1]],
        };
        let min_bs = used.iter().map(|s| s.min()).min().unwrap_or(self.bs.0);
        let fixed =
            used.iter().all(|s| s.is_fixed()) && used.iter().all(|s| s.min() == used[0].min());
        (sizes, min_bs, fixed)
    }

    /// The offsets' pattern, order and stride: fio's random map is a
    /// shuffled sequence; `rw=write:N` skips N bytes after each call.
    fn pattern(&self, min_bs: u64) -> (Pattern, Order, Option<u64>) {
        let m = &self.more;
        match (self.rw.random(), self.skip) {
            (true, _)
                if self.norandommap || m.distribution.is_skewed() || m.blockalign.is_some() =>
            {
                (Pattern::Random, Order::Ascending, None)
            }
            (true, _) => (Pattern::Sequential, Order::Shuffled, None),
            (false, 0) => (Pattern::Sequential, Order::Ascending, None),
            (false, n) => (Pattern::Strided, Order::Ascending, Some(min_bs + n)),
        }
    }

    /// Adds `files` of `bytes` bytes to `w` (a file named twice takes the
    /// larger size; laid out before the run unless `create_on_open`).
    fn add_files(&self, w: &mut FioWorkload, files: &[String], bytes: u64) {
        let prewrite = self.more.create_on_open.is_none();
        let size_mib = bytes.div_ceil(1 << 20);
        for file in files {
            match w.files.iter_mut().find(|f| &f.name == file) {
                Some(f) => {
                    f.size_mib = f.size_mib.max(size_mib);
                    f.prewrite &= prewrite;
                }
                None => w.files.push(FioFile {
                    name: file.clone(),
                    size_mib,
                    prewrite,
                }),
            }
        }
    }

    /// How one clone of this job is reported, in reporting group `group`.
    fn report_job(&self, group: u32) -> FioReportJob {
        let m = &self.more;
        FioReportJob {
            jobname: self.name.clone(),
            groupid: group,
            group_reporting: m.group_reporting,
            percentiles: m
                .percentiles
                .clone()
                .unwrap_or_else(|| DEFAULT_PERCENTILES.to_vec()),
        }
    }

    /// Files per clone: the names of `filename` (':'-separated), else
    /// `nrfiles`.
    fn file_count(&self) -> std::result::Result<u32, (usize, JobProblem)> {
        match (&self.filename, self.more.nrfiles) {
            (Some((f, _)), Some((n, line))) if n > 1 && !f.contains(':') => {
                Err((line, JobProblem::NrfilesOneName { nrfiles: n }))
            }
            (Some((f, _)), _) => Ok(f.split(':').count() as u32),
            (None, n) => Ok(n.map_or(1, |(n, _)| n)),
        }
    }

    /// (Bytes of I/O per clone over all its files, bytes of the region of
    /// each file): fio's `size` divided among `nfiles` files, or
    /// `filesize` less the offset.
    fn sizes(&self, nfiles: u32) -> std::result::Result<(u64, u64), (usize, JobProblem)> {
        match (self.size, self.filesize) {
            (Some((n, _)), _) => Ok((n, n / u64::from(nfiles))),
            (None, Some((f, line))) => f
                .checked_sub(self.offset)
                .filter(|&n| n > 0)
                .map(|n| (n * u64::from(nfiles), n))
                .ok_or((
                    line,
                    JobProblem::FilesizeNoIo {
                        filesize: f,
                        offset: self.offset,
                    },
                )),
            (None, None) => Err((0, JobProblem::NoSize)),
        }
    }

    /// The run time options fit together.
    fn check_times(&self) -> std::result::Result<(), (usize, JobProblem)> {
        if self.time_based && self.runtime_ms.is_none() {
            return Err((0, JobProblem::TimeBasedWithoutRuntime));
        }
        if self.runtime_ms == Some(0.0) {
            return Err((self.runtime_line, JobProblem::ZeroRuntime));
        }
        Ok(())
    }

    /// The clones' files, offsets and threads: clones share named files
    /// (one job of `numjobs` threads, or one per clone when
    /// `offset_increment` moves each); otherwise each gets fio's
    /// `jobname.N.i`.
    fn clones(&self, nfiles: u32) -> Vec<CloneFiles> {
        let path = |file: &str| -> String {
            let p = match &self.directory {
                Some(d) => format!("{d}/{file}"),
                None => file.to_string(),
            };
            p.trim_start_matches('/').to_string()
        };
        let inc = self.more.offset_increment;
        let offset = |i: u32| self.offset + u64::from(i) * inc;
        match &self.filename {
            Some((f, _)) => {
                let files: Vec<String> = f.split(':').map(path).collect();
                if inc == 0 {
                    return vec![CloneFiles {
                        files,
                        threads: self.numjobs,
                        offset: self.offset,
                    }];
                }
                (0..self.numjobs)
                    .map(|i| CloneFiles {
                        files: files.clone(),
                        threads: 1,
                        offset: offset(i),
                    })
                    .collect()
            }
            None => (0..self.numjobs)
                .map(|i| CloneFiles {
                    files: (0..nfiles)
                        .map(|j| path(&format!("{}.{i}.{j}", self.name)))
                        .collect(),
                    threads: 1,
                    offset: offset(i),
                })
                .collect(),
        }
    }

    /// Sets the job's call sizes: one size, per-direction sizes, or the
    /// splits.
    fn set_sizes(&self, job: &mut JobSpec, sizes: &[BlockSizes; 2], fixed: bool, min_bs: u64) {
        let split = |s: &BlockSizes| match s {
            BlockSizes::Fixed(_) => Vec::new(),
            BlockSizes::Split(v) => v.clone(),
        };
        if fixed {
            job.request_bytes = min_bs;
            return;
        }
        job.request_bytes = sizes[0].min();
        job.bssplit = split(&sizes[0]);
        if sizes[1] != sizes[0] {
            job.write_request_bytes = Some(sizes[1].min());
            job.write_bssplit = Some(split(&sizes[1])).filter(|v| !v.is_empty());
        }
    }

    /// The job spec's fields that do not depend on the clone.
    fn base_spec(&self, op: JobOp, pattern: Pattern, order: Order, start_ms: f64) -> JobSpec {
        let m = &self.more;
        let reads = op != JobOp::Write;
        let writes = op != JobOp::Read;
        JobSpec {
            name: self.name.clone(),
            file: String::new(),
            op,
            pattern,
            order,
            request_bytes: 0,
            stride_bytes: None,
            align_bytes: None,
            region_offset_bytes: 0,
            region_bytes: None,
            threads: 1,
            requests: None,
            duration_ms: self.runtime_ms.map(|r| self.ramp_ms + r),
            think_time_us: self.thinktime_us,
            start_ms,
            direct: self.direct,
            sync: self.sync,
            fsync_every: self.fsync,
            fdatasync_every: self.fdatasync,
            nice: self.nice,
            sched_policy: SchedPolicy::Normal,
            ioprio_class: self.prioclass,
            ioprio_level: self.prio,
            pid: None,
            rwmix_read: (op == JobOp::Readwrite).then_some(self.rwmixread.unwrap_or(50)),
            ioengine: self.ioengine,
            iodepth: self.iodepth,
            ramp_ms: self.ramp_ms,
            write_request_bytes: None,
            bssplit: Vec::new(),
            write_bssplit: None,
            distribution: Default::default(),
            random_percent: None,
            bytes_per_pass: None,
            loops: if self.time_based { 1 } else { m.loops },
            read_rate_bytes_per_s: m.rate[0].filter(|_| reads),
            write_rate_bytes_per_s: m.rate[1].filter(|_| writes),
            read_rate_iops: m.rate_iops[0].filter(|_| reads),
            write_rate_iops: m.rate_iops[1].filter(|_| writes),
            end_fsync: m.end_fsync,
            fsync_on_close: m.fsync_on_close,
            more_files: Vec::new(),
            file_service: m.file_service.0,
            file_service_calls: m.file_service.1,
        }
    }
}
