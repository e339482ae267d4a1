//! Values of the options that shape the I/O pattern: per-direction lists
//! (`R,W[,T]`), block-size splits, offset distributions, the file service
//! type and the percentile list. [src: fio HOWTO.rst, options
//! `blocksize`, `bssplit`, `random_distribution`, `file_service_type`,
//! `percentile_list`; fio `options.c` bssplit_ddir (blank shares)]

use super::option_error::OptionError;
use super::values::size;
use crate::workload::block_sizes::SizeWeight;
use crate::workload::distribution::{Distribution, Zone};
use crate::workload::spec::FileService;

/// A value given per direction, as fio's `R,W,T` lists: one value sets
/// reads and writes; `R,W` sets each (an empty part leaves that
/// direction unset); a trim value is refused (no trim jobs).
pub fn per_dir<T: Clone>(
    v: &str,
    parse: impl Fn(&str) -> Result<T, OptionError>,
) -> Result<[Option<T>; 2], OptionError> {
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    match parts.as_slice() {
        [one] => {
            let x = parse(one)?;
            Ok([Some(x.clone()), Some(x)])
        }
        [r, w, rest @ ..] => {
            if rest.len() > 1 || rest.first().is_some_and(|t| !t.is_empty()) {
                return Err(OptionError::NotModelled(
                    "a trim value is not modelled (no trim jobs); give read,write",
                ));
            }
            let one = |p: &str| {
                if p.is_empty() {
                    Ok(None)
                } else {
                    parse(p).map(Some)
                }
            };
            Ok([one(r)?, one(w)?])
        }
        [] => Err(OptionError::expected("a value")),
    }
}

/// One value for both directions: `[r, w]` must agree where both are set.
pub fn same_both<T: Clone + PartialEq>(
    v: [Option<T>; 2],
    what: &'static str,
) -> Result<Option<T>, OptionError> {
    match v {
        [Some(r), Some(w)] if r != w => Err(OptionError::DiffersByDirection { what }),
        [r, w] => Ok(r.or(w)),
    }
}

/// A block-size split `bs/percent:bs/percent...` (blank percentages share
/// what the others leave; what is left over goes to the largest size, as
/// fio's draw gives it).
pub fn bssplit(v: &str) -> Result<Vec<SizeWeight>, OptionError> {
    let mut given = 0u32;
    let mut blank = 0u32;
    let mut out = Vec::new();
    for part in v.split(':') {
        let (bs, perc) = part.split_once('/').unwrap_or((part, ""));
        let bytes = size(bs)?;
        if bytes == 0 {
            return Err(OptionError::expected("no block size of 0 in bssplit"));
        }
        let percent = if perc.trim().is_empty() {
            blank += 1;
            None
        } else {
            let p: u32 = perc.trim().parse().map_err(|_| OptionError::Part {
                part: perc.to_string(),
                expected: "a whole percentage after '/'",
            })?;
            given += p;
            Some(p)
        };
        out.push((bytes, percent));
    }
    if given > 100 {
        return Err(OptionError::PercentSum { sum: given });
    }
    if out.len() > 64 {
        return Err(OptionError::expected("at most 64 block sizes"));
    }
    let share = (100 - given).checked_div(blank).unwrap_or(0);
    let mut split: Vec<SizeWeight> = out
        .into_iter()
        .map(|(bytes, p)| SizeWeight {
            bytes,
            percent: p.unwrap_or(share),
        })
        .collect();
    split.sort_by_key(|s| s.bytes);
    let sum: u32 = split.iter().map(|s| s.percent).sum();
    if let Some(last) = split.last_mut() {
        last.percent += 100 - sum;
    }
    Ok(split)
}

/// A `random_distribution` value (one direction).
pub fn distribution(v: &str) -> Result<Distribution, OptionError> {
    let (kind, rest) = v.split_once(':').unwrap_or((v, ""));
    let floats = || -> Result<Vec<f64>, OptionError> {
        rest.split(':')
            .map(|x| {
                x.trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|f| f.is_finite())
                    .ok_or_else(|| OptionError::Part {
                        part: x.to_string(),
                        expected: "a number",
                    })
            })
            .collect()
    };
    let d = match kind.trim() {
        "random" if rest.is_empty() => Distribution::Uniform,
        "zipf" | "pareto" | "normal" | "gauss" => {
            let f = floats()?;
            let (x, center) = match f.as_slice() {
                [x] => (*x, None),
                [x, c] => (*x, Some(*c)),
                _ => {
                    return Err(OptionError::DistributionArgs {
                        kind: kind.to_string(),
                    })
                }
            };
            match kind {
                "zipf" => Distribution::Zipf { theta: x, center },
                "pareto" => Distribution::Pareto { h: x, center },
                _ => Distribution::Normal {
                    dev_percent: x,
                    center,
                },
            }
        }
        "zoned" | "zoned_abs" => Distribution::Zoned {
            zones: zones(rest, kind == "zoned_abs")?,
        },
        "sequence" => {
            return Err(OptionError::NotModelled(
                "the fixed block sequence distribution is not modelled",
            ));
        }
        _ => {
            return Err(OptionError::expected(
                "random, zipf:θ, pareto:h, normal:σ, zoned:a/s:... or zoned_abs:a/size:...",
            ))
        }
    };
    d.check()?;
    Ok(d)
}

