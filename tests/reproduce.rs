//! `simctl reproduce`: every finding's verdict, figure, data and report
//! page from a real run on every bundled profile; verdicts that follow the
//! mechanism (breaking it turns PASS into FAIL); the sensitivity probes of
//! findings 2-4 beside them; outputs identical for any number of workers;
//! unusable input exits 2; the page renders in headless Chromium.
//!
//! The runs are the full-size scenarios on the test build (the simulator
//! is optimised even there): a few minutes of CPU for the whole file.

mod common;
use common::*;
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

/// The verdict line of finding `n`.
fn verdict(out: &str, n: u32) -> String {
    let tag = format!(" finding-{n}: ");
    out.lines()
        .find(|l| l.contains(&tag))
        .unwrap_or_else(|| panic!("no verdict for finding-{n} in:\n{out}"))
        .to_string()
}

fn full_run() -> &'static (Output, PathBuf) {
    static RUN: std::sync::OnceLock<(Output, PathBuf)> = std::sync::OnceLock::new();
    RUN.get_or_init(|| {
        let dir = scratch("reproduce_all");
        let o = reproduce(&["--out", dir.to_str().unwrap()]);
        (o, dir)
    })
}

#[test]
fn every_finding_writes_a_verdict_a_figure_and_its_data_and_the_page_links_them() {
    let (o, dir) = full_run();
    let out = stdout(o);
    assert_eq!(
        o.status.code(),
        Some(1),
        "finding 6 fails on the honest model, so the exit code is 1:\n{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // Findings 1 and 5 hold on every bundled profile. Findings 3 and 4
    // (deadline ahead with 16 readers; ascending addresses served faster)
    // rest on the map cache being smaller than the 128 MiB working set:
    // with the sourced profiles (36 entries and more) it is not, and the
    // verdicts say so with their numbers rather than passing.
    for n in [1, 5] {
        let v = verdict(&out, n);
        assert!(v.starts_with(&format!("PASS finding-{n}: ")), "{v}");
        assert!(v.contains(" — "), "claim and numbers: {v}");
    }
    // Finding 2 (sorted strided reads beat shuffled) comes from the map
    // cache's locality: it holds on the page-mapped profiles and not on
    // the hybrid-FTL phones, whose block map sits in SRAM.
    let v2 = verdict(&out, 2);
    assert!(v2.starts_with("FAIL finding-2: "), "{v2}");
    let segment = |profile: &str| {
        let from = v2
            .find(&format!("{profile}: "))
            .unwrap_or_else(|| panic!("{profile} in {v2}"));
        v2[from..].split("; ").next().unwrap().to_string()
    };
    for page_mapped in ["generic", "motog-2013"] {
        assert!(!segment(page_mapped).contains("[fails]"), "{v2}");
    }
    for hybrid in ["nexus-s", "nexus7-2012", "galaxy-s2"] {
        assert!(segment(hybrid).contains("1.00× as long [fails]"), "{v2}");
    }
    for n in [3, 4, 8] {
        let v = verdict(&out, n);
        assert!(
            v.starts_with(&format!("PASS finding-{n}: "))
                || v.starts_with(&format!("FAIL finding-{n}: ")),
            "{v}"
        );
        assert!(
            v.contains(" — ") && v.contains("generic:"),
            "numbers per profile: {v}"
        );
    }
    // The Galaxy S II bands are missed (host share ≈ 44 % at 16 KiB): the
    // verdict says so with the numbers.
    let v6 = verdict(&out, 6);
    assert!(
        v6.starts_with("FAIL finding-6: host software is ≥ 80 %"),
        "{v6}"
    );
    assert!(v6.contains("16 KiB") && v6.contains("MISSED"), "{v6}");
    // Verdicts carry measured numbers, not just the claim.
    assert!(verdict(&out, 1).contains("IOPS") && verdict(&out, 1).contains('×'));
    assert!(verdict(&out, 5).contains("Jain deadline 0.9"));

    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    for n in [1, 2, 3, 4, 5, 6, 8] {
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
            lines.next().unwrap().starts_with("profile,"),
            "finding-{n}.csv"
        );
        assert!(
            lines.any(|l| l.starts_with("generic,")),
            "finding-{n}.csv has no row of the generic profile"
        );
        assert!(
            html.contains(&format!("id=\"figure-{n}\"")),
            "figure {n} on the page"
        );
    }
    // Finding 7 is about the Moto G: it ran there and nowhere else.
    let v7 = verdict(&out, 7);
    assert!(v7.contains("sequential read") && v7.contains(" — "), "{v7}");
    assert!(!v7.contains("generic:"), "{v7}");
    let f7 = std::fs::read_to_string(dir.join("finding-7.csv")).unwrap();
    assert_eq!(
        f7.lines().filter(|l| l.starts_with("motog-2013,")).count(),
        63
    );
    assert!(
        f7.lines().skip(1).all(|l| l.starts_with("motog-2013,")),
        "{f7}"
    );
    assert!(html.contains("id=\"figure-7\""));
    // Findings 2-4 probe their mechanism beside the verdict: the generic
    // profile rerun with the mapping cache at each size of the sourced
    // 8-64 range. Deadline's ascending batches (3) and the direction effect
    // (4) appear exactly while the 128 MiB region's 32 map pages do not fit;
    // the 1 GiB file of finding 2 never fits, so sorted wins throughout.
    let probe = |n: u32| -> Vec<(String, String)> {
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("  sensitivity of finding {n} ")))
            .unwrap_or_else(|| panic!("no sensitivity line for finding {n}:\n{out}"));
        assert!(
            line.contains("(not in the verdict), generic profile"),
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
    // Finding 3's data has one row per scheduler.
    let f3 = std::fs::read_to_string(dir.join("finding-3.csv")).unwrap();
    assert_eq!(
        f3.lines().filter(|l| l.starts_with("generic,")).count(),
        13,
        "{f3}"
    );
    // The page: self-contained (no script, no remote resource), with the
    // version, the command and the published numbers beside simulated ones.
    assert!(!html.contains("<script"));
    assert!(!html.contains("src=\"http"));
    assert!(html.contains("mmcsim 0."), "version on the page");
    assert!(
        html.contains("simctl reproduce --out"),
        "command line on the page"
    );
    assert!(
        html.contains("&gt; 90 % (band ≥ 80 %)"),
        "published band of finding 6"
    );
    assert!(
        html.contains("rand16-128m.toml scheduler.name=deadline"),
        "runs listed"
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
    let o = reproduce(&["6", "--phone", "galaxy-s2", "--out", dir.to_str().unwrap()]);
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
        let f: Vec<f64> = l.split(',').skip(1).map(|v| v.parse().unwrap()).collect();
        let v = |name: &str| f[col(name) - 1];
        let total: f64 = layers.iter().map(|k| v(k)).sum();
        assert!(
            v("device_busy_poll_us") > 0.0,
            "O_SYNC writes are polled: {l}"
        );
        let share = 1.0 - v("device_data_cmd_us") / total;
        assert!(
            (v("host_share") - share).abs() < 1e-9,
            "host share counts the busy polling as host time: {l}"
        );
        rows += 1;
    }
    assert_eq!(rows, 6, "five sizes and the hog run");
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
    }
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

