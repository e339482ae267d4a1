//! Finding 6: on a Galaxy S II-style host, host software dominates the
//! latency of a Java app's O_SYNC writes at 16 KiB and its share falls as
//! the write grows; one CPU-bound process beside the app makes the app
//! faster (the governor raises the clock) and the device response slower.
//! Judged where the study measured: device time is the data command up to
//! its completion interrupt; the CMD13 busy polling after a write is host
//! time.

use crate::plot::{BarPanel, Mark, Panel, Series, XyPanel};
use crate::reproduce::finding::{
    cell, num, About, Boundary, Check, Finding, Measure, Quantity, Side,
};
use crate::reproduce::runner::{RunOutput, RunSpec};
use anyhow::Result;
use mmcsim::sched::Registry;

/// Host software share by layer and the effect of a CPU hog.
pub struct HostShare;

/// Request sizes of the size sweep, bytes.
const SIZES: [u64; 5] = [4096, 8192, 16384, 32768, 65536];
/// The size of the published share and of the hog comparison.
const AT: u64 = 16384;
/// Host layers of `breakdown_us`, the busy polling (host time at the
/// study's boundary), then the device's data command.
const LAYERS: [&str; 7] = [
    "platform",
    "syscall_fs",
    "block_queue",
    "driver",
    "irq_wakeup",
    "device_busy_poll",
    "device_data_cmd",
];
/// Published bands: host share at 16 KiB, app latency change and device
/// response change with one hog.
const MIN_SHARE: f64 = 0.80;
const LATENCY_BAND: (f64, f64) = (-0.25, -0.10);
const DEVICE_BAND: (f64, f64) = (0.03, 0.10);

fn sync_app(bytes: u64, hogs: u32) -> RunSpec {
    RunSpec::new(
        "sync-write-app.toml",
        &[
            ("jobs.0.request_bytes", bytes.to_string()),
            ("host.background_cpu_hogs", hogs.to_string()),
        ],
    )
}

/// `alone` changed by each end of `band` (fractions), as `(low, high)`.
fn scaled(alone: f64, band: (f64, f64)) -> (f64, f64) {
    (alone * (1.0 + band.0), alone * (1.0 + band.1))
}

const ABOUT: About = About {
    number: 6,
    title: "Host software share by layer, and a CPU-bound process beside the app",
    source: "Galaxy S II study of host software overhead on Android storage (issue 9)",
    claim: "host software is ≥ 80 % of a 16 KiB O_SYNC write's latency and its share falls with size (4-64 KiB); one CPU-bound process makes app latency 10-25 % lower and device response time 3-10 % higher",
    boundary: Boundary::DataCommand,
    csv_header: &[
            "request_bytes",
            "background_cpu_hogs",
            "write_latency_us",
            "platform_us",
            "syscall_fs_us",
            "block_queue_us",
            "driver_us",
            "irq_wakeup_us",
            "device_busy_poll_us",
            "device_data_cmd_us",
            "not_device_share",
            "device_response_data_cmd_us",
            "mean_freq_mhz",
            "ipis",
        ],
};

/// The four judged quantities: host share at 16 KiB, its smallest fall
/// with size, and the hog's effects on app latency and device response.
fn checks(share: f64, least_fall: f64, lat_change: f64, dev_change: f64) -> Vec<Check> {
    vec![
        Check::predicted(
            "host share of a 16 KiB O_SYNC write's latency ≥ 0.80",
            Side::Above(MIN_SHARE),
            share,
        ),
        Check::predicted(
            "host share falls with size: smallest fall between successive sizes (4-64 KiB) > 0",
            Side::Above(0.0),
            least_fall,
        ),
        Check::predicted(
            "app write latency change with one CPU hog in [-0.25, -0.10]",
            Side::Within(LATENCY_BAND.0, LATENCY_BAND.1),
            lat_change,
        ),
        Check::predicted(
            "device response time change with one CPU hog in [+0.03, +0.10]",
            Side::Within(DEVICE_BAND.0, DEVICE_BAND.1),
            dev_change,
        ),
    ]
}

