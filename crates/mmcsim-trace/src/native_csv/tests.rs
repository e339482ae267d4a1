//! The native CSV reader and writer: every path agrees, errors name line
//! and field.

use super::*;
use mmcsim_types::Op;
use std::io::Cursor;

fn reader(text: &str) -> Result<NativeCsvReader> {
    NativeCsvReader::from_reader(Cursor::new(text.as_bytes().to_vec()), "mem.csv")
}

fn all(text: &str) -> Vec<Result<TraceRecord>> {
    reader(text).unwrap().collect()
}

/// The (line, field, message) of a parse error.
fn parse_err(e: &Error) -> (u64, String, String) {
    match e {
        Error::Parse {
            line,
            field,
            message,
            ..
        } => (*line, field.clone(), message.clone()),
        other => panic!("not a parse error: {other}"),
    }
}

fn manifest_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

/// Lines without quotes are split in place; with quotes, through the
/// unquoting copy: both give the same records (blanks around fields,
/// empty optional fields, a trailing empty field).
#[test]
fn unquoted_lines_read_like_quoted_ones() {
    let head = "time_us , op,sector,sectors ,pid,process,flags\n";
    let plain = "1.5, R ,8,  8 ,7, app ,\n 2 ,W,16,8,,,F\n3,F,,,9,,\n";
    let quoted = "\"1.5\",\"R\",\"8\",\"8\",\"7\",\"app\",\"\"\n\
                  \"2\",\"W\",\"16\",\"8\",\"\",\"\",\"F\"\n\
                  \"3\",\"F\",\"\",\"\",\"9\",\"\",\"\"\n";
    let a: Vec<_> = all(&format!("{head}{plain}"))
        .into_iter()
        .map(|r| r.unwrap())
        .collect();
    let b: Vec<_> = all(&format!("{head}{quoted}"))
        .into_iter()
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(a.len(), 3);
    assert_eq!(a, b);
    assert_eq!((a[0].time_ns, a[0].sector, a[0].pid), (1_500, 8, Some(7)));
    assert_eq!(a[1].flags, TraceRecord::FUA);
}

#[test]
fn reads_columns_in_any_order_with_optional_fields() {
    let text = "# comment\n\nsync, process ,SECTORS,op,pid,sector,time_ns\n\
                1,app,8,R,42,1000,5\n \n0,,16,w,,2000,7\n,app,,F,,,9";
    let mut r = reader(text).unwrap();
    let a = r.next_record().unwrap().unwrap();
    assert_eq!(
        a,
        TraceRecord {
            line: 4,
            time_ns: 5,
            op: Op::Read,
            sector: 1000,
            sectors: 8,
            pid: Some(42),
            process: Some(0),
            sync: Some(true),
            done_ns: None,
            fetch_ns: None,
            device_start_ns: None,
            device: None,
            flags: 0,
        }
    );
    assert_eq!(r.process_name(0), "app");
    let b = r.next_record().unwrap().unwrap();
    assert_eq!(
        (b.line, b.op, b.sector, b.sectors, b.pid, b.process, b.sync),
        (6, Op::Write, 2000, 16, None, None, Some(false))
    );
    let c = r.next_record().unwrap().unwrap();
    assert_eq!(
        (c.line, c.op, c.sector, c.sectors, c.time_ns),
        (7, Op::Flush, 0, 0, 9)
    );
    assert_eq!(c.process, Some(0));
    assert!(r.next_record().is_none());
    assert!(r.next_record().is_none());
    assert_eq!(r.format_name(), "native-csv");
    assert_eq!(r.path(), Path::new("mem.csv"));
    assert_eq!(r.time_column(), "time_ns");
}

#[test]
fn minimal_header_and_crlf() {
    let recs = all("time_ms,op,sector,sectors\r\n1.5,D,0,2048\r\n2,F,0,0\r\n");
    let recs: Vec<_> = recs.into_iter().map(|r| r.unwrap()).collect();
    assert_eq!(recs[0].time_ns, 1_500_000);
    assert_eq!((recs[0].op, recs[0].sectors), (Op::Discard, 2048));
    assert_eq!(
        (recs[0].pid, recs[0].process, recs[0].sync),
        (None, None, None)
    );
    assert_eq!(recs[1].op, Op::Flush);
}

