//! `simctl reproduce`: every finding's verdict over seeds with a 95 %
//! interval, its figure, data and report page from real runs; verdicts
//! that follow the mechanism (breaking it moves the verdict); a lead the
//! seeds cannot resolve is UNRESOLVED; findings 1-5 judged with the clock
//! pinned and the governor's contribution beside; the sensitivity probes
//! of findings 2-4; outputs identical for any number of workers; unusable
//! input exits 2; the page renders in headless Chromium.
//!
//! The runs are the full-size scenarios on the test build (the simulator
//! is optimised even there), two seeds each: a few minutes of CPU for the
//! whole file.

use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn reproduce(args: &[&str]) -> Output {
    let mut a = vec!["reproduce"];
    a.extend_from_slice(args);
    simctl(&a)
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// One verdict line, parsed: `OUTCOME finding-N LABEL phone=NAME: CLAIM --
/// MEAN [LO, HI]`.
#[derive(Debug)]
struct Line {
    outcome: String,
    finding: u32,
    label: String,
    phone: String,
    claim: String,
    mean: f64,
    lo: f64,
    hi: f64,
}

/// Parses a verdict line, or `None` when the line is not one; panics on a
/// line that starts like one but breaks the format.
fn parse(l: &str) -> Option<Line> {
    let (outcome, rest) = l.split_once(' ')?;
    if !["PASS", "FAIL", "UNRESOLVED"].contains(&outcome) || !rest.starts_with("finding-") {
        return None;
    }
    let (head, rest) = rest.split_once(": ").unwrap_or_else(|| panic!("{l}"));
    let head: Vec<&str> = head.split(' ').collect();
    assert_eq!(head.len(), 3, "{l}");
    let (claim, nums) = rest.rsplit_once(" -- ").unwrap_or_else(|| panic!("{l}"));
    let (mean, ci) = nums.split_once(" [").unwrap_or_else(|| panic!("{l}"));
    let (lo, hi) = ci
        .strip_suffix(']')
        .and_then(|c| c.split_once(", "))
        .unwrap_or_else(|| panic!("{l}"));
    let f = |s: &str| -> f64 { s.parse().unwrap_or_else(|_| panic!("`{s}` in {l}")) };
    assert!(["fitted", "predicted"].contains(&head[1]), "label in {l}");
    Some(Line {
        outcome: outcome.into(),
        finding: head[0].strip_prefix("finding-").unwrap().parse().unwrap(),
        label: head[1].into(),
        phone: head[2]
            .strip_prefix("phone=")
            .unwrap_or_else(|| panic!("{l}"))
            .into(),
        claim: claim.into(),
        mean: f(mean),
        lo: f(lo),
        hi: f(hi),
    })
}

/// Every verdict line of an output.
fn verdicts(out: &str) -> Vec<Line> {
    out.lines().filter_map(parse).collect()
}

/// The verdict of finding `n` on `phone` (the predicted one when there are
/// two).
fn verdict(out: &str, n: u32, phone: &str) -> Line {
    let mut v: Vec<Line> = verdicts(out)
        .into_iter()
        .filter(|l| l.finding == n && l.phone == phone)
        .collect();
    v.sort_by_key(|l| l.label != "predicted");
    v.into_iter()
        .next()
        .unwrap_or_else(|| panic!("no verdict for finding-{n} on {phone} in:\n{out}"))
}

fn full_run() -> &'static (Output, PathBuf) {
    static RUN: std::sync::OnceLock<(Output, PathBuf)> = std::sync::OnceLock::new();
    RUN.get_or_init(|| {
        let dir = scratch("reproduce_all");
        let o = reproduce(&["--seeds", "2", "--out", dir.to_str().unwrap()]);
        (o, dir)
    })
}

