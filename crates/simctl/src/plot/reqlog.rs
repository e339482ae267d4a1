//! The request log (`simctl run --log FILE`) read back, and the analyses
//! drawn from it: address difference against device time, block request
//! latencies, throughput and queue depth over simulated time.

use anyhow::{bail, Context, Result};

/// One row of the request log (times in simulated ns).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// Arrival in the block layer.
    pub submit_ns: u64,
    /// Entry into the dispatch list.
    pub dispatch_ns: u64,
    /// Start of device execution.
    pub device_start_ns: u64,
    /// Device completion.
    pub complete_ns: u64,
    /// First sector.
    pub sector: u64,
    /// Length in sectors.
    pub sectors: u64,
    /// `R`, `W`, `D`, `F` or `WF`.
    pub op: String,
    /// Workload thread.
    pub thread: u32,
}

impl Row {
    /// Device time (start to completion), µs.
    pub fn device_us(&self) -> f64 {
        self.complete_ns.saturating_sub(self.device_start_ns) as f64 / 1e3
    }

    /// True for a data request (read, write, discard), not a flush.
    pub fn is_data(&self) -> bool {
        self.op != "F"
    }
}

/// The operations a request log names: read, write, discard, flush,
/// write with forced unit access.
pub const OPS: [&str; 5] = ["R", "W", "D", "F", "WF"];

/// `text` as one of [`OPS`], or `None`.
fn op(text: &str) -> Option<String> {
    OPS.contains(&text).then(|| text.to_string())
}

/// True when `text` starts with the request log's header.
pub fn is_log(text: &str) -> bool {
    text.lines().next().map(str::trim) == Some(mmcsim::sim::LOG_HEADER)
}

/// Parses a request log; `source` names it in errors, which give the line
/// and the field.
pub fn parse(text: &str, source: &str) -> Result<Vec<Row>> {
    let mut lines = text.lines().enumerate();
    match lines.next() {
        Some((_, h)) if h.trim() == mmcsim::sim::LOG_HEADER => {}
        _ => bail!(
            "{source}:1: not a request log (expected the header `{}`, as `simctl run --log` writes)",
            mmcsim::sim::LOG_HEADER
        ),
    }
    let names: Vec<&str> = mmcsim::sim::LOG_HEADER.split(',').collect();
    let mut rows = Vec::new();
    for (i, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        if f.len() != names.len() {
            bail!(
                "{source}:{}: {} fields, expected {} ({})",
                i + 1,
                f.len(),
                names.len(),
                mmcsim::sim::LOG_HEADER
            );
        }
        let num = |k: usize| -> Result<u64> {
            f[k].parse::<u64>().with_context(|| {
                format!(
                    "{source}:{}: field `{}` = `{}`: expected an unsigned integer",
                    i + 1,
                    names[k],
                    f[k]
                )
            })
        };
        let row = Row {
            submit_ns: num(0)?,
            dispatch_ns: num(1)?,
            device_start_ns: num(2)?,
            complete_ns: num(3)?,
            sector: num(4)?,
            sectors: num(5)?,
            op: op(f[6]).with_context(|| {
                format!(
                    "{source}:{}: field `{}` = `{}`: expected one of {}",
                    i + 1,
                    names[6],
                    f[6],
                    OPS.join(", ")
                )
            })?,
            thread: u32::try_from(num(7)?)
                .with_context(|| format!("{source}:{}: field `thread` is too large", i + 1))?,
        };
        if row.complete_ns < row.device_start_ns || row.device_start_ns < row.submit_ns {
            bail!(
                "{source}:{}: times out of order (submit {} ≤ device start {} ≤ complete {} expected)",
                i + 1,
                row.submit_ns,
                row.device_start_ns,
                row.complete_ns
            );
        }
        rows.push(row);
    }
    Ok(rows)
}

/// One data request in device start order: its start sector minus the
/// previous request's, and its device time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AddrPoint {
    /// Start sector difference to the previous request the device started.
    pub diff_sectors: i64,
    /// Device time of this request, µs.
    pub device_us: f64,
}

/// Address differences of consecutive data requests in the order the
/// device started them (ties keep log order), as in the seed papers'
/// MMC-level traces. Flushes carry no address and are skipped.
pub fn address_differences(rows: &[Row]) -> Vec<AddrPoint> {
    let mut data: Vec<&Row> = rows.iter().filter(|r| r.is_data()).collect();
    data.sort_by_key(|r| r.device_start_ns);
    data.windows(2)
        .map(|w| AddrPoint {
            diff_sectors: w[1].sector as i64 - w[0].sector as i64,
            device_us: w[1].device_us(),
        })
        .collect()
}

/// Mean device time (µs) and count of the points whose difference is
/// positive, and of those whose difference is negative.
pub fn direction_means(points: &[AddrPoint]) -> ((f64, usize), (f64, usize)) {
    let mean = |keep: &dyn Fn(i64) -> bool| {
        let v: Vec<f64> = points
            .iter()
            .filter(|p| keep(p.diff_sectors))
            .map(|p| p.device_us)
            .collect();
        let m = if v.is_empty() {
            f64::NAN
        } else {
            v.iter().sum::<f64>() / v.len() as f64
        };
        (m, v.len())
    };
    (mean(&|d| d > 0), mean(&|d| d < 0))
}