impl Finding for HostShare {
    fn about(&self) -> &'static About {
        &ABOUT
    }
    fn on_generic(&self) -> std::result::Result<(), &'static str> {
        Err("its scenario (sync-write-app.toml) names the Galaxy S II's own parts (galaxy-s2-emmc, exynos4210), so a generic row would be the galaxy-s2 profile again; add --phone galaxy-s2")
    }
    fn runs(&self, _: &Registry) -> Vec<RunSpec> {
        let mut v: Vec<RunSpec> = SIZES.iter().map(|&b| sync_app(b, 0)).collect();
        v.push(sync_app(AT, 1));
        v
    }
    fn measure(&self, runs: &[&RunOutput]) -> Result<Measure> {
        let csv = csv_rows(runs)?;
        let shares = runs[..SIZES.len()]
            .iter()
            .map(|r| ABOUT.boundary.host_share(r))
            .collect::<Result<Vec<_>>>()?;
        let at = SIZES.iter().position(|&b| b == AT).unwrap_or(0);
        let (idle, hog) = (runs[at], runs[SIZES.len()]);
        let lat_change = latency(hog)? / latency(idle)? - 1.0;
        let dev_change = device(hog)? / device(idle)? - 1.0;
        // The smallest fall from one size to the next (negative: a rise).
        let least_fall = shares
            .windows(2)
            .map(|w| w[0] - w[1])
            .fold(f64::INFINITY, f64::min);
        let judged = Judged {
            shares,
            at,
            least_fall,
            lat_change,
            dev_change,
        };
        Ok(Measure {
            checks: checks(judged.shares[at], least_fall, lat_change, dev_change),
            summary: judged.summary(),
            table: judged.table(),
            csv,
            panels: panels(runs, &judged.shares, idle, hog)?,
        })
    }
}

/// The app's mean write latency in run `r`, µs.
fn latency(r: &RunOutput) -> Result<f64> {
    num(r, "write.latency_us.mean")
}

/// The device's mean response time in run `r` at the study's boundary, µs.
fn device(r: &RunOutput) -> Result<f64> {
    num(r, ABOUT.boundary.device_response_key())
}

/// One CSV row per run (the size sweep, then the hog run): latency, the
/// layers, host share, device response, clock and IPIs.
fn csv_rows(runs: &[&RunOutput]) -> Result<Vec<Vec<String>>> {
    let mut csv = Vec::new();
    let hogs_of = [0u32; SIZES.len()].into_iter().chain([1]);
    let sizes = SIZES.iter().copied().chain([AT]);
    for ((r, bytes), hogs) in runs.iter().zip(sizes).zip(hogs_of) {
        let mut row = vec![bytes.to_string(), hogs.to_string(), cell(latency(r)?)];
        for l in LAYERS {
            row.push(cell(num(r, &format!("breakdown_us.{l}"))?));
        }
        row.push(cell(ABOUT.boundary.host_share(r)?));
        row.push(cell(device(r)?));
        row.push(cell(num(r, "host.cpu.mean_freq_mhz")?));
        row.push(cell(num(r, "host.cpu.ipis")?));
        csv.push(row);
    }
    Ok(csv)
}

/// The judged quantities of one measurement.
struct Judged {
    /// Host share per size of [`SIZES`], fraction.
    shares: Vec<f64>,
    /// Index of [`AT`] in [`SIZES`].
    at: usize,
    /// Smallest fall of the share between successive sizes, fraction.
    least_fall: f64,
    /// App latency change with one hog, fraction.
    lat_change: f64,
    /// Device response change with one hog, fraction.
    dev_change: f64,
}

/// A fraction as a percentage, e.g. `91.2 %`.
fn pct(v: f64) -> String {
    format!("{:.1} %", v * 100.0)
}

/// A fraction as a signed percentage, e.g. `-12.0 %`.
fn signed(v: f64) -> String {
    format!("{:+.1} %", v * 100.0)
}