/// The zones `access/size:...` of `zoned` (sizes in percent) or
/// `zoned_abs` (sizes in bytes).
fn zones(v: &str, absolute: bool) -> Result<Vec<Zone>, OptionError> {
    v.split(':')
        .map(|z| {
            let part = |part: &str, expected| OptionError::Part {
                part: part.to_string(),
                expected,
            };
            let (a, s) = z.split_once('/').ok_or_else(|| part(z, "access%/size"))?;
            let access_percent = a
                .trim()
                .parse()
                .map_err(|_| part(a, "a whole access percentage"))?;
            let (size_percent, size_bytes) = if absolute {
                (None, Some(size(s)?))
            } else {
                let p = s
                    .trim()
                    .parse()
                    .map_err(|_| part(s, "a whole size percentage"))?;
                (Some(p), None)
            };
            Ok(Zone {
                access_percent,
                size_percent,
                size_bytes,
            })
        })
        .collect()
}

/// A `file_service_type` value: the service and its calls per turn.
pub fn file_service(v: &str) -> Result<(FileService, u32), OptionError> {
    let (kind, n) = v.split_once(':').unwrap_or((v, ""));
    let calls = if n.is_empty() {
        1
    } else {
        n.trim()
            .parse::<u32>()
            .ok()
            .filter(|&n| n >= 1)
            .ok_or_else(|| OptionError::Part {
                part: n.to_string(),
                expected: "a number of I/Os ≥ 1 after ':'",
            })?
    };
    match kind {
        "roundrobin" => Ok((FileService::Roundrobin, calls)),
        "random" => Ok((FileService::Random, calls)),
        "sequential" if n.is_empty() => Ok((FileService::Sequential, 1)),
        "sequential" => Err(OptionError::NotModelled(
            "sequential:N is not modelled; sequential finishes each file's pass",
        )),
        "zipf" | "pareto" | "normal" | "gauss" => Err(OptionError::FileDistribution {
            kind: kind.to_string(),
        }),
        _ => Err(OptionError::expected(
            "roundrobin[:N], sequential or random[:N]",
        )),
    }
}

/// A `percentile_list` value: percentages separated by ':' (at most 20,
/// fio's `FIO_IO_U_LIST_MAX_LEN`).
pub fn percentiles(v: &str) -> Result<Vec<f64>, OptionError> {
    let list: Vec<f64> = v
        .split(':')
        .map(|p| {
            p.trim()
                .parse::<f64>()
                .ok()
                .filter(|p| (0.0..=100.0).contains(p))
                .ok_or_else(|| OptionError::Part {
                    part: p.to_string(),
                    expected: "a percentile 0..=100",
                })
        })
        .collect::<Result<_, _>>()?;
    if list.is_empty() || list.len() > 20 {
        return Err(OptionError::expected("1 to 20 percentiles"));
    }
    Ok(list)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bssplit_fills_blank_shares_and_sorts() {
        let s = bssplit("4k/50:1k/:32k/").unwrap();
        let got: Vec<(u64, u32)> = s.iter().map(|w| (w.bytes, w.percent)).collect();
        assert_eq!(got, vec![(1024, 25), (4096, 50), (32768, 25)]);
        assert_eq!(
            bssplit("4k/60:8k/50").unwrap_err(),
            OptionError::PercentSum { sum: 110 }
        );
    }

    #[test]
    fn per_direction_lists_follow_fio() {
        let p = |v: &str| size(v);
        assert_eq!(per_dir("1m", p).unwrap(), [Some(1 << 20), Some(1 << 20)]);
        assert_eq!(per_dir(",500k", p).unwrap(), [None, Some(512_000)]);
        assert_eq!(per_dir("500k,", p).unwrap(), [Some(512_000), None]);
        assert!(per_dir("1k,2k,3k", p).is_err());
    }

    #[test]
    fn distributions_parse_with_centre_and_zones() {
        assert_eq!(
            distribution("zipf:1.2:0.25").unwrap(),
            Distribution::Zipf {
                theta: 1.2,
                center: Some(0.25)
            }
        );
        assert!(distribution("zipf:1").is_err());
        let Distribution::Zoned { zones } = distribution("zoned:60/10:30/20:8/30:2/40").unwrap()
        else {
            panic!("zoned")
        };
        assert_eq!(zones.len(), 4);
        assert!(distribution("zoned_abs:60/20m:40/100m").is_ok());
        assert!(distribution("sequence:1,2").is_err());
    }
}
