//! X/Y panels: lines (CDFs, time lines) and points (scatter plots), on a
//! linear or logarithmic x axis, with a legend beside the chart (outside
//! the data) when the series have names. A logarithmic time axis is
//! labelled at its decades in µs, ms and s.

use super::tick;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;

/// How a series is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// A line through the points.
    Line,
    /// A line with a dot at each point (few, exact points).
    LinePoints,
    /// Dots only.
    Points,
    /// A large dot at each point with a number written beside it, the
    /// number the series' legend entry starts with (points whose names
    /// do not fit on the chart).
    Numbered {
        /// The number written.
        n: u16,
        /// Where it goes, so points on one spot stay readable: slot 0
        /// above right of the dot, 1 below right, 2 and 3 the same one
        /// number further right, and so on.
        slot: u8,
    },
}

/// One named set of points.
#[derive(Clone, Debug)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// `(x, y)` points, in drawing order.
    pub points: Vec<(f64, f64)>,
    /// How the points are drawn.
    pub mark: Mark,
}

/// One x/y chart.
#[derive(Clone, Debug)]
pub struct XyPanel {
    /// Caption.
    pub title: String,
    /// X axis description with its unit.
    pub x_label: String,
    /// Y axis description with its unit.
    pub y_label: String,
    /// Logarithmic x axis (every x must then be positive).
    pub log_x: bool,
    /// The x values are times in µs: a logarithmic axis is labelled at its
    /// decades with their unit (`10 µs`, `1 ms`, `1 s`).
    pub x_time_us: bool,
    /// Fixed y range; `None` fits the data (from zero when every y ≥ 0).
    pub y_range: Option<(f64, f64)>,
    /// The series, in legend order.
    pub series: Vec<Series>,
}

impl XyPanel {
    /// True when some series has a finite point (positive x on a log axis).
    pub(super) fn has_data(&self) -> bool {
        self.points().next().is_some()
    }

    fn points(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        let log = self.log_x;
        self.series
            .iter()
            .flat_map(|s| s.points.iter().copied())
            .filter(move |(x, y)| x.is_finite() && y.is_finite() && (!log || *x > 0.0))
    }