/// Block request latencies (arrival to completion), µs, sorted.
pub fn latencies_us(rows: &[Row]) -> Vec<f64> {
    let mut v: Vec<f64> = rows
        .iter()
        .map(|r| r.complete_ns.saturating_sub(r.submit_ns) as f64 / 1e3)
        .collect();
    v.sort_by(f64::total_cmp);
    v
}

/// Throughput and queue depth over time, in `bins` equal intervals from
/// the first arrival to the last completion.
#[derive(Clone, Debug, PartialEq)]
pub struct Timeline {
    /// `(bin middle s, completed requests per second)`.
    pub iops: Vec<(f64, f64)>,
    /// `(bin middle s, time-averaged requests between arrival and
    /// completion)`.
    pub depth: Vec<(f64, f64)>,
}

/// The time line of `rows` in `bins` intervals (times relative to the first
/// arrival).
pub fn timeline(rows: &[Row], bins: usize) -> Timeline {
    let (Some(t0), Some(t1)) = (
        rows.iter().map(|r| r.submit_ns).min(),
        rows.iter().map(|r| r.complete_ns).max(),
    ) else {
        return Timeline {
            iops: Vec::new(),
            depth: Vec::new(),
        };
    };
    let bins = bins.max(1);
    let width = ((t1 - t0) as f64 / bins as f64).max(1.0);
    let bin_of = |t: u64| (((t - t0) as f64 / width) as usize).min(bins - 1);
    let mut done = vec![0u64; bins];
    // Occupancy integral per bin, ns × requests: each request adds its
    // overlap with every bin it spans.
    let mut busy = vec![0f64; bins];
    for r in rows {
        done[bin_of(r.complete_ns)] += 1;
        let (a, b) = ((r.submit_ns - t0) as f64, (r.complete_ns - t0) as f64);
        for (k, slot) in busy
            .iter_mut()
            .enumerate()
            .take(bin_of(r.complete_ns) + 1)
            .skip(bin_of(r.submit_ns))
        {
            let (lo, hi) = (k as f64 * width, (k + 1) as f64 * width);
            *slot += (b.min(hi) - a.max(lo)).max(0.0);
        }
    }
    let mid = |k: usize| (k as f64 + 0.5) * width / 1e9;
    Timeline {
        iops: done
            .iter()
            .enumerate()
            .map(|(k, n)| (mid(k), *n as f64 / (width / 1e9)))
            .collect(),
        depth: busy
            .iter()
            .enumerate()
            .map(|(k, b)| (mid(k), b / width))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(rows: &[&str]) -> String {
        let mut s = format!("{}\n", mmcsim::sim::LOG_HEADER);
        for r in rows {
            s.push_str(r);
            s.push('\n');
        }
        s
    }

    #[test]
    fn differences_follow_device_start_order_and_skip_flushes() {
        let text = log(&[
            "0,0,100,300,800,8,R,0",
            "0,0,0,100,1000,8,R,1",
            "0,0,300,350,0,0,F,0",
            "0,0,350,1350,400,8,W,0",
        ]);
        let rows = parse(&text, "t.csv").unwrap();
        let p = address_differences(&rows);
        assert_eq!(
            p,
            vec![
                AddrPoint {
                    diff_sectors: -200,
                    device_us: 0.2
                },
                AddrPoint {
                    diff_sectors: -400,
                    device_us: 1.0
                },
            ]
        );
        let ((up, nu), (down, nd)) = direction_means(&p);
        assert!(up.is_nan() && nu == 0);
        assert_eq!((down, nd), (0.6, 2));
    }

    #[test]
    fn errors_name_the_line_and_field() {
        let e = parse(&log(&["0,0,1,2,x,8,R,0"]), "t.csv").unwrap_err();
        assert!(
            e.to_string().contains("t.csv:2: field `sector` = `x`"),
            "{e}"
        );
        let e = parse(&log(&["0,0,1"]), "t.csv").unwrap_err();
        assert!(e.to_string().contains("t.csv:2: 3 fields"), "{e}");
        let e = parse("a,b\n", "t.csv").unwrap_err();
        assert!(e.to_string().contains("t.csv:1: not a request log"), "{e}");
    }

    #[test]
    fn the_timeline_integrates_queue_depth_per_bin() {
        // Two requests over [0, 2000) ns: one in flight the whole time, one
        // in the second half only.
        let rows = parse(
            &log(&["0,0,0,2000,0,8,R,0", "1000,1000,1000,2000,8,8,R,0"]),
            "t",
        )
        .unwrap();
        let t = timeline(&rows, 2);
        assert_eq!(
            t.depth.iter().map(|p| p.1).collect::<Vec<_>>(),
            vec![1.0, 2.0]
        );
        assert_eq!(t.iops[1].1, 2.0 / 1e-6);
        assert_eq!(t.iops[0].1, 0.0);
    }
}
