#![no_main]
//! Whole simulations of generated scenarios with a file system: ext4
//! (`[fs]`, every mount and mkfs option), `[[files]]` created in it,
//! closed-loop `[[jobs]]`, `[[scripts]]` (system-call lists: open, creat,
//! close, read, write, pread, pwrite, lseek, fsync, fdatasync, ftruncate,
//! unlink, mkdir, rename, sync, sleep, and the odd malformed call), and
//! SQLite (`[sqlite]` settings, `[[sqlite_jobs]]`), on a 64 MiB raw device
//! with any built-in scheduler and the legacy or CMDQ driver. The scenario
//! is generated with `arbitrary` as TOML text, parsed, validated and run
//! with the per-command FTL integrity check on. Sizes and counts are
//! capped so an execution takes milliseconds. No scenario may panic: a
//! rejected scenario or a failed run is an error, but a stalled run
//! ([`mmcsim::Error::Stalled`]) is a simulator bug; a run that succeeds has
//! no integrity violation.

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use mmcsim::config::Scenario;
use mmcsim::sim::{RunOptions, Simulation};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::OnceLock;

const CMDQ_PROFILE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../configs/devices/generic-emmc51-cmdq.toml"
);

#[derive(Arbitrary, Debug)]
struct Case {
    scheduler: u8,
    cmdq: bool,
    volatile_cache: bool,
    /// Precondition fill in sixteenths (modulo 4: at most 3/16).
    fill: u8,
    writeback: Option<(u8, u8, u8)>,
    fs: Fs,
    sqlite: Option<Sqlite>,
    files: Vec<File>,
    jobs: Vec<Job>,
    scripts: Vec<Script>,
    sqlite_jobs: Vec<SqlJob>,
}

#[derive(Arbitrary, Debug)]
struct Fs {
    journal: bool,
    data: u8,
    atime: u8,
    journal_async_commit: bool,
    delalloc: bool,
    barrier: u8,
    commit_s: u8,
    partition_offset_mib: u8,
    partition_size_mib: Option<u8>,
    journal_blocks: Option<u16>,
    bytes_per_inode: u8,
    fstrim: bool,
}

#[derive(Arbitrary, Debug)]
struct Sqlite {
    journal_mode: u8,
    synchronous: u8,
    page_size_log2: u8,
    wal_autocheckpoint: u8,
    journal_size_limit: i16,
    auto_vacuum: bool,
}

#[derive(Arbitrary, Debug)]
struct File {
    dir: u8,
    size_mib: u8,
    prewrite: bool,
}

#[derive(Arbitrary, Debug)]
struct Job {
    file: u8,
    op: u8,
    pattern: u8,
    order: u8,
    request: u8,
    threads: u8,
    requests: u8,
    direct: bool,
    sync: bool,
    fsync_every: u8,
    fdatasync_every: u8,
    ioengine: u8,
    iodepth: u8,
    think_time_us: u8,
    start_ms: u8,
}

#[derive(Arbitrary, Debug)]
struct Script {
    repeat: u8,
    think_time_us: u8,
    start_ms: u8,
    calls: Vec<Call>,
}

#[derive(Arbitrary, Debug)]
enum Call {
    Open {
        path: u8,
        flags: u16,
    },
    Creat {
        path: u8,
    },
    Close,
    Read {
        bytes: u16,
    },
    Write {
        bytes: u16,
    },
    Pread {
        offset: u16,
        bytes: u16,
    },
    Pwrite {
        offset: u16,
        bytes: u16,
    },
    Lseek {
        offset: i16,
        whence: u8,
    },
    Fsync,
    Fdatasync,
    Ftruncate {
        len: u16,
    },
    Unlink {
        path: u8,
    },
    Mkdir {
        path: u8,
    },
    Rename {
        from: u8,
        to: u8,
    },
    Sync,
    Sleep {
        us: u16,
    },
    /// Anything (parse errors must be errors).
    Text(String),
}

#[derive(Arbitrary, Debug)]
struct SqlJob {
    op: u8,
    transactions: u8,
    row_bytes: u16,
    rows: Option<u8>,
    path: Option<u8>,
    think_time_us: u8,
    start_ms: u8,
}

/// Paths the scripts and SQLite jobs use (a few nest, a few collide with
/// the `[[files]]`).
const PATHS: [&str; 10] = [
    "/data",
    "/data/log",
    "/data/a",
    "/data/b",
    "/data/db/x.db",
    "/data/db",
    "/f0",
    "/data/f1",
    "/",
    "/data/log/x",
];

const FLAGS: [&str; 10] = [
    "O_RDONLY", "O_WRONLY", "O_RDWR", "O_CREAT", "O_EXCL", "O_TRUNC", "O_APPEND", "O_DIRECT",
    "O_SYNC", "O_DSYNC",
];

fn pick<T: Copy>(list: &[T], i: u8) -> T {
    list[i as usize % list.len()]
}

