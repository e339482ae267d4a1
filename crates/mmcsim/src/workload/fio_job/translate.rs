//! A job's options translated into the scenario's files and jobs.

use super::job::Options;
use super::parse::Section;
use super::{FioFile, FioWorkload};
use crate::error::{Error, Result};
use crate::workload::spec::{JobOp, JobSpec, Order, Pattern, SchedPolicy};

impl Options {
    /// Adds this job's files and job specs to `w`.
    pub(super) fn translate(
        &self,
        s: &Section,
        start_ms: f64,
        w: &mut FioWorkload,
        source: &str,
    ) -> Result<()> {
        let at = |line: usize, msg: String| {
            Error::config(format!(
                "{source}:{}: job `{}`: {msg}",
                if line == 0 { s.line } else { line },
                self.name
            ))
        };
        let op = self.rw.op();
        let bs = match op {
            JobOp::Read => self.bs.0,
            JobOp::Write => self.bs.1,
            JobOp::Readwrite if self.bs.0 == self.bs.1 => self.bs.0,
            JobOp::Readwrite => {
                return Err(at(
                    self.bs_line,
                    format!(
                        "key 'bs': reads of {} and writes of {} bytes in one mixed job are not modelled; give one size",
                        self.bs.0, self.bs.1
                    ),
                ))
            }
        };
        let io_size =
            match (self.size, self.filesize) {
                (Some((n, _)), _) => n,
                (None, Some((f, line))) => f
                    .checked_sub(self.offset)
                    .filter(|&n| n > 0)
                    .ok_or_else(|| {
                        at(
                            line,
                            format!(
                                "key 'filesize' = {f}: leaves no I/O after offset {}",
                                self.offset
                            ),
                        )
                    })?,
                (None, None) => return Err(at(
                    0,
                    "neither size nor filesize is given: fio needs one to know how much I/O to do"
                        .into(),
                )),
            };
        let file_bytes = match self.filesize {
            Some((f, _)) => f,
            None => self.offset + io_size,
        };
        if self.offset + io_size > file_bytes {
            let line = self.size.map_or(0, |(_, l)| l);
            return Err(at(
                line,
                format!(
                    "offset {} + size {io_size} bytes runs past the end of the {file_bytes}-byte file",
                    self.offset
                ),
            ));
        }
        if io_size < bs {
            let line = self.size.map_or(self.bs_line, |(_, l)| l);
            return Err(at(
                line,
                format!("size {io_size} bytes is smaller than one block of {bs} bytes"),
            ));
        }
        if self.time_based && self.runtime_ms.is_none() {
            return Err(at(
                0,
                "time_based needs a runtime (fio would run forever)".into(),
            ));
        }
        if self.runtime_ms == Some(0.0) {
            return Err(at(
                self.runtime_line,
                "key 'runtime': expected a run time > 0".into(),
            ));
        }
        let (pattern, order, stride) = match (self.rw.random(), self.norandommap, self.skip) {
            (true, true, _) => (Pattern::Random, Order::Ascending, None),
            (true, false, _) => (Pattern::Sequential, Order::Shuffled, None),
            (false, _, 0) => (Pattern::Sequential, Order::Ascending, None),
            (false, _, n) => (Pattern::Strided, Order::Ascending, Some(bs + n)),
        };
        let path = |file: &str| -> String {
            let p = match &self.directory {
                Some(d) => format!("{d}/{file}"),
                None => file.to_string(),
            };
            p.trim_start_matches('/').to_string()
        };
        // Clones share a named file; otherwise each gets fio's
        // `jobname.N.0`.
        let (files, threads): (Vec<String>, u32) = match &self.filename {
            Some((f, _)) => (vec![path(f)], self.numjobs),
            None => (
                (0..self.numjobs)
                    .map(|i| path(&format!("{}.{i}.0", self.name)))
                    .collect(),
                1,
            ),
        };
        let size_mib = file_bytes.div_ceil(1 << 20);
        for file in files {
            match w.files.iter_mut().find(|f| f.name == file) {
                Some(f) => f.size_mib = f.size_mib.max(size_mib),
                None => w.files.push(FioFile {
                    name: file.clone(),
                    size_mib,
                }),
            }
            let duration_ms = self.runtime_ms.map(|r| self.ramp_ms + r);
            let job = JobSpec {
                name: self.name.clone(),
                file,
                op,
                pattern,
                order,
                request_bytes: bs,
                stride_bytes: stride,
                align_bytes: None,
                region_offset_bytes: self.offset,
                region_bytes: Some(io_size),
                threads,
                requests: (!self.time_based).then_some(io_size / bs),
                duration_ms,
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
            };
            job.check_io()
                .map_err(|m| Error::config(format!("{source}:{}: {m}", s.line)))?;
            w.jobs.push(job);
        }
        Ok(())
    }
}
