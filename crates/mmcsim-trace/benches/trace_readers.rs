//! Parsing speed of every text trace reader: ~1 M generated lines per format
//! (400 k for the long MMC ftrace lines), parsed from memory; reports lines/s.
//!
//! Run: `cargo bench -p mmcsim-trace --bench trace_readers`.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use mmcsim_trace::common::Source;
use mmcsim_trace::Format;

const N: usize = 1_000_000;

fn generate(format: Format, n: usize) -> String {
    let mut s = String::with_capacity(n * 64);
    let procs = [
        "mmcqd/0",
        "kworker/u8:2",
        "com.android.chrome",
        "jbd2/mmcblk0p2",
    ];
    match format {
        Format::Native => s.push_str("time_us,pid,process,op,sector,sectors,sync\n"),
        Format::FioIolog => s.push_str("fio version 3 iolog\n"),
        Format::Pixel6a => s.push_str("proces,device,rw_flag,sector,size,timestamp\n"),
        _ => {}
    }
    let mut i = 0;
    while i < n {
        let t_us = 1_000 + i as u64 * 37;
        let sector = (i as u64 * 8) % 8_000_000;
        let len = 8 + (i % 16) * 8;
        let p = procs[i % 4];
        let rw = if i % 3 == 0 { "W" } else { "R" };
        let secs = t_us / 1_000_000;
        let frac = t_us % 1_000_000;
        let _ = match format {
            Format::Native => writeln!(s, "{t_us}.5,{},{p},{rw},{sector},{len},1", 1000 + i % 7),
            Format::MmcFtrace => {
                let op = if rw == "W" { 25 } else { 18 };
                let _ = writeln!(s, " mmcqd/0-112 [001] ...1 {secs}.{frac:06}: mmc_request_start: mmc0: start struct mmc_request[d5a3c2e0]: cmd_opcode={op} cmd_arg={sector:#x} cmd_flags=0xb5 cmd_retries=0 stop_opcode=12 stop_arg=0x0 stop_flags=0x49d stop_retries=0 sbc_opcode=23 sbc_arg={len:#x} sbc_flags=0x15 sbc_retires=0 blocks={len} block_size=512 data_flags=0x100");
                i += 1;
                writeln!(s, " <idle>-0 [000] d.h2 {secs}.{:06}: mmc_request_done: mmc0: end struct mmc_request[d5a3c2e0]: cmd_opcode={op} cmd_err=0 cmd_resp=0x900 0x0 0x0 0x0 cmd_retries=0 stop_opcode=12 stop_err=0 stop_resp=0x0 0x0 0x0 0x0 stop_retries=0 sbc_opcode=23 sbc_err=0 sbc_resp=0x0 0x0 0x0 0x0 sbc_retries=0 bytes_xfered={} data_err=0", frac + 20, len * 512)
            }
            Format::BlockFtrace => {
                let _ = writeln!(s, "   {p}-95   [001] d..2   {secs}.{frac:06}: block_rq_issue: 179,0 {rw}S 0 () {sector} + {len} [{p}]");
                i += 1;
                writeln!(s, "   <idle>-0     [001] d.h3   {secs}.{:06}: block_rq_complete: 179,0 {rw}S () {sector} + {len} [0]", frac + 20)
            }
            Format::Blkparse => {
                let _ = writeln!(s, "179,0    0      {i}    {secs}.{frac:06}000    95  D  {rw}S {sector} + {len} [{p}]");
                i += 1;
                writeln!(
                    s,
                    "179,0    0      {i}    {secs}.{:06}000     0  C  {rw}S {sector} + {len} [0]",
                    frac + 20
                )
            }
            Format::FioIolog => writeln!(
                s,
                "{t_us} /dev/block/mmcblk0p23 {} {} {}",
                if rw == "W" { "write" } else { "read" },
                sector * 512,
                len * 512
            ),
            Format::Msr => writeln!(
                s,
                "{},src1,2,{},{},{},1523",
                128_166_381_104_021_338u64 + t_us * 10,
                if rw == "W" { "Write" } else { "Read" },
                sector * 512,
                len * 512
            ),
            Format::Spc => writeln!(s, "0,{sector},{},{rw},{secs}.{frac:06}", len * 512),
            Format::DiskSim => writeln!(
                s,
                "{}.{:03}\t0\t{sector}\t{len}\t{}",
                t_us / 1000,
                t_us % 1000,
                u8::from(rw == "R")
            ),
            Format::MqSim | Format::SsdSim => writeln!(
                s,
                "{} 0 {sector} {len} {}",
                t_us * 1000,
                u8::from(rw == "R")
            ),
            Format::Pixel6a => writeln!(
                s,
                "{p}-{},8388608,{rw},{sector},{len},{secs}.{frac:06}",
                1000 + i % 7
            ),
            Format::Biotracer => writeln!(
                s,
                "{sector}\t\t{len}\t\t{}\t\t{}\t\t{secs}.{frac:06}\t\t{secs}.{:06}\t\t{secs}.{:06}\t\t{secs}.{:06}",
                len * 512,
                u8::from(rw == "W") | 4,
                frac + 1,
                frac + 2,
                frac + 30
            ),
        };
        i += 1;
    }
    s
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("trace_readers");
    g.sample_size(10);
    for info in Format::all() {
        let n = if info.format == Format::MmcFtrace {
            400_000
        } else {
            N
        };
        let text = generate(info.format, n);
        let lines = text.lines().count() as u64;
        let src = Source::Memory(Arc::from(text.into_bytes()), PathBuf::from(info.name));
        g.throughput(Throughput::Elements(lines));
        g.bench_function(info.name, |b| {
            b.iter(|| {
                let mut r = info.format.open_source(&src, None).unwrap();
                let mut n = 0u64;
                while let Some(rec) = r.next_record() {
                    rec.unwrap();
                    n += 1;
                }
                assert!(n > 0);
                n
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
