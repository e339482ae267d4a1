//! Bar panels: one labelled bar per value with its value written on it, on
//! an axis that starts at zero for amounts (or spans the values for
//! ratios), optionally with error bars (an interval per bar), a target
//! range per bar, a shaded band across the panel (a measured range the
//! bars are compared with) and bars grouped into named series.

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
    /// The quantity cannot be negative (a time, a rate, a share): an
    /// interval reaching below zero is drawn cut at zero, its lower cap
    /// left off to show the cut. Intersecting a confidence interval with
    /// the quantity's possible values keeps its coverage, since the true
    /// value is always inside them. False for differences and changes.
    pub non_negative: bool,
    /// A range drawn behind the bars across the whole panel, in the
    /// bars' unit.
    pub band: Option<Band>,
    /// Per bar, an interval `(low, high)` drawn as an error bar (empty:
    /// none).
    pub errors: Vec<Option<(f64, f64)>>,
    /// Per bar, a target range `(low, high)` drawn as a hatched box behind
    /// it (empty: none).
    pub targets: Vec<Option<(f64, f64)>>,
    /// Names of the series when the bars come in groups of
    /// `series.len()` (bar `i` belongs to series `i % len`, coloured by
    /// it, with a legend); empty: one colour per bar.
    pub series: Vec<String>,
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

/// Pixels per character of a 13 px tick label (DejaVu Sans, average).
const CHAR_PX: u32 = 7;

impl BarPanel {
    /// A panel of amounts: non-negative quantities, on an axis from zero.
    pub fn amounts(title: &str, y_label: &str, bars: Vec<(String, f64)>) -> BarPanel {
        BarPanel {
            title: title.into(),
            y_label: y_label.into(),
            bars,
            from_zero: true,
            non_negative: true,
            band: None,
            errors: Vec::new(),
            targets: Vec::new(),
            series: Vec::new(),
        }
    }

    /// A panel of differences or changes (either sign), on an axis
    /// through zero; intervals are drawn as computed.
    pub fn differences(title: &str, y_label: &str, bars: Vec<(String, f64)>) -> BarPanel {
        BarPanel {
            non_negative: false,
            ..BarPanel::amounts(title, y_label, bars)
        }
    }

    /// The error bar of bar `i` as drawn, `(low, high, cut)`: finite ends
    /// only, the low end raised to zero (`cut`) for a non-negative
    /// quantity.
    fn error(&self, i: usize) -> Option<(f64, f64, bool)> {
        let (a, b) = self.errors.get(i).copied().flatten()?;
        if !(a.is_finite() && b.is_finite()) {
            return None;
        }
        let cut = self.non_negative && a < 0.0;
        Some((if cut { 0.0 } else { a }, b, cut))
    }

    /// True when some error bar is drawn cut at zero.
    pub fn cuts_at_zero(&self) -> bool {
        (0..self.errors.len()).any(|i| self.error(i).is_some_and(|e| e.2))
    }

    /// The same panel with `band` drawn behind the bars.
    pub fn with_band(mut self, band: Band) -> BarPanel {
        self.band = Some(band);
        self
    }

    /// The same panel with an error bar per bar (`None`: no error bar).
    pub fn with_errors(mut self, errors: Vec<Option<(f64, f64)>>) -> BarPanel {
        self.errors = errors;
        self
    }

    /// The same panel with a target range per bar (`None`: none).
    pub fn with_targets(mut self, targets: Vec<Option<(f64, f64)>>) -> BarPanel {
        self.targets = targets;
        self
    }

    /// The same panel with its bars in groups of `names.len()`, one series
    /// each.
    pub fn with_series(mut self, names: &[&str]) -> BarPanel {
        self.series = names.iter().map(|s| s.to_string()).collect();
        self
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

    /// Width the panel wants, pixels: room for each bar's label (a group
    /// label spans its group) and its value.
    pub(super) fn width(&self) -> u32 {
        let per_group = self.series.len().max(1);
        let groups = self.bars.chunks(per_group);
        let need: u32 = groups
            .map(|g| {
                let label = g.first().map_or(0, |b| b.0.chars().count() as u32);
                (label * CHAR_PX + 16).max(56 * g.len() as u32)
            })
            .sum();
        (need + 160).max(640) + super::legend::width(&self.legend(), u32::MAX)
    }

    /// Every finite y the panel draws: bars, error bars, targets, band.
    fn extents(&self) -> impl Iterator<Item = f64> + '_ {
        let band = self.band.iter().flat_map(|b| [b.low, b.high]);
        let errors = (0..self.errors.len())
            .filter_map(|i| self.error(i))
            .flat_map(|(a, b, _)| [a, b]);
        let targets = self.targets.iter().flatten().flat_map(|&(a, b)| [a, b]);
        self.bars
            .iter()
            .map(|b| b.1)
            .chain(band)
            .chain(errors)
            .chain(targets)
            .filter(|v| v.is_finite())
    }

