//! The report page: one self-contained HTML file (figures as inline SVG,
//! no script, nothing fetched) with each finding's claim, source, figure,
//! published-vs-simulated table and the runs behind it.

use super::aggregate::{interval_text, Verdict};
use super::finding::Label;
use super::profile::Profile;
use super::verdict::num;
use super::{NotRun, Outcome, Section};
use std::fmt::Write;

/// Everything the page shows.
pub struct Page<'a> {
    /// mmcsim version of the runs.
    pub version: String,
    /// The command that regenerates the page.
    pub command: String,
    /// Seeds per comparison.
    pub seeds: u32,
    /// The profiles.
    pub profiles: &'a [Profile],
    /// One per finding.
    pub sections: &'a [Section],
    /// Findings not run, and why.
    pub not_run: &'a [NotRun],
    /// The user's `--set` pairs left out of some findings' runs.
    pub set_notes: &'a [String],
}

/// Escapes text for HTML.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

pub(super) const STYLE: &str = "body{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}\
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #bbb;padding:.25em .6em;text-align:left}\
th{background:#eee}.pass{color:#0a6a0a;font-weight:bold}.fail{color:#b00;font-weight:bold}\
.unresolved{color:#a60;font-weight:bold}\
figure{margin:1em 0;overflow-x:auto}figure svg{max-width:100%;height:auto}code{background:#f4f4f4}\
section{border-top:2px solid #ccc;margin-top:2em}";

/// The page's HTML.
pub fn render(p: &Page) -> String {
    let mut h = String::new();
    let all: Vec<&Verdict> = p.sections.iter().flat_map(|s| &s.verdicts).collect();
    let summary = super::prediction_summary(p.sections);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>mmcsim: reproduced findings</title><style>{STYLE}</style></head><body>\n\
         <h1>mmcsim: reproduced findings</h1>\n\
         <p><b>{}</b>. mmcsim {}; command: <code>{}</code></p>\n{}\
         <p><b>How the verdicts are judged:</b> every comparison runs with seeds 1 to {seeds}; \
         each judged quantity is given as its mean over the seeds and a 95 % confidence interval \
         from Student's t distribution over the per-seed values (n − 1 = {df} degrees of freedom). \
         PASS: the whole interval lies on the paper's side of the claim's threshold; FAIL: it lies \
         entirely on the other side; UNRESOLVED: it straddles the threshold (the effect is inside \
         the seed noise){one}. A finding with several quantities takes the worst of them. \
         <i>fitted</i>: the phone's <code>[fit] targets</code> (in its file or its device or host \
         profile, written by <code>simctl calibrate</code>) name the finding or the measurement the \
         verdict compares against, so agreement shows the fit and is not counted as a reproduction; \
         <i>predicted</i>: nothing was fitted to it. Findings 1-5 also run with the CPU \
         clock pinned (host.governor=performance) and are judged there; the result with the \
         profile's own governor is shown beside it as the governor's contribution.</p>\n",
        esc(&summary),
        esc(&p.version),
        esc(&p.command),
        fitted_list(&all),
        seeds = p.seeds,
        df = p.seeds.saturating_sub(1),
        one = if p.seeds < 2 {
            "; with one seed there is no interval, so nothing resolves"
        } else {
            ""
        },
    );
    h.push_str("<h2>Profiles</h2>\n<ul>\n");
    for pr in p.profiles {
        let what = match &pr.source {
            Some(f) => format!(
                "phone file {}; the seed micro-benchmarks (findings 1-5) on its benchmark file system: {}",
                f.display(),
                pr.benchmark_fs_name()
            ),
            None => "each scenario as written (generic eMMC profile, the scenario's host)".into(),
        };
        let what = if pr.fit_targets.is_empty() {
            format!("{what}; fitted to nothing (no [fit] targets): every verdict a prediction")
        } else {
            format!(
                "{what}; fitted to (its [fit] targets): {}",
                pr.fit_targets.join(", ")
            )
        };
        let _ = writeln!(h, "<li><b>{}</b>: {}</li>", esc(&pr.name), esc(&what));
    }
    h.push_str("</ul>\n<h2>Verdicts</h2>\n");
    verdict_table(&mut h, p.sections);
    let listed = !p.not_run.is_empty() || !p.set_notes.is_empty();
    if listed {
        h.push_str("<ul>\n");
    }
    for n in p.not_run {
        let on = n
            .profile
            .as_ref()
            .map(|p| format!(" on {p}"))
            .unwrap_or_default();
        let _ = writeln!(
            h,
            "<li>finding-{} not run{}: {}: {}</li>",
            n.number,
            esc(&on),
            esc(n.title),
            esc(&n.reason)
        );
    }
    for note in p.set_notes {
        let _ = writeln!(h, "<li>{}</li>", esc(note));
    }
    if listed {
        h.push_str("</ul>\n");
    }
    for s in p.sections {
        section(&mut h, s);
    }
    h.push_str("</body></html>\n");
    h
}

