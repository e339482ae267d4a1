//! Bar panels: one labelled bar per value, on an axis that starts at zero
//! for amounts and hugs the data for ratios and indices (where a zero
//! baseline would hide the differences), optionally over a shaded band (a
//! measured range the bars are compared with).

use super::tick;
use plotters::coord::Shift;
use plotters::prelude::*;

/// One bar chart.
#[derive(Clone, Debug)]
pub struct BarPanel {
    /// Caption.
    pub title: String,
    /// Y axis description with its unit, e.g. `IOPS` or `mean latency (µs)`.
    pub y_label: String,
    /// `(label, value)` per bar, left to right.
    pub bars: Vec<(String, f64)>,
    /// Start the axis at zero (amounts); when false the axis spans the
    /// values with a margin and says that it does not start at zero.
    pub from_zero: bool,
    /// A range drawn behind the bars across the whole panel, in the
    /// bars' unit.
    pub band: Option<Band>,
}

/// A shaded range with whiskers at both ends, drawn behind the bars.
#[derive(Clone, Debug)]
pub struct Band {
    /// Lower end, in the bars' unit.
    pub low: f64,
    /// Upper end, in the bars' unit.
    pub high: f64,
    /// What the range is (legend text).
    pub label: String,
}

impl BarPanel {
    /// A panel of amounts (axis from zero).
    pub fn amounts(title: &str, y_label: &str, bars: Vec<(String, f64)>) -> BarPanel {
        BarPanel {
            title: title.into(),
            y_label: y_label.into(),
            bars,
            from_zero: true,
            band: None,
        }
    }

    /// The same panel with `band` drawn behind the bars.
    pub fn with_band(mut self, band: Band) -> BarPanel {
        self.band = Some(band);
        self
    }

    /// A panel of ratios or indices (axis fitted to the values).
    pub fn ratios(title: &str, y_label: &str, bars: Vec<(String, f64)>) -> BarPanel {
        BarPanel {
            from_zero: false,
            ..BarPanel::amounts(title, y_label, bars)
        }
    }

    /// True when some bar has a finite, non-zero value, or a band with
    /// finite ends is drawn.
    pub(super) fn has_data(&self) -> bool {
        self.bars.iter().any(|(_, v)| v.is_finite() && *v != 0.0)
            || self
                .band
                .as_ref()
                .is_some_and(|b| b.low.is_finite() && b.high.is_finite())
    }

    /// The y range: from zero, or around the values (and the band).
    fn range(&self) -> (f64, f64) {
        let band = self.band.iter().flat_map(|b| [b.low, b.high]);
        let vals = self.bars.iter().map(|b| b.1).chain(band);
        let (lo, hi) = vals
            .filter(|v| v.is_finite())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
                (l.min(v), h.max(v))
            });
        if self.from_zero {
            let (lo, hi) = (lo.min(0.0), hi.max(0.0));
            // Headroom above the bars, for the band's legend too.
            let room = if self.band.is_some() { 0.35 } else { 0.15 };
            let bottom = if lo < 0.0 { lo - (hi - lo) * 0.05 } else { 0.0 };
            return (bottom, (hi + (hi - lo) * room).max(f64::MIN_POSITIVE));
        }
        let pad = ((hi - lo) * 0.3)
            .max(hi.abs().max(lo.abs()) * 0.002)
            .max(1e-9);
        (lo - pad, hi + pad)
    }

    pub(super) fn draw<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        let n = self.bars.len() as u32;
        let (lo, hi) = self.range();
        let y_desc = if self.from_zero || lo <= 0.0 {
            self.y_label.clone()
        } else {
            format!("{} (axis from {})", self.y_label, tick(lo))
        };
        let mut chart = ChartBuilder::on(area)
            .caption(&self.title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(80)
            .build_cartesian_2d((0u32..n.saturating_sub(1)).into_segmented(), lo..hi)?;
        let labels: Vec<&str> = self.bars.iter().map(|b| b.0.as_str()).collect();
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(labels.len())
            .x_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) => labels.get(*i as usize).copied().unwrap_or("").into(),
                _ => String::new(),
            })
            .y_desc(y_desc)
            .y_label_formatter(&|v| tick(*v))
            .label_style(("sans-serif", 13))
            .axis_desc_style(("sans-serif", 14))
            .draw()?;
        if let Some(b) = &self.band {
            let (x0, x1) = (SegmentValue::Exact(0), SegmentValue::Exact(n));
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(x0.clone(), b.low), (x1.clone(), b.high)],
                    RGBColor(150, 150, 150).mix(0.3).filled(),
                )))?
                .label(b.label.as_str())
                .legend(|(x, y)| {
                    Rectangle::new(
                        [(x, y - 5), (x + 14, y + 5)],
                        RGBColor(150, 150, 150).mix(0.5).filled(),
                    )
                });
            for y in [b.low, b.high] {
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![(x0.clone(), y), (x1.clone(), y)],
                    BLACK.stroke_width(2),
                )))?;
            }
        }
        let bottom = if self.from_zero || lo <= 0.0 { 0.0 } else { lo };
        chart.draw_series(self.bars.iter().enumerate().map(|(i, (_, v))| {
            let i = i as u32;
            let mut bar = Rectangle::new(
                [
                    (SegmentValue::Exact(i), bottom),
                    (SegmentValue::Exact(i + 1), *v),
                ],
                Palette99::pick(i as usize).filled(),
            );
            bar.set_margin(0, 0, 8, 8);
            bar
        }))?;
        if self.band.is_some() {
            // Above the bars: the range leaves headroom for it.
            super::draw_legend(&mut chart)?;
        }
        Ok(())
    }
}