    /// The y range: from zero, or around the values (and the band).
    fn range(&self) -> (f64, f64) {
        let (lo, hi) = self
            .extents()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
                (l.min(v), h.max(v))
            });
        if lo.partial_cmp(&hi).is_none_or(|o| o.is_gt()) {
            return (0.0, 1.0);
        }
        if self.from_zero {
            let (lo, hi) = (lo.min(0.0), hi.max(0.0));
            // Headroom above the bars for their values (the legend is
            // beside the chart).
            let room = 0.18;
            let bottom = if lo < 0.0 { lo - (hi - lo) * 0.08 } else { 0.0 };
            return (bottom, (hi + (hi - lo) * room).max(f64::MIN_POSITIVE));
        }
        let pad = ((hi - lo) * 0.3)
            .max(hi.abs().max(lo.abs()) * 0.002)
            .max(1e-9);
        (lo - pad, hi + pad)
    }

    /// The colour of bar `i`.
    fn colour(&self, i: usize) -> PaletteColor<Palette99> {
        if self.series.is_empty() {
            Palette99::pick(i)
        } else {
            Palette99::pick(i % self.series.len())
        }
    }

    /// The legend's entries (band, published range, series), drawn beside
    /// the chart; none for a plain bar chart.
    pub(super) fn legend(&self) -> Vec<(String, RGBAColor)> {
        let mut entries = Vec::new();
        if let Some(b) = &self.band {
            entries.push((b.label.clone(), RGBColor(150, 150, 150).mix(0.5)));
        }
        if self.targets.iter().any(Option::is_some) {
            entries.push(("published range".into(), RGBColor(120, 120, 120).mix(0.4)));
        }
        for (i, name) in self.series.iter().enumerate() {
            entries.push((name.clone(), Palette99::pick(i).to_rgba()));
        }
        entries
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
        let n = self.bars.len() as u32;
        let (lo, hi) = self.range();
        let y_desc = if self.from_zero || lo <= 0.0 {
            self.y_label.clone()
        } else {
            format!("{} (axis from {})", self.y_label, tick(lo))
        };
        let mut chart = ChartBuilder::on(area)
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
        self.draw_band(&mut chart, n)?;
        self.draw_targets(&mut chart)?;
        let bottom = if self.from_zero || lo <= 0.0 { 0.0 } else { lo };
        chart.draw_series(self.bars.iter().enumerate().map(|(i, (_, v))| {
            let x = i as u32;
            let mut bar = Rectangle::new(
                [
                    (SegmentValue::Exact(x), bottom),
                    (SegmentValue::Exact(x + 1), *v),
                ],
                self.colour(i).filled(),
            );
            bar.set_margin(0, 0, 6, 6);
            bar
        }))?;
        self.draw_errors(&mut chart)?;
        self.draw_values(&mut chart, (lo, hi))?;
        Ok(())
    }
}

/// The segmented chart of a bar panel.
type SegChart<'a, DB> = ChartContext<
    'a,
    DB,
    Cartesian2d<
        plotters::coord::ranged1d::SegmentedCoord<plotters::coord::types::RangedCoordu32>,
        plotters::coord::types::RangedCoordf64,
    >,
>;

impl BarPanel {
    fn draw_band<DB: DrawingBackend>(
        &self,
        chart: &mut SegChart<'_, DB>,
        n: u32,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        let Some(b) = &self.band else {
            return Ok(());
        };
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
        Ok(())
    }