fn call_text(c: &Call) -> String {
    let path = |p: u8| pick(&PATHS, p);
    match c {
        Call::Open { path: p, flags } => {
            let f: Vec<&str> = (0..10)
                .filter(|b| flags & (1 << b) != 0)
                .map(|b| FLAGS[b])
                .collect();
            format!("open {} {}", path(*p), f.join("|"))
        }
        Call::Creat { path: p } => format!("creat {}", path(*p)),
        Call::Close => "close".into(),
        Call::Read { bytes } => format!("read {bytes}"),
        Call::Write { bytes } => format!("write {bytes}"),
        Call::Pread { offset, bytes } => format!("pread {} {bytes}", *offset as u64 * 512),
        Call::Pwrite { offset, bytes } => format!("pwrite {} {bytes}", *offset as u64 * 512),
        Call::Lseek { offset, whence } => {
            format!(
                "lseek {offset} {}",
                pick(&["SET", "CUR", "END", "SEEK_END"], *whence)
            )
        }
        Call::Fsync => "fsync".into(),
        Call::Fdatasync => "fdatasync".into(),
        Call::Ftruncate { len } => format!("ftruncate {}", *len as u64 * 64),
        Call::Unlink { path: p } => format!("unlink {}", path(*p)),
        Call::Mkdir { path: p } => format!("mkdir {}", path(*p)),
        Call::Rename { from, to } => format!("rename {} {}", path(*from), path(*to)),
        Call::Sync => "sync".into(),
        Call::Sleep { us } => format!("sleep {us}"),
        Call::Text(t) => t.chars().take(40).collect(),
    }
}

