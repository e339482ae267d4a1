//! One job's options after inheritance, parsed from their text.

use super::option_error::OptionError;
use super::pattern;
use super::section::{Opt, Section};
use super::values::{count, int, positive, size, time_us};
use super::{DEFAULT_BS, MAX_NUMJOBS};
use crate::error::Error;
use crate::types::IoClass;
use crate::workload::block_sizes::SizeWeight;
use crate::workload::distribution::Distribution;
use crate::workload::spec::FileService;
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
    /// The options of the I/O pattern and timing beyond the basic ones.
    pub(super) more: More,
}

/// Pattern and timing options (fio's `io_size`, `bssplit`, ...); `*_line`
/// say where a value came from (0 = default).
#[derive(Default)]
pub(super) struct More {
    /// Bytes of I/O per clone and pass (`io_size`).
    pub(super) io_size: Option<(u64, usize)>,
    /// At most this many I/Os per clone and pass (`number_ios`).
    pub(super) number_ios: Option<u64>,
    /// Block-size splits of reads and writes (`bssplit`).
    pub(super) bssplit: [Option<Vec<SizeWeight>>; 2],
    pub(super) bssplit_line: usize,
    /// Alignment of random offsets (`blockalign`).
    pub(super) blockalign: Option<(u64, usize)>,
    /// Offset distribution of random I/O (`random_distribution`).
    pub(super) distribution: Distribution,
    /// Percent of random I/Os (`percentage_random`).
    pub(super) random_percent: Option<u32>,
    /// Rate limits, bytes/s and I/Os per second (`rate`, `rate_iops`).
    pub(super) rate: [Option<u64>; 2],
    pub(super) rate_iops: [Option<u64>; 2],
    /// Offset added per clone (`offset_increment`), bytes.
    pub(super) offset_increment: u64,
    /// Files per clone (`nrfiles`).
    pub(super) nrfiles: Option<(u32, usize)>,
    /// File service (`file_service_type`) and calls per turn.
    pub(super) file_service: (FileService, u32),
    /// Passes (`loops`).
    pub(super) loops: u32,
    /// Start delay (`startdelay`), ms.
    pub(super) startdelay_ms: f64,
    pub(super) end_fsync: bool,
    pub(super) fsync_on_close: bool,
    /// `create_on_open=1` and its line.
    pub(super) create_on_open: Option<usize>,
    /// `new_group`: this job starts a reporting group.
    pub(super) new_group: bool,
    /// `group_reporting`: the group's jobs are reported as one.
    pub(super) group_reporting: bool,
    /// Percentiles of the completion latency (`percentile_list`).
    pub(super) percentiles: Option<Vec<f64>>,
}

