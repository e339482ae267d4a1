//! Reading a job file: sections, `key=value` lines, inheritance from
//! `[global]`, and the job order (stonewall).

use super::job::Options;
use super::keys::check_key;
use super::option_error::LineProblem;
use super::section::{Opt, Section};
use super::FioWorkload;
use crate::error::{Error, Result};

/// Parses the job file `text` (`source` names it in errors: `source:LINE:
/// ...`) into files and jobs; the scenario name is `name`.
pub fn parse(text: &str, source: &str, name: &str) -> Result<FioWorkload> {
    let sections = sections(text, source)?;
    jobs(&sections, source, name)
}

/// A located error of the job file `source`.
fn located(source: &str, line: usize, problem: LineProblem) -> Error {
    Error::FioLine {
        origin: source.to_string(),
        line,
        problem: Box::new(problem),
    }
}

/// The job sections of `text`, each with the `[global]` options above it
/// and its own, in file order.
fn sections(text: &str, source: &str) -> Result<Vec<Section>> {
    let err = |line: usize, problem: LineProblem| located(source, line, problem);
    let mut global: Vec<Opt> = Vec::new();
    let mut in_global = false;
    let mut sections: Vec<Section> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let l = raw.trim();
        if l.is_empty() || l.starts_with(';') || l.starts_with('#') {
            continue;
        }
        if let Some(rest) = l.strip_prefix('[') {
            let Some(head) = rest.strip_suffix(']').map(str::trim) else {
                return Err(err(
                    line,
                    LineProblem::SectionHeader {
                        text: l.to_string(),
                    },
                ));
            };
            if head.is_empty() || head.contains(['[', ']']) {
                return Err(err(
                    line,
                    LineProblem::SectionName {
                        text: l.to_string(),
                    },
                ));
            }
            in_global = head == "global";
            if !in_global {
                sections.push(Section {
                    name: head.to_string(),
                    line,
                    opts: global.clone(),
                });
            }
            continue;
        }
        let (key, value) = match l.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim().to_string())),
            None => (l, None),
        };
        if key.is_empty() || key.contains(char::is_whitespace) {
            return Err(err(
                line,
                LineProblem::NotKeyValue {
                    text: l.to_string(),
                },
            ));
        }
        check_key(key).map_err(|m| err(line, LineProblem::Key(m)))?;
        let opt = Opt {
            key: key.to_string(),
            value,
            line,
        };
        match (in_global, sections.last_mut()) {
            (true, _) => global.push(opt),
            (false, Some(s)) => s.opts.push(opt),
            (false, None) => {
                return Err(err(
                    line,
                    LineProblem::KeyBeforeSection {
                        key: key.to_string(),
                    },
                ))
            }
        }
    }
    if sections.is_empty() {
        return Err(Error::NoJobSection {
            origin: source.to_string(),
        });
    }
    Ok(sections)
}

/// The files and jobs of `sections` in order: one run seed, reporting
/// groups, and each job's start after a stonewall.
fn jobs(sections: &[Section], source: &str, name: &str) -> Result<FioWorkload> {
    let err = |line: usize, problem: LineProblem| located(source, line, problem);
    let mut w = FioWorkload {
        name: name.to_string(),
        seed: None,
        files: Vec::new(),
        jobs: Vec::new(),
        report: Vec::new(),
    };
    let mut group = 0u32;
    let mut seed_line = 0;
    // End of the latest time-based job so far (for stonewall), ms; None
    // once a job's end is known only at run time.
    let mut known_end: Option<f64> = Some(0.0);
    for s in sections {
        let o = Options::read(s, source)?;
        if let Some((seed, line)) = o.randseed {
            match w.seed {
                Some(prev) if prev != seed => {
                    return Err(err(
                        line,
                        LineProblem::SeedTwice {
                            seed,
                            previous: prev,
                            previous_line: seed_line,
                        },
                    ))
                }
                _ => {
                    w.seed = Some(seed);
                    seed_line = line;
                }
            }
        }
        if (o.stonewall.is_some() || o.more.new_group) && !w.jobs.is_empty() {
            group += 1;
        }
        let start_ms = o.more.startdelay_ms
            + match (o.stonewall, known_end) {
                (None, _) => 0.0,
                (Some(_), Some(end)) => end,
                (Some(line), None) => return Err(err(line, LineProblem::StonewallAfterIo)),
            };
        let end = o
            .time_based
            .then(|| start_ms + o.ramp_ms + o.runtime_ms.unwrap_or(0.0));
        known_end = match (known_end, end) {
            (Some(k), Some(e)) => Some(k.max(e)),
            _ => None,
        };
        o.translate(s, start_ms, group, &mut w, source)?;
    }
    Ok(w)
}