#[test]
fn time_units_convert_exactly_rounding_to_nearest() {
    let cases = [
        ("time_s", "1.5", 1_500_000_000),
        ("time_s", "0.000000001", 1),
        ("time_s", "0.0000000014", 1),
        ("time_s", "0.0000000015", 2),
        ("time_s", "12", 12_000_000_000),
        ("time_ms", "0.001", 1_000),
        ("time_ms", "2.0000005", 2_000_001),
        ("time_us", "812.447120", 812_447),
        ("time_us", "812.4475", 812_448),
        ("time_us", ".5", 500),
        ("time_us", "7.", 7_000),
        ("time_ns", "123456789012", 123_456_789_012),
        ("time_s", "18446744073.709551615", u64::MAX),
    ];
    for (col, val, ns) in cases {
        let text = format!("{col},op,sector,sectors\n{val},R,0,8\n");
        let rec = all(&text).remove(0).unwrap();
        assert_eq!(rec.time_ns, ns, "{col} = {val}");
    }
}

#[test]
fn bad_times_are_reported() {
    for (col, val) in [
        ("time_ns", "1.5"),
        ("time_us", "-1"),
        ("time_us", "1e3"),
        ("time_us", "."),
        ("time_us", ""),
        ("time_s", "18446744074"),
    ] {
        let text = format!("{col},op,sector,sectors\n{val},R,0,8\n");
        let e = all(&text).remove(0).unwrap_err();
        let (line, field, msg) = parse_err(&e);
        assert_eq!((line, field.as_str()), (2, col), "{msg}");
        assert!(msg.contains(val), "{msg}");
    }
}

#[test]
fn header_errors() {
    let cases: [(&str, &str, &[&str]); 6] = [
        (
            "time_us,pid,sector,sectors\n",
            "op",
            &["missing required column `op`"],
        ),
        (
            "time_us,time_ms,op,sector,sectors\n",
            "time_ms",
            &[
                "several time columns",
                "time_s, time_ms, time_us or time_ns",
            ],
        ),
        (
            "op,sector,sectors\n",
            "time",
            &["no time column", "time_s, time_ms, time_us or time_ns"],
        ),
        (
            "time_us,op,sector,sectors,lba\n",
            "lba",
            &[
                "unknown column `lba`",
                "time_s, time_ms, time_us, time_ns, op, sector, sectors, pid, process, sync",
            ],
        ),
        ("time_us,op,op,sector,sectors\n", "op", &["appears twice"]),
        ("# only a comment\n\n", "header", &["expected a header row"]),
    ];
    for (text, field, needles) in cases {
        let e = reader(text).unwrap_err();
        let (line, f, msg) = parse_err(&e);
        assert_eq!(f, field, "{msg}");
        assert_eq!(line, 1, "{msg}");
        for n in needles {
            assert!(msg.contains(n), "{msg:?} lacks {n:?}");
        }
    }
    // line of a header after comments
    let e = reader("# c\n# d\ntime_us,op,sector\n").unwrap_err();
    assert_eq!(parse_err(&e).0, 3);
    assert!(
        e.to_string().starts_with("mem.csv:3: field `sectors`"),
        "{e}"
    );
}

#[test]
fn record_errors_name_line_and_field() {
    let h = "time_us,op,sector,sectors,pid,sync\n";
    let cases = [
        ("1,X,0,8,,\n", "op", "expected R, W, D or F, found `X`"),
        ("1,R,abc,8,,\n", "sector", "found `abc`"),
        ("1,R,0,-8,,\n", "sectors", "found `-8`"),
        ("1,R,0,4294967296,,\n", "sectors", "out of range"),
        ("1,R,0,8,x1,\n", "pid", "found `x1`"),
        ("1,R,0,8,,maybe\n", "sync", "expected 0, 1, true or false"),
        ("1,R,0,0,,\n", "sectors", "at least 1 sector"),
        ("1,W,0,,,\n", "sectors", "found ``"),
        ("1,D,0,0,,\n", "sectors", "a D request"),
        (
            "1,R,0,8\n",
            "fields",
            "expected 6 fields (as in the header at line 1), found 4",
        ),
        ("1,R,0,8,,,\n", "fields", "found 7"),
        ("1,R,18446744073709551615,8,,\n", "sector", "overflows"),
    ];
    for (row, field, needle) in cases {
        let e = all(&format!("{h}{row}")).remove(0).unwrap_err();
        let (line, f, msg) = parse_err(&e);
        assert_eq!((line, f.as_str()), (2, field), "{row}: {msg}");
        assert!(msg.contains(needle), "{row}: {msg:?} lacks {needle:?}");
        assert!(e.to_string().starts_with("mem.csv:2: "), "{e}");
    }
}