#[test]
fn every_finding_writes_a_verdict_with_an_interval_a_figure_and_its_data_and_the_page_links_them() {
    let (o, dir) = full_run();
    let out = stdout(o);
    assert_eq!(
        o.status.code(),
        Some(1),
        "finding 6 fails on the honest model, so the exit code is 1:\n{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let phones = [
        "galaxy-s2",
        "motog-2013",
        "nexus-s",
        "nexus5",
        "nexus7-2012",
        "generic",
    ];
    let all = verdicts(&out);
    // One verdict per finding and profile (finding 6 has no generic row:
    // its scenario names the Galaxy S II's parts; finding 7 is about the
    // Moto G: one verdict, predicted, as the bundled Moto G was fitted to
    // nothing), each with its mean inside its interval.
    for n in 1..=8u32 {
        for p in phones {
            let want = match (n, p) {
                (6, "generic") => 0,
                (7, "motog-2013") => 1,
                (7, _) => 0,
                _ => 1,
            };
            let got = all
                .iter()
                .filter(|l| l.finding == n && l.phone == p)
                .count();
            assert_eq!(got, want, "finding-{n} on {p}:\n{out}");
        }
    }
    for l in &all {
        assert!(l.lo <= l.mean && l.mean <= l.hi, "{l:?}");
        assert!(!l.claim.is_empty());
    }
    // No bundled phone has [fit] targets: every verdict is a prediction,
    // and the summary counts them all.
    assert!(all.iter().all(|l| l.label == "predicted"), "{out}");
    let passed = all.iter().filter(|l| l.outcome == "PASS").count();
    assert!(
        out.contains(&format!(
            "{passed} of {} predictions reproduced; no fitted verdicts",
            all.len()
        )),
        "{out}"
    );
    // Sequential reads beat random ones by far more than 3x on every
    // profile, with the clock pinned, in both seeds.
    for p in phones {
        let v = verdict(&out, 1, p);
        assert_eq!(v.outcome, "PASS", "{v:?}");
        assert!(v.claim.contains("≥ 3"), "{v:?}");
    }
    // Finding 2 comes from the map cache's locality: it holds on the
    // page-mapped profiles and not on the hybrid-FTL phones, whose block
    // map sits in SRAM (sorted and shuffled take the same time).
    for p in ["generic", "motog-2013"] {
        assert_eq!(verdict(&out, 2, p).outcome, "PASS", "{p}");
    }
    for p in ["nexus-s", "nexus7-2012", "galaxy-s2"] {
        let v = verdict(&out, 2, p);
        assert_ne!(v.outcome, "PASS", "{v:?}");
        assert!((v.mean - 1.0).abs() < 0.01, "{v:?}");
    }
    // Findings 1-5 on a phone: judged pinned, the governor free beside it.
    let lines: Vec<&str> = out.lines().collect();
    for (k, l) in lines.iter().enumerate() {
        if let Some(v) = parse(l) {
            let free = lines[k + 1..]
                .iter()
                .take_while(|x| x.starts_with("  "))
                .any(|x| x.starts_with("  governor free (as configured): "));
            let pinned = v.finding <= 5 && v.phone != "generic";
            assert_eq!(free, pinned, "{l}");
        }
    }
    // Finding 6: the Galaxy S II's host share at 16 KiB misses the band.
    let v6 = verdict(&out, 6, "galaxy-s2");
    assert_eq!(v6.outcome, "FAIL");
    assert!(v6.claim.contains("16 KiB"), "{v6:?}");

    // verdicts.csv: one row per verdict line, same outcome and interval;
    // a pinned verdict carries the free clock's mean and the governor's
    // contribution, a generic (fixed clock) one leaves them empty.
    let table = std::fs::read_to_string(dir.join("verdicts.csv")).unwrap();
    let mut rows = csv::Reader::from_reader(table.as_bytes());
    let header: Vec<String> = rows.headers().unwrap().iter().map(String::from).collect();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let rows: Vec<csv::StringRecord> = rows.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), all.len(), "{table}");
    for (r, l) in rows.iter().zip(&all) {
        assert_eq!(r[col("finding")].parse::<u32>().unwrap(), l.finding);
        assert_eq!(r[col("profile")], l.phone);
        assert_eq!(r[col("outcome")], l.outcome);
        assert_eq!(r[col("label")], l.label);
        assert_eq!(r[col("seeds")], *"2");
        let mean: f64 = r[col("mean")].parse().unwrap();
        assert!(
            (mean - l.mean).abs() <= 1e-3 * l.mean.abs().max(1e-3),
            "{r:?} {l:?}"
        );
        let pinned = l.finding <= 5 && l.phone != "generic";
        assert_eq!(!r[col("free_mean")].is_empty(), pinned, "{r:?}");
        if pinned {
            let free: f64 = r[col("free_mean")].parse().unwrap();
            let gov: f64 = r[col("governor_contribution")].parse().unwrap();
            assert!(
                (free - mean - gov).abs() < 1e-9 * free.abs().max(1.0),
                "{r:?}"
            );
        }
    }

    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    for n in 1..=8 {
        let png = std::fs::read(dir.join(format!("finding-{n}.png"))).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "finding-{n}.png");
        let svg = std::fs::read_to_string(dir.join(format!("finding-{n}.svg"))).unwrap();
        assert!(
            svg.contains("<svg") && svg.contains("<rect"),
            "finding-{n}.svg"
        );
        let csv = std::fs::read_to_string(dir.join(format!("finding-{n}.csv"))).unwrap();
        let mut lines = csv.lines();
        assert!(
            lines.next().unwrap().starts_with("profile,clock,seed,"),
            "finding-{n}.csv"
        );
        let generic =
            lines.any(|l| l.starts_with("generic,fixed,") || l.starts_with("generic,free,"));
        assert_eq!(generic, n != 6 && n != 7, "finding-{n}.csv: generic rows");
        assert!(
            html.contains(&format!("id=\"figure-{n}\"")),
            "figure {n} on the page"
        );
    }
    // Finding 7 ran on the Moto G only: nine schedulers, seven metrics,
    // two seeds.
    let f7 = std::fs::read_to_string(dir.join("finding-7.csv")).unwrap();
    assert_eq!(
        f7.lines()
            .filter(|l| l.starts_with("motog-2013,free,"))
            .count(),
        126
    );
    assert_eq!(f7.lines().count(), 127, "{f7}");
    // Findings 2-4 probe their mechanism beside the verdict (seed 1): the
    // generic profile rerun with the mapping cache at each size of the
    // sourced 8-64 range. Deadline's ascending batches (3) and the
    // direction effect (4) appear exactly while the 128 MiB region's 32
    // map pages do not fit; the 1 GiB file of finding 2 never fits, so
    // sorted wins throughout.
    let probe = |n: u32| -> Vec<(String, String)> {
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("  sensitivity of finding {n} ")))
            .unwrap_or_else(|| panic!("no sensitivity line for finding {n}:\n{out}"));
        assert!(
            line.contains("(not in the verdict), generic profile, seed 1"),
            "{line}"
        );
        let csv =
            std::fs::read_to_string(dir.join(format!("finding-{n}-sensitivity.csv"))).unwrap();
        let mut lines = csv.lines();
        assert_eq!(lines.next(), Some("profile,setting,value,verdict,measured"));
        lines
            .map(|l| {
                let f: Vec<&str> = l.splitn(5, ',').collect();
                assert_eq!(&f[..2], ["generic", "device.map_cache.entries"], "{l}");
                (f[2].to_string(), f[3].to_string())
            })
            .collect()
    };
    let expect = |pass: &[&str], fail: &[&str]| -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = pass
            .iter()
            .map(|e| (e.to_string(), "PASS".to_string()))
            .chain(fail.iter().map(|e| (e.to_string(), "FAIL".to_string())))
            .collect();
        v.sort_by_key(|(e, _)| e.parse::<u32>().unwrap());
        v
    };
    assert_eq!(probe(2), expect(&["8", "16", "24", "32", "64"], &[]));
    assert_eq!(probe(3), expect(&["8", "16", "24"], &["32", "64"]));
    assert_eq!(probe(4), expect(&["8", "16", "24"], &["32", "64"]));
    assert!(
        html.contains("Sensitivity (not in the verdict): <code>device.map_cache.entries</code>")
    );
    assert!(
        !out.contains("sensitivity of finding 1 "),
        "finding 1 has no probe"
    );
    // Finding 3's data has one row per scheduler and seed.
    let f3 = std::fs::read_to_string(dir.join("finding-3.csv")).unwrap();
    assert_eq!(
        f3.lines()
            .filter(|l| l.starts_with("generic,fixed,"))
            .count(),
        26,
        "{f3}"
    );
    // The page: self-contained (no script, no remote resource), with the
    // version, the command, how the intervals are computed, and the
    // published numbers beside simulated ones.
    assert!(!html.contains("<script"));
    assert!(!html.contains("src=\"http"));
    assert!(html.contains("mmcsim 0."), "version on the page");
    assert!(
        html.contains("simctl reproduce --seeds 2 --out"),
        "command line on the page"
    );
    assert!(html.contains("95 % confidence interval from Student's t distribution"));
    assert!(html.contains("host.governor=performance"));
    assert!(
        html.contains("&gt; 90 % (band ≥ 80 %)"),
        "published band of finding 6"
    );
    assert!(
        html.contains("rand16-128m.toml scheduler.name=deadline"),
        "runs listed"
    );
    assert!(
        html.contains("finding-6 not run on generic"),
        "said on the page"
    );
    // Every finding names the boundary its paper measured at.
    assert_eq!(
        html.matches("<b>Measured at the paper's boundary:</b>")
            .count(),
        8,
        "one per finding"
    );
    assert!(html.contains("inside the benchmark's own calls"));
    assert!(html.contains("the MMC request log"));
    assert!(html.contains("device = the data command only"));
}

