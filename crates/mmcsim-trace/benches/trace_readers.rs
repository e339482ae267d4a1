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

/// `n` generated lines of the format named `format`; `None` for a format
/// with no generator here (not benchmarked).
fn generate(format: &str, n: usize) -> Option<String> {
    let mut s = String::with_capacity(n * 64);
    let procs = [
        "mmcqd/0",
        "kworker/u8:2",
        "com.android.chrome",
        "jbd2/mmcblk0p2",
    ];
    match format {
        "native" => s.push_str("time_us,pid,process,op,sector,sectors,sync\n"),
        "fio-iolog" => s.push_str("fio version 3 iolog\n"),
        "pixel6a" => s.push_str("proces,device,rw_flag,sector,size,timestamp\n"),
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
            "native" => writeln!(s, "{t_us}.5,{},{p},{rw},{sector},{len},1", 1000 + i % 7),
            "mmc-ftrace" => {
                let op = if rw == "W" { 25 } else { 18 };
                let _ = writeln!(s, " mmcqd/0-112 [001] ...1 {secs}.{frac:06}: mmc_request_start: mmc0: start struct mmc_request[d5a3c2e0]: cmd_opcode={op} cmd_arg={sector:#x} cmd_flags=0xb5 cmd_retries=0 stop_opcode=12 stop_arg=0x0 stop_flags=0x49d stop_retries=0 sbc_opcode=23 sbc_arg={len:#x} sbc_flags=0x15 sbc_retires=0 blocks={len} block_size=512 data_flags=0x100");
                i += 1;
                writeln!(s, " <idle>-0 [000] d.h2 {secs}.{:06}: mmc_request_done: mmc0: end struct mmc_request[d5a3c2e0]: cmd_opcode={op} cmd_err=0 cmd_resp=0x900 0x0 0x0 0x0 cmd_retries=0 stop_opcode=12 stop_err=0 stop_resp=0x0 0x0 0x0 0x0 stop_retries=0 sbc_opcode=23 sbc_err=0 sbc_resp=0x0 0x0 0x0 0x0 sbc_retries=0 bytes_xfered={} data_err=0", frac + 20, len * 512)
            }
            "block-ftrace" => {
                let _ = writeln!(s, "   {p}-95   [001] d..2   {secs}.{frac:06}: block_rq_issue: 179,0 {rw}S 0 () {sector} + {len} [{p}]");
                i += 1;
                writeln!(s, "   <idle>-0     [001] d.h3   {secs}.{:06}: block_rq_complete: 179,0 {rw}S () {sector} + {len} [0]", frac + 20)
            }
            "blkparse" => {
                let _ = writeln!(s, "179,0    0      {i}    {secs}.{frac:06}000    95  D  {rw}S {sector} + {len} [{p}]");
                i += 1;
                writeln!(
                    s,
                    "179,0    0      {i}    {secs}.{:06}000     0  C  {rw}S {sector} + {len} [0]",
                    frac + 20
                )
            }
            "fio-iolog" => writeln!(
                s,
                "{t_us} /dev/block/mmcblk0p23 {} {} {}",
                if rw == "W" { "write" } else { "read" },
                sector * 512,
                len * 512
            ),
            "msr" => writeln!(
                s,
                "{},src1,2,{},{},{},1523",
                128_166_381_104_021_338u64 + t_us * 10,
                if rw == "W" { "Write" } else { "Read" },
                sector * 512,
                len * 512
            ),
            "spc" => writeln!(s, "0,{sector},{},{rw},{secs}.{frac:06}", len * 512),
            "disksim" => writeln!(
                s,
                "{}.{:03}\t0\t{sector}\t{len}\t{}",
                t_us / 1000,
                t_us % 1000,
                u8::from(rw == "R")
            ),
            "mqsim" | "ssdsim" => writeln!(
                s,
                "{} 0 {sector} {len} {}",
                t_us * 1000,
                u8::from(rw == "R")
            ),
            "pixel6a" => writeln!(
                s,
                "{p}-{},8388608,{rw},{sector},{len},{secs}.{frac:06}",
                1000 + i % 7
            ),
            "biotracer" => writeln!(
                s,
                "{sector}\t\t{len}\t\t{}\t\t{}\t\t{secs}.{frac:06}\t\t{secs}.{:06}\t\t{secs}.{:06}\t\t{secs}.{:06}",
                len * 512,
                u8::from(rw == "W") | 4,
                frac + 1,
                frac + 2,
                frac + 30
            ),
            _ => return None,
        };
        i += 1;
    }
    Some(s)
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("trace_readers");
    g.sample_size(10);
    for &format in Format::all() {
        let name = format.name();
        let n = if name == "mmc-ftrace" { 400_000 } else { N };
        let Some(text) = generate(name, n) else {
            eprintln!("{name}: no line generator, not benchmarked");
            continue;
        };
        let lines = text.lines().count() as u64;
        let src = Source::Memory(Arc::from(text.into_bytes()), PathBuf::from(name));
        g.throughput(Throughput::Elements(lines));
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut r = format.open_source(&src, None).unwrap();
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