impl Judged {
    /// One line: the shares by size and whether each claim is in its band.
    fn summary(&self) -> String {
        let in_band = |v: f64, (lo, hi): (f64, f64)| (lo..=hi).contains(&v);
        let share_list = SIZES
            .iter()
            .zip(&self.shares)
            .map(|(b, s)| format!("{} KiB {}", b / 1024, pct(*s)))
            .collect::<Vec<_>>()
            .join(", ");
        let mark = |ok: bool| if ok { "in band" } else { "MISSED" };
        format!(
            "host share {share_list} ({} at 16 KiB, {}); hog: app latency {} ({}), device response {} ({})",
            mark(self.shares[self.at] >= MIN_SHARE),
            if self.least_fall > 0.0 { "falling" } else { "NOT falling" },
            signed(self.lat_change),
            mark(in_band(self.lat_change, LATENCY_BAND)),
            signed(self.dev_change),
            mark(in_band(self.dev_change, DEVICE_BAND)),
        )
    }

    /// The study's quantities beside the model's.
    fn table(&self) -> Vec<Quantity> {
        let mut table = vec![Quantity::new(
            "host share at 16 KiB",
            "> 90 % (band ≥ 80 %)",
            pct(self.shares[self.at]),
        )];
        for (b, s) in SIZES.iter().zip(&self.shares) {
            if *b != AT {
                table.push(Quantity::new(
                    &format!("host share at {} KiB", b / 1024),
                    "falls with size",
                    pct(*s),
                ));
            }
        }
        table.push(Quantity::new(
            "app write latency, one hog vs none",
            "−10 … −25 % (up to 20 % lower)",
            signed(self.lat_change),
        ));
        table.push(Quantity::new(
            "device response time, one hog vs none",
            "+3 … +10 % (up to 7 % higher)",
            signed(self.dev_change),
        ));
        table
    }
}

/// The share of each layer by size, and the hog's effect at 16 KiB
/// against the study's ranges.
fn panels(
    runs: &[&RunOutput],
    shares: &[f64],
    idle: &RunOutput,
    hog: &RunOutput,
) -> Result<Vec<Panel>> {
    let kib: Vec<f64> = SIZES.iter().map(|&b| b as f64 / 1024.0).collect();
    let mut series = Vec::new();
    for l in LAYERS {
        let points = runs[..SIZES.len()]
            .iter()
            .zip(&kib)
            .map(|(r, k)| {
                Ok((
                    *k,
                    num(r, &format!("breakdown_us.{l}"))? / num(r, "breakdown_us.total")?,
                ))
            })
            .collect::<Result<Vec<_>>>()?;
        series.push(Series {
            name: l.into(),
            points,
            mark: Mark::LinePoints,
        });
    }
    series.push(Series {
        name: "host software (all but the data command)".into(),
        points: kib.iter().copied().zip(shares.iter().copied()).collect(),
        mark: Mark::LinePoints,
    });
    Ok(vec![
        Panel::Xy(XyPanel {
            title: "Share of an O_SYNC write's latency by layer".into(),
            x_label: "request size (KiB, log scale)".into(),
            y_label: "share of mean latency".into(),
            log_x: true,
            x_time_us: false,
            y_range: Some((0.0, 1.0)),
            series,
        }),
        Panel::Bars(
            BarPanel::amounts(
                "16 KiB writes: app alone vs with one CPU hog (boxes: the study's ranges)",
                "mean time (µs)",
                vec![
                    ("app latency, alone".into(), latency(idle)?),
                    ("app latency, hog".into(), latency(hog)?),
                    ("device response, alone".into(), device(idle)?),
                    ("device response, hog".into(), device(hog)?),
                ],
            )
            // The claimed changes as target ranges on the hog bars, in µs
            // from the run alone.
            .with_targets(vec![
                None,
                Some(scaled(latency(idle)?, LATENCY_BAND)),
                None,
                Some(scaled(device(idle)?, DEVICE_BAND)),
            ]),
        ),
    ])
}
