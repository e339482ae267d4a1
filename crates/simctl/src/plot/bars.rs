//! Bar panels: one labelled bar per value, on an axis that starts at zero
//! for amounts and hugs the data for ratios and indices (where a zero
//! baseline would hide the differences).

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
}

impl BarPanel {
    /// A panel of amounts (axis from zero).
    pub fn amounts(title: &str, y_label: &str, bars: Vec<(String, f64)>) -> BarPanel {
        BarPanel {
            title: title.into(),
            y_label: y_label.into(),
            bars,
            from_zero: true,
        }
    }

    /// A panel of ratios or indices (axis fitted to the values).
    pub fn ratios(title: &str, y_label: &str, bars: Vec<(String, f64)>) -> BarPanel {
        BarPanel {
            from_zero: false,
            ..BarPanel::amounts(title, y_label, bars)
        }
    }

    /// True when some bar has a finite, non-zero value.
    pub(super) fn has_data(&self) -> bool {
        self.bars.iter().any(|(_, v)| v.is_finite() && *v != 0.0)
    }

    /// The y range: from zero, or around the values.
    fn range(&self) -> (f64, f64) {
        let vals = self.bars.iter().map(|b| b.1).filter(|v| v.is_finite());
        let (lo, hi) = vals.fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
            (l.min(v), h.max(v))
        });
        if self.from_zero {
            return (lo.min(0.0), (hi.max(0.0) * 1.15).max(f64::MIN_POSITIVE));
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
        Ok(())
    }
}
