//! The report page: one self-contained HTML file (figures as inline SVG,
//! no script, nothing fetched) with each finding's claim, source, figure,
//! published-vs-simulated table and the runs behind it.

use super::profile::Profile;
use super::{NotRun, Section};
use std::fmt::Write;

/// Everything the page shows.
pub struct Page<'a> {
    /// mmcsim version of the runs.
    pub version: String,
    /// The command that regenerates the page.
    pub command: String,
    /// The profiles.
    pub profiles: &'a [Profile],
    /// One per finding.
    pub sections: &'a [Section],
    /// Findings not run, and why.
    pub not_run: &'a [NotRun],
}

/// Escapes text for HTML.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const STYLE: &str = "body{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}\
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #bbb;padding:.25em .6em;text-align:left}\
th{background:#eee}.pass{color:#0a6a0a;font-weight:bold}.fail{color:#b00;font-weight:bold}\
figure{margin:1em 0;overflow-x:auto}figure svg{max-width:100%;height:auto}code{background:#f4f4f4}\
section{border-top:2px solid #ccc;margin-top:2em}";

/// The page's HTML.
pub fn render(p: &Page) -> String {
    let mut h = String::new();
    let passed = p.sections.iter().filter(|s| s.pass).count();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>mmcsim: reproduced findings</title><style>{STYLE}</style></head><body>\n\
         <h1>mmcsim: reproduced findings</h1>\n\
         <p>{passed} of {} findings pass. mmcsim {}; command: <code>{}</code></p>\n",
        p.sections.len(),
        esc(&p.version),
        esc(&p.command)
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
        let _ = writeln!(h, "<li><b>{}</b>: {}</li>", esc(&pr.name), esc(&what));
    }
    h.push_str("</ul>\n<h2>Verdicts</h2>\n<ul>\n");
    for s in p.sections {
        let _ = writeln!(
            h,
            "<li><a href=\"#finding-{}\">finding-{}</a> {}: {}</li>",
            s.number,
            s.number,
            badge(s.pass),
            esc(s.title)
        );
    }
    for n in p.not_run {
        let _ = writeln!(
            h,
            "<li>finding-{} not run: {}: {}</li>",
            n.number,
            esc(n.title),
            esc(&n.reason)
        );
    }
    h.push_str("</ul>\n");
    for s in p.sections {
        section(&mut h, s);
    }
    h.push_str("</body></html>\n");
    h
}

fn badge(pass: bool) -> &'static str {
    if pass {
        "<span class=\"pass\">PASS</span>"
    } else {
        "<span class=\"fail\">FAIL</span>"
    }
}

fn section(h: &mut String, s: &Section) {
    let _ = write!(
        h,
        "<section id=\"finding-{n}\">\n<h2>Finding {n}: {title} {badge}</h2>\n\
         <p><b>Source:</b> {source}</p>\n<p><b>Claim:</b> {claim}</p>\n\
         <p><b>Measured at the paper's boundary:</b> {boundary}</p>\n\
         <p><b>Measured:</b> {measured}</p>\n\
         <figure id=\"figure-{n}\">\n{svg}\n<figcaption>finding-{n}.png, finding-{n}.svg; \
         data: <a href=\"finding-{n}.csv\">finding-{n}.csv</a></figcaption></figure>\n",
        n = s.number,
        title = esc(s.title),
        badge = badge(s.pass),
        source = esc(s.source),
        claim = esc(s.claim),
        boundary = esc(s.boundary.describe()),
        measured = esc(&s.measured),
        svg = strip_prolog(&s.svg),
    );
    if let Some(note) = s.note {
        let _ = writeln!(h, "<p><b>How to read it:</b> {}</p>", esc(note));
    }
    for o in &s.omitted {
        let _ = writeln!(h, "<p><i>{}</i></p>", esc(o));
    }
    h.push_str(
        "<table><tr><th>profile</th><th>quantity</th><th>published</th><th>simulated</th></tr>\n",
    );
    for (p, q) in &s.table {
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(p),
            esc(&q.name),
            esc(&q.published),
            esc(&q.simulated)
        );
    }
    h.push_str("</table>\n");
    if let Some(o) = &s.sensitivity {
        sensitivity(h, o);
    }
    h.push_str("<details><summary>Runs and parameters</summary><table><tr><th>profile</th><th>scenario and settings</th><th>device, host, scheduler, seed</th></tr>\n");
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
                    badge(r.pass),
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
