//! Free parameters of `simctl calibrate`: `--param KEY=LOW:HIGH`, a device
//! or host profile key (the `--set` name, e.g. `device.nand.t_r_us` or
//! `host.syscall_us`) with bounds, searched on a log scale.

use anyhow::{bail, Result};

/// Significant digits a fitted real value keeps: the search evaluates the
/// value it will write, so the record and the profile agree exactly.
const SIGNIFICANT_DIGITS: i32 = 4;

/// Which profile a parameter belongs to (and which output file gets it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProfileKind {
    /// The device profile (`device.<section>.<key>`).
    Device,
    /// The host profile (`host.<key>` or `host.<table>.<key>`).
    Host,
}

impl ProfileKind {
    /// The kind of a `--set` key, from its first part.
    pub fn of(key: &str) -> Option<ProfileKind> {
        if key.starts_with("device.") {
            Some(ProfileKind::Device)
        } else if key.starts_with("host.") {
            Some(ProfileKind::Host)
        } else {
            None
        }
    }

    /// The key's prefix (`device.` or `host.`).
    fn prefix(self) -> &'static str {
        match self {
            ProfileKind::Device => "device.",
            ProfileKind::Host => "host.",
        }
    }

    /// What the profile is called in messages.
    pub fn noun(self) -> &'static str {
        match self {
            ProfileKind::Device => "device profile",
            ProfileKind::Host => "host profile",
        }
    }
}

/// One free parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// The `--set` key, e.g. `device.nand.t_r_us`.
    pub key: String,
    /// The profile it belongs to.
    pub kind: ProfileKind,
    /// Path inside that profile, e.g. `["nand", "t_r_us"]`.
    pub path: Vec<String>,
    /// Lower bound (> 0).
    pub lower: f64,
    /// Upper bound (> lower).
    pub upper: f64,
    /// The profile's value, where the search starts.
    pub start: f64,
    /// The profile holds an integer: fitted values are rounded.
    pub integer: bool,
}

impl Param {
    /// Parses `KEY=LOW:HIGH` and checks it against the profile its key
    /// names: `device` for `device.*` keys, `host` (when a phone gives one)
    /// for `host.*` keys, each with the file name used in errors.
    pub fn parse(
        arg: &str,
        device: (&toml::Table, &str),
        host: Option<(&toml::Table, &str)>,
    ) -> Result<Param> {
        let bad = |m: String| anyhow::anyhow!("--param {arg}: {m}");
        let Some((key, bounds)) = arg.split_once('=') else {
            return Err(bad(
                "expected KEY=LOW:HIGH, e.g. device.nand.t_r_us=40:120".into()
            ));
        };
        let key = key.trim();
        let Some(kind) = ProfileKind::of(key) else {
            return Err(bad(format!(
                "`{key}` is not a profile key: calibrate fits device.<section>.<key> values (written to --out) and, for a phone, host.<key> values (written to --host-out)"
            )));
        };
        let (profile, src) = match (kind, host) {
            (ProfileKind::Device, _) => device,
            (ProfileKind::Host, Some(h)) => h,
            (ProfileKind::Host, None) => {
                return Err(bad(format!(
                    "`{key}` is a host profile key: fitting one needs a phone (configs/phones/*.toml), whose host profile calibrate reads and writes to --host-out"
                )))
            }
        };
        let rest = &key[kind.prefix().len()..];
        let path: Vec<String> = rest.split('.').map(str::to_string).collect();
        if path.iter().any(String::is_empty) {
            return Err(bad(format!("`{key}`: empty part in the key")));
        }
        let (lower, upper) = match bounds.split_once(':') {
            Some((a, b)) => match (a.trim().parse::<f64>(), b.trim().parse::<f64>()) {
                (Ok(a), Ok(b)) => (a, b),
                _ => {
                    return Err(bad(format!(
                        "bounds `{bounds}`: expected two numbers LOW:HIGH"
                    )))
                }
            },
            None => return Err(bad(format!("bounds `{bounds}`: expected LOW:HIGH"))),
        };
        if !(lower.is_finite() && upper.is_finite() && lower > 0.0 && upper > lower) {
            return Err(bad(format!(
                "bounds {lower}:{upper}: expected 0 < LOW < HIGH (the search is on a log scale)"
            )));
        }
        let mut t = profile;
        for (i, p) in path.iter().enumerate() {
            let last = i + 1 == path.len();
            match t.get(p) {
                Some(toml::Value::Table(sub)) if !last => t = sub,
                Some(v) if last => {
                    let (start, integer) = match v {
                        toml::Value::Integer(n) => (*n as f64, true),
                        toml::Value::Float(f) => (*f, false),
                        other => {
                            return Err(bad(format!(
                                "{src}: `{key}` is {}, not a number",
                                other.type_str()
                            )))
                        }
                    };
                    if !(lower..=upper).contains(&start) {
                        return Err(bad(format!(
                            "{src}: the profile's value {start} lies outside the bounds {lower}:{upper}; the search starts from it"
                        )));
                    }
                    return Ok(Param {
                        key: key.to_string(),
                        kind,
                        path,
                        lower,
                        upper,
                        start,
                        integer,
                    });
                }
                _ => {
                    let there: Vec<&str> = t.keys().map(String::as_str).collect();
                    let at = if i == 0 {
                        "the profile".to_string()
                    } else {
                        format!("[{}]", path[..i].join("."))
                    };
                    bail!(
                        "--param {arg}: {src}: no key `{p}` in {at} (keys there: {})",
                        there.join(", ")
                    );
                }
            }
        }
        unreachable!("the loop returns at the last part")
    }

