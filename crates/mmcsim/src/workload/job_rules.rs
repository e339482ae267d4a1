//! A synthetic job's rules against the file it runs on: the region, the
//! pattern's step, shuffled slots, O_DIRECT alignment, priorities and
//! times. The scenario finds the job's file; the job checks itself.

use super::job_error::{JobError, JobRule, TimeError};
use super::spec::{check_more_files, checked_time_ns, JobSpec, Order, Pattern};

pub use super::job_error::MAX_SHUFFLED_SLOTS;

impl JobSpec {
    /// Checks the job against its file `file` of `file_bytes` bytes;
    /// `more_file_bytes` gives the size of a further file by name (`None`
    /// for an unknown one). The error names the job and the rule.
    pub fn check_against_file(
        &self,
        file: &str,
        file_bytes: u64,
        more_file_bytes: impl Fn(&str) -> Option<u64>,
    ) -> Result<(), JobError> {
        let region = self
            .check_region(file, file_bytes)
            .map_err(|r| r.of(&self.name))?;
        let rules = || -> Result<(), JobRule> {
            self.check_shuffled_slots(region)?;
            self.check_length(region)
        };
        rules().map_err(|r| r.of(&self.name))?;
        check_more_files(self, region, more_file_bytes)?;
        self.check_direct_and_priority()
            .and_then(|()| self.check_times())
            .map_err(|r| r.of(&self.name))
    }

    /// Checks the request size, threads and region against the file;
    /// returns the region's length in bytes.
    fn check_region(&self, file: &str, file_bytes: u64) -> Result<u64, JobRule> {
        if self.request_bytes == 0 {
            return Err(JobRule::Zero {
                field: "request_bytes",
            });
        }
        if self.threads == 0 {
            return Err(JobRule::Zero { field: "threads" });
        }
        let region = self
            .region_bytes
            .unwrap_or(file_bytes.saturating_sub(self.region_offset_bytes));
        if self.region_offset_bytes + region > file_bytes || region < self.request_bytes {
            return Err(JobRule::Region {
                offset: self.region_offset_bytes,
                region,
                file: file.to_string(),
                file_bytes,
            });
        }
        if self.pattern == Pattern::Strided && self.stride_bytes.unwrap_or(0) == 0 {
            return Err(JobRule::NoStride);
        }
        Ok(region)
    }

    /// A shuffled sequential or strided job: each thread keeps a
    /// permutation of its region's slots, at most [`MAX_SHUFFLED_SLOTS`].
    fn check_shuffled_slots(&self, region: u64) -> Result<(), JobRule> {
        if self.pattern == Pattern::Random || self.order != Order::Shuffled {
            return Ok(());
        }
        let step = match self.pattern {
            Pattern::Strided => self.stride_bytes.unwrap_or(self.request_bytes),
            _ => self.request_bytes,
        };
        let slots = match self.pattern {
            Pattern::Strided => (region - self.request_bytes) / step + 1,
            _ => region / step,
        };
        let total = slots.saturating_mul(u64::from(self.threads));
        if total > MAX_SHUFFLED_SLOTS {
            return Err(JobRule::ShuffledSlots {
                slots,
                threads: self.threads,
                total,
            });
        }
        Ok(())
    }

    /// A random job needs an end; its alignment and a strided job's stride
    /// fit the region.
    fn check_length(&self, region: u64) -> Result<(), JobRule> {
        if self.pattern == Pattern::Random && self.requests.is_none() && self.duration_ms.is_none()
        {
            return Err(JobRule::RandomWithoutEnd);
        }
        if self.align_bytes == Some(0) {
            return Err(JobRule::Zero {
                field: "align_bytes",
            });
        }
        self.check_step_fits_region(region)
    }

    /// A random job's `align_bytes` or a strided job's `stride_bytes`
    /// longer than its region would send every request to the region's
    /// start.
    fn check_step_fits_region(&self, region: u64) -> Result<(), JobRule> {
        let step = match self.pattern {
            Pattern::Random => self.align_bytes.map(|a| ("align_bytes", a)),
            Pattern::Strided => self.stride_bytes.map(|s| ("stride_bytes", s)),
            Pattern::Sequential => None,
        };
        match step {
            Some((field, value)) if value > region => Err(JobRule::StepBeyondRegion {
                field,
                value,
                region,
            }),
            _ => Ok(()),
        }
    }

    /// O_DIRECT sector alignment, `nice` and the I/O priority level.
    fn check_direct_and_priority(&self) -> Result<(), JobRule> {
        if self.direct && (self.request_bytes % 512 != 0 || self.region_offset_bytes % 512 != 0) {
            return Err(JobRule::DirectUnaligned);
        }
        if !(-20..=19).contains(&self.nice) {
            return Err(JobRule::Nice { nice: self.nice });
        }
        if self.ioprio_level.is_some_and(|l| l > 7) {
            return Err(JobRule::IoprioLevel);
        }
        Ok(())
    }

    /// The job's times from input: finite, ≥ 0 and within the simulated
    /// clock (its duration counted from `start_ms`).
    fn check_times(&self) -> Result<(), JobRule> {
        checked_time_ns("think_time_us", self.think_time_us, 1e3)?;
        checked_time_ns("start_ms", self.start_ms, 1e6)?;
        let d = self.duration_ms.unwrap_or(0.0);
        checked_time_ns("duration_ms", d, 1e6)?;
        if (self.start_ms + d) * 1e6 > crate::engine::MAX_SIM_NS as f64 {
            return Err(JobRule::Time(TimeError::BeyondClock {
                field: "duration_ms",
                value: d,
                from_start: true,
            }));
        }
        Ok(())
    }
}
