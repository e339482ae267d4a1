//! One job's options after inheritance, parsed from their text.

use super::parse::{Opt, Section};
use super::values::{count, int, positive, size, time_us};
use super::{DEFAULT_BS, MAX_NUMJOBS};
use crate::error::{Error, Result};
use crate::types::IoClass;
use crate::workload::spec::{IoEngine, JobOp};

/// The access pattern of `rw`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Rw {
    Read,
    Write,
    RandRead,
    RandWrite,
    Mixed,
    RandMixed,
}

impl Rw {
    pub(super) fn random(self) -> bool {
        matches!(self, Rw::RandRead | Rw::RandWrite | Rw::RandMixed)
    }
    pub(super) fn op(self) -> JobOp {
        match self {
            Rw::Read | Rw::RandRead => JobOp::Read,
            Rw::Write | Rw::RandWrite => JobOp::Write,
            Rw::Mixed | Rw::RandMixed => JobOp::Readwrite,
        }
    }
}

/// A job's options after inheritance, parsed; `*_line` say where a value
/// came from (0 = default).
pub(super) struct Options {
    pub(super) name: String,
    pub(super) rw: Rw,
    /// Bytes skipped after each sequential I/O (`rw=write:N`).
    pub(super) skip: u64,
    pub(super) rw_line: usize,
    pub(super) bs: (u64, u64),
    pub(super) bs_line: usize,
    pub(super) size: Option<(u64, usize)>,
    pub(super) filesize: Option<(u64, usize)>,
    pub(super) offset: u64,
    pub(super) numjobs: u32,
    pub(super) iodepth: u32,
    pub(super) ioengine: IoEngine,
    pub(super) direct: bool,
    pub(super) sync: bool,
    pub(super) fsync: u32,
    pub(super) fdatasync: u32,
    pub(super) rwmixread: Option<u32>,
    pub(super) runtime_ms: Option<f64>,
    pub(super) runtime_line: usize,
    pub(super) time_based: bool,
    pub(super) ramp_ms: f64,
    pub(super) thinktime_us: f64,
    pub(super) filename: Option<(String, usize)>,
    pub(super) directory: Option<String>,
    pub(super) randseed: Option<(u64, usize)>,
    pub(super) nice: i32,
    pub(super) prio: Option<u8>,
    pub(super) prioclass: Option<IoClass>,
    pub(super) norandommap: bool,
    pub(super) stonewall: Option<usize>,
}

impl Options {
    /// Reads section `s`'s options (inherited, then its own) in order.
    pub(super) fn read(s: &Section, source: &str) -> Result<Options> {
        let mut o = Options {
            name: s.name.clone(),
            rw: Rw::Read,
            skip: 0,
            rw_line: 0,
            bs: (DEFAULT_BS, DEFAULT_BS),
            bs_line: 0,
            size: None,
            filesize: None,
            offset: 0,
            numjobs: 1,
            iodepth: 1,
            ioengine: IoEngine::Psync,
            direct: false,
            sync: false,
            fsync: 0,
            fdatasync: 0,
            rwmixread: None,
            runtime_ms: None,
            runtime_line: 0,
            time_based: false,
            ramp_ms: 0.0,
            thinktime_us: 0.0,
            filename: None,
            directory: None,
            randseed: None,
            nice: 0,
            prio: None,
            prioclass: None,
            norandommap: false,
            stonewall: None,
        };
        for opt in &s.opts {
            o.set(opt).map_err(|m| {
                Error::config(format!(
                    "{source}:{}: key '{}'{}: {m}",
                    opt.line,
                    opt.key,
                    opt.value
                        .as_ref()
                        .map(|v| format!(" = '{v}'"))
                        .unwrap_or_default()
                ))
            })?;
        }
        Ok(o)
    }

