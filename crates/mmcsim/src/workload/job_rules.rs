//! A synthetic job's rules against the file it runs on: the region, the
//! pattern's step, shuffled slots, O_DIRECT alignment, priorities and
//! times. The scenario finds the job's file; the job checks itself.

use super::spec::{check_more_files, checked_time_ns, show_time, JobSpec, Order, Pattern};

/// The most offsets the shuffled jobs' threads may permute, per job (4
/// bytes each).
pub const MAX_SHUFFLED_SLOTS: u64 = 1 << 25;

impl JobSpec {
    /// Checks the job against its file `file` of `file_bytes` bytes;
    /// `more_file_bytes` gives the size of a further file by name (`None`
    /// for an unknown one). The error names the job and the field.
    pub fn check_against_file(
        &self,
        file: &str,
        file_bytes: u64,
        more_file_bytes: impl Fn(&str) -> Option<u64>,
    ) -> Result<(), String> {
        let region = self.check_region(file, file_bytes)?;
        self.check_shuffled_slots(region)?;
        self.check_length(region)?;
        check_more_files(self, region, more_file_bytes)?;
        self.check_direct_and_priority()?;
        self.check_times()
    }

    /// Checks the request size, threads and region against the file;
    /// returns the region's length in bytes.
    fn check_region(&self, file: &str, file_bytes: u64) -> Result<u64, String> {
        let name = &self.name;
        if self.request_bytes == 0 {
            return Err(format!("job `{name}`: request_bytes must be at least 1"));
        }
        if self.threads == 0 {
            return Err(format!("job `{name}`: threads must be at least 1"));
        }
        let region = self
            .region_bytes
            .unwrap_or(file_bytes.saturating_sub(self.region_offset_bytes));
        if self.region_offset_bytes + region > file_bytes || region < self.request_bytes {
            return Err(format!(
                "job `{name}`: region [{}, +{}) bytes does not fit file `{file}` ({file_bytes} bytes) or is smaller than one request",
                self.region_offset_bytes, region
            ));
        }
        if self.pattern == Pattern::Strided && self.stride_bytes.unwrap_or(0) == 0 {
            return Err(format!(
                "job `{name}`: pattern = \"strided\" needs stride_bytes"
            ));
        }
        Ok(region)
    }

    /// A shuffled sequential or strided job: each thread keeps a
    /// permutation of its region's slots, at most [`MAX_SHUFFLED_SLOTS`].
    fn check_shuffled_slots(&self, region: u64) -> Result<(), String> {
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
            return Err(format!(
                "job `{}`: order = \"shuffled\" over {slots} slots × {} threads = {total} offsets: at most {MAX_SHUFFLED_SLOTS} are supported (each thread keeps a permutation); use a smaller region or bigger requests/stride",
                self.name, self.threads
            ));
        }
        Ok(())
    }

    /// A random job needs an end; its alignment and a strided job's stride
    /// fit the region.
    fn check_length(&self, region: u64) -> Result<(), String> {
        let name = &self.name;
        if self.pattern == Pattern::Random && self.requests.is_none() && self.duration_ms.is_none()
        {
            return Err(format!(
                "job `{name}`: a random job needs `requests` or `duration_ms`"
            ));
        }
        if self.align_bytes == Some(0) {
            return Err(format!("job `{name}`: align_bytes must be at least 1"));
        }
        self.check_step_fits_region(region)
    }

    /// A random job's `align_bytes` or a strided job's `stride_bytes`
    /// longer than its region would send every request to the region's
    /// start.
    fn check_step_fits_region(&self, region: u64) -> Result<(), String> {
        let step = match self.pattern {
            Pattern::Random => self.align_bytes.map(|a| ("align_bytes", a)),
            Pattern::Strided => self.stride_bytes.map(|s| ("stride_bytes", s)),
            Pattern::Sequential => None,
        };
        match step {
            Some((field, v)) if v > region => Err(format!(
                "job `{}`: {field} = {v} is larger than the job's region ({region} bytes): every request would go to one offset; use a smaller {field} or a bigger region",
                self.name
            )),
            _ => Ok(()),
        }
    }

    /// O_DIRECT sector alignment, `nice` and the I/O priority level.
    fn check_direct_and_priority(&self) -> Result<(), String> {
        let name = &self.name;
        if self.direct && (self.request_bytes % 512 != 0 || self.region_offset_bytes % 512 != 0) {
            return Err(format!(
                "job `{name}`: O_DIRECT needs request_bytes and offsets in whole 512-byte sectors"
            ));
        }
        if !(-20..=19).contains(&self.nice) {
            return Err(format!(
                "job `{name}`: nice = {} is outside -20..=19",
                self.nice
            ));
        }
        if self.ioprio_level.is_some_and(|l| l > 7) {
            return Err(format!("job `{name}`: ioprio_level must be 0..=7"));
        }
        Ok(())
    }

    /// The job's times from input: finite, ≥ 0 and within the simulated
    /// clock (its duration counted from `start_ms`).
    fn check_times(&self) -> Result<(), String> {
        if !(self.think_time_us.is_finite() && self.think_time_us >= 0.0) {
            return Err(format!("job `{}`: think_time_us must be ≥ 0", self.name));
        }
        let owner = format!("in job `{}`", self.name);
        checked_time_ns(&owner, "think_time_us", self.think_time_us, 1e3)?;
        checked_time_ns(&owner, "start_ms", self.start_ms, 1e6)?;
        let d = self.duration_ms.unwrap_or(0.0);
        checked_time_ns(&owner, "duration_ms", d, 1e6)?;
        if (self.start_ms + d) * 1e6 > crate::engine::MAX_SIM_NS as f64 {
            return Err(format!(
                "{owner}: duration_ms = {} exceeds the simulated clock's limit of {} (counted from start_ms)",
                show_time(d),
                crate::engine::MAX_SIM_TEXT
            ));
        }
        Ok(())
    }
}