impl Options {
    /// Reads section `s`'s options (inherited, then its own) in order.
    pub(super) fn read(s: &Section, source: &str) -> crate::error::Result<Options> {
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
            more: More {
                file_service: (FileService::Roundrobin, 1),
                loops: 1,
                ..More::default()
            },
        };
        for opt in &s.opts {
            o.set(opt).map_err(|source_error| Error::FioOption {
                origin: source.to_string(),
                line: opt.line,
                key: opt.key.clone(),
                value: opt.value.clone(),
                source: Box::new(source_error),
            })?;
        }
        Ok(o)
    }

    /// Applies one option.
    fn set(&mut self, opt: &Opt) -> Result<(), OptionError> {
        let key = opt.key.as_str();
        // Flags may stand alone (`time_based`, `direct`): they mean 1.
        let flag = || -> Result<bool, OptionError> {
            match opt.value.as_deref().unwrap_or("1") {
                "1" | "true" => Ok(true),
                "0" | "false" => Ok(false),
                _ => Err(OptionError::expected("0 or 1")),
            }
        };
        if matches!(key, "stonewall" | "wait_for_previous") {
            self.stonewall = flag()?.then_some(opt.line);
            return Ok(());
        }
        if self.set_flag(key, opt.line, flag)? {
            return Ok(());
        }
        if !super::keys::check_key(key)? {
            return self.check_no_effect(key, opt.value.as_deref());
        }
        if self.set_switch(key, flag)? {
            return Ok(());
        }
        let Some(v) = opt.value.as_deref() else {
            return Err(OptionError::expected("key=value"));
        };
        let line = opt.line;
        if self.set_more(key, v, line)?
            || self.set_io(key, v, line)?
            || self.set_thread(key, v, line)?
        {
            return Ok(());
        }
        Err(OptionError::NotHandled {
            key: key.to_string(),
        })
    }

    /// Applies a switch of the job (`time_based`, `direct`, `buffered`,
    /// `norandommap`, `randrepeat`); false for any other key.
    fn set_switch(
        &mut self,
        key: &str,
        flag: impl Fn() -> Result<bool, OptionError>,
    ) -> Result<bool, OptionError> {
        match key {
            "time_based" => self.time_based = flag()?,
            "direct" => self.direct = flag()?,
            "buffered" => self.direct = !flag()?,
            "norandommap" => self.norandommap = flag()?,
            "randrepeat" if !flag()? => {
                return Err(OptionError::NotModelled("a time-seeded random stream is not modelled: mmcsim runs are deterministic; keep randrepeat=1 and set randseed (or simctl --seed)"))
            }
            "randrepeat" => {}
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Applies an option of the I/O itself (name, `rw`, sizes, engine,
    /// depth, syncing, mix); false for any other key.
    fn set_io(&mut self, key: &str, v: &str, line: usize) -> Result<bool, OptionError> {
        match key {
            "name" => {
                if v.is_empty() {
                    return Err(OptionError::expected("a job name"));
                }
                self.name = v.to_string();
            }
            "rw" | "readwrite" => self.set_rw(v, line)?,
            "bs" | "blocksize" => self.set_bs(v, line)?,
            "size" => self.size = Some((positive(size(v)?)?, line)),
            "filesize" => self.filesize = Some((positive(size(v)?)?, line)),
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
                    _ => {
                        return Err(OptionError::expected(
                            "an engine mmcsim models: sync, psync, pvsync, libaio or io_uring",
                        ))
                    }
                }
            }
            "sync" => {
                self.sync = match v {
                    "1" | "sync" => true,
                    "0" | "none" => false,
                    "dsync" => {
                        return Err(OptionError::NotModelled(
                            "O_DSYNC jobs are not modelled; use sync=1 (O_SYNC) or fdatasync=N",
                        ))
                    }
                    _ => return Err(OptionError::expected("0, 1, none or sync")),
                }
            }
            "fsync" => self.fsync = count(v, 0, u64::from(u32::MAX))? as u32,
            "fdatasync" => self.fdatasync = count(v, 0, u64::from(u32::MAX))? as u32,
            "rwmixread" => self.rwmixread = Some(count(v, 0, 100)? as u32),
            "rwmixwrite" => self.rwmixread = Some(100 - count(v, 0, 100)? as u32),
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// `rw=KIND[:N]`: the access pattern and the sequential skip.
    fn set_rw(&mut self, v: &str, line: usize) -> Result<(), OptionError> {
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
                return Err(OptionError::NotModelled(
                    "trim (discard) jobs are not modelled by mmcsim",
                ))
            }
            _ => {
                return Err(OptionError::expected(
                    "read, write, randread, randwrite, rw, readwrite or randrw (optionally :N)",
                ))
            }
        };
        self.skip = match skip {
            None => 0,
            Some(_) if self.rw.random() => return Err(OptionError::NotModelled(
                "the ':N' suffix of random I/O (a new random offset every N I/Os) is not modelled; it is supported on sequential I/O (skip N bytes after each I/O)",
            )),
            Some(n) => size(n).map_err(|e| OptionError::AfterColon(Box::new(e)))?,
        };
        self.rw_line = line;
        Ok(())
    }

    /// `bs=READ[,WRITE]`: the block sizes.
    fn set_bs(&mut self, v: &str, line: usize) -> Result<(), OptionError> {
        if v.contains(['-', ':']) {
            return Err(OptionError::NotModelled(
                "a block size range is not modelled; give one size, read,write sizes, or bssplit with the sizes and their shares",
            ));
        }
        let mut parts = v.split(',');
        let r = parts.next().unwrap_or("");
        let w = parts.next();
        if parts.next().is_some_and(|t| !t.trim().is_empty()) {
            return Err(OptionError::NotModelled(
                "a trim block size is not modelled (no trim jobs)",
            ));
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
        self.bs_line = line;
        Ok(())
    }

    /// Applies an option of the job's threads (times, files, seed,
    /// priority); false for any other key.
    fn set_thread(&mut self, key: &str, v: &str, line: usize) -> Result<bool, OptionError> {
        match key {
            "runtime" => {
                self.runtime_ms = Some(time_us(v, 1e6)? / 1e3);
                self.runtime_line = line;
            }
            "ramp_time" => self.ramp_ms = time_us(v, 1e6)? / 1e3,
            "thinktime" => self.thinktime_us = time_us(v, 1.0)?,
            "filename" => {
                if v.split(':').any(str::is_empty) {
                    return Err(OptionError::expected(
                        "a file name (several separated by ':')",
                    ));
                }
                self.filename = Some((v.to_string(), line));
            }
            "directory" => {
                if v.contains(':') {
                    return Err(OptionError::NotModelled(
                        "several directories (':'-separated) are not modelled",
                    ));
                }
                self.directory = Some(v.trim_end_matches('/').to_string());
            }
            "randseed" => {
                let seed = int(v).ok_or(OptionError::expected("an unsigned integer seed"))?;
                self.randseed = Some((seed, line))
            }
            "nice" => {
                self.nice = v
                    .parse::<i32>()
                    .ok()
                    .filter(|n| (-20..=19).contains(n))
                    .ok_or(OptionError::expected("a nice value -20..=19"))?
            }
            "prio" => self.prio = Some(count(v, 0, 7)? as u8),
            "prioclass" => {
                self.prioclass = match v {
                    "0" => None,
                    "1" => Some(IoClass::Rt),
                    "2" => Some(IoClass::Be),
                    "3" => Some(IoClass::Idle),
                    _ => {
                        return Err(OptionError::expected(
                            "0 (none), 1 (RT), 2 (BE) or 3 (IDLE)",
                        ))
                    }
                }
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Applies a flag option of the pattern or reporting (`end_fsync`,
    /// `fsync_on_close`, `create_on_open`, `new_group`,
    /// `group_reporting`); false for any other key.
    fn set_flag(
        &mut self,
        key: &str,
        line: usize,
        flag: impl Fn() -> Result<bool, OptionError>,
    ) -> Result<bool, OptionError> {
        let m = &mut self.more;
        match key {
            "end_fsync" => m.end_fsync = flag()?,
            "fsync_on_close" => m.fsync_on_close = flag()?,
            "new_group" => m.new_group = flag()?,
            "group_reporting" => m.group_reporting = flag()?,
            "create_on_open" => m.create_on_open = flag()?.then_some(line),
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Checks an option accepted with no effect on the model where its
    /// value could change the I/O (`kb_base` other than 1024).
    fn check_no_effect(&self, key: &str, v: Option<&str>) -> Result<(), OptionError> {
        match (key, v) {
            ("kb_base", Some(b)) if b.trim() != "1024" => Err(OptionError::NotModelled(
                "only kb_base=1024 (fio's default) is modelled: sizes are read with k = 1024",
            )),
            _ => Ok(()),
        }
    }

    /// Applies a pattern or timing option with a value; false for any
    /// other key.
    fn set_more(&mut self, key: &str, v: &str, line: usize) -> Result<bool, OptionError> {
        let m = &mut self.more;
        let size_or_none = |p: &str| size(p);
        match key {
            "io_size" | "io_limit" => m.io_size = Some((positive(size(v)?)?, line)),
            "number_ios" => m.number_ios = Some(count(v, 1, u64::MAX)?),
            "bssplit" => {
                m.bssplit = pattern::per_dir(v, pattern::bssplit)?;
                m.bssplit_line = line;
            }
            "blockalign" | "ba" => {
                let a = pattern::same_both(pattern::per_dir(v, size_or_none)?, "blockalign")?;
                m.blockalign = a.map(positive).transpose()?.map(|a| (a, line));
            }
            "random_distribution" => {
                m.distribution = pattern::same_both(
                    pattern::per_dir(v, pattern::distribution)?,
                    "random_distribution",
                )?
                .unwrap_or_default();
            }
            "percentage_random" => {
                let p = pattern::per_dir(v, |p| count(p, 0, 100).map(|n| n as u32))?;
                m.random_percent = pattern::same_both(p, "percentage_random")?;
            }
            "rate" => m.rate = pattern::per_dir(v, |p| size(p).and_then(positive))?,
            "rate_iops" => m.rate_iops = pattern::per_dir(v, |p| count(p, 1, u64::MAX))?,
            "rate_process" => {
                if v != "linear" {
                    return Err(OptionError::NotModelled("only rate_process=linear (fio's default) is modelled; a Poisson arrival process is not"));
                }
            }
            "offset_increment" => m.offset_increment = size(v)?,
            "nrfiles" => m.nrfiles = Some((count(v, 1, 256)? as u32, line)),
            "file_service_type" => m.file_service = pattern::file_service(v)?,
            "loops" => m.loops = count(v, 1, u64::from(u32::MAX))? as u32,
            "startdelay" => {
                if v.contains('-') {
                    return Err(OptionError::NotModelled("a start delay range (a random delay per thread) is not modelled; give one time"));
                }
                m.startdelay_ms = time_us(v, 1e6)? / 1e3;
            }
            "percentile_list" => m.percentiles = Some(pattern::percentiles(v)?),
            _ => return Ok(false),
        }
        Ok(true)
    }
}