/// The fitted verdicts, listed apart from the predictions (empty when
/// there are none).
fn fitted_list(all: &[&Verdict]) -> String {
    let fitted: Vec<&&Verdict> = all.iter().filter(|v| v.label == Label::Fitted).collect();
    if fitted.is_empty() {
        return "<p>No verdict is fitted: no profile's <code>[fit] targets</code> name a finding or measurement judged here.</p>\n".into();
    }
    let mut h = String::from("<p>Fitted verdicts (the profile was calibrated to what they compare against; not counted as reproductions):</p>\n<ul>\n");
    for v in fitted {
        let _ = writeln!(h, "<li><code>{}</code></li>", esc(&v.line));
    }
    h.push_str("</ul>\n");
    h
}

/// Every verdict in one table: finding, profile, label, the judged
/// quantity's mean and interval, and beside a pinned verdict the free
/// clock's.
fn verdict_table(h: &mut String, sections: &[Section]) {
    h.push_str("<table><tr><th>finding</th><th>profile</th><th>fitted / predicted</th><th>verdict</th><th>judged quantity (decisive)</th><th>mean [95 % interval]</th><th>governor free: mean [95 % interval]</th></tr>\n");
    for s in sections {
        for v in &s.verdicts {
            let free = v
                .free
                .as_ref()
                .map(|f| format!("{} {}", badge(f.outcome), esc(&interval_text(&f.interval))))
                .unwrap_or_else(|| "—".into());
            let _ = writeln!(
                h,
                "<tr><td><a href=\"#finding-{n}\">finding-{n}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{free}</td></tr>",
                esc(&v.profile),
                v.label.name(),
                badge(v.outcome),
                esc(&v.check.claim),
                esc(&interval_text(&v.check.interval)),
                n = s.number,
            );
        }
    }
    h.push_str("</table>\n");
}

fn badge(o: Outcome) -> String {
    let class = match o {
        Outcome::Pass => "pass",
        Outcome::Fail => "fail",
        Outcome::Unresolved => "unresolved",
    };
    format!("<span class=\"{class}\">{o}</span>")
}

/// The worst verdict of a section.
fn worst(s: &Section) -> Outcome {
    s.verdicts
        .iter()
        .map(|v| v.outcome)
        .max()
        .unwrap_or(Outcome::Unresolved)
}

