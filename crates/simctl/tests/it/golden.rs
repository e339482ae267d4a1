//! Golden reports: every bundled scenario and trace, and every scheduler on
//! `rand16-128m`, give byte-identical JSON to the committed reports in
//! `crates/simctl/tests/golden/reports/`. A restructuring must not move a single byte; an
//! intended model change regenerates them deliberately with
//! `MMCSIM_BLESS=1 cargo test -p simctl --test it golden` and says why in the commit.

use crate::common::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// `(name, arguments)` of every line of the manifest.
fn manifest() -> Vec<(String, Vec<String>)> {
    let text =
        std::fs::read_to_string(root().join("crates/simctl/tests/golden/manifest.txt")).unwrap();
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut w = l.split_whitespace().map(str::to_string);
            let name = w.next().unwrap();
            (name, w.collect())
        })
        .collect()
}

/// True (after saying SKIPPED, or failing under CI) when a case replays a
/// file of `../shared/traces` and that folder is not beside the clone.
fn needs_missing_shared(name: &str, args: &[String]) -> bool {
    let Some(file) = args
        .iter()
        .find_map(|a| a.strip_prefix("../shared/traces/"))
    else {
        return false;
    };
    shared_trace(&format!("golden report {name}"), file).is_none()
}

#[test]
fn every_golden_report_is_byte_identical() {
    let cases = manifest();
    assert!(
        cases.len() >= 40,
        "the manifest lists every scenario, trace and scheduler"
    );
    let bless = std::env::var_os("MMCSIM_BLESS").is_some();
    let dir = scratch("golden");
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some((name, args)) = cases.get(i) else {
                    break;
                };
                if needs_missing_shared(name, args) {
                    continue;
                }
                let out = dir.join(format!("{name}.json"));
                let mut a: Vec<&str> = args.iter().map(String::as_str).collect();
                let o = out.to_str().unwrap().to_string();
                a.extend(["--quiet", "--json", &o]);
                let run = simctl(&a);
                if !run.status.success() {
                    failures.lock().unwrap().push(format!(
                        "{name}: simctl failed: {}",
                        String::from_utf8_lossy(&run.stderr)
                    ));
                    continue;
                }
                let got = std::fs::read(&out).unwrap();
                let want_path =
                    root().join(format!("crates/simctl/tests/golden/reports/{name}.json"));
                if bless {
                    std::fs::write(&want_path, &got).unwrap();
                    continue;
                }
                let want = std::fs::read(&want_path).unwrap_or_default();
                if got != want {
                    failures.lock().unwrap().push(format!(
                        "{name}: report differs from {} (new one in {})",
                        want_path.display(),
                        out.display()
                    ));
                }
            });
        }
    });
    let f = failures.into_inner().unwrap();
    assert!(
        f.is_empty(),
        "{} golden report(s) changed:\n{}",
        f.len(),
        f.join("\n")
    );
}
