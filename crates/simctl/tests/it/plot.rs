//! `simctl plot`: each kind from the files runs leave behind (reports,
//! comparisons, request logs), PNG or SVG by extension, and clear errors
//! instead of empty or misleading figures.

use crate::common::*;
use std::path::{Path, PathBuf};

/// A 16-reader run's report and request log, once per test binary.
fn run_outputs() -> &'static (PathBuf, PathBuf) {
    static RUN: std::sync::OnceLock<(PathBuf, PathBuf)> = std::sync::OnceLock::new();
    RUN.get_or_init(|| {
        let tmp = scratch("plot_inputs");
        let (json, log) = (tmp.join("r16.json"), tmp.join("r16.csv"));
        simctl_ok(&[
            "run",
            "configs/scenarios/rand16-128m.toml",
            "--set",
            "jobs.0.requests=100",
            "--json",
            json.to_str().unwrap(),
            "--log",
            log.to_str().unwrap(),
            "--quiet",
        ]);
        (json, log)
    })
}

fn plot(inputs: &[&Path], kind: &str, out: &Path) {
    let mut a = vec!["plot".to_string()];
    a.extend(inputs.iter().map(|p| p.display().to_string()));
    a.extend([
        "--kind".into(),
        kind.into(),
        "--out".into(),
        out.display().to_string(),
    ]);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    simctl_ok(&a);
}

fn svg(path: &Path) -> String {
    let s = std::fs::read_to_string(path).unwrap();
    assert!(s.contains("<svg"), "{}", path.display());
    s
}

#[test]
fn a_latency_cdf_from_report_percentiles_and_from_a_request_log() {
    let (json, log) = run_outputs();
    let tmp = scratch("plot_cdf");
    let out = tmp.join("cdf.svg");
    plot(&[json, log], "cdf", &out);
    let s = svg(&out);
    // Two panels: call latency from the report's whole latency histogram,
    // block request latency from the log; a log time axis labelled with
    // units.
    assert!(
        s.contains("Call latency CDF (every recorded value"),
        "report panel"
    );
    assert!(s.contains("Block request latency"), "log panel");
    assert!(s.contains("(log scale)"));
    assert!(s.contains(" µs") || s.contains(" ms"));
    // A step line, not percentile dots.
    assert_eq!(s.matches("<circle").count(), 0);
    // A report written before reports carried the histogram falls back on
    // its five percentiles (p50 … max, drawn as dots) and says so.
    let mut old: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    old.as_object_mut().unwrap().remove("latency_histogram");
    let old_json = tmp.join("old.json");
    std::fs::write(&old_json, old.to_string()).unwrap();
    let old_svg = tmp.join("old.svg");
    plot(&[&old_json], "cdf", &old_svg);
    let o = svg(&old_svg);
    assert!(o.contains("its percentiles only"), "fallback panel");
    assert!(o.matches("<circle").count() >= 5);
    let png = tmp.join("cdf.png");
    plot(&[json], "cdf", &png);
    assert_eq!(&std::fs::read(&png).unwrap()[..8], b"\x89PNG\r\n\x1a\n");
    // No temporary file is left beside the output.
    let left: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn per_thread_bars_from_a_report_and_scheduler_bars_from_a_comparison() {
    let (json, _) = run_outputs();
    let tmp = scratch("plot_bars");
    let out = tmp.join("bars.svg");
    plot(&[json], "bars", &out);
    let s = svg(&out);
    assert!(s.contains("IOPS per thread") && s.contains("mean latency per thread"));
    // One bar per thread in each of the two panels (plus the background).
    assert!(
        s.matches("<rect").count() >= 2 * 16,
        "{}",
        s.matches("<rect").count()
    );

    let cmp = tmp.join("c.json");
    simctl_ok(&[
        "compare",
        "traces/sample.csv",
        "--schedulers",
        "noop,deadline",
        "--quiet",
        "--json",
        cmp.to_str().unwrap(),
    ]);
    let out = tmp.join("cmp.svg");
    plot(&[&cmp], "bars", &out);
    let s = svg(&out);
    assert!(s.contains("Jain&apos;s fairness index") && s.contains("deadline"));
    // Jain's axis hugs the values instead of starting at zero.
    assert!(s.contains("(axis from "), "Jain's axis starts at zero");
}

#[test]
fn a_timeline_and_the_address_scatter_from_a_request_log() {
    let (_, log) = run_outputs();
    let tmp = scratch("plot_log");
    let out = tmp.join("t.svg");
    plot(&[log], "timeline", &out);
    let s = svg(&out);
    assert!(s.contains("throughput") && s.contains("queue depth"));
    assert!(s.contains("simulated time since the first request (s)"));
    assert!(
        s.contains("<polyline") || s.contains("<path"),
        "no line drawn"
    );
    let out = tmp.join("a.png");
    plot(&[log], "scatter-addr", &out);
    assert!(std::fs::metadata(&out).unwrap().len() > 5_000);
    let out = tmp.join("a.svg");
    plot(&[log], "scatter-addr", &out);
    let s = svg(&out);
    assert!(s.contains("positive (ascending)") && s.contains("negative (descending)"));
    assert!(s.matches("<circle").count() > 1000, "one dot per request");
}

#[test]
fn plots_without_the_data_they_need_are_errors_that_say_what_to_pass() {
    let (json, log) = run_outputs();
    let tmp = scratch("plot_errors");
    let out = tmp.join("x.svg");
    let o = out.to_str().unwrap();
    let e = simctl_err(&[
        "plot",
        json.to_str().unwrap(),
        "--kind",
        "timeline",
        "--out",
        o,
    ]);
    assert!(
        e.contains("no per-request times") && e.contains("--log"),
        "{e}"
    );
    let e = simctl_err(&["plot", log.to_str().unwrap(), "--kind", "bars", "--out", o]);
    assert!(e.contains("not a request log"), "{e}");
    let e = simctl_err(&[
        "plot",
        log.to_str().unwrap(),
        "--kind",
        "cdf",
        "--out",
        "x.jpg",
    ]);
    assert!(e.contains(".png or .svg"), "{e}");
    // A log with no request: nothing to plot, not an empty panel.
    let empty = tmp.join("empty.csv");
    std::fs::write(
        &empty,
        format!(
            "{}\n",
            std::fs::read_to_string(log)
                .unwrap()
                .lines()
                .next()
                .unwrap()
        ),
    )
    .unwrap();
    let e = simctl_err(&[
        "plot",
        empty.to_str().unwrap(),
        "--kind",
        "scatter-addr",
        "--out",
        o,
    ]);
    assert!(e.contains("nothing to plot"), "{e}");
    // A broken log names the line and the field.
    let bad = tmp.join("bad.csv");
    let mut text = std::fs::read_to_string(log).unwrap();
    text.push_str("1,2,3,4,five,8,R,0\n");
    std::fs::write(&bad, text).unwrap();
    let e = simctl_err(&[
        "plot",
        bad.to_str().unwrap(),
        "--kind",
        "timeline",
        "--out",
        o,
    ]);
    assert!(
        e.contains("bad.csv:") && e.contains("field `sector` = `five`"),
        "{e}"
    );
    assert!(!out.exists(), "nothing written on error");
}
