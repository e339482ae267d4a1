//! The fio options mmcsim knows: the ones it reads, and the ones it
//! accepts with no effect on the model.

/// Keys mmcsim reads, and keys accepted with no effect on the model.
const KEYS: &[&str] = &[
    "rw",
    "readwrite",
    "bs",
    "blocksize",
    "size",
    "filesize",
    "offset",
    "numjobs",
    "iodepth",
    "ioengine",
    "direct",
    "buffered",
    "sync",
    "fsync",
    "fdatasync",
    "rwmixread",
    "rwmixwrite",
    "runtime",
    "time_based",
    "ramp_time",
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
    "name",
    "description",
    "group_reporting",
    "thread",
];

pub(super) fn check_key(key: &str) -> std::result::Result<(), String> {
    if KEYS.contains(&key) {
        Ok(())
    } else {
        Err(format!("key '{key}' is not modelled by mmcsim"))
    }
}