    /// The search coordinate of `x`: 0 at the lower bound, 1 at the upper,
    /// logarithmic in between.
    pub fn to_unit(&self, x: f64) -> f64 {
        (x / self.lower).ln() / (self.upper / self.lower).ln()
    }

    /// The value at search coordinate `u` (clamped to the bounds), rounded
    /// as it will be written.
    pub fn at_unit(&self, u: f64) -> f64 {
        let x = self.lower * (self.upper / self.lower).powf(u.clamp(0.0, 1.0));
        self.quantize(x)
    }

    /// `x` rounded to an integer or to 4 significant digits, inside the
    /// bounds.
    pub fn quantize(&self, x: f64) -> f64 {
        let r = if self.integer {
            x.round()
        } else {
            let mag = 10f64.powi(SIGNIFICANT_DIGITS - 1 - x.abs().log10().floor() as i32);
            (x * mag).round() / mag
        };
        r.clamp(self.lower, self.upper)
    }

    /// `x` as the `--set` value text.
    pub fn text(&self, x: f64) -> String {
        if self.integer {
            format!("{}", x as i64)
        } else {
            format!("{x:?}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile() -> toml::Table {
        toml::from_str("[nand]\nt_r_us = 75.0\npages_per_block = 256\nmode = \"x\"\n").unwrap()
    }

    #[test]
    fn parses_bounds_and_maps_log_coordinates_both_ways() {
        let p = Param::parse("device.nand.t_r_us=25:225", (&profile(), "p"), None).unwrap();
        assert_eq!(
            (p.lower, p.upper, p.start, p.integer),
            (25.0, 225.0, 75.0, false)
        );
        assert!((p.to_unit(75.0) - 0.5).abs() < 1e-12);
        assert_eq!(p.at_unit(0.5), 75.0);
        assert_eq!(p.at_unit(-3.0), 25.0);
        assert_eq!(p.quantize(71.23456), 71.23);
        let i = Param::parse(
            "device.nand.pages_per_block=64:512",
            (&profile(), "p"),
            None,
        )
        .unwrap();
        assert!(i.integer);
        assert_eq!(i.text(i.at_unit(0.4)), "147");
    }

    #[test]
    fn errors_name_the_argument_and_what_is_wrong() {
        let e = |a: &str| {
            Param::parse(a, (&profile(), "p"), None)
                .unwrap_err()
                .to_string()
        };
        assert!(e("device.nand.t_r_us").contains("KEY=LOW:HIGH"));
        assert!(e("seed=1:2").contains("not a profile key"));
        assert!(e("host.syscall_us=1:2").contains("needs a phone"));
        assert!(e("device.nand.t_rr_us=1:200").contains("no key `t_rr_us` in [nand]"));
        assert!(e("device.nand.t_r_us=0:200").contains("0 < LOW < HIGH"));
        assert!(e("device.nand.t_r_us=90:200").contains("outside the bounds"));
        assert!(e("device.nand.mode=1:2").contains("not a number"));
        assert!(e("device.nand.t_r_us=a:b").contains("two numbers"));
    }

    #[test]
    fn host_keys_are_checked_against_the_phones_host_profile() {
        let host: toml::Table = toml::from_str(
            "syscall_us = 40.0
[interactive]
go_hispeed_load = 90
",
        )
        .unwrap();
        let parse = |a: &str| Param::parse(a, (&profile(), "d"), Some((&host, "h")));
        let p = parse("host.syscall_us=10:80").unwrap();
        assert_eq!(
            (p.kind, p.path.clone(), p.start),
            (ProfileKind::Host, vec!["syscall_us".to_string()], 40.0)
        );
        let i = parse("host.interactive.go_hispeed_load=50:99").unwrap();
        assert!(i.integer && i.kind == ProfileKind::Host);
        assert_eq!(
            parse("device.nand.t_r_us=25:225").unwrap().kind,
            ProfileKind::Device
        );
        let e = parse("host.irq_us=1:50").unwrap_err().to_string();
        assert!(e.contains("h: no key `irq_us` in the profile"), "{e}");
    }
}
