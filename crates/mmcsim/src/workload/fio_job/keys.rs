//! The fio options mmcsim knows: the ones it models, the ones it accepts
//! with no effect on the model (reporting, CPU placement, buffer
//! contents), and the ones that shape the I/O pattern or timing in a way
//! mmcsim does not model, refused with the reason. Any other key is not an
//! fio option mmcsim knows and is refused too. [src: fio HOWTO.rst, "Job
//! file parameters"]

/// Options the translator reads (see the module table in `mod.rs`).
pub const MODELLED: &[&str] = &[
    "rw",
    "readwrite",
    "bs",
    "blocksize",
    "bssplit",
    "blockalign",
    "ba",
    "size",
    "filesize",
    "io_size",
    "io_limit",
    "number_ios",
    "offset",
    "offset_increment",
    "numjobs",
    "nrfiles",
    "file_service_type",
    "iodepth",
    "ioengine",
    "direct",
    "buffered",
    "sync",
    "fsync",
    "fdatasync",
    "end_fsync",
    "fsync_on_close",
    "create_on_open",
    "rwmixread",
    "rwmixwrite",
    "random_distribution",
    "percentage_random",
    "rate",
    "rate_iops",
    "rate_process",
    "runtime",
    "time_based",
    "ramp_time",
    "startdelay",
    "loops",
    "thinktime",
    "filename",
    "directory",
    "randrepeat",
    "randseed",
    "nice",
    "prio",
    "prioclass",
    "norandommap",
    "stonewall",
    "wait_for_previous",
    "new_group",
    "group_reporting",
    "percentile_list",
    "name",
];

/// Options accepted with no effect on the model, and why.
pub const NO_EFFECT: &[(&str, &str)] = &[
    ("description", "text"),
    ("thread", "threads and processes issue alike"),
    ("lat_percentiles", "reporting"),
    ("clat_percentiles", "reporting"),
    ("slat_percentiles", "reporting"),
    ("write_bw_log", "logging"),
    ("write_lat_log", "logging"),
    ("write_iops_log", "logging"),
    ("write_hist_log", "logging"),
    ("log_avg_msec", "logging"),
    ("log_hist_msec", "logging"),
    ("per_job_logs", "logging"),
    ("disk_util", "reporting"),
    ("significant_figures", "reporting"),
    ("unified_rw_reporting", "reporting"),
    ("cpus_allowed", "CPU placement is the host model's"),
    ("cpus_allowed_policy", "CPU placement is the host model's"),
    ("cpumask", "CPU placement is the host model's"),
    ("gtod_reduce", "timekeeping"),
    ("clocksource", "timekeeping"),
    ("buffer_pattern", "data contents"),
    ("buffer_compress_percentage", "data contents"),
    ("refill_buffers", "data contents"),
    ("scramble_buffers", "data contents"),
    ("zero_buffers", "data contents"),
    ("iomem", "buffer memory"),
    ("mem", "buffer memory"),
    ("iomem_align", "buffer memory"),
    ("exitall", "jobs end on their own"),
    ("allow_file_create", "files are created before the run"),
    ("create_fsync", "files are laid out before the run"),
    ("invalidate", "the page cache starts cold"),
    ("unlink", "after the run"),
    ("kb_base", "only kb_base=1024 is accepted"),
];

/// Options that shape the I/O pattern or timing in a way mmcsim does not
/// model, with the reason.
pub const REFUSED: &[(&str, &str)] = &[
    (
        "bsrange",
        "a block size range; use bssplit with the sizes and their shares",
    ),
    ("bs_unaligned", "unaligned block sizes"),
    (
        "bs_is_seq_rand",
        "block sizes chosen by sequential/random instead of read/write",
    ),
    (
        "rw_sequencer",
        "sequential offsets repeated or advanced every N I/Os",
    ),
    ("ddir_seq_add", "a gap added between sequential I/Os"),
    (
        "random_generator",
        "fio's generator choice (mmcsim draws from its own seeded stream)",
    ),
    ("thinktime_blocks", "a think time every N blocks"),
    ("thinktime_spin", "a spinning think time"),
    ("thinktime_iotime", "a think time every N µs of I/O"),
    ("rate_min", "a minimum rate (fio ends a job below it)"),
    ("rate_iops_min", "a minimum rate (fio ends a job below it)"),
    ("rate_cycle", "the window of rate_min"),
    (
        "rate_ignore_thinktime",
        "rate catch-up without the think time",
    ),
    ("iodepth_batch", "batched submission"),
    ("iodepth_batch_submit", "batched submission"),
    ("iodepth_batch_complete", "batched reaping"),
    ("iodepth_batch_complete_min", "batched reaping"),
    ("iodepth_batch_complete_max", "batched reaping"),
    ("iodepth_low", "a low-water mark of the queue"),
    ("io_submit_mode", "offloaded submission"),
    ("zonemode", "zoned I/O"),
    ("zonesize", "zoned I/O"),
    ("zonerange", "zoned I/O"),
    ("zoneskip", "zoned I/O"),
    ("offset_align", "aligning a percentage offset"),
    ("fill_device", "filling the device to ENOSPC"),
    ("fill_fs", "filling the file system"),
    ("file_append", "appending past the end of the file"),
    ("pre_read", "reading the file into the cache before the job"),
    ("openfiles", "a limit on open files"),
    (
        "fallocate",
        "file preallocation (files are laid out before the run)",
    ),
    ("fadvise_hint", "posix_fadvise() hints"),
    ("sync_file_range", "sync_file_range()"),
    ("write_barrier", "barrier writes"),
    ("end_syncfs", "syncfs()"),
    ("overwrite", "laying a file out before writing it"),
    ("verify", "data verification"),
    ("do_verify", "data verification"),
    ("verify_only", "data verification"),
    ("trim_percentage", "trims of verified blocks"),
    ("trim_backlog", "trims of verified blocks"),
    ("flow", "flow control between jobs"),
    ("flow_id", "flow control between jobs"),
    ("latency_target", "queue-depth search for a latency target"),
    ("max_latency", "ending a job above a latency"),
    ("steadystate", "ending a job at steady state"),
    (
        "ioscheduler",
        "switching the scheduler from the job file; use simctl --scheduler",
    ),
    ("exec_prerun", "running a command"),
    ("exec_postrun", "running a command"),
    ("create_only", "laying files out without I/O"),
    ("create_serialize", "file layout order"),
    ("lockfile", "file locking between jobs"),
    ("uid", "credentials"),
    ("gid", "credentials"),
    ("cgroup", "cgroups"),
    ("cgroup_weight", "cgroups"),
    ("hipri", "polled I/O"),
    ("fixedbufs", "registered buffers"),
    ("sqthread_poll", "io_uring submission polling"),
    ("atomic", "atomic writes"),
];

/// Checks that `key` is an option mmcsim knows: `Ok(true)` when it is
/// modelled, `Ok(false)` when it is accepted with no effect; otherwise
/// the error says why it is refused.
pub(super) fn check_key(key: &str) -> Result<bool, super::option_error::OptionError> {
    use super::option_error::OptionError;
    if MODELLED.contains(&key) {
        return Ok(true);
    }
    if NO_EFFECT.iter().any(|(k, _)| *k == key) {
        return Ok(false);
    }
    if let Some((_, why)) = REFUSED.iter().find(|(k, _)| *k == key) {
        return Err(OptionError::Refused {
            key: key.to_string(),
            why,
        });
    }
    Err(OptionError::UnknownKey {
        key: key.to_string(),
    })
}