    fn x_range(&self) -> (f64, f64) {
        let (lo, hi) = self
            .points()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), (x, _)| {
                (l.min(x), h.max(x))
            });
        if self.log_x {
            (lo / 1.5, hi * 1.5)
        } else {
            let pad = ((hi - lo) * 0.03).max(1e-9);
            (lo - pad, hi + pad)
        }
    }

    fn y_range(&self) -> (f64, f64) {
        if let Some(r) = self.y_range {
            return r;
        }
        let (lo, hi) = self
            .points()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), (_, y)| {
                (l.min(y), h.max(y))
            });
        let lo = if lo >= 0.0 { 0.0 } else { lo };
        let pad = ((hi - lo) * 0.08).max(1e-9);
        (if lo == 0.0 { 0.0 } else { lo - pad }, hi + pad)
    }

    /// Tick positions of a log x axis over `(lo, hi)`: for a time axis,
    /// its decades (with 2 and 5 between them when it spans less than two
    /// decades); otherwise the data's own x values when there are few and
    /// each is at least 25 % above the one before (request sizes), else
    /// 1-2-5 steps of each decade, so every tick is labelled and readable.
    fn log_ticks(&self, (lo, hi): (f64, f64)) -> Vec<f64> {
        if self.x_time_us {
            return time_ticks(lo, hi);
        }
        let mut xs: Vec<f64> = self.points().map(|(x, _)| x).collect();
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        let apart = xs.windows(2).all(|w| w[1] >= 1.25 * w[0]);
        if (1..=12).contains(&xs.len()) && apart {
            return xs;
        }
        let mut keys = Vec::new();
        let mut decade = 10f64.powi(lo.log10().floor() as i32);
        while decade <= hi {
            for m in [1.0, 2.0, 5.0] {
                let k = decade * m;
                if (lo..=hi).contains(&k) {
                    keys.push(k);
                }
            }
            decade *= 10.0;
        }
        keys
    }

    /// The legend's entries: each named series with its colour (none when
    /// no series is named).
    pub(super) fn legend(&self) -> Vec<(String, RGBAColor)> {
        if self.series.iter().all(|s| s.name.is_empty()) {
            return Vec::new();
        }
        self.series
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.clone(), Palette99::pick(i).to_rgba()))
            .collect()
    }

    pub(super) fn draw<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        let area = super::caption::draw(area, &self.title)?;
        let entries = self.legend();
        let (area, legend) = super::legend::split(&area, &entries);
        if let Some(l) = &legend {
            super::legend::draw(l, &entries)?;
        }
        let area = &area;
        let (x0, x1) = self.x_range();
        let (y0, y1) = self.y_range();
        if self.log_x {
            let keys = self.log_ticks((x0, x1));
            self.draw_on(area, (x0..x1).log_scale().with_key_points(keys), y0..y1)
        } else {
            self.draw_on(area, x0..x1, y0..y1)
        }
    }

    fn draw_on<DB, X>(
        &self,
        area: &DrawingArea<DB, Shift>,
        x: X,
        y: std::ops::Range<f64>,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>
    where
        DB: DrawingBackend,
        X: AsRangedCoord<Value = f64>,
        X::CoordDescType: ValueFormatter<f64>,
    {
        let mut chart = ChartBuilder::on(area)
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(80)
            .build_cartesian_2d(x, y)?;
        chart
            .configure_mesh()
            .x_labels(if self.log_x { 40 } else { 10 })
            .x_desc(self.x_label.as_str())
            .y_desc(self.y_label.as_str())
            .x_label_formatter(&|v| {
                if self.x_time_us {
                    time_tick(*v)
                } else {
                    tick(*v)
                }
            })
            .y_label_formatter(&|v| tick(*v))
            .label_style(("sans-serif", 13))
            .axis_desc_style(("sans-serif", 14))
            .draw()?;
        let log = self.log_x;
        for (i, s) in self.series.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            let pts: Vec<(f64, f64)> = s
                .points
                .iter()
                .copied()
                .filter(|(x, y)| x.is_finite() && y.is_finite() && (!log || *x > 0.0))
                .collect();
            if pts.is_empty() {
                continue;
            }
            let legend = match s.mark {
                Mark::Numbered { n, slot } => {
                    let dx = 7 + 18 * i32::from(slot / 2);
                    let dy = if slot % 2 == 0 { -14 } else { 4 };
                    let text = TextStyle::from(("sans-serif", 13).into_font()).color(&BLACK);
                    chart.draw_series(pts.iter().map(|p| {
                        EmptyElement::at(*p)
                            + Circle::new((0, 0), 5, color.filled())
                            + Text::new(n.to_string(), (dx, dy), text.clone())
                    }))?
                }
                Mark::Points => {
                    let style = color.mix(0.5).filled();
                    chart.draw_series(pts.iter().map(|p| Circle::new(*p, 2, style)))?
                }
                Mark::Line | Mark::LinePoints => {
                    if s.mark == Mark::LinePoints {
                        chart
                            .draw_series(pts.iter().map(|p| Circle::new(*p, 4, color.filled())))?;
                    }
                    chart.draw_series(std::iter::once(PathElement::new(
                        pts.clone(),
                        color.stroke_width(2),
                    )))?
                }
            };
            legend.label(s.name.as_str());
        }
        Ok(())
    }
}

/// Decade ticks of a log time axis over `(lo, hi)` µs, with 2 and 5
/// between them when the axis spans less than two decades.
fn time_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let steps: &[f64] = if hi / lo < 100.0 {
        &[1.0, 2.0, 5.0]
    } else {
        &[1.0]
    };
    let mut keys = Vec::new();
    let mut decade = 10f64.powi(lo.log10().floor() as i32);
    while decade <= hi {
        for m in steps {
            let k = decade * m;
            if (lo..=hi).contains(&k) {
                keys.push(k);
            }
        }
        decade *= 10.0;
    }
    keys
}

/// A time in µs as an axis label with its unit: `500 ns`, `20 µs`,
/// `1 ms`, `2 s`.
pub(super) fn time_tick(us: f64) -> String {
    let (v, unit) = if us >= 1e6 {
        (us / 1e6, "s")
    } else if us >= 1e3 {
        (us / 1e3, "ms")
    } else if us >= 1.0 {
        (us, "µs")
    } else {
        (us * 1e3, "ns")
    };
    format!("{} {unit}", tick(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_axis_is_labelled_at_decades_with_units() {
        let t: Vec<String> = time_ticks(3.0, 250_000.0)
            .into_iter()
            .map(time_tick)
            .collect();
        assert_eq!(t, ["10 µs", "100 µs", "1 ms", "10 ms", "100 ms"]);
        let t: Vec<String> = time_ticks(150.0, 2_500.0)
            .into_iter()
            .map(time_tick)
            .collect();
        assert_eq!(t, ["200 µs", "500 µs", "1 ms", "2 ms"]);
        assert_eq!(time_tick(0.5), "500 ns");
        assert_eq!(time_tick(2e6), "2 s");
    }
}