fn section(h: &mut String, s: &Section) {
    let _ = write!(
        h,
        "<section id=\"finding-{n}\">\n<h2>Finding {n}: {title} {badge}</h2>\n\
         <p><b>Source:</b> {source}</p>\n<p><b>Claim:</b> {claim}</p>\n\
         <p><b>Measured at the paper's boundary:</b> {boundary}</p>\n",
        n = s.number,
        title = esc(s.title),
        badge = badge(worst(s)),
        source = esc(s.source),
        claim = esc(s.claim),
        boundary = esc(s.boundary.describe()),
    );
    if let Some(why) = s.pinned {
        let _ = writeln!(
            h,
            "<p><b>Clock:</b> judged with the clock pinned (host.governor=performance); the governor-free result is shown beside it. {}</p>",
            esc(why)
        );
    }
    checks_table(h, s);
    let _ = write!(
        h,
        "<figure id=\"figure-{n}\">\n{svg}\n<figcaption>Error bars on simulated bars: the 95 % interval of the mean over the seeds \
         (Student t); on an amount that cannot be negative (a time, a rate, a throughput) an interval \
         reaching below zero is drawn cut at zero with no lower cap, which keeps its 95 % coverage (the \
         true mean is never below zero, so it lies in the cut interval whenever it lies in the \
         computed one). finding-{n}.png, finding-{n}.svg; \
         data (every seed and clock): <a href=\"finding-{n}.csv\">finding-{n}.csv</a></figcaption></figure>\n",
        n = s.number,
        svg = strip_prolog(&s.svg),
    );
    if let Some(note) = s.note {
        let _ = writeln!(h, "<p><b>How to read it:</b> {}</p>", esc(note));
    }
    for o in &s.omitted {
        let _ = writeln!(h, "<p><i>{}</i></p>", esc(o));
    }
    h.push_str(
        "<table><tr><th>profile</th><th>clock</th><th>quantity</th><th>published</th><th>simulated (per seed where they differ)</th></tr>\n",
    );
    for (p, clocks) in &s.results {
        for c in clocks {
            for q in &c.table {
                let _ = writeln!(
                    h,
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    esc(p),
                    c.clock.key(),
                    esc(&q.name),
                    esc(&q.published),
                    esc(&q.simulated)
                );
            }
        }
    }
    h.push_str("</table>\n");
    if let Some(o) = &s.sensitivity {
        sensitivity(h, o);
    }
    h.push_str("<details><summary>Each seed's numbers</summary><ul>\n");
    for (p, clocks) in &s.results {
        for c in clocks {
            for (i, line) in c.summaries.iter().enumerate() {
                let _ = writeln!(
                    h,
                    "<li>{}, {}, seed {}: {}</li>",
                    esc(p),
                    c.clock.key(),
                    i + 1,
                    esc(line)
                );
            }
        }
    }
    h.push_str("</ul></details>\n");
    h.push_str("<details><summary>Runs and parameters</summary><table><tr><th>profile</th><th>scenario and settings</th><th>device, host, governor, scheduler, seed</th></tr>\n");
    for (p, run, params) in &s.runs {
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td><code>{}</code></td><td>{}</td></tr>",
            esc(p),
            esc(run),
            esc(params)
        );
    }
    h.push_str("</table></details>\n</section>\n");
}

/// Every judged quantity of a finding: per profile and clock, its claim,
/// per-seed values, mean, 95 % interval and outcome.
fn checks_table(h: &mut String, s: &Section) {
    h.push_str("<table><tr><th>profile</th><th>clock</th><th>label</th><th>judged quantity and claim</th><th>per seed</th><th>mean [95 % interval]</th><th>outcome</th></tr>\n");
    for (p, clocks) in &s.results {
        for c in clocks {
            for k in &c.checks {
                let seeds: Vec<String> = k.values.iter().map(|v| num(*v)).collect();
                let _ = writeln!(
                    h,
                    "<tr><td>{}</td><td title=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    esc(p),
                    esc(c.clock.describe()),
                    c.clock.key(),
                    k.label.name(),
                    esc(&k.claim),
                    esc(&seeds.join(", ")),
                    esc(&interval_text(&k.interval)),
                    badge(k.outcome)
                );
            }
        }
    }
    h.push_str("</table>\n");
}

/// The sensitivity probe under a finding's table.
fn sensitivity(h: &mut String, o: &super::sensitivity::Outcome) {
    let _ = writeln!(
        h,
        "<h3>Sensitivity (not in the verdict): <code>{}</code></h3>\n<p>{} Range: {}.</p>",
        esc(o.about.key),
        esc(o.about.mechanism),
        esc(o.about.range)
    );
    match &o.rows {
        Err(why) => {
            let _ = writeln!(h, "<p><i>Not run: {}.</i></p>", esc(why));
        }
        Ok(rows) => {
            let _ = writeln!(
                h,
                "<table><tr><th>profile</th><th>{}</th><th>verdict</th><th>simulated</th></tr>",
                esc(o.about.key)
            );
            for r in rows {
                let _ = writeln!(
                    h,
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    esc(&o.profile),
                    esc(r.value),
                    badge(if r.pass { Outcome::Pass } else { Outcome::Fail }),
                    esc(&r.summary)
                );
            }
            let _ = writeln!(
                h,
                "</table>\n<p>data: <a href=\"finding-{n}-sensitivity.csv\">finding-{n}-sensitivity.csv</a></p>",
                n = o.number
            );
            if o.inert() {
                h.push_str("<p><i>The same at every value: the setting does not reach this device's mechanism.</i></p>\n");
            }
        }
    }
}

/// An SVG document without an XML declaration, for inlining.
fn strip_prolog(svg: &str) -> &str {
    match svg.find("<svg") {
        Some(i) => &svg[i..],
        None => svg,
    }
}
