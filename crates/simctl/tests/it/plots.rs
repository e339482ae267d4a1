//! Plots through `simctl`: latency CDFs drawn from the report's whole
//! latency histogram on a log time axis with unit-labelled decades,
//! legends naming the scheduler and run beside the chart, and `compare
//! --seeds N` with 95 % intervals in the table, the JSON and as error bars
//! (one seed: none, and the output says so).

use crate::common::*;
use serde_json::Value;

/// The texts of an SVG's `<text>` elements.
fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = &t[t.find('>')? + 1..];
            Some(body[..body.find("</text>")?].trim().to_string())
        })
        .collect()
}

/// Vertical black two-point lines of stroke width 2: the error bars (caps,
/// whiskers and axes are horizontal or thinner).
fn error_bars(svg: &str) -> usize {
    svg.split("<polyline")
        .skip(1)
        .filter(|p| {
            let head = &p[..p.find("/>").unwrap_or(p.len())];
            if !(head.contains("stroke=\"#000000\"") && head.contains("stroke-width=\"2\"")) {
                return false;
            }
            let Some(pts) = head.split("points=\"").nth(1) else {
                return false;
            };
            let pts: Vec<&str> = pts[..pts.find('"').unwrap_or(0)]
                .split_whitespace()
                .collect();
            pts.len() == 2 && pts[0].split(',').next() == pts[1].split(',').next()
        })
        .count()
}