    /// Applies one option.
    fn set(&mut self, opt: &Opt) -> std::result::Result<(), String> {
        let key = opt.key.as_str();
        // Flags may stand alone (`time_based`, `direct`): they mean 1.
        let flag = || -> std::result::Result<bool, String> {
            match opt.value.as_deref().unwrap_or("1") {
                "1" | "true" => Ok(true),
                "0" | "false" => Ok(false),
                _ => Err("expected 0 or 1".into()),
            }
        };
        if matches!(
            key,
            "description" | "group_reporting" | "thread" | "stonewall" | "wait_for_previous"
        ) {
            if key == "stonewall" || key == "wait_for_previous" {
                self.stonewall = flag()?.then_some(opt.line);
            }
            return Ok(());
        }
        if matches!(
            key,
            "time_based" | "direct" | "buffered" | "norandommap" | "randrepeat"
        ) {
            let v = flag()?;
            match key {
                "time_based" => self.time_based = v,
                "direct" => self.direct = v,
                "buffered" => self.direct = !v,
                "norandommap" => self.norandommap = v,
                _ if !v => {
                    return Err("a time-seeded random stream is not modelled: mmcsim runs are deterministic; keep randrepeat=1 and set randseed (or simctl --seed)".into())
                }
                _ => {}
            }
            return Ok(());
        }
        let Some(v) = opt.value.as_deref() else {
            return Err("expected key=value".into());
        };
        match key {
            "name" => {
                if v.is_empty() {
                    return Err("expected a job name".into());
                }
                self.name = v.to_string();
            }
            "rw" | "readwrite" => {
                let (kind, skip) = match v.split_once(':') {
                    Some((k, n)) => (k, Some(n)),
                    None => (v, None),
                };
                self.rw = match kind {
                    "read" => Rw::Read,
                    "write" => Rw::Write,
                    "randread" => Rw::RandRead,
                    "randwrite" => Rw::RandWrite,
                    "rw" | "readwrite" => Rw::Mixed,
                    "randrw" => Rw::RandMixed,
                    "trim" | "randtrim" | "trimwrite" | "randtrimwrite" => {
                        return Err("trim (discard) jobs are not modelled by mmcsim".into())
                    }
                    _ => {
                        return Err(
                            "expected read, write, randread, randwrite, rw, readwrite or randrw (optionally :N)".into(),
                        )
                    }
                };
                self.skip = match skip {
                    None => 0,
                    Some(_) if self.rw.random() => return Err(
                        "the ':N' suffix of random I/O (a new random offset every N I/Os) is not modelled; it is supported on sequential I/O (skip N bytes after each I/O)".into(),
                    ),
                    Some(n) => size(n).map_err(|e| format!("after ':': {e}"))?,
                };
                self.rw_line = opt.line;
            }
            "bs" | "blocksize" => {
                if v.contains(['-', ':']) {
                    return Err(
                        "a block size range is not modelled; give one size (or read,write sizes)"
                            .into(),
                    );
                }
                let mut parts = v.split(',');
                let r = parts.next().unwrap_or("");
                let w = parts.next();
                if parts.next().is_some_and(|t| !t.trim().is_empty()) {
                    return Err("a trim block size is not modelled (no trim jobs)".into());
                }
                let read = if r.trim().is_empty() {
                    DEFAULT_BS
                } else {
                    positive(size(r)?)?
                };
                let write = match w {
                    None => read,
                    Some(w) if w.trim().is_empty() => DEFAULT_BS,
                    Some(w) => positive(size(w)?)?,
                };
                self.bs = (read, write);
                self.bs_line = opt.line;
            }
            "size" => self.size = Some((positive(size(v)?)?, opt.line)),
            "filesize" => self.filesize = Some((positive(size(v)?)?, opt.line)),
            "offset" => self.offset = size(v)?,
            "numjobs" => self.numjobs = count(v, 1, MAX_NUMJOBS)? as u32,
            "iodepth" => {
                self.iodepth = count(v, 1, u64::from(crate::workload::spec::MAX_IODEPTH))? as u32
            }
            "ioengine" => {
                self.ioengine = match v {
                    "sync" => IoEngine::Sync,
                    "psync" => IoEngine::Psync,
                    "pvsync" => IoEngine::Pvsync,
                    "libaio" => IoEngine::Libaio,
                    "io_uring" => IoEngine::IoUring,
                    _ => return Err(
                        "expected an engine mmcsim models: sync, psync, pvsync, libaio or io_uring"
                            .into(),
                    ),
                }
            }
            "sync" => {
                self.sync = match v {
                    "1" | "sync" => true,
                    "0" | "none" => false,
                    "dsync" => {
                        return Err(
                            "O_DSYNC jobs are not modelled; use sync=1 (O_SYNC) or fdatasync=N"
                                .into(),
                        )
                    }
                    _ => return Err("expected 0, 1, none or sync".into()),
                }
            }
            "fsync" => self.fsync = count(v, 0, u64::from(u32::MAX))? as u32,
            "fdatasync" => self.fdatasync = count(v, 0, u64::from(u32::MAX))? as u32,
            "rwmixread" => self.rwmixread = Some(count(v, 0, 100)? as u32),
            "rwmixwrite" => self.rwmixread = Some(100 - count(v, 0, 100)? as u32),
            "runtime" => {
                self.runtime_ms = Some(time_us(v, 1e6)? / 1e3);
                self.runtime_line = opt.line;
            }
            "ramp_time" => self.ramp_ms = time_us(v, 1e6)? / 1e3,
            "thinktime" => self.thinktime_us = time_us(v, 1.0)?,
            "filename" => {
                if v.contains(':') {
                    return Err(
                        "several files per job (':'-separated) are not modelled; give one file"
                            .into(),
                    );
                }
                if v.is_empty() {
                    return Err("expected a file name".into());
                }
                self.filename = Some((v.to_string(), opt.line));
            }
            "directory" => {
                if v.contains(':') {
                    return Err("several directories (':'-separated) are not modelled".into());
                }
                self.directory = Some(v.trim_end_matches('/').to_string());
            }
            "randseed" => {
                self.randseed = Some((int(v).ok_or("expected an unsigned integer seed")?, opt.line))
            }
            "nice" => {
                self.nice = v
                    .parse::<i32>()
                    .ok()
                    .filter(|n| (-20..=19).contains(n))
                    .ok_or("expected a nice value -20..=19")?
            }
            "prio" => self.prio = Some(count(v, 0, 7)? as u8),
            "prioclass" => {
                self.prioclass = match v {
                    "0" => None,
                    "1" => Some(IoClass::Rt),
                    "2" => Some(IoClass::Be),
                    "3" => Some(IoClass::Idle),
                    _ => return Err("expected 0 (none), 1 (RT), 2 (BE) or 3 (IDLE)".into()),
                }
            }
            other => return Err(format!("key '{other}' is not modelled by mmcsim")),
        }
        Ok(())
    }
}