    /// Each bar's target range: a grey box across its slot with dashed-
    /// looking black ends, labelled once in the legend.
    fn draw_targets<DB: DrawingBackend>(
        &self,
        chart: &mut SegChart<'_, DB>,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        let mut labelled = false;
        for (i, t) in self.targets.iter().enumerate() {
            let Some((a, b)) = *t else { continue };
            let x = i as u32;
            let (x0, x1) = (SegmentValue::Exact(x), SegmentValue::Exact(x + 1));
            let s = chart.draw_series(std::iter::once(Rectangle::new(
                [(x0.clone(), a), (x1.clone(), b)],
                RGBColor(120, 120, 120).mix(0.25).filled(),
            )))?;
            if !labelled {
                s.label("published range").legend(|(x, y)| {
                    Rectangle::new(
                        [(x, y - 5), (x + 14, y + 5)],
                        RGBColor(120, 120, 120).mix(0.4).filled(),
                    )
                });
                labelled = true;
            }
            for y in [a, b] {
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![(x0.clone(), y), (x1.clone(), y)],
                    BLACK.stroke_width(1),
                )))?;
            }
        }
        Ok(())
    }

    /// Error bars: a vertical line from low to high with caps.
    fn draw_errors<DB: DrawingBackend>(
        &self,
        chart: &mut SegChart<'_, DB>,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        for i in 0..self.errors.len() {
            let Some((a, b, cut)) = self.error(i) else {
                continue;
            };
            let centre = SegmentValue::CenterOf(i as u32);
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(centre.clone(), a), (centre.clone(), b)],
                BLACK.stroke_width(2),
            )))?;
            // Caps: 12 px wide whatever the scale; none at a cut end.
            let ends = if cut { vec![b] } else { vec![a, b] };
            chart.draw_series(ends.into_iter().map(|y| {
                EmptyElement::at((centre.clone(), y))
                    + PathElement::new(vec![(-6, 0), (6, 0)], BLACK.stroke_width(2))
            }))?;
        }
        Ok(())
    }

    /// Each bar's value, written above it (below it for a negative bar).
    fn draw_values<DB: DrawingBackend>(
        &self,
        chart: &mut SegChart<'_, DB>,
        (lo, hi): (f64, f64),
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        let style = TextStyle::from(("sans-serif", 11).into_font())
            .color(&BLACK)
            .pos(plotters::style::text_anchor::Pos::new(
                plotters::style::text_anchor::HPos::Center,
                plotters::style::text_anchor::VPos::Bottom,
            ));
        for (i, (_, v)) in self.bars.iter().enumerate() {
            if !v.is_finite() {
                continue;
            }
            // Above the bar's top or its error bar, whichever is higher
            // (below a negative bar).
            let top = match self.error(i) {
                Some((_, b, _)) if *v >= 0.0 => b.max(*v),
                _ => *v,
            };
            let y = if *v >= 0.0 { top.min(hi) } else { v.max(lo) };
            let dy = if *v >= 0.0 { -3 } else { 14 };
            chart.draw_series(std::iter::once(
                EmptyElement::at((SegmentValue::CenterOf(i as u32), y))
                    + Text::new(value_text(*v), (0, dy), style.clone()),
            ))?;
        }
        Ok(())
    }
}

/// A bar's value as written on it: two decimals from 1 to 10, whole
/// numbers from 100 up, four decimals below 1 (indices near 1 differ
/// there).
fn value_text(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else if a == 0.0 {
        "0".into()
    } else if a >= 0.01 {
        format!("{v:.4}")
    } else {
        format!("{v:.1e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_on_bars_are_short() {
        let t: Vec<String> = [1379.42, 62.76, 8.501, 0.9997, 0.0004, -27.98, 0.0]
            .into_iter()
            .map(value_text)
            .collect();
        assert_eq!(
            t,
            ["1379", "62.8", "8.50", "0.9997", "4.0e-4", "-28.0", "0"]
        );
    }

    /// An interval reaching below zero is cut there on an amount (and the
    /// axis does not go below zero for it), drawn as computed on a
    /// difference.
    #[test]
    fn intervals_of_amounts_are_cut_at_zero_and_of_differences_not() {
        let bars = vec![("a".to_string(), 2.0), ("b".to_string(), 5.0)];
        let errors = vec![Some((-3.0, 7.0)), Some((4.0, 6.0))];
        let amounts = BarPanel::amounts("t", "MB/s", bars.clone()).with_errors(errors.clone());
        assert_eq!(amounts.error(0), Some((0.0, 7.0, true)));
        assert_eq!(amounts.error(1), Some((4.0, 6.0, false)));
        assert!(amounts.cuts_at_zero());
        assert_eq!(amounts.range().0, 0.0);
        let diffs = BarPanel::differences("t", "%", bars).with_errors(errors);
        assert_eq!(diffs.error(0), Some((-3.0, 7.0, false)));
        assert!(!diffs.cuts_at_zero());
        assert!(diffs.range().0 < -3.0);
    }

    #[test]
    fn long_labels_widen_the_panel_and_intervals_widen_the_axis() {
        let short = BarPanel::amounts("t", "x", vec![("a".into(), 1.0); 4]);
        let long = BarPanel::amounts("t", "x", vec![("a rather long label here".into(), 1.0); 4]);
        assert!(long.width() > short.width());
        let p = short.with_errors(vec![Some((0.5, 3.0)), None, None, None]);
        assert!(p.range().1 >= 3.0);
    }
}