#[test]
fn a_report_cdf_uses_every_recorded_value_with_named_legends_and_time_ticks() {
    let dir = scratch("plots_cdf");
    let sc = "configs/scenarios/rand-read-4k.toml";
    let noop = report(&["run", sc, "--scheduler", "noop"], &dir);
    let a = dir.join("a.json");
    std::fs::write(&a, serde_json::to_string(&noop).unwrap()).unwrap();
    let dl = report(&["run", sc, "--scheduler", "deadline", "--seed", "2"], &dir);
    let b = dir.join("report.json");
    std::fs::write(&b, serde_json::to_string(&dl).unwrap()).unwrap();

    // The histogram: every call counted once, ascending bucket values, and
    // the report's max in its last bucket.
    let buckets = noop["latency_histogram"]["buckets"].as_array().unwrap();
    assert_eq!(noop["latency_histogram"]["unit"], "ns");
    let counts: u64 = buckets.iter().map(|b| b[1].as_u64().unwrap()).sum();
    assert_eq!(counts, noop["requests"]["count"].as_u64().unwrap());
    assert!(buckets.len() > 5, "more than the five percentiles");
    let values: Vec<u64> = buckets.iter().map(|b| b[0].as_u64().unwrap()).collect();
    assert!(values.windows(2).all(|w| w[0] < w[1]));
    let max_us = noop["latency_us"]["max"].as_f64().unwrap();
    assert!((*values.last().unwrap() as f64 / 1000.0 - max_us).abs() < 1e-6);

    let svg = dir.join("cdf.svg");
    simctl_ok(&[
        "plot",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--kind",
        "cdf",
        "--out",
        svg.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(&svg).unwrap();
    let t = texts(&text);
    // Legends name the scheduler and run, not the file ("a", "report").
    assert!(t.contains(&"noop · rand-read-4k".to_string()), "{t:?}");
    assert!(t.contains(&"deadline · rand-read-4k".to_string()), "{t:?}");
    assert!(!t.iter().any(|x| x == "a" || x == "report"), "{t:?}");
    assert!(
        t.iter().any(|x| x.contains("every recorded value")),
        "{t:?}"
    );
    // Log time axis: ticks with units, among them a decade.
    let ticks: Vec<&String> = t
        .iter()
        .filter(|x| x.ends_with(" µs") || x.ends_with(" ms"))
        .collect();
    assert!(ticks.len() >= 3, "{t:?}");
    assert!(
        ticks
            .iter()
            .any(|x| x.as_str() == "100 µs" || x.as_str() == "1 ms"),
        "{t:?}"
    );
    // The CDF is a step line through the buckets: a polyline with two
    // points per bucket, far more than five.
    let longest = text
        .split("<polyline")
        .map(|p| p[..p.find("/>").unwrap_or(p.len())].matches(',').count())
        .max()
        .unwrap();
    assert!(
        longest
            >= 2 * buckets
                .len()
                .min(dl["latency_histogram"]["buckets"].as_array().unwrap().len())
    );
    // The legend sits right of the data: its labels start beyond the
    // chart's x ticks.
    let x_of = |label: &str| -> f64 {
        let i = text
            .find(&format!(">{label}"))
            .or_else(|| text.find(&format!(">\n{label}")))
            .unwrap();
        let head = &text[..i];
        let tag = &head[head.rfind("<text").unwrap()..];
        tag.split("x=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let max_tick_x = ticks.iter().map(|t| x_of(t)).fold(0.0, f64::max);
    assert!(x_of("noop · rand-read-4k") > max_tick_x);
}

#[test]
fn compare_with_seeds_gives_intervals_and_error_bars() {
    let dir = scratch("plots_seeds");
    let sc = "configs/scenarios/rand-read-4k.toml";
    let run = |seeds: &str, prefix: &str| -> (String, Value, String) {
        let json = dir.join(format!("{prefix}.json"));
        let plot = dir.join(prefix);
        let out = simctl_ok(&[
            "compare",
            sc,
            "--schedulers",
            "noop,deadline,cfq",
            "--seeds",
            seeds,
            "--json",
            json.to_str().unwrap(),
            "--plot",
            plot.to_str().unwrap(),
        ]);
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let svg = std::fs::read_to_string(plot.with_extension("svg")).unwrap();
        (out, v, svg)
    };
    let (table, v, svg) = run("4", "four");
    let seeds = &v["seeds"];
    assert_eq!(seeds["count"], 4);
    let entries = seeds["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 3);
    for e in entries {
        for m in e["metrics"].as_array().unwrap() {
            let f = |k: &str| m[k].as_f64().unwrap();
            let values: Vec<f64> = m["values"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect();
            assert_eq!(values.len(), 4);
            let mean = values.iter().sum::<f64>() / 4.0;
            assert!(
                (f("mean") - mean).abs() <= 1e-9 * mean.abs().max(1.0),
                "{m}"
            );
            assert!(
                f("ci95_low") <= f("mean") && f("mean") <= f("ci95_high"),
                "{m}"
            );
            // Student t, 3 degrees of freedom: half-width 3.182 s / 2.
            let s = (values.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 3.0).sqrt();
            let half = 3.182 * s / 2.0;
            assert!(
                (f("ci95_high") - f("mean") - half).abs() <= 1e-9 * mean.abs().max(1.0),
                "{m}"
            );
        }
        // Seed 1's report is the table's, and the seeds differ.
        let iops = &e["metrics"][0]["values"];
        assert_ne!(
            iops[0], iops[1],
            "seeds 1 and 2 ran different random streams"
        );
    }
    assert!(
        table.contains("over seeds 1..=4: mean [95 % interval]"),
        "{table}"
    );
    let noop_iops = &entries[0]["metrics"][0];
    let cell = format!(
        "{:.1} [{:.1}, {:.1}]",
        noop_iops["mean"].as_f64().unwrap(),
        noop_iops["ci95_low"].as_f64().unwrap(),
        noop_iops["ci95_high"].as_f64().unwrap()
    );
    assert!(table.contains(&cell), "{cell} in\n{table}");
    // One error bar per scheduler and bar panel (4 panels × 3 entries).
    assert_eq!(error_bars(&svg), 12);
    // The CDF pools every seed's calls: 1,000 reads per run, four runs,
    // and seed 1's report alone holds a quarter of them.
    let count = |buckets: &Value| -> u64 {
        buckets
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b[1].as_u64().unwrap())
            .sum()
    };
    for (i, e) in entries.iter().enumerate() {
        let pooled = count(&e["latency_histogram"]["buckets"]);
        let seed1 = count(&v["reports"][i]["report"]["latency_histogram"]["buckets"]);
        assert_eq!(pooled, 4 * seed1, "{}", e["label"]);
        assert_eq!(seed1, 1000, "{}", e["label"]);
    }
    let t = texts(&svg);
    assert!(
        t.iter()
            .any(|x| x.contains("mean of 4 seeds, 95 % interval")),
        "{t:?}"
    );
    assert!(t.iter().any(|x| x.contains("4 seeds pooled")), "{t:?}");
    for name in ["noop", "deadline", "cfq"] {
        assert!(t.iter().any(|x| x == name), "{name}: {t:?}");
    }

    let (table, v, svg) = run("1", "one");
    assert!(v.get("seeds").is_none());
    assert!(table.contains("one seed: no interval"), "{table}");
    assert_eq!(error_bars(&svg), 0);
    assert!(texts(&svg)
        .iter()
        .any(|x| x.contains("one seed: no interval")));

    let e = simctl_err(&["compare", sc, "--seeds", "3", "--seed", "7"]);
    assert!(e.contains("--seed and --seeds"), "{e}");
    let e = simctl_err(&["compare", sc, "--seeds", "0"]);
    assert!(e.contains("--seeds"), "{e}");
}