#[test]
fn quoted_fields_and_odd_bytes() {
    let text: &[u8] = b"time_us,op,sector,sectors,process\n1,R,0,8,\"a, \"\"b\"\"\"\n2,R,0,8,\"open\n3,R,0,8,\xff\n4,R,0,8, \"x\" y\n";
    let recs = {
        let mut r = NativeCsvReader::from_reader(Cursor::new(text.to_vec()), "mem.csv").unwrap();
        let a = r.next_record().unwrap().unwrap();
        assert_eq!(r.process_name(a.process.unwrap()), "a, \"b\"");
        let rest: Vec<_> = r.collect();
        rest
    };
    let fields: Vec<_> = recs
        .iter()
        .map(|r| parse_err(r.as_ref().unwrap_err()))
        .collect();
    assert_eq!((fields[0].0, fields[0].1.as_str()), (3, "record"));
    assert!(fields[0].2.contains("unterminated"));
    assert_eq!((fields[1].0, fields[1].1.as_str()), (4, "process"));
    assert!(fields[1].2.contains("UTF-8"));
    assert_eq!((fields[2].0, fields[2].1.as_str()), (5, "record"));
}

#[test]
fn decreasing_time_names_both_values_and_reading_continues() {
    let text = "time_us,op,sector,sectors\n0,R,8,8\n10.5,W,16,8\n9.25,R,24,8\n11,R,32,8\n";
    let recs = all(text);
    assert_eq!(recs.len(), 4);
    let (line, field, msg) = parse_err(recs[2].as_ref().unwrap_err());
    assert_eq!((line, field.as_str()), (4, "time_us"));
    assert!(
        msg.contains("9.25") && msg.contains("10.5") && msg.contains("line 3"),
        "{msg}"
    );
    assert_eq!(recs[3].as_ref().unwrap().time_ns, 11_000);
    // equal times are fine
    assert!(all("time_ns,op,sector,sectors\n5,R,0,1\n5,R,1,1\n")
        .iter()
        .all(|r| r.is_ok()));
}

#[test]
fn bundled_bad_samples_fail_with_line_and_field() {
    let cases = [
        ("missing_op.csv", 1, "op"),
        ("two_time_columns.csv", 1, "time_ms"),
        ("no_time_column.csv", 1, "time"),
        ("unknown_column.csv", 1, "lba"),
        ("bad_op.csv", 4, "op"),
        ("bad_number.csv", 3, "sector"),
        ("time_backwards.csv", 4, "time_us"),
        ("zero_length.csv", 4, "sectors"),
        ("wrong_field_count.csv", 4, "fields"),
    ];
    for (name, line, field) in cases {
        let path = manifest_path(&format!("traces/bad/{name}"));
        let err = match NativeCsvReader::open(&path) {
            Err(e) => e,
            Ok(r) => r
                .filter_map(|r| r.err())
                .next()
                .unwrap_or_else(|| panic!("{name}: no error")),
        };
        let (l, f, msg) = parse_err(&err);
        assert_eq!((l, f.as_str()), (line, field), "{name}: {msg}");
        assert!(err.to_string().contains(name), "{err}");
    }
}

#[test]
fn missing_file_is_an_io_error() {
    let e = NativeCsvReader::open("/nonexistent/trace.csv").unwrap_err();
    assert!(matches!(e, Error::Io { .. }), "{e}");
    assert!(e.to_string().contains("/nonexistent/trace.csv"));
}

#[test]
fn bundled_sample_is_valid() {
    let r = NativeCsvReader::open(manifest_path("traces/sample.csv")).unwrap();
    let mut n = 0;
    let mut ops = [0usize; 4];
    let mut last = 0;
    let mut pids = std::collections::BTreeSet::new();
    for rec in r {
        let rec = rec.unwrap();
        assert!(rec.time_ns >= last);
        last = rec.time_ns;
        assert!(rec.sector + u64::from(rec.sectors) <= 8_388_608);
        ops[rec.op as usize] += 1;
        pids.insert(rec.pid.unwrap());
        assert!(rec.process.is_some() && rec.sync.is_some());
        n += 1;
    }
    assert!((300..=2000).contains(&n), "{n} records");
    assert!(ops.iter().all(|&c| c > 0), "{ops:?}");
    assert!(pids.len() >= 4);
}