#[test]
fn breaking_read_ahead_and_the_device_read_buffer_fails_finding_1() {
    let dir = scratch("reproduce_broken");
    let o = reproduce(&[
        "1",
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
    let v = verdict(&out, 1);
    assert!(v.starts_with("FAIL finding-1: "), "{v}");
    // Only the selected finding ran.
    assert!(!out.contains("finding-2"), "{out}");
    assert!(dir.join("finding-1.png").is_file() && !dir.join("finding-2.png").exists());
}

/// The probe needs the generic profile and a free hand over its setting;
/// without either it says why it did not run, and the verdict is as always.
#[test]
fn a_sensitivity_probe_that_cannot_run_says_why() {
    let dir = scratch("reproduce_probe_skipped");
    let o = reproduce(&["2", "--phone", "motog-2013", "--out", dir.to_str().unwrap()]);
    let out = stdout(&o);
    assert!(verdict(&out, 2).starts_with("PASS finding-2: "), "{out}");
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
    // consulted, sorted and shuffled take the same time at every size, and
    // the probe says the setting does not reach the mechanism.
    let dir = scratch("reproduce_probe_inert");
    let o = reproduce(&[
        "2",
        "--phone",
        "generic",
        "--set",
        "device.ftl.mapping=hybrid",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let out = stdout(&o);
    assert!(verdict(&out, 2).contains("1.00× as long"), "{out}");
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
        "finding-4.csv",
        "finding-4.svg",
        "finding-4-sensitivity.csv",
        "index.html",
    ];
    let mut seen: Vec<Vec<Vec<u8>>> = Vec::new();
    for jobs in ["1", "2"] {
        let dir = scratch(&format!("reproduce_jobs{jobs}"));
        // The same --out text in both runs: the page shows the command.
        let o = Command::new(env!("CARGO_BIN_EXE_simctl"))
            .args(["reproduce", "finding-2", "4", "--jobs", jobs, "--out", "."])
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
        seen.push(
            files
                .iter()
                .map(|f| std::fs::read(dir.join(f)).unwrap())
                .collect(),
        );
    }
    for (i, f) in files.iter().enumerate() {
        assert!(
            seen[0][i] == seen[1][i],
            "{f} differs between --jobs 1 and 2"
        );
    }
}

#[test]
fn unusable_input_exits_2_and_says_what_is_wrong() {
    let dir = scratch("reproduce_bad");
    let d = dir.to_str().unwrap();
    let cases: [(&[&str], &str); 4] = [
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
            "name = \"cmdq-phone\"\ndescription = \"test phone\"\ndevice = \"{}\"\nhost = \"{}\"\nandroid_version = \"4.4\"\nkernel = \"Linux 3.4\"\n[scheduler]\nname = \"mq-deadline\"\n",
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
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    let out = stdout(&o);
    assert!(
        o.status.code() == Some(0) || o.status.code() == Some(1),
        "{out}"
    );
    let v = verdict(&out, 1);
    assert!(
        v.contains("cmdq-phone: sequential") && v.contains("; generic: sequential"),
        "{v}"
    );
    let csv = std::fs::read_to_string(out_dir.join("finding-1.csv")).unwrap();
    assert_eq!(
        csv.lines().filter(|l| l.starts_with("cmdq-phone,")).count(),
        2,
        "{csv}"
    );
    let html = std::fs::read_to_string(out_dir.join("index.html")).unwrap();
    assert!(
        html.contains("generic-emmc51-cmdq"),
        "the phone's device on the page"
    );
}

/// Runs finding 7 with the suite once per scheduler (the app averages
/// three runs) and any extra `--set`; returns the output, the CSV rows
/// (after the header) and the page.
fn finding_7(name: &str, sets: &[&str]) -> (Output, Vec<Vec<String>>, String) {
    let dir = scratch(name);
    let mut args = vec!["7", "--set", "androbench.repetitions=1"];
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

/// The simulated value of `metric` under `scheduler` in finding 7's rows.
fn simulated(rows: &[Vec<String>], scheduler: &str, metric: &str) -> f64 {
    rows.iter()
        .find(|r| r[1] == scheduler && r[2] == metric)
        .unwrap_or_else(|| panic!("no row {scheduler} {metric}"))[4]
        .parse()
        .unwrap()
}

#[test]
fn finding_7_sets_the_moto_g_androbench_table_beside_the_measured_bands() {
    let (o, rows, html) = finding_7("reproduce_f7", &[]);
    let out = stdout(&o);
    let v = verdict(&out, 7);
    // The verdict is computed: PASS exactly when every metric is inside its
    // band with a spread no wider than the band's (exit code agrees).
    let missed = v.contains("(MISSED)") || v.contains("(WIDER)");
    assert_eq!(v.starts_with("PASS finding-7: "), !missed, "{v}");
    assert_eq!(o.status.code(), Some(if missed { 1 } else { 0 }), "{out}");
    assert!(
        v.contains("every scheduler's AndroBench 3.4 result lies inside"),
        "{v}"
    );
    for part in [
        "sequential read ",
        "MB/s: ",
        "/9 in 53–63 MB/s",
        ", spread ",
        "random read ",
        "/9 in 1320–1383 IOPS",
        "SQLite delete ",
        "/9 in 35–43 TPS",
        "% measured",
    ] {
        assert!(v.contains(part), "`{part}` in {v}");
    }
    // Only the Moto G ran (it is the phone measured), under the nine
    // schedulers, seven metrics each.
    assert_eq!(rows.len(), 63);
    assert!(rows.iter().all(|r| r[0] == "motog-2013"));
    let schedulers = [
        "fiops", "noop", "bfq", "cfq", "deadline", "zen", "vr", "row", "sio",
    ];
    for s in schedulers {
        assert_eq!(rows.iter().filter(|r| r[1] == s).count(), 7, "{s}");
    }
    // Each row: the band, inside/outside as the value says, and the delta
    // against the median of the nine.
    for r in &rows {
        let (v, lo, hi): (f64, f64, f64) = (
            r[4].parse().unwrap(),
            r[5].parse().unwrap(),
            r[6].parse().unwrap(),
        );
        assert_eq!(r[7] == "true", (lo..=hi).contains(&v), "{r:?}");
        let mut same: Vec<f64> = rows
            .iter()
            .filter(|x| x[2] == r[2])
            .map(|x| x[4].parse().unwrap())
            .collect();
        same.sort_by(f64::total_cmp);
        let delta: f64 = r[8].parse().unwrap();
        assert!((delta - (v / same[4] - 1.0) * 100.0).abs() < 1e-9, "{r:?}");
    }
    let seq_write = rows.iter().find(|r| r[2] == "seq_write_mb_s").unwrap();
    assert_eq!((seq_write[5].as_str(), seq_write[6].as_str()), ("12", "16"));
    // The page: the band beside each scheduler's value, and how to read
    // the chart (the per-scheduler measurements are not known).
    assert!(html.contains("id=\"figure-7\""));
    assert!(html.contains("sequential write (MB/s), cfq</td><td>12–16 MB/s</td>"));
    assert!(
        html.contains("How to read it:")
            && html.contains("per-scheduler values are not in this tree")
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
