//! The suite's phases and each file test's calls, step by step as the
//! app makes them (reference android-workloads.md §1 for 3.4, §2 for
//! 4.1).

use super::{Settings, Version, APP_DIR};
use crate::engine::SimRng;
use crate::host::{OpenFlags, Syscall, Whence};
use crate::workload::script::CURRENT_FD;
use rand::Rng;

/// Tests with a metric, in result-screen order.
pub const MEASURED: usize = 7;

/// A phase's test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The app's directories (untimed).
    Setup,
    /// Writing the read-test files (untimed).
    Prepare,
    /// Sequential read.
    SeqRead,
    /// Sequential write.
    SeqWrite,
    /// Random read.
    RandRead,
    /// Random write.
    RandWrite,
    /// SQLite insert.
    Insert,
    /// SQLite update.
    Update,
    /// SQLite delete.
    Delete,
}

impl Kind {
    /// Index among the measured tests.
    pub fn index(self) -> Option<usize> {
        match self {
            Kind::Setup | Kind::Prepare => None,
            Kind::SeqRead => Some(0),
            Kind::SeqWrite => Some(1),
            Kind::RandRead => Some(2),
            Kind::RandWrite => Some(3),
            Kind::Insert => Some(4),
            Kind::Update => Some(5),
            Kind::Delete => Some(6),
        }
    }

    /// A SQLite test.
    pub fn is_sqlite(self) -> bool {
        matches!(self, Kind::Insert | Kind::Update | Kind::Delete)
    }
}

/// One phase: a test of one repetition and the threads that run it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Phase {
    /// The test.
    pub kind: Kind,
    /// Repetition (0-based).
    pub rep: u32,
    /// Threads taking part (0..threads).
    pub threads: u32,
}

/// A scripted call of a file test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scripted {
    /// The call (descriptor: the thread's open file).
    pub call: Syscall,
    /// Its time counts.
    pub timed: bool,
    /// It is one of the test's operations (counted in IOPS, its bytes in
    /// MB/s).
    pub op: bool,
    /// Bytes it moves.
    pub bytes: u64,
}

/// Every phase of the suite, in order.
pub fn phases(s: &Settings) -> Vec<Phase> {
    let one = |kind, rep| Phase {
        kind,
        rep,
        threads: 1,
    };
    let mut v = vec![one(Kind::Setup, 0), one(Kind::Prepare, 0)];
    for rep in 0..s.repetitions {
        v.push(one(Kind::SeqRead, rep));
        v.push(one(Kind::SeqWrite, rep));
        for kind in [Kind::RandRead, Kind::RandWrite] {
            v.push(Phase {
                kind,
                rep,
                threads: s.threads,
            });
        }
        for kind in [Kind::Insert, Kind::Update, Kind::Delete] {
            v.push(one(kind, rep));
        }
    }
    v
}

fn files_dir() -> String {
    format!("{APP_DIR}/files")
}

/// 3.4's files: the read-test file, the sequential- and random-write
/// files. 4.1's: one per thread, named by its index.
fn v3_file(which: &str) -> String {
    format!("{}/{which}", files_dir())
}

fn v4_file(i: u32) -> String {
    format!("{}/{i}", files_dir())
}

fn open(path: String, flags: OpenFlags) -> Scripted {
    untimed(Syscall::Open { path, flags })
}

fn untimed(call: Syscall) -> Scripted {
    Scripted {
        call,
        timed: false,
        op: false,
        bytes: 0,
    }
}

fn timed(call: Syscall) -> Scripted {
    Scripted {
        call,
        timed: true,
        op: false,
        bytes: 0,
    }
}

fn op(call: Syscall, bytes: u64) -> Scripted {
    Scripted {
        call,
        timed: true,
        op: true,
        bytes,
    }
}

fn close() -> Scripted {
    untimed(Syscall::Close { fd: CURRENT_FD })
}

/// `O_RDWR|O_CREAT|O_TRUNC` plus the given extras.
fn create(sync: bool) -> OpenFlags {
    OpenFlags {
        creat: true,
        trunc: true,
        sync,
        ..OpenFlags::default()
    }
}

fn direct(dsync: bool) -> OpenFlags {
    OpenFlags {
        direct: true,
        dsync,
        ..OpenFlags::default()
    }
}

/// A seeded shuffle of `slots` slot indices.
fn shuffled(slots: u64, rng: &mut SimRng) -> Vec<u64> {
    let mut v: Vec<u64> = (0..slots).collect();
    for i in (1..v.len()).rev() {
        let j = rng.random_range(0..=i);
        v.swap(i, j);
    }
    v
}

const MIB: u64 = 1 << 20;

/// The calls thread `t` makes in a file test `kind`.
pub fn calls(s: &Settings, kind: Kind, t: u32, rng: &mut SimRng) -> Vec<Scripted> {
    let v4 = s.version == Version::V4_1;
    match (kind, v4) {
        (Kind::Setup, _) => setup_calls(),
        (Kind::Prepare, false) => prepare_v3(s),
        (Kind::Prepare, true) => prepare_v4(s),
        (Kind::SeqRead, false) => seq_read_v3(s),
        (Kind::SeqRead, true) | (Kind::SeqWrite, true) => seq_v4(s, kind == Kind::SeqWrite),
        (Kind::SeqWrite, false) => seq_write_v3(s),
        (Kind::RandRead, false) | (Kind::RandWrite, false) => {
            rand_v3(s, kind == Kind::RandWrite, rng)
        }
        (Kind::RandRead, true) | (Kind::RandWrite, true) => {
            rand_v4(s, kind == Kind::RandWrite, t, rng)
        }
        (Kind::Insert | Kind::Update | Kind::Delete, _) => Vec::new(),
    }
}