/// Generates a long trace on the fly, one line at a time.
struct Generated {
    next: u64,
    total: u64,
    line: Vec<u8>,
    pos: usize,
    header: bool,
}

impl Read for Generated {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.pos == self.line.len() {
            self.line.clear();
            self.pos = 0;
            if !self.header {
                self.header = true;
                self.line
                    .extend_from_slice(b"time_us,pid,process,op,sector,sectors,sync\n");
            } else if self.next < self.total {
                let i = self.next;
                self.next += 1;
                let name = ["app", "system_server", "kworker/u8:2"][(i % 3) as usize];
                let op = ["R", "W", "R", "D"][(i % 4) as usize];
                let s = format!(
                    "{}.{},{},{name},{op},{},{},1\n",
                    i,
                    i % 1000,
                    1000 + i % 7,
                    (i * 8) % 8_000_000,
                    8 + i % 64
                );
                self.line.extend_from_slice(s.as_bytes());
            } else {
                return Ok(0);
            }
        }
        let n = buf.len().min(self.line.len() - self.pos);
        buf[..n].copy_from_slice(&self.line[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

#[test]
fn streams_a_long_trace_without_per_record_state() {
    let total = 300_000;
    let gen = Generated {
        next: 0,
        total,
        line: Vec::new(),
        pos: 0,
        header: false,
    };
    let mut r = NativeCsvReader::from_reader(gen, "generated.csv").unwrap();
    let mut n = 0u64;
    let mut last_line = 0;
    while let Some(rec) = r.next_record() {
        let rec = rec.unwrap();
        n += 1;
        last_line = rec.line;
        // only the three distinct names are interned
        assert!(r.process_count() <= 3);
    }
    assert_eq!(n, total);
    assert_eq!(last_line, total + 1);
    assert_eq!(r.process_count(), 3);
    assert_eq!(r.process_name(2), "kworker/u8:2");
    assert_eq!(r.process_name(99), "");
    // the reused buffers stay record-sized
    assert!(r.prev_time_text.capacity() < 64);
}

/// Every result of reading `text` through a buffer of `capacity`
/// bytes, errors as their messages, each record with its process name.
fn read_with_capacity(
    text: &[u8],
    capacity: usize,
) -> Vec<std::result::Result<(TraceRecord, String), String>> {
    let input = BufReader::with_capacity(
        capacity,
        Box::new(Cursor::new(text.to_vec())) as Box<dyn Read>,
    );
    match NativeCsvReader::from_input(input, Path::new("mem.csv")) {
        Err(e) => vec![Err(e.to_string())],
        Ok(mut r) => {
            let mut out = Vec::new();
            while let Some(rec) = r.next_record() {
                out.push(match rec {
                    Ok(rec) => {
                        let name = rec.process.map_or("", |p| r.process_name(p)).to_string();
                        Ok((rec, name))
                    }
                    Err(e) => Err(e.to_string()),
                });
                assert!(out.len() <= 10_000, "no end");
            }
            out
        }
    }
}

/// Reads `text` in place (large buffer), through the copying general
/// path (a 1-byte buffer never holds a whole line), and with lines
/// split across buffer ends; all must agree.
/// `head` then `rows`, one per line.
fn trace_text(head: &str, rows: &[&str]) -> String {
    let mut text = head.to_string();
    for row in rows {
        text.push_str(row);
        text.push('\n');
    }
    text
}

/// The paths agree on `text` as it is, with CRLF line ends, and
/// without its final newline.
fn assert_paths_agree_with_line_ends(text: &str) {
    assert_paths_agree(text.as_bytes());
    assert_paths_agree(text.replace('\n', "\r\n").as_bytes());
    assert_paths_agree(text.trim_end().as_bytes());
}

fn assert_paths_agree(text: &[u8]) {
    let general = read_with_capacity(text, 1);
    for capacity in [3, 16, 61, 8192] {
        assert_eq!(
            read_with_capacity(text, capacity),
            general,
            "capacity {capacity}, text {:?}",
            String::from_utf8_lossy(text)
        );
    }
}

#[test]
fn fast_and_general_paths_agree_on_odd_lines() {
    let head = "time_us,op,sector,sectors,pid,process,sync,done_us,device,flags\n";
    let rows = [
        "10,W,4108600,8,100,app,1,12,0,FM",
        "10,w,0,8,,,,,,",
        " 11 , R , 8 , 8 , 7 , app , true , 13.5 , 2 , A ",
        "12,R,8,8,7,\"app\",0,,,\r",
        "# comment, 1,2,3",
        "",
        "   \t ",
        "13.25,D,16,8,,,FALSE,,,E",
        "13.2500,F,,,,,,,,",
        "14,F,5,7,,,,,,",
        "14,F,abc,,,,,,,",
        "015,R,0,1,,,,,,",
        "0015.0,R,0,1,,,,,,",
        "9,R,0,1,,,,,,",
        "16,R,0,0,,,,,,",
        "17,R,0,4294967296,,,,,,",
        "18,R,18446744073709551615,8,,,,,,",
        "19,R,99999999999999999999,8,,,,,,",
        "20,R,0,8,4294967296,,,,,",
        "21,R,0,8,,new name,,,,",
        "22,R,0,8,,new name,,,,",
        "23,R,0,8,,app,maybe,,,",
        "24,R,0,8,,,,,,Q",
        "25,R,0,8,,,,1.2.3,,",
        "26,X,0,8,,,,,,",
        "27,R,0,8",
        "28,R,0,8,,,,,,,",
        "29,R,0,8,,,,,4294967295,",
        "30,R,00000000000000000000008,8,,,,,,",
        "18446744073709551616,R,0,8,,,,,,",
        "18446744073709551,R,0,8,,,,,,",
        "31,R,0,8,,\u{e9}t\u{e9},,,,",
        "33,R,0,8,,,,,,F\u{e9}",
        "34,\"R\",0,8,,,,,,",
        "35,R,0,8,,\"unterminated,,,,",
        "1,R,0,8,,,,,,",
        "36,R,0,8,,,,,,",
    ];
    let text = trace_text(head, &rows);
    assert_paths_agree_with_line_ends(&text);
    // a name that is not UTF-8
    let mut bytes = text.clone().into_bytes();
    bytes.extend_from_slice(b"40,R,0,8,,\xff,,,,\n41,R,0,8,,,,,,\n");
    assert_paths_agree(&bytes);
    // other headers: a completion column in ms, columns reordered
    assert_paths_agree(b"pid,sectors,done_ms,sector,op,time_s\n1,8,2.5,0,R,1\n,8,,0,W,1.000000001\n1,8,007,16,R,2\n");
    assert_paths_agree(b"time_ns,op,sector,sectors\n5,R,0,1\n5.5,R,0,1\n4,R,0,1\n6,R,0,1\n");
    // a ten-column header has room for nothing more
    assert_paths_agree(format!("{head}1,R,0,8,,,,,,,,\n").as_bytes());
}

#[test]
fn quick_path_agrees_with_the_general_path() {
    // Headers without `process` and `flags`: the quick path is planned.
    let head = "time_us,op,sector,sectors,pid,sync,done_us,device\n";
    let rows = [
        "10,W,4108600,8,100,1,12,0",
        "10,w,0,8,,,,",
        "11,r,12345678,8,7,0,13,2",
        "12,d,123456789,16,4294967295,,99999999,4294967295",
        "13,f,,,,,,",
        "13,F,5,7,,,,",
        "14,R,1234567890123456789,8,,,,",
        "15,R,12345678901234567890,8,,,,",
        "16,R,18446744073709551615,1,,,,",
        "17,R,0,4294967296,,,,",
        "18,R,0,0,,,,",
        "19,R,0,8,4294967296,,,",
        "20,R,0,8,,01,,",
        "21,R,0,8,,2,,",
        "22,R,0,8,,true,,",
        "23,R,0,8,,,1.5,",
        "24,R,0,8,,,,4294967296",
        "025,R,0,8,,,,",
        "0,R,0,8,,,,",
        "26,R,007,08,0012,1,007,01",
        "26.5,R,0,8,,,,",
        "27,X,0,8,,,,",
        "28,RW,0,8,,,,",
        "29,R,0,8,,,",
        "30,R,0,8,,,,,",
        "31, R,0,8,,,,",
        "32,R,0,8 ,,,,",
        "9,R,0,8,,,,",
        "33,R,0,8,,,,\r",
        "# comment",
        "",
        "34,\"R\",0,8,,,,",
        "12345678901234567,R,0,8,,,,",
        "18446744073709551615,R,0,8,,,,",
        "99999999999999999999,R,0,8,,,,",
        "1234567890123456789012,R,0,8,,,,",
        "35,R,99999999999999999999999,8,,,,",
        "36,R,0,8,,,,",
    ];
    let text = trace_text(head, &rows);
    assert_paths_agree_with_line_ends(&text);
    for capacity in [17, 18, 19, 20, 21, 22, 23, 24, 25, 26] {
        assert_eq!(
            read_with_capacity(text.as_bytes(), capacity),
            read_with_capacity(text.as_bytes(), 1),
            "capacity {capacity}"
        );
    }
    // the benchmark's layout, times in every unit, columns reordered
    for unit in ["s", "ms", "us", "ns"] {
        let t = format!("time_{unit},op,sector,sectors,pid\n0,R,419608,8,100\n10,W,4108600,8,100\n999980,R,2215224,8,100\n18446744073709,R,1,8,100\n");
        assert_paths_agree(t.as_bytes());
    }
    assert_paths_agree(b"sectors,pid,op,sector,time_ms,done_ns\n8,1,R,16,5,5000000\n8,,W,24,6,\n8,2,R,32,5,18446744073709551615\n");
    assert_paths_agree(b"op,sector,sectors,time_ns\nR,1,1,5\nR,1,1,4\n");
}

#[test]
fn quick_path_reads_records_and_locates_errors() {
    let text = "time_us,op,sector,sectors,pid\n0,R,419608,8,100\n10,W,4108600,8,100\n5,R,8,8,100\n20,R,8,0,100\n30,D,16,8,\n";
    let recs = read_with_capacity(text.as_bytes(), 8192);
    let (a, _) = recs[1].as_ref().unwrap();
    assert_eq!(
        (a.line, a.time_ns, a.op, a.sector, a.sectors, a.pid),
        (3, 10_000, Op::Write, 4_108_600, 8, Some(100))
    );
    assert!(
        recs[2].as_ref().unwrap_err().starts_with("mem.csv:4: "),
        "{recs:?}"
    );
    assert!(recs[2]
        .as_ref()
        .unwrap_err()
        .contains("5 is earlier than 10 at line 3"));
    assert!(recs[3]
        .as_ref()
        .unwrap_err()
        .starts_with("mem.csv:5: field `sectors`"));
    let (e, _) = recs[4].as_ref().unwrap();
    assert_eq!(
        (e.line, e.op, e.pid, e.sync, e.done_ns),
        (6, Op::Discard, None, None, None)
    );
}

#[test]
fn quick_path_takes_only_plain_lines() {
    let r = reader("time_us,op,sector,sectors,pid\n").unwrap();
    let (rec, used) = r.quick_record(b"10,W,4108600,8,100\n1,R,0,8,1\n").unwrap();
    assert_eq!(used, 19);
    assert_eq!(
        (rec.time_ns, rec.sector, rec.pid),
        (10_000, 4_108_600, Some(100))
    );
    let (rec, _) = r
        .quick_record(b"123456789012,R,123456789,8,\n........")
        .unwrap();
    assert_eq!(
        (rec.time_ns, rec.sector, rec.pid),
        (123_456_789_012_000, 123_456_789, None)
    );
    for declined in [
        &b"10,W,4108600,8,100\r\n"[..],
        b"10,W,4108600,8,100",
        b"10,W,4108600,8,100\n",
        b"010,W,4108600,8,100\n........",
        b" 10,W,4108600,8,100\n........",
    ] {
        assert!(r.quick_record(declined).is_none(), "{declined:?}");
    }
    // a column it does not read turns it off
    let r = reader("time_us,op,sector,sectors,process\n").unwrap();
    assert!(r.quick_record(b"10,W,4108600,8,\n........").is_none());
}

#[test]
fn an_over_long_line_is_refused_by_both_paths() {
    let mut text = b"time_us,op,sector,sectors\n1,R,0,8\n".to_vec();
    text.extend(std::iter::repeat_n(
        b'7',
        crate::common::MAX_LINE_BYTES + 10,
    ));
    text.extend_from_slice(b",R,0,8\n2,R,0,8\n");
    let general = read_with_capacity(&text, 1);
    assert_eq!(general.len(), 2, "{general:?}");
    assert!(
        general[1].as_ref().unwrap_err().contains("longer than"),
        "{general:?}"
    );
    assert_eq!(read_with_capacity(&text, 8192), general);
}

#[test]
fn a_time_read_in_place_is_named_as_written_when_time_goes_backwards() {
    for prev in ["10", "010", "10.5", " 10 ", "10.50", "00010"] {
        let text = format!("time_us,op,sector,sectors\n{prev},R,0,8\n9,R,0,8\n");
        let recs = read_with_capacity(text.as_bytes(), 8192);
        let msg = recs[1].as_ref().unwrap_err();
        assert!(
            msg.contains(&format!("9 is earlier than {} at line 2", prev.trim())),
            "{msg}"
        );
        assert_eq!(recs, read_with_capacity(text.as_bytes(), 1));
    }
}

proptest::proptest! {
    #[test]
    fn fast_and_general_paths_agree(
        rows in proptest::collection::vec(
            (
                proptest::sample::select(vec!["0", "7", "10", "010", "12.5", ".5", "99999999999999999999", "18446744073709551615", "", " 3 ", "x"]),
                proptest::sample::select(vec!["R", "w", "D", "F", "f", "X", "", " R"]),
                proptest::sample::select(vec!["0", "8", "4108600", "", "abc", "18446744073709551615", "007"]),
                proptest::sample::select(vec!["1", "8", "0", "", "4294967296", "-8", "2 "]),
                proptest::sample::select(vec!["", "100", "4294967296", "a"]),
                proptest::sample::select(vec!["", "app", "other app", "\"q,\"\"\"", " app", "\u{e9}"]),
                proptest::sample::select(vec!["", "1", "0", "TRUE", "false", "2"]),
                proptest::sample::select(vec!["", "FM", "Z", "F"]),
                proptest::sample::select(vec!["\n", "\r\n", " \n", "\n\n", "\n# note\n", ",\n", "\n\""]),
            ),
            0..40,
        ),
        capacity in 2usize..80,
    ) {
        let mut text = String::from("time_ms,op,sector,sectors,pid,process,sync,flags\n");
        for (time, op, sector, sectors, pid, process, sync, flags, end) in rows {
            text.push_str(&format!("{time},{op},{sector},{sectors},{pid},{process},{sync},{flags}{end}"));
        }
        let general = read_with_capacity(text.as_bytes(), 1);
        proptest::prop_assert_eq!(&read_with_capacity(text.as_bytes(), capacity), &general);
        proptest::prop_assert_eq!(&read_with_capacity(text.as_bytes(), 8192), &general);
    }

    #[test]
    fn quick_and_general_paths_agree(
        rows in proptest::collection::vec(
            (
                proptest::sample::select(vec!["0", "7", "10", "010", "12.5", "123456789", "99999999999999999999", "18446744073709551615", "", " 3", "x"]),
                proptest::sample::select(vec!["R", "w", "D", "F", "f", "X", "", " R", "RR"]),
                proptest::sample::select(vec!["0", "8", "4108600", "12345678", "", "abc", "18446744073709551615", "007"]),
                proptest::sample::select(vec!["1", "8", "0", "", "4294967296", "-8", "2 "]),
                proptest::sample::select(vec!["", "100", "4294967296", "a", "01"]),
                proptest::sample::select(vec!["", "1", "0", "TRUE", "2", "01"]),
                proptest::sample::select(vec!["\n", "\r\n", " \n", "\n\n", "\n# note\n", ",\n", "\n\""]),
            ),
            0..40,
        ),
        capacity in 2usize..80,
    ) {
        let mut text = String::from("time_ms,op,sector,sectors,pid,sync\n");
        for (time, op, sector, sectors, pid, sync, end) in rows {
            text.push_str(&format!("{time},{op},{sector},{sectors},{pid},{sync}{end}"));
        }
        let general = read_with_capacity(text.as_bytes(), 1);
        proptest::prop_assert_eq!(&read_with_capacity(text.as_bytes(), capacity), &general);
        proptest::prop_assert_eq!(&read_with_capacity(text.as_bytes(), 8192), &general);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400)) {
        if let Ok(r) = NativeCsvReader::from_reader(Cursor::new(bytes), "fuzz.csv") {
            for _ in r.take(1000) {}
        }
    }

    #[test]
    fn arbitrary_rows_never_panic(rows in proptest::collection::vec("[0-9a-zA-Z.,# \\-]{0,40}", 0..20)) {
        let text = format!("time_s,op,sector,sectors,pid,process,sync\n{}", rows.join("\n"));
        let r = reader(&text).unwrap();
        for _ in r.take(1000) {}
    }
}