/// Finding 6 is judged where the Galaxy S II study measured: device time
/// is the data command up to its completion interrupt, and the CMD13 busy
/// polling after each O_SYNC write is host time; the page says so.
#[test]
fn finding_6_is_judged_at_the_data_command_boundary() {
    let dir = scratch("reproduce_finding_6_boundary");
    let o = reproduce(&[
        "6",
        "--phone",
        "galaxy-s2",
        "--seeds",
        "2",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(
        html.contains("<b>Measured at the paper's boundary:</b> device = the data command only"),
        "the page names finding 6's boundary"
    );
    let csv = std::fs::read_to_string(dir.join("finding-6.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("no column {name} in {header:?}"))
    };
    let layers = [
        "platform_us",
        "syscall_fs_us",
        "block_queue_us",
        "driver_us",
        "irq_wakeup_us",
        "device_busy_poll_us",
        "device_data_cmd_us",
    ];
    let mut rows = 0;
    for l in lines {
        // After the profile, clock and seed columns.
        let f: Vec<f64> = l.split(',').skip(3).map(|v| v.parse().unwrap()).collect();
        let v = |name: &str| f[col(name) - 3];
        let total: f64 = layers.iter().map(|k| v(k)).sum();
        assert!(
            v("device_busy_poll_us") > 0.0,
            "O_SYNC writes are polled: {l}"
        );
        let share = 1.0 - v("device_data_cmd_us") / total;
        assert!(
            (v("not_device_share") - share).abs() < 1e-9,
            "host share counts the busy polling as host time: {l}"
        );
        rows += 1;
    }
    assert_eq!(rows, 12, "five sizes and the hog run, two seeds");
}

#[test]
fn the_page_renders_in_headless_chromium_with_every_figure() {
    let (_, dir) = full_run();
    let Some(chromium) = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|c| {
            Command::new(c)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
    else {
        skip_or_fail(
            "reproduce page in headless Chromium",
            "no chromium here (install Debian's `chromium` package; .ci/run does)",
        );
        return;
    };
    let page = format!("file://{}", dir.join("index.html").display());
    let run = |extra: &[&str]| {
        let o = Command::new(chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
            ])
            .args(extra)
            .arg(&page)
            .output()
            .expect("chromium runs");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        o
    };
    // The DOM after layout: every figure holds an SVG with drawn content.
    let dom = stdout(&run(&["--dump-dom"]));
    for n in 1..=8 {
        let start = dom
            .find(&format!("<figure id=\"figure-{n}\">"))
            .unwrap_or_else(|| panic!("figure {n} missing from the rendered DOM"));
        let fig = &dom[start..start + dom[start..].find("</figure>").unwrap()];
        assert!(fig.contains("<svg"), "figure {n} has no SVG");
        let shapes: usize = ["<rect", "<circle", "<line", "<polyline", "<path"]
            .iter()
            .map(|t| fig.matches(t).count())
            .sum();
        // Bars or dots beyond the background, plus axes and grid lines.
        let marks = fig.matches("<rect").count() - 1 + fig.matches("<circle").count();
        assert!(
            shapes > 20 && marks >= 2,
            "figure {n} is empty ({shapes} shapes, {marks} marks)"
        );
        assert!(fig.contains("<text"), "figure {n} has no labels");
        // Readable ticks: every panel's axes carry numbers (at least two
        // per axis of a bar panel's value axis and an x-y panel's axes).
        let numbers = svg_texts(fig)
            .iter()
            .filter(|t| t.replace(['−', ','], "").trim().parse::<f64>().is_ok())
            .count();
        assert!(numbers >= 4, "figure {n}: {numbers} numeric tick labels");
    }
    // Finding 7 draws the blog's measured values beside the simulated ones.
    let start = dom.find("<figure id=\"figure-7\">").unwrap();
    let fig7 = &dom[start..start + dom[start..].find("</figure>").unwrap()];
    let texts = svg_texts(fig7);
    assert!(
        texts.iter().any(|t| t.contains("measured")),
        "finding 7's figure names no measured series: {texts:?}"
    );
    // A screenshot of the top of the page is not blank.
    let shot = dir.join("screenshot.png");
    run(&[
        &format!("--screenshot={}", shot.display()),
        "--window-size=1280,2000",
    ]);
    let (distinct, coloured) = pixel_stats(&shot);
    assert!(
        distinct > 50,
        "the screenshot has {distinct} colours: blank?"
    );
    assert!(
        coloured > 10_000,
        "{coloured} saturated pixels: no bars drawn?"
    );
}

/// The contents of every `<text>` element of an SVG fragment (tags
/// inside a text element, such as `<tspan>`, removed).
fn svg_texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = &t[t.find('>')? + 1..t.find("</text>")?];
            let mut plain = String::new();
            let mut in_tag = false;
            for ch in body.chars() {
                match ch {
                    '<' => in_tag = true,
                    '>' => in_tag = false,
                    c if !in_tag => plain.push(c),
                    _ => {}
                }
            }
            Some(plain.trim().to_string())
        })
        .collect()
}

