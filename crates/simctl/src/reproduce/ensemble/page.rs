//! The ensemble's report page (`index.html`): per phone a section with
//! the fraction of configurations in which each finding passes and the
//! consistent region, and the Moto G protocol's table when it ran.

use super::motog::{self, Protocol};
use super::summary::{fraction, region_sentence, PhoneSummary};
use super::table::Manifest;
use crate::reproduce::verdict::num;
use std::fmt::Write;

/// Escapes text for HTML.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// One phone's section.
fn phone(h: &mut String, m: &Manifest, s: &PhoneSummary) {
    let keys = m.phones.iter().find(|p| p.name == s.phone);
    let _ = write!(
        h,
        "<section><h2>{} — {} configurations</h2><table><tr><th>finding</th><th>configurations in which it passes</th></tr>",
        esc(&s.phone),
        s.configurations
    );
    for (f, pass, of) in &s.fractions {
        let _ = write!(
            h,
            "<tr><td>finding-{f}</td><td>{}</td></tr>",
            fraction(*pass, *of)
        );
    }
    let _ = write!(
        h,
        "</table><p><b>Consistent region:</b> {}.</p>",
        esc(&region_sentence(s))
    );
    h.push_str("<table><tr><th>key</th><th>plausible</th><th>consistent region</th><th>why unknown</th></tr>");
    for (k, spread, region) in &s.region {
        let why = keys
            .and_then(|p| p.keys.iter().find(|x| x.key == *k))
            .map_or("", |x| x.reason.as_str());
        let region = if s.consistent.is_empty() {
            "—"
        } else {
            region.as_str()
        };
        let _ = write!(
            h,
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(k),
            esc(spread),
            esc(region),
            esc(why)
        );
    }
    h.push_str("</table></section>\n");
}

/// The Moto G protocol's section.
fn protocol(h: &mut String, p: &Protocol) {
    h.push_str("<section><h2>Moto G protocol: fitted members and SQLite predictions</h2><ul>");
    for l in motog::lines(p) {
        let _ = write!(h, "<li>{}</li>", esc(l.trim()));
    }
    h.push_str("</ul></section>\n");
}

/// The page.
pub fn render(m: &Manifest, summaries: &[PhoneSummary], moto: Option<&Protocol>) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>mmcsim: ensemble of unknown internals</title><style>{}</style></head><body>\n<h1>Findings over the plausible configurations</h1>\
         <p>Each phone's <code>[uncertain]</code> internals sampled at {} points of a seeded Latin hypercube (alternatives stratified); every finding run in every configuration at its verdict's clock with {} seed{} each. A configuration counts as passing a finding when all of its checks are on the paper's side{}.</p>\n",
        crate::reproduce::page::STYLE,
        m.ensemble,
        m.seeds,
        if m.seeds == 1 { "" } else { "s" },
        if m.seeds == 1 {
            " (one seed: the value's side, no interval)"
        } else {
            " (the 95 % interval over the seeds)"
        }
    );
    if let Some(s) = &m.shard {
        let _ = write!(
            h,
            "<p><b>Shard {s} only</b>: combine the shards with <code>simctl merge</code>.</p>"
        );
    }
    for s in summaries {
        phone(&mut h, m, s);
    }
    if let Some(p) = moto {
        protocol(&mut h, p);
    }
    let _ = write!(
        h,
        "<p>Tolerance of the Moto G protocol: ±{} %.</p>",
        num(motog::TOLERANCE * 100.0)
    );
    h.push_str("</body></html>\n");
    h
}
