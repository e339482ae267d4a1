//! `simctl schema`: the JSON Schema of the report, generated from the
//! report's own types (`schemars`), and the reference table of every key
//! path in it that the book's "Report keys" chapter is (`--markdown`).

use serde_json::Value;
use std::fmt::Write as _;

/// The JSON Schema (draft 2020-12) of `run`/`replay --json`.
pub fn report_schema() -> Value {
    serde_json::to_value(schemars::schema_for!(mmcsim::sim::Report)).expect("a schema is JSON")
}

/// One key of the report: its dotted path (`[]` for an array's items, `*`
/// for a map's keys), JSON type and description.
#[derive(Clone, Debug, PartialEq)]
pub struct Key {
    /// Dotted path, e.g. `device.gc.pause_us.p50`.
    pub path: String,
    /// JSON type(s), e.g. `number`, `string or null`.
    pub kind: String,
    /// The field's doc comment, first paragraph, on one line.
    pub about: String,
}

/// Every key path of `schema`, depth first in the schema's order.
pub fn keys(schema: &Value) -> Vec<Key> {
    let defs = schema.get("$defs").cloned().unwrap_or(Value::Null);
    let mut out = Vec::new();
    walk(schema, &defs, "", &mut out, 0);
    out
}

/// Follows a `$ref` into `$defs`.
fn resolve<'a>(s: &'a Value, defs: &'a Value) -> &'a Value {
    match s.get("$ref").and_then(Value::as_str) {
        Some(r) => r
            .strip_prefix("#/$defs/")
            .and_then(|n| defs.get(n))
            .map_or(s, |d| resolve(d, defs)),
        None => s,
    }
}

/// The alternatives of a schema (`anyOf`/`oneOf`), or itself.
fn alternatives<'a>(s: &'a Value, defs: &'a Value) -> Vec<&'a Value> {
    let s = resolve(s, defs);
    for k in ["anyOf", "oneOf"] {
        if let Some(a) = s.get(k).and_then(Value::as_array) {
            return a.iter().flat_map(|x| alternatives(x, defs)).collect();
        }
    }
    vec![s]
}

fn kind(s: &Value, defs: &Value) -> String {
    let mut kinds: Vec<String> = Vec::new();
    for a in alternatives(s, defs) {
        let k = match a.get("type") {
            Some(Value::String(t)) => t.clone(),
            Some(Value::Array(ts)) => ts
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" or "),
            _ if a.get("const").is_some() || a.get("enum").is_some() => "string".into(),
            _ => "any".into(),
        };
        let k = k.replace("integer", "number");
        for part in k.split(" or ") {
            if !kinds.iter().any(|x| x == part) {
                kinds.push(part.to_string());
            }
        }
    }
    kinds.join(" or ")
}

fn about(s: &Value, defs: &Value) -> String {
    let d = s
        .get("description")
        .or_else(|| resolve(s, defs).get("description"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let first = d.split("\n\n").next().unwrap_or("");
    let flat = first.split_whitespace().collect::<Vec<_>>().join(" ");
    unlink(&flat).replace('|', "\\|")
}

/// `text` with rustdoc's intra-doc links (`` [`CutReport::violates`] ``)
/// as plain code spans: the book has no item to link them to.
fn unlink(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(k) = rest.find("[`") {
        let after = &rest[k + 1..];
        match after.find("`]") {
            Some(end) if !after[end + 2..].starts_with('(') => {
                out.push_str(&rest[..k]);
                out.push_str(&after[..end + 1]);
                rest = &after[end + 2..];
            }
            _ => {
                out.push_str(&rest[..k + 2]);
                rest = &rest[k + 2..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn walk(s: &Value, defs: &Value, path: &str, out: &mut Vec<Key>, depth: usize) {
    // Recursive types would loop; the report has none deeper than this.
    if depth > 24 {
        return;
    }
    for alt in alternatives(s, defs) {
        if let Some(all) = alt.get("allOf").and_then(Value::as_array) {
            for part in all {
                walk(part, defs, path, out, depth + 1);
            }
        }
        if let Some(props) = alt.get("properties").and_then(Value::as_object) {
            for (name, p) in props {
                let here = if path.is_empty() {
                    name.clone()
                } else {
                    format!("{path}.{name}")
                };
                if !out.iter().any(|k| k.path == here) {
                    out.push(Key {
                        path: here.clone(),
                        kind: kind(p, defs),
                        about: about(p, defs),
                    });
                }
                walk(p, defs, &here, out, depth + 1);
            }
        }
        if let Some(items) = alt.get("items") {
            walk(items, defs, &format!("{path}[]"), out, depth + 1);
        }
        if let Some(m) = alt.get("additionalProperties").filter(|m| m.is_object()) {
            let here = format!("{path}.*");
            if !out.iter().any(|k| k.path == here) {
                out.push(Key {
                    path: here.clone(),
                    kind: kind(m, defs),
                    about: "(any name)".into(),
                });
            }
            walk(m, defs, &here, out, depth + 1);
        }
    }
}

/// The book's "Report keys" chapter: every key of the report's schema.
pub fn markdown(schema: &Value) -> String {
    let mut s = String::from(
        "# Report keys\n\n\
         Every key of the report (`run`/`replay --json`, schema \
         `mmcsim-report/2`), generated from the report's types by `simctl \
         schema --markdown` (the same types `simctl schema` prints as a JSON \
         Schema); `crates/simctl/tests/it/docs.rs` keeps this page equal to what the binary \
         generates. `[]` stands for an array's items, `*` for a map's keys. \
         Keys whose value is absent from a run (an optional section) are \
         listed all the same.\n\n\
         | key | type | meaning |\n|---|---|---|\n",
    );
    for k in keys(schema) {
        let _ = writeln!(s, "| `{}` | {} | {} |", k.path, k.kind, k.about);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::unlink;

    #[test]
    fn intra_doc_links_become_code_spans_and_markdown_links_stay() {
        assert_eq!(
            unlink("Cuts that broke a promise ([`CutReport::violates`]): lost."),
            "Cuts that broke a promise (`CutReport::violates`): lost."
        );
        assert_eq!(unlink("see [`a`] and [`b`]"), "see `a` and `b`");
        assert_eq!(unlink("[`x`](http://e)"), "[`x`](http://e)");
        assert_eq!(unlink("a [` b"), "a [` b");
    }
}