/// A TOML string literal.
fn quoted(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

fn scenario(c: &Case) -> String {
    let mut t = String::from("name = \"fuzz-fs\"\nseed = 3\n");
    let registry = mmcsim::sched::builtin();
    let names = registry.names();
    let _ = writeln!(t, "[scheduler]\nname = \"{}\"", pick(&names, c.scheduler));
    // 64 MiB raw: 1 channel x 2 dies x 2 planes x 64 blocks x 32 pages x 8 KiB.
    t.push_str("[device]\n");
    if c.cmdq {
        let _ = writeln!(t, "profile = {}", quoted(CMDQ_PROFILE));
    }
    t.push_str("[device.nand]\nblocks_per_plane = 64\npages_per_block = 32\n");
    t.push_str("[device.ftl]\nover_provisioning = 0.3\n");
    t.push_str(
        "[device.gc]\nstart_below_free_blocks_per_die = 4\nstop_at_free_blocks_per_die = 6\n",
    );
    let _ = writeln!(t, "[device.write_buffer]\nvolatile = {}", c.volatile_cache);
    let _ = writeln!(
        t,
        "[precondition]\nfill_fraction = {}\nsteady_state = false",
        (c.fill % 4) as f64 / 16.0
    );
    t.push_str("[host]\npage_cache_mib = 8\n");
    if let Some((wb, exp, ratio)) = c.writeback {
        let _ = writeln!(
            t,
            "[writeback]\ndirty_writeback_centisecs = {}\ndirty_expire_centisecs = {}\ndirty_background_ratio = {}\ndirty_ratio = {}",
            wb as u32 * 4,
            exp as u32 * 8,
            ratio % 50,
            (ratio % 50) + 1 + ratio / 50
        );
    }
    let f = &c.fs;
    let _ = writeln!(
        t,
        "[fs]\ntype = \"ext4\"\njournal = \"{}\"\ndata = \"{}\"\natime = \"{}\"\njournal_async_commit = {}\ndelalloc = {}\nbarrier = {}\ncommit_s = {}\npartition_offset_mib = {}\nbytes_per_inode = {}\nfstrim = {}",
        if f.journal { "on" } else { "off" },
        pick(&["ordered", "writeback", "journal"], f.data),
        pick(&["noatime", "relatime", "strictatime"], f.atime),
        f.journal_async_commit,
        f.delalloc,
        pick(&["0", "1", "true", "false"], f.barrier),
        f.commit_s % 9, // 0 is refused
        f.partition_offset_mib % 32,
        1024u32 << (f.bytes_per_inode % 8),
        f.fstrim,
    );
    if let Some(s) = f.partition_size_mib {
        // 0..=63 MiB: below the smallest ext4 the layout allows is a
        // located error (it panicked at 0 before issue 24).
        let _ = writeln!(t, "partition_size_mib = {}", s % 64);
    }
    if let Some(j) = f.journal_blocks {
        let _ = writeln!(t, "journal_blocks = {}", 1000 + j % 4096);
    }
    if let Some(s) = &c.sqlite {
        let _ = writeln!(
            t,
            "[sqlite]\njournal_mode = \"{}\"\nsynchronous = \"{}\"\npage_size = {}\nwal_autocheckpoint = {}\njournal_size_limit = {}\nauto_vacuum = \"{}\"",
            pick(&["delete", "truncate", "persist", "wal", "memory", "off"], s.journal_mode),
            pick(&["full", "normal", "off"], s.synchronous),
            256u32 << (s.page_size_log2 % 10),
            s.wal_autocheckpoint,
            s.journal_size_limit,
            if s.auto_vacuum { "full" } else { "none" },
        );
    }
    for (i, file) in c.files.iter().take(3).enumerate() {
        let dir = pick(&["/", "/data/", "/data/db/"], file.dir);
        let _ = writeln!(
            t,
            "[[files]]\nname = \"{dir}f{i}\"\nsize_mib = {}\nprewrite = {}",
            file.size_mib % 5,
            file.prewrite
        );
    }
    let nfiles = c.files.len().min(3);
    for (i, j) in c.jobs.iter().take(3).enumerate() {
        let file = if nfiles == 0 {
            "nofile".to_string()
        } else {
            let k = j.file as usize % nfiles;
            format!(
                "{}f{k}",
                pick(&["/", "/data/", "/data/db/"], c.files[k].dir)
            )
        };
        let op = pick(&["read", "write", "readwrite"], j.op);
        let pattern = pick(&["sequential", "random", "strided"], j.pattern);
        let _ = writeln!(
            t,
            "[[jobs]]\nname = \"j{i}\"\nfile = {}\nop = \"{op}\"\npattern = \"{pattern}\"\norder = \"{}\"\nrequest_bytes = {}\nthreads = {}\nrequests = {}\ndirect = {}\nsync = {}\nfsync_every = {}\nfdatasync_every = {}\nioengine = \"{}\"\niodepth = {}\nthink_time_us = {}\nstart_ms = {}",
            quoted(&file),
            pick(&["ascending", "descending", "shuffled"], j.order),
            pick(&[512u64, 4096, 16384, 65536, 1, 3000, 131072], j.request),
            1 + j.threads % 3,
            j.requests % 17,
            j.direct,
            j.sync,
            j.fsync_every % 4,
            j.fdatasync_every % 4,
            pick(&["sync", "psync", "pvsync", "libaio", "io_uring"], j.ioengine),
            1 + j.iodepth % 4,
            j.think_time_us,
            j.start_ms % 4,
        );
        if pattern == "strided" {
            t.push_str("stride_bytes = 65536\n");
        }
    }
    for (i, s) in c.scripts.iter().take(3).enumerate() {
        let calls: Vec<String> = s
            .calls
            .iter()
            .take(24)
            .map(|c| quoted(&call_text(c)))
            .collect();
        let _ = writeln!(
            t,
            "[[scripts]]\nname = \"s{i}\"\nrepeat = {}\nthink_time_us = {}\nstart_ms = {}\ncalls = [{}]",
            1 + s.repeat % 3,
            s.think_time_us,
            s.start_ms % 4,
            calls.join(", ")
        );
    }
    for (i, q) in c.sqlite_jobs.iter().take(3).enumerate() {
        let _ = writeln!(
            t,
            "[[sqlite_jobs]]\nname = \"q{i}\"\nop = \"{}\"\ntransactions = {}\nrow_bytes = {}\nthink_time_us = {}\nstart_ms = {}",
            pick(&["insert", "update", "delete", "select"], q.op),
            q.transactions % 9,
            q.row_bytes % 5000,
            q.think_time_us,
            q.start_ms % 4,
        );
        if let Some(r) = q.rows {
            let _ = writeln!(t, "rows = {}", r % 65);
        }
        if let Some(p) = q.path {
            let _ = writeln!(t, "path = \"{}\"", pick(&PATHS, p));
        }
    }
    t
}

/// `MMCSIM_FUZZ_SHOW=1`: print each scenario and how far it got (to see
/// what the generator reaches, e.g. over a corpus with `-runs=0`).
fn show() -> bool {
    static SHOW: OnceLock<bool> = OnceLock::new();
    *SHOW.get_or_init(|| std::env::var_os("MMCSIM_FUZZ_SHOW").is_some())
}

fuzz_target!(|c: Case| {
    let text = scenario(&c);
    let sc = match Scenario::from_toml(&text, "fuzz.toml", PathBuf::new(), &[]) {
        Ok(sc) => sc,
        Err(e) => {
            if show() {
                eprintln!("--- scenario\n{text}=> rejected: {e}");
            }
            return;
        }
    };
    if show() {
        eprintln!("--- scenario\n{text}=> accepted");
    }
    let outcome = Simulation::new(sc).and_then(|sim| {
        sim.run(RunOptions {
            check_integrity: true,
            allow_empty: true,
            ..RunOptions::default()
        })
    });
    if show() {
        match &outcome {
            Ok(r) => eprintln!("=> ran: {} requests", r.workload.requests.count),
            Err(e) => eprintln!("=> failed: {e}"),
        }
    }
    // A stall (calls waiting for what nothing will deliver) is a
    // simulator bug, not a rejected scenario.
    if let Err(e @ mmcsim::Error::Stalled(_)) = &outcome {
        panic!("{e}\n{text}");
    }
    if let Ok(report) = outcome {
        if let Some(i) = report.integrity {
            assert_eq!(i.violations, 0, "integrity violations:\n{text}");
        }
    }
});