/// Distinct colours and strongly coloured (bar-like) pixels of a PNG.
fn pixel_stats(path: &Path) -> (usize, usize) {
    let decoder = png::Decoder::new(std::fs::File::open(path).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let mut colours = std::collections::BTreeSet::new();
    let mut coloured = 0;
    for px in buf[..info.buffer_size()].chunks(channels) {
        let (r, g, b) = (px[0], px[1], px[2]);
        colours.insert((r, g, b));
        let (hi, lo) = (r.max(g).max(b), r.min(g).min(b));
        if hi - lo > 80 {
            coloured += 1;
        }
    }
    (colours.len(), coloured)
}

/// Finding 1's mechanism is read-ahead and the device's read buffer:
/// with read-ahead off on a device that keeps one NAND page and prefetches
/// nothing, the verdict is no longer PASS.
#[test]
fn breaking_read_ahead_on_a_device_without_read_buffers_moves_finding_1_off_pass() {
    let dir = scratch("reproduce_broken");
    let o = reproduce(&[
        "1",
        "--phone",
        "generic",
        "--seeds",
        "2",
        "--set",
        "queue.read_ahead_kb=0",
        // The device keeps one NAND page (the least it allows) and
        // prefetches nothing.
        "--set",
        "device.read_buffer.pages=1",
        "--set",
        "device.read_buffer.prefetch_kib=0",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    let v = verdict(&out, 1, "generic");
    assert_ne!(v.outcome, "PASS", "{v:?}");
    assert!(v.hi < 3.0 || v.lo < 3.0, "{v:?}");
    // Only the selected finding ran.
    assert!(!out.contains("finding-2"), "{out}");
    assert!(dir.join("finding-1.png").is_file() && !dir.join("finding-2.png").exists());
}

/// One seed gives no interval: even a 8x lead is not resolved from it.
#[test]
fn one_seed_resolves_nothing() {
    let dir = scratch("reproduce_one_seed");
    let o = reproduce(&[
        "1",
        "--phone",
        "generic",
        "--seeds",
        "1",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    let line = out.lines().find(|l| l.contains(" finding-1 ")).unwrap();
    assert!(
        line.starts_with("UNRESOLVED finding-1 predicted phone=generic: ")
            && line.ends_with(" [-inf, inf]"),
        "{line}"
    );
    let v = verdict(&out, 1, "generic");
    assert!(v.mean > 3.0, "{v:?}");
}

/// The probe needs the generic profile and a free hand over its setting;
/// without either it says why it did not run, and the verdict is as always.
#[test]
fn a_sensitivity_probe_that_cannot_run_says_why() {
    let dir = scratch("reproduce_probe_skipped");
    let o = reproduce(&[
        "2",
        "--phone",
        "motog-2013",
        "--seeds",
        "2",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let out = stdout(&o);
    assert_eq!(verdict(&out, 2, "motog-2013").outcome, "PASS", "{out}");
    assert!(
        out.contains("  sensitivity of finding 2 (not in the verdict): not run: it runs on the generic profile, which is not among those selected"),
        "{out}"
    );
    assert!(!dir.join("finding-2-sensitivity.csv").exists());

    let dir = scratch("reproduce_probe_fixed");
    let o = reproduce(&[
        "2",
        "--phone",
        "generic",
        "--seeds",
        "2",
        "--set",
        "device.map_cache.entries=8",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let out = stdout(&o);
    assert!(
        out.contains("not run: --set device.map_cache.entries fixes the setting it varies"),
        "{out}"
    );
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(
        html.contains("Not run: --set device.map_cache.entries fixes"),
        "page says so"
    );

    // A hybrid FTL keeps its block map in SRAM: the mapping cache is never
    // consulted, sorted and shuffled take the same time at every size (a
    // FAIL: no effect at all), and the probe says the setting does not
    // reach the mechanism.
    let dir = scratch("reproduce_probe_inert");
    let o = reproduce(&[
        "2",
        "--phone",
        "generic",
        "--seeds",
        "2",
        "--set",
        "device.ftl.mapping=hybrid",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let out = stdout(&o);
    let v = verdict(&out, 2, "generic");
    assert_eq!(v.outcome, "FAIL", "{out}");
    assert!((v.mean - 1.0).abs() < 1e-3, "{v:?}");
    assert!(
        out.contains(
            "— the same at every value: the setting does not reach this device's mechanism"
        ),
        "{out}"
    );
}

#[test]
fn outputs_are_byte_identical_for_any_number_of_workers() {
    let files = [
        "finding-2.csv",
        "finding-2.svg",
        "finding-2.png",
        "finding-5.csv",
        "finding-5.svg",
        "finding-2-sensitivity.csv",
        "index.html",
    ];
    let mut seen: Vec<Vec<Vec<u8>>> = Vec::new();
    let mut stdouts = Vec::new();
    for jobs in ["1", "2"] {
        let dir = scratch(&format!("reproduce_jobs{jobs}"));
        // The same --out text in both runs: the page shows the command.
        let o = Command::new(env!("CARGO_BIN_EXE_simctl"))
            .args([
                "reproduce",
                "finding-2",
                "5",
                "--phone",
                "motog-2013",
                "--phone",
                "generic",
                "--seeds",
                "2",
                "--jobs",
                jobs,
                "--out",
                ".",
            ])
            .arg("--configs")
            .arg(root().join("configs"))
            .current_dir(&dir)
            .output()
            .unwrap();
        // Exit 0 or 1 (a verdict may fail); 2 would be unusable input.
        assert!(
            matches!(o.status.code(), Some(0 | 1)),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        stdouts.push(stdout(&o));
        seen.push(
            files
                .iter()
                .map(|f| std::fs::read(dir.join(f)).unwrap())
                .collect(),
        );
    }
    assert_eq!(stdouts[0], stdouts[1], "verdict lines");
    for (i, f) in files.iter().enumerate() {
        assert!(
            seen[0][i] == seen[1][i],
            "{f} differs between --jobs 1 and 2"
        );
    }
    // The seeds are distinct runs: seed 1 and 2 rows both in the data.
    let csv = String::from_utf8(seen[0][3].clone()).unwrap();
    for lead in [
        "motog-2013,pinned,1,",
        "motog-2013,pinned,2,",
        "motog-2013,free,2,",
        "generic,fixed,2,",
    ] {
        assert!(csv.lines().any(|l| l.starts_with(lead)), "{lead} in {csv}");
    }
}

#[test]
fn unusable_input_exits_2_and_says_what_is_wrong() {
    let dir = scratch("reproduce_bad");
    let d = dir.to_str().unwrap();
    let cases: [(&[&str], &str); 6] = [
        (
            &["9", "--out", d],
            "unknown finding `9`; known: 1, 2, 3, 4, 5, 6",
        ),
        (
            &["1", "--phone", "nokia-3310", "--out", d],
            "--phone nokia-3310: unknown phone",
        ),
        (&["1", "--set", "queue.bogus=1", "--out", d], "bogus"),
        (
            &["1", "--set", "nonsense", "--out", d],
            "expected KEY=VALUE",
        ),
        (&["1", "--seeds", "0", "--out", d], "--seeds 0"),
        (
            &["1", "--set", "seed=7", "--out", d],
            "reproduce sets the seed of every run itself",
        ),
    ];
    for (args, msg) in cases {
        let o = reproduce(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(msg), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    assert!(
        !dir.join("index.html").exists(),
        "nothing written on unusable input"
    );
}

#[test]
fn a_phone_file_is_applied_to_every_run_and_named_in_the_outputs() {
    let dir = scratch("reproduce_phone");
    let phone = dir.join("cmdq-phone.toml");
    std::fs::write(
        &phone,
        format!(
            "name = \"cmdq-phone\"\ndescription = \"test phone\"\ndevice = \"{}\"\nhost = \"{}\"\nandroid_version = \"4.4\"\nkernel = \"Linux 3.4\"\n[scheduler]\nname = \"mq-deadline\"\n[fit]\ntargets = [\"finding-1\"]\n",
            root()
                .join("configs/devices/generic-emmc51-cmdq.toml")
                .display(),
            root().join("configs/hosts/snapdragon400.toml").display()
        ),
    )
    .unwrap();
    let out_dir = dir.join("out");
    let o = reproduce(&[
        "1",
        "--phone",
        phone.to_str().unwrap(),
        "--phone",
        "generic",
        "--seeds",
        "2",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    let out = stdout(&o);
    assert!(
        o.status.code() == Some(0) || o.status.code() == Some(1),
        "{out}"
    );
    // Its [fit] targets name finding 1: that verdict is the fit's, not a
    // prediction; the generic profile's is a prediction.
    assert_eq!(verdict(&out, 1, "cmdq-phone").label, "fitted", "{out}");
    assert_eq!(verdict(&out, 1, "generic").label, "predicted", "{out}");
    assert!(out.contains("of 1 predictions reproduced; "), "{out}");
    let csv = std::fs::read_to_string(out_dir.join("finding-1.csv")).unwrap();
    // Two patterns x two seeds x two clocks (its governor moves the clock).
    assert_eq!(
        csv.lines().filter(|l| l.starts_with("cmdq-phone,")).count(),
        8,
        "{csv}"
    );
    let html = std::fs::read_to_string(out_dir.join("index.html")).unwrap();
    assert!(
        html.contains("generic-emmc51-cmdq"),
        "the phone's device on the page"
    );
}

/// Runs finding 7 with the suite once per scheduler (the app averages
/// three runs), two seeds and any extra `--set`; returns the output, the
/// CSV rows (after the header) and the page.
fn finding_7(name: &str, sets: &[&str]) -> (Output, Vec<Vec<String>>, String) {
    finding_7_on(name, None, sets)
}

/// [`finding_7`] on the phone file `phone` (default: the bundled Moto G).
fn finding_7_on(
    name: &str,
    phone: Option<&str>,
    sets: &[&str],
) -> (Output, Vec<Vec<String>>, String) {
    let dir = scratch(name);
    let mut args = vec!["7", "--seeds", "2", "--set", "androbench.repetitions=1"];
    if let Some(p) = phone {
        args.extend(["--phone", p]);
    }
    for s in sets {
        args.extend(["--set", s]);
    }
    let d = dir.to_str().unwrap().to_string();
    args.extend(["--out", &d]);
    let o = reproduce(&args);
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for ext in ["png", "svg"] {
        assert!(
            dir.join(format!("finding-7.{ext}")).is_file(),
            "finding-7.{ext}"
        );
    }
    let csv = std::fs::read_to_string(dir.join("finding-7.csv")).unwrap();
    let rows = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect();
    (
        o,
        rows,
        std::fs::read_to_string(dir.join("index.html")).unwrap(),
    )
}

/// Column of finding 7's CSV: profile, clock, seed, scheduler, metric,
/// unit, simulated, measured_mean, measured_stdev, band_low, band_high,
/// inside_band, simulated_vs_measured_pct.
const SEED: usize = 2;
const SCHED: usize = 3;
const METRIC: usize = 4;
const SIM: usize = 6;
const MEAN: usize = 7;

/// The simulated value of `metric` under `scheduler` in seed 1.
fn simulated(rows: &[Vec<String>], scheduler: &str, metric: &str) -> f64 {
    rows.iter()
        .find(|r| r[SEED] == "1" && r[SCHED] == scheduler && r[METRIC] == metric)
        .unwrap_or_else(|| panic!("no row {scheduler} {metric}"))[SIM]
        .parse()
        .unwrap()
}

#[test]
fn finding_7_sets_the_blogs_measured_table_beside_the_simulated_values() {
    let (o, rows, html) = finding_7("reproduce_f7", &[]);
    let out = stdout(&o);
    let labels = verdicts(&out)
        .into_iter()
        .filter(|l| l.finding == 7)
        .map(|l| (l.label, l.outcome))
        .collect::<Vec<_>>();
    // The bundled Moto G names no [fit] targets: one verdict, predicted.
    assert_eq!(labels.len(), 1, "{out}");
    assert_eq!(labels[0].0, "predicted");
    let pass = labels[0].1 == "PASS";
    assert_eq!(o.status.code(), Some(if pass { 0 } else { 1 }), "{out}");
    // The checks under it: three per metric, seven metrics.
    assert_eq!(
        out.lines()
            .filter(|l| l.starts_with("  check ") && l.contains("/21 "))
            .count(),
        21
    );
    // Only the Moto G ran (it is the phone measured), under the nine
    // schedulers, seven metrics each, two seeds; every row carries the
    // blog's measured mean for that scheduler.
    assert_eq!(rows.len(), 126);
    assert!(rows.iter().all(|r| r[0] == "motog-2013" && r[1] == "free"));
    let measured = [
        ("fiops", "seq_read_mb_s", 62.76),
        ("bfq", "seq_write_mb_s", 12.12),
        ("zen", "rand_read_iops", 1383.16),
        ("row", "rand_write_iops", 220.26),
        ("noop", "sqlite_insert_tps", 42.21),
        ("bfq", "sqlite_update_tps", 35.26),
        ("sio", "sqlite_delete_tps", 42.16),
    ];
    for (s, m, v) in measured {
        let r = rows
            .iter()
            .find(|r| r[SCHED] == s && r[METRIC] == m)
            .unwrap();
        assert_eq!(r[MEAN].parse::<f64>().unwrap(), v, "{r:?}");
    }
    for r in &rows {
        let (v, lo, hi): (f64, f64, f64) = (
            r[SIM].parse().unwrap(),
            r[9].parse().unwrap(),
            r[10].parse().unwrap(),
        );
        assert_eq!(r[11] == "true", (lo..=hi).contains(&v), "{r:?}");
    }
    // The page: the measured value and band beside each scheduler's, and
    // how to read the chart.
    assert!(html.contains("id=\"figure-7\""));
    assert!(
        html.contains(
            "sequential write (MB/s), cfq</td><td>14.37 ± 0.9800 (band 12.12–15.61 MB/s)</td>"
        ),
        "{}",
        &html[..2000]
    );
    assert!(html.contains("How to read it:") && html.contains("± one standard deviation"));
    let svg = std::fs::read_to_string(
        root()
            .join("target/test-scratch/reproduce_f7")
            .join("finding-7.svg"),
    )
    .unwrap();
    assert!(svg.contains("measured (± 1 sd of 3 runs)") && svg.contains("1383"));
}

/// A Moto G whose `[fit] targets` name one metric of the blog's table:
/// the three checks on that metric make a `fitted` verdict, the other 18 a
/// `predicted` one, and only the latter counts in the summary.
#[test]
fn a_phones_fit_targets_label_the_verdicts_on_them_fitted_and_the_rest_predicted() {
    let dir = scratch("reproduce_fit_phone");
    let phone = dir.join("motog-fitted.toml");
    let text = std::fs::read_to_string(root().join("configs/phones/motog-2013.toml"))
        .unwrap()
        .replace(
            "\"../devices/",
            &format!("\"{}/", root().join("configs/devices").display()),
        )
        .replace(
            "\"../hosts/",
            &format!("\"{}/", root().join("configs/hosts").display()),
        );
    std::fs::write(
        &phone,
        format!("{text}\n[fit]\ntargets = [\"motog-2013-androbench34:rand_read_iops\"]\n"),
    )
    .unwrap();
    let (o, _, html) = finding_7_on("reproduce_fit_out", Some(phone.to_str().unwrap()), &[]);
    let out = stdout(&o);
    let v: Vec<Line> = verdicts(&out);
    let labels: Vec<&str> = v.iter().map(|l| l.label.as_str()).collect();
    assert_eq!(labels, ["fitted", "predicted"], "{out}");
    assert!(v[0].claim.starts_with("random read: "), "{out}");
    for (n, of) in [(3, "/3 "), (18, "/18 ")] {
        assert_eq!(
            out.lines()
                .filter(|l| l.starts_with("  check ") && l.contains(of))
                .count(),
            n,
            "{out}"
        );
    }
    let predicted_pass = usize::from(v[1].outcome == "PASS");
    let fitted_pass = usize::from(v[0].outcome == "PASS");
    assert!(
        out.contains(&format!(
            "{predicted_pass} of 1 predictions reproduced; {fitted_pass} of 1 fitted verdicts pass (not counted"
        )),
        "{out}"
    );
    assert!(
        html.contains("fitted to (its [fit] targets): motog-2013-androbench34:rand_read_iops"),
        "the page names the fit"
    );
    assert!(html.contains("Fitted verdicts (the profile was calibrated"));
    // A target the tree does not know is a located error (exit 2).
    let bad = dir.join("motog-bad.toml");
    std::fs::write(
        &bad,
        format!("{text}\n[fit]\ntargets = [\"motog-2013-androbench34:rand_read_ops\"]\n"),
    )
    .unwrap();
    let o = reproduce(&[
        "1",
        "--phone",
        bad.to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("motog-bad.toml: [fit] targets[0]: measurement table `motog-2013-androbench34` has no metric `rand_read_ops`"),
        "{err}"
    );
}

#[test]
fn finding_7_follows_the_mechanisms_journal_off_raises_sqlite_and_is_only_about_the_moto_g() {
    let (_, base, _) = finding_7("reproduce_f7_base", &[]);
    // Without SQLite's rollback journal each transaction syncs fewer
    // files: insert TPS rises under every scheduler, the file tests'
    // reads do not move.
    let (_, off, _) = finding_7("reproduce_f7_off", &["sqlite.journal_mode=off"]);
    for s in ["noop", "cfq", "deadline", "bfq", "row"] {
        let (b, o) = (
            simulated(&base, s, "sqlite_insert_tps"),
            simulated(&off, s, "sqlite_insert_tps"),
        );
        assert!(
            o > b * 1.1,
            "{s}: insert {b} TPS -> {o} TPS with journal_mode=off"
        );
        assert_eq!(
            simulated(&base, s, "rand_read_iops"),
            simulated(&off, s, "rand_read_iops")
        );
    }
    // Named on another profile: unusable input, saying which phone.
    let dir = scratch("reproduce_f7_generic");
    let o = reproduce(&["7", "--phone", "generic", "--out", dir.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("add --phone motog-2013"), "{err}");
}

/// Finding 8 sets the simulated WAL / TRUNCATE ratios beside each
/// published phone ratio with its source, phone and metric, and judges the
/// insert ratio against the published span, not against a band read into
/// a slide.
#[test]
fn finding_8_sets_the_simulated_ratios_beside_the_published_ones() {
    let dir = scratch("reproduce_f8");
    let o = reproduce(&[
        "8",
        "--phone",
        "galaxy-s2",
        "--seeds",
        "2",
        "--set",
        "androbench.repetitions=1",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let out = stdout(&o);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{out}");
    let v = verdict(&out, 8, "galaxy-s2");
    assert!(
        out.contains("SQLite WAL / TRUNCATE insert TPS in [4.03, 7.56]"),
        "{v:?}"
    );
    assert!(!out.contains("25-60"), "{out}");
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    for s in [
        "Kim et al., FAST 2014, Galaxy S4 (Android 4.3): WAL vs TRUNCATE, inserts/s",
        "×7.6 (55 → 416 inserts/s)",
        "Jeong et al., USENIX ATC 2013",
        "×4.0 (39 → 157 inserts/s)",
        "AOSP compatibility-WAL commit",
        "about 4× on updates",
        "simulated WAL / TRUNCATE, sqlite_insert_tps",
    ] {
        assert!(html.contains(s), "`{s}` on the page");
    }
}

/// A copy of the Nexus S phone file (profiles by absolute path) with
/// `edit` applied to its text, written to `dir/NAME.toml`.
fn nexus_s_copy(dir: &Path, name: &str, edit: impl Fn(String) -> String) -> PathBuf {
    let text = std::fs::read_to_string(root().join("configs/phones/nexus-s.toml")).unwrap();
    let text = text
        .replace(
            "../devices/",
            &format!("{}/", root().join("configs/devices").display()),
        )
        .replace(
            "../hosts/",
            &format!("{}/", root().join("configs/hosts").display()),
        );
    let f = dir.join(format!("{name}.toml"));
    std::fs::write(&f, edit(text)).unwrap();
    f
}

/// A phone's `[uncertain]` table is checked when the phone loads: a
/// reversed range, a key that is no device or host setting, a nominal
/// value outside its range, an alternative the profile does not accept
/// and an entry without a reason are each a located error (the file and
/// the key), exit 2, on `run` as on `reproduce --ensemble`.
#[test]
fn uncertain_entries_are_checked_with_located_errors() {
    let dir = scratch("reproduce_uncertain_errors");
    let entries = "\"device.map_cache.entries\" = [8, 64]";
    let mapping = "\"device.ftl.mapping\" = [\"hybrid\", \"page\", \"dftl\"]";
    let cases: [(&str, String, &str); 5] = [
        ("reversed", entries.replace("[8, 64]", "[64, 8]"), "lo > hi"),
        (
            "nominal",
            entries.replace("[8, 64]", "[40, 64]"),
            "outside the range",
        ),
        (
            "block",
            mapping.replace("\"dftl\"", "\"block\""),
            "not accepted",
        ),
        (
            "reason",
            format!("{entries}\n\"device.nand.t_r_us\" = [40.0, 80.0]"),
            "no reason",
        ),
        (
            "unknown",
            format!("{entries}\n\"queue.read_ahead_kb\" = [0, 128]"),
            "unknown key",
        ),
    ];
    for (name, replacement, want) in cases {
        let old = if name == "block" { mapping } else { entries };
        let f = nexus_s_copy(&dir, name, |t| t.replacen(old, &replacement, 1));
        for args in [
            vec!["run", "seq-read-4k", "--phone", f.to_str().unwrap()],
            vec![
                "reproduce",
                "1",
                "--ensemble",
                "2",
                "--phone",
                f.to_str().unwrap(),
                "--out",
                dir.join("out").to_str().unwrap(),
            ],
        ] {
            let o = simctl(&args);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{name}: {err}");
            assert!(
                err.contains(&format!("{name}.toml"))
                    && err.contains("[uncertain]")
                    && err.contains(want),
                "{name}: {err}"
            );
        }
    }
    // The generic profile has nothing to sample.
    let o = reproduce(&[
        "1",
        "--ensemble",
        "2",
        "--phone",
        "generic",
        "--out",
        dir.join("g").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("[uncertain]"));
}

/// `reproduce --ensemble 3 --phone nexus-s` on one finding with one seed:
/// `ensemble.csv` has one row per configuration with the sampled values
/// inside the declared ranges and the outcome, the page a Nexus S section
/// with the fraction and the consistent region; the rows, the page and the
/// summary are the same with `--jobs 1`, `--jobs 2` and through two shards
/// and `simctl merge`.
#[test]
fn an_ensemble_is_the_same_for_any_workers_and_through_shards_and_merge() {
    let dir = scratch("reproduce_ensemble");
    let run = |name: &str, extra: &[&str]| -> (Output, PathBuf) {
        let out = dir.join(name);
        let mut args = vec![
            "reproduce",
            ENSEMBLE_FINDING,
            "--phone",
            "nexus-s",
            "--ensemble",
            "3",
            "--seeds",
            "1",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let o = simctl(&args);
        assert!(
            matches!(o.status.code(), Some(0 | 1)),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        (o, out)
    };
    let summary = |o: &Output| -> Vec<String> {
        stdout(o)
            .lines()
            .filter(|l| !l.starts_with("ensemble rows:") && !l.starts_with("report page:"))
            .map(String::from)
            .collect()
    };
    let (o1, d1) = run("jobs1", &["--jobs", "1"]);
    let (o2, d2) = run("jobs2", &["--jobs", "2"]);
    run("shard1", &["--shard", "1/2"]);
    run("shard2", &["--shard", "2/2"]);
    let merged = dir.join("merged");
    let om = simctl(&[
        "merge",
        dir.join("shard1").to_str().unwrap(),
        dir.join("shard2").to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ]);
    assert!(
        matches!(om.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&om.stderr)
    );
    for f in ["ensemble.csv", "ensemble.json", "index.html"] {
        let a = std::fs::read(d1.join(f)).unwrap();
        assert!(
            a == std::fs::read(d2.join(f)).unwrap(),
            "{f}: --jobs 1 vs 2"
        );
        assert!(
            a == std::fs::read(merged.join(f)).unwrap(),
            "{f}: merged shards"
        );
    }
    assert_eq!(summary(&o1), summary(&o2));
    assert_eq!(summary(&o1), summary(&om));
    let csv = std::fs::read_to_string(d1.join("ensemble.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(
        &header[..4],
        ["phone", "configuration", "finding", "outcome"]
    );
    let col = |k: &str| header.iter().position(|h| *h == k).unwrap();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 3, "one row per configuration: {csv}");
    // Three members: the two shards split them unevenly, and they hold
    // both DFTL and hybrid configurations (the `n/a` check below).
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r[0], "nexus-s");
        assert_eq!(r[1], (i + 1).to_string());
        assert_eq!(r[2], format!("finding-{ENSEMBLE_FINDING}"));
        assert!(["PASS", "FAIL", "UNRESOLVED"].contains(&r[3]), "{r:?}");
        let entries: u32 = r[col("device.map_cache.entries")].parse().unwrap();
        assert!((8..=64).contains(&entries), "{r:?}");
        assert!(["hybrid", "page", "dftl"].contains(&r[col("device.ftl.mapping")]));
    }
    let passes = rows.iter().filter(|r| r[3] == "PASS").count();
    let html = std::fs::read_to_string(d1.join("index.html")).unwrap();
    assert!(html.contains("nexus-s — 3 configurations"), "{html}");
    assert!(html.contains(&format!(
        "<td>finding-{ENSEMBLE_FINDING}</td><td>{passes}/3 "
    )));
    assert!(html.contains("Consistent region"));
    assert!(stdout(&o1).contains(&format!("finding-{ENSEMBLE_FINDING}: PASS in {passes}/3")));
    // A hybrid-FTL setting is no part of a page or DFTL configuration: its
    // cell is `n/a` there (and the consistent region leaves it out).
    let hybrids = rows
        .iter()
        .filter(|r| r[col("device.ftl.mapping")] == "hybrid")
        .count();
    assert!(0 < hybrids && hybrids < rows.len(), "{rows:?}");
    for r in &rows {
        let hybrid = r[col("device.ftl.mapping")] == "hybrid";
        let blocks = r[col("device.ftl.hybrid.random_log_blocks")];
        assert_eq!(blocks == "n/a", !hybrid, "{r:?}");
        if hybrid {
            assert!((1..=5).contains(&blocks.parse::<u32>().unwrap()), "{r:?}");
        }
    }
    // The same ensemble named in a sweep grid, run through the job-array
    // and merge scripts of `sweep --slurm` (each array task a `sweep
    // --shard I/2`, run here by bash as Slurm would): the same files.
    let grid = dir.join("ensemble-grid.toml");
    std::fs::write(
        &grid,
        format!(
            "[ensemble]\nphones = [\"nexus-s\"]\nmembers = 3\nseeds = 1\nfindings = [{ENSEMBLE_FINDING}]\nconfigs = \"{}\"\n",
            root().join("configs").display()
        ),
    )
    .unwrap();
    let swept = dir.join("swept");
    let o = simctl(&[
        "sweep",
        grid.to_str().unwrap(),
        "--slurm",
        "--shards",
        "2",
        "--out",
        swept.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(stdout(&o).contains("3 cells"), "{}", stdout(&o));
    let script = |name: &str, task: Option<usize>| {
        let mut c = Command::new("bash");
        c.arg(swept.join("slurm").join(name));
        if let Some(t) = task {
            c.env("SLURM_ARRAY_TASK_ID", t.to_string());
        }
        let o = c.output().unwrap();
        assert!(
            matches!(o.status.code(), Some(0 | 1)),
            "{name} {task:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    };
    script("sweep.sbatch", Some(0));
    script("sweep.sbatch", Some(1));
    script("merge.sbatch", None);
    for f in ["ensemble.csv", "ensemble.json", "index.html"] {
        assert!(
            std::fs::read(d1.join(f)).unwrap() == std::fs::read(swept.join(f)).unwrap(),
            "{f}: sweep --slurm (sweep --shard) + merge"
        );
    }
    // An ensemble grid takes nothing but [ensemble] and [slurm].
    std::fs::write(
        &grid,
        "workloads = [\"x.toml\"]\n[ensemble]\nphones = [\"nexus-s\"]\nmembers = 4\n",
    )
    .unwrap();
    let o = simctl(&[
        "sweep",
        grid.to_str().unwrap(),
        "--out",
        swept.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("ensemble-grid.toml") && err.contains("workloads"),
        "{err}"
    );
    // A shard alone cannot be merged: the other is missing.
    let e = simctl(&[
        "merge",
        dir.join("shard1").to_str().unwrap(),
        "--out",
        dir.join("m1").to_str().unwrap(),
    ]);
    assert_ne!(e.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&e.stderr).contains("2/2 is missing"));
}

/// The cheap finding the ensemble test runs.
const ENSEMBLE_FINDING: &str = "1";

/// A `--set` that names a section some findings' scenarios do not have
/// (`androbench.*` on the seed micro-benchmarks) applies to the findings
/// whose scenarios have it and is left out of the others, said once on
/// stderr and on the page; one that reaches no selected finding, or that
/// no section knows, is unusable input (exit 2).
#[test]
fn a_set_naming_a_section_a_findings_scenario_lacks_is_left_out_of_that_finding() {
    let dir = scratch("reproduce_set_reach");
    let out = dir.join("both");
    let o = reproduce(&[
        "1",
        "8",
        "--phone",
        "generic",
        "--seeds",
        "1",
        "--set",
        "androbench.repetitions=1",
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{err}");
    let notes: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("--set androbench.repetitions=1"))
        .collect();
    assert_eq!(notes.len(), 1, "said once: {err}");
    assert!(
        notes[0].starts_with("note: --set androbench.repetitions=1 not applied to finding-1 ")
            && notes[0].contains("no [androbench] section")
            && notes[0].ends_with("applied to finding-8"),
        "{}",
        notes[0]
    );
    let text = stdout(&o);
    verdict(&text, 1, "generic");
    verdict(&text, 8, "generic");
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        html.contains("--set androbench.repetitions=1 not applied to finding-1"),
        "on the page"
    );
    for (args, want) in [
        (
            vec!["1", "--set", "androbench.repetitions=1"],
            "--set androbench.repetitions=1: no selected finding's scenario has what it sets (no [androbench] section)",
        ),
        (vec!["1", "--set", "bogus.x=1"], "--set `bogus.x`: unknown key"),
        (vec!["8", "--set", "androbench.bogus=1"], "bogus"),
    ] {
        let bad = dir.join("bad");
        let mut a = args.clone();
        a.extend(["--phone", "generic", "--seeds", "1", "--out", bad.to_str().unwrap()]);
        let o = reproduce(&a);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}