/// The app's directories, created untimed.
fn setup_calls() -> Vec<Scripted> {
    let mut v = Vec::new();
    let mut dir = String::new();
    for c in APP_DIR.split('/').filter(|c| !c.is_empty()) {
        dir.push('/');
        dir.push_str(c);
        v.push(untimed(Syscall::Mkdir { path: dir.clone() }));
    }
    for sub in ["files", "databases"] {
        v.push(untimed(Syscall::Mkdir {
            path: format!("{APP_DIR}/{sub}"),
        }));
    }
    v
}

/// 3.4: the read file written O_SYNC in 1 MB records, fsync after each.
fn prepare_v3(s: &Settings) -> Vec<Scripted> {
    let fd = CURRENT_FD;
    let mut v = vec![open(v3_file("read.dat"), create(true))];
    for _ in 0..s.file_mib {
        v.push(untimed(Syscall::Write { fd, bytes: MIB }));
        v.push(untimed(Syscall::Fsync { fd }));
    }
    v.push(close());
    v
}

/// 4.1: each thread's file written with buffered 1 MB writes, then fsync.
fn prepare_v4(s: &Settings) -> Vec<Scripted> {
    let fd = CURRENT_FD;
    let mut v = Vec::new();
    for i in 0..s.threads {
        v.push(open(v4_file(i), create(false)));
        for _ in 0..s.file_mib {
            v.push(untimed(Syscall::Write { fd, bytes: MIB }));
        }
        v.push(untimed(Syscall::Fsync { fd }));
        v.push(close());
    }
    v
}

/// 3.4: the read file read sequentially, O_DIRECT.
fn seq_read_v3(s: &Settings) -> Vec<Scripted> {
    let fd = CURRENT_FD;
    let seq = s.seq_buffer_kib * 1024;
    let mut v = vec![open(v3_file("read.dat"), direct(false))];
    for _ in 0..s.file_mib * MIB / seq {
        v.push(op(Syscall::Read { fd, bytes: seq }, seq));
    }
    v.push(close());
    v
}

/// 4.1: every thread's file read or written sequentially, O_DIRECT.
fn seq_v4(s: &Settings, write: bool) -> Vec<Scripted> {
    let fd = CURRENT_FD;
    let seq = s.seq_buffer_kib * 1024;
    let mut v = Vec::new();
    for i in 0..s.threads {
        v.push(open(v4_file(i), direct(write)));
        for _ in 0..s.file_mib * MIB / seq {
            let call = if write {
                Syscall::Write { fd, bytes: seq }
            } else {
                Syscall::Read { fd, bytes: seq }
            };
            v.push(op(call, seq));
        }
        v.push(close());
    }
    v
}

/// 3.4: a new O_SYNC file, one sync() first, then write + fsync.
fn seq_write_v3(s: &Settings) -> Vec<Scripted> {
    let fd = CURRENT_FD;
    let seq = s.seq_buffer_kib * 1024;
    let mut v = vec![
        open(v3_file("seq_write.dat"), create(true)),
        untimed(Syscall::Sync),
    ];
    for _ in 0..s.write_file_mib * MIB / seq {
        v.push(op(Syscall::Write { fd, bytes: seq }, seq));
        v.push(timed(Syscall::Fsync { fd }));
    }
    v.push(close());
    v
}

/// 3.4: lseek + read (or write) of every slot, shuffled, O_DIRECT.
fn rand_v3(s: &Settings, write: bool, rng: &mut SimRng) -> Vec<Scripted> {
    let fd = CURRENT_FD;
    let rnd = s.rand_buffer_kib * 1024;
    let (path, flags, size) = if write {
        (
            v3_file("rand_write.dat"),
            create(true),
            s.write_file_mib * MIB,
        )
    } else {
        (v3_file("read.dat"), direct(false), s.file_mib * MIB)
    };
    let mut v = vec![open(path, flags)];
    for slot in shuffled(size / rnd, rng) {
        v.push(timed(Syscall::Lseek {
            fd,
            offset: (slot * rnd) as i64,
            whence: Whence::Set,
        }));
        let call = if write {
            Syscall::Write { fd, bytes: rnd }
        } else {
            Syscall::Read { fd, bytes: rnd }
        };
        v.push(op(call, rnd));
    }
    v.push(close());
    v
}

/// 4.1: thread `t`'s own file, distinct random slots, O_DIRECT (+ O_DSYNC
/// for writes).
fn rand_v4(s: &Settings, write: bool, t: u32, rng: &mut SimRng) -> Vec<Scripted> {
    let fd = CURRENT_FD;
    let rnd = s.rand_buffer_kib * 1024;
    let mut v = vec![open(v4_file(t), direct(write))];
    for slot in shuffled(s.file_mib * MIB / rnd, rng)
        .into_iter()
        .take(s.rand_ops as usize)
    {
        let offset = slot * rnd;
        let call = if write {
            Syscall::Pwrite {
                fd,
                offset,
                bytes: rnd,
            }
        } else {
            Syscall::Pread {
                fd,
                offset,
                bytes: rnd,
            }
        };
        v.push(op(call, rnd));
    }
    v.push(close());
    v
}
